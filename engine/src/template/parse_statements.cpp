// Template parser, statements: {% if %}, {% for %}, {% set %}, {% macro %}, {% call %},
// {% filter %}, {% with %}, {% generation %}, break/continue, and assignment targets.
#include "template/builtins.hpp"
#include "template/parser_impl.hpp"

namespace arbor::tmpl {

Body Parser::subparse(const std::vector<std::string_view>* end_names) {
    DepthGuard guard(*this);
    Body body;
    if (end_names) end_stack_.push_back(*end_names);
    for (;;) {
        const Token& tok = cur();
        if (tok.type == Tok::Eof) break;
        if (tok.type == Tok::Data) {
            auto s = stmt(StmtKind::Text, tok.pos);
            s->text = tok.text;
            body.push_back(std::move(s));
            next();
        } else if (tok.type == Tok::VarBegin) {
            auto s = stmt(StmtKind::Print, tok.pos);
            next();
            s->expr = parse_tuple(false, true, {}, false);
            expect_type(Tok::VarEnd, "end of print statement");
            body.push_back(std::move(s));
        } else if (tok.type == Tok::BlockBegin) {
            next();
            if (end_names && cur().type == Tok::Name &&
                std::find(end_names->begin(), end_names->end(), cur().text) != end_names->end()) {
                end_stack_.pop_back();
                return body;
            }
            parse_statement(body);
            expect_type(Tok::BlockEnd, "end of statement block");
        } else {
            error("unexpected '" + describe(tok) + "'");
        }
    }
    if (end_names) end_stack_.pop_back();
    return body;
}

Body Parser::parse_statements(std::vector<std::string_view> end_names, bool drop_needle) {
    skip_op(":");
    expect_type(Tok::BlockEnd, "end of statement block");
    Body body = subparse(&end_names);
    if (cur().type == Tok::Eof) {
        end_stack_.push_back(end_names);
        fail_eof();
    }
    if (drop_needle) next();
    return body;
}

void Parser::parse_statement(Body& body) {
    const Token& tok = cur();
    if (tok.type != Tok::Name) error("tag name expected");
    const std::string name = tok.text;
    const SrcPos pos = tok.pos;
    tag_stack_.push_back(name);
    if (name == "for") {
        body.push_back(parse_for());
    } else if (name == "if") {
        body.push_back(parse_if());
    } else if (name == "set") {
        body.push_back(parse_set());
    } else if (name == "macro") {
        body.push_back(parse_macro());
    } else if (name == "call") {
        body.push_back(parse_call_block());
    } else if (name == "filter") {
        body.push_back(parse_filter_block());
    } else if (name == "generation") {
        // Hugging Face's extension: renders its body (as a call block with no macro).
        next();
        auto s = stmt(StmtKind::CallBlock, pos);
        s->macro = std::make_shared<MacroDef>();
        s->macro->name = "caller";
        s->macro->pos = pos;
        int saved = loop_depth_;
        loop_depth_ = 0;
        s->macro->body = parse_statements({"endgeneration"}, true);
        loop_depth_ = saved;
        body.push_back(std::move(s));
    } else if (name == "break" || name == "continue") {
        if (loop_depth_ == 0) error("'" + name + "' outside loop");
        next();
        body.push_back(stmt(name == "break" ? StmtKind::Break : StmtKind::Continue, pos));
    } else if (name == "print") {
        next();
        auto s = stmt(StmtKind::Print, pos);
        s->expr = parse_tuple(false, true, {}, false);
        body.push_back(std::move(s));
    } else if (name == "with") {
        body.push_back(parse_with());
    } else if (name == "block" || name == "extends" || name == "include" || name == "import" ||
               name == "from" || name == "autoescape") {
        error("the '" + name + "' tag is not supported in chat templates");
    } else {
        tag_stack_.pop_back();
        std::string msg = "Encountered unknown tag '" + name + "'.";
        if (!end_stack_.empty()) {
            msg += " Jinja was looking for the following tags:";
            bool first = true;
            for (auto n : end_stack_.back()) {
                msg += first ? " '" : " or '";
                msg += std::string(n) + "'";
                first = false;
            }
            msg += ".";
        }
        if (!tag_stack_.empty()) msg += " The innermost block that needs to be closed is '" + tag_stack_.back() + "'.";
        error_at(pos, msg);
    }
    tag_stack_.pop_back();
}

StmtPtr Parser::parse_for() {
    auto s = stmt(StmtKind::For, next().pos);
    s->target = parse_assign_target(true, false, {"in"}, false);
    expect_name("in");
    s->expr = parse_tuple(false, false, {"recursive"}, false);
    if (skip_name("if")) s->cond = parse_expression(true);
    if (is_name(cur(), "recursive")) error("recursive for-loops are not supported");
    ++loop_depth_;
    s->body = parse_statements({"endfor", "else"}, false);
    --loop_depth_;
    if (next().text == "endfor") return s;
    s->else_body = parse_statements({"endfor"}, true);
    return s;
}

StmtPtr Parser::parse_if() {
    auto s = stmt(StmtKind::If, next().pos);
    for (;;) {
        ExprPtr test = parse_tuple(false, false, {}, false);
        Body body = parse_statements({"elif", "else", "endif"}, false);
        s->branches.emplace_back(std::move(test), std::move(body));
        const Token& tok = next();
        if (tok.text == "elif") continue;
        if (tok.text == "else") s->else_body = parse_statements({"endif"}, true);
        break;
    }
    return s;
}

StmtPtr Parser::parse_set() {
    auto s = stmt(StmtKind::Set, next().pos);
    s->target = parse_assign_target(true, false, {}, true);
    if (skip_op("=")) {
        s->expr = parse_tuple(false, true, {}, false);
        return s;
    }
    s->kind = StmtKind::SetBlock;
    s->filter = parse_filter(node(ExprOp::BlockValue, s->pos), false);
    s->body = parse_statements({"endset"}, true);
    return s;
}

StmtPtr Parser::parse_with() {
    auto s = stmt(StmtKind::With, next().pos);
    while (cur().type != Tok::BlockEnd) {
        if (!s->with_vars.empty()) expect_op(",");
        ExprPtr target = parse_assign_target(true, false, {}, false);
        expect_op("=");
        s->with_vars.emplace_back(std::move(target), parse_expression(true));
    }
    s->body = parse_statements({"endwith"}, true);
    return s;
}

void Parser::parse_signature(MacroDef& m) {
    expect_op("(");
    while (!is_op(cur(), ")")) {
        if (!m.params.empty()) expect_op(",");
        m.params.push_back(parse_assign_target(false, true, {}, false)->name);
        if (skip_op("="))
            m.defaults.push_back(parse_expression(true));
        else if (!m.defaults.empty())
            error("non-default argument follows default argument");
    }
    expect_op(")");
}

StmtPtr Parser::parse_macro() {
    auto s = stmt(StmtKind::Macro, next().pos);
    s->macro = std::make_shared<MacroDef>();
    s->macro->pos = s->pos;
    s->macro->name = parse_assign_target(false, true, {}, false)->name;
    parse_signature(*s->macro);
    int saved = loop_depth_;
    loop_depth_ = 0;
    s->macro->body = parse_statements({"endmacro"}, true);
    loop_depth_ = saved;
    scan_macro_names(*s->macro);
    return s;
}

StmtPtr Parser::parse_call_block() {
    auto s = stmt(StmtKind::CallBlock, next().pos);
    s->macro = std::make_shared<MacroDef>();
    s->macro->name = "caller";
    s->macro->pos = s->pos;
    if (is_op(cur(), "(")) parse_signature(*s->macro);
    s->expr = parse_expression(true);
    if (s->expr->op != ExprOp::Call) error_at(s->pos, "expected call");
    int saved = loop_depth_;
    loop_depth_ = 0;
    s->macro->body = parse_statements({"endcall"}, true);
    loop_depth_ = saved;
    scan_macro_names(*s->macro);
    return s;
}

StmtPtr Parser::parse_filter_block() {
    auto s = stmt(StmtKind::FilterBlock, next().pos);
    s->filter = parse_filter(node(ExprOp::BlockValue, s->pos), true);
    s->body = parse_statements({"endfilter"}, true);
    return s;
}

// Which of varargs / kwargs / caller the macro body reads (jinja2 decides the signature so).
void Parser::scan_expr(const Expr* e, MacroDef& m) {
    if (!e) return;
    if (e->op == ExprOp::Name) {
        if (e->name == "varargs") m.catch_varargs = true;
        if (e->name == "kwargs") m.catch_kwargs = true;
        if (e->name == "caller") m.uses_caller = true;
    }
    for (const Expr* x : {e->a.get(), e->b.get(), e->c.get(), e->d.get(), e->dyn_args.get(), e->dyn_kwargs.get()})
        scan_expr(x, m);
    for (const auto& x : e->args) scan_expr(x.get(), m);
    for (const auto& kv : e->kwargs) scan_expr(kv.second.get(), m);
}

void Parser::scan_body(const Body& body, MacroDef& m) {
    for (const auto& s : body) {
        scan_expr(s->expr.get(), m);
        scan_expr(s->cond.get(), m);
        scan_expr(s->filter.get(), m);
        for (const auto& br : s->branches) {
            scan_expr(br.first.get(), m);
            scan_body(br.second, m);
        }
        for (const auto& wv : s->with_vars) scan_expr(wv.second.get(), m);
        scan_body(s->body, m);
        scan_body(s->else_body, m);
        if (s->macro) {
            for (const auto& d : s->macro->defaults) scan_expr(d.get(), m);
            scan_body(s->macro->body, m);
        }
    }
}

void Parser::scan_macro_names(MacroDef& m) {
    scan_body(m.body, m);
}

ExprPtr Parser::parse_assign_target(bool with_tuple, bool name_only, Names extra_end, bool with_namespace) {
    if (with_namespace && cur().type == Tok::Name && is_op(look(), ".")) {
        auto e = node(ExprOp::NSRef, cur().pos);
        e->a = node(ExprOp::Name, cur().pos);
        e->a->name = next().text;
        next();  // .
        e->name = expect_identifier();
        return e;
    }
    ExprPtr target;
    if (name_only) {
        SrcPos pos = cur().pos;
        target = node(ExprOp::Name, pos);
        target->name = expect_identifier();
    } else if (with_tuple) {
        target = parse_tuple(true, true, extra_end, false);
    } else {
        target = parse_primary();
    }
    check_assignable(target.get());
    return target;
}

void Parser::check_assignable(const Expr* e) const {
    if (e->op == ExprOp::Name) {
        if (e->name == "true" || e->name == "false" || e->name == "none" || e->name == "True" ||
            e->name == "False" || e->name == "None")
            error_at(e->pos, "can't assign to '" + e->name + "'");
        return;
    }
    if (e->op == ExprOp::Tuple) {
        for (const auto& x : e->args) check_assignable(x.get());
        return;
    }
    error_at(e->pos, "can't assign to this expression");
}

}  // namespace arbor::tmpl
