// Template parser entry point (see parser.hpp), and the check jinja2 makes when it compiles a
// template: an unknown filter or test is an error unless it sits in a "soft" frame.
#include "template/parser.hpp"

#include "template/builtins.hpp"
#include "template/lexer.hpp"
#include "template/parser_impl.hpp"

namespace arbor::tmpl {
namespace {

// jinja2 reports an unknown filter or test when it compiles the template, except inside an
// if-statement or a conditional expression ("soft" frames), where it fails only if reached.
void check_unknown(const Expr* e, bool soft) {
    if (!e) return;
    if (e->op == ExprOp::CondExpr) soft = true;
    if ((e->op == ExprOp::Filter || e->op == ExprOp::Test) && e->unknown && !soft)
        fail_at(e->pos, std::string("No ") + (e->op == ExprOp::Filter ? "filter" : "test") + " named '" + e->name + "'.");
    for (const Expr* x : {e->a.get(), e->b.get(), e->c.get(), e->d.get(), e->dyn_args.get(), e->dyn_kwargs.get()})
        check_unknown(x, soft);
    for (const auto& x : e->args) check_unknown(x.get(), soft);
    for (const auto& kv : e->kwargs) check_unknown(kv.second.get(), soft);
}

void check_unknown(const Body& body, bool soft) {
    for (const auto& s : body) {
        switch (s->kind) {
            case StmtKind::If:
                for (const auto& br : s->branches) {
                    check_unknown(br.first.get(), true);
                    check_unknown(br.second, true);
                }
                check_unknown(s->else_body, true);
                break;
            case StmtKind::For:
                check_unknown(s->expr.get(), soft);
                check_unknown(s->cond.get(), false);
                check_unknown(s->body, false);
                check_unknown(s->else_body, false);
                break;
            case StmtKind::Macro:
                for (const auto& d : s->macro->defaults) check_unknown(d.get(), soft);
                check_unknown(s->macro->body, false);
                break;
            case StmtKind::CallBlock:
                check_unknown(s->expr.get(), soft);
                for (const auto& d : s->macro->defaults) check_unknown(d.get(), soft);
                check_unknown(s->macro->body, false);
                break;
            case StmtKind::SetBlock:
            case StmtKind::FilterBlock:
                check_unknown(s->filter.get(), false);
                check_unknown(s->body, false);
                break;
            case StmtKind::With:
                for (const auto& wv : s->with_vars) check_unknown(wv.second.get(), soft);
                check_unknown(s->body, false);
                break;
            default:
                check_unknown(s->expr.get(), soft);
                check_unknown(s->target.get(), soft);
        }
    }
}

}  // namespace

std::shared_ptr<const TemplateAst> parse_template(std::string_view source) {
    auto ast = std::make_shared<TemplateAst>();
    ast->source = normalize_newlines(source);
    Parser p(tokenize(ast->source));
    ast->body = p.parse_all();
    check_unknown(ast->body, false);
    return ast;
}

}  // namespace arbor::tmpl
