// Internal to the template parser: its state and the methods that parse_statements.cpp and
// parse_expressions.cpp define. The grammar and its corner cases (tuples without parentheses,
// tests taking one bare argument, adjacent string literals) follow jinja2 3.1's parser.
#pragma once

#include "template/ast.hpp"
#include "template/errors.hpp"
#include "template/lexer.hpp"
#include "template/parser.hpp"

#include <algorithm>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace arbor::tmpl {

using Names = std::initializer_list<std::string_view>;

class Parser {
public:
    explicit Parser(std::vector<Token> toks) : t_(std::move(toks)) {}

    Body parse_all() {
        Body body = subparse(nullptr);
        if (cur().type != Tok::Eof) error("unexpected end tag");
        return body;
    }

private:
    std::vector<Token> t_;
    size_t k_ = 0;
    int depth_ = 0;
    int loop_depth_ = 0;  // for break/continue: enclosing for-loops within the current macro
    std::vector<std::vector<std::string_view>> end_stack_;
    std::vector<std::string> tag_stack_;

    struct DepthGuard {
        Parser& p;
        explicit DepthGuard(Parser& parser) : p(parser) {
            if (++p.depth_ > kMaxParseDepth) p.error("template nesting deeper than " + std::to_string(kMaxParseDepth));
        }
        ~DepthGuard() { --p.depth_; }
    };

    const Token& cur() const { return t_[k_]; }
    const Token& look(size_t n = 1) const { return t_[std::min(k_ + n, t_.size() - 1)]; }
    const Token& next() {
        const Token& tok = t_[k_];
        if (k_ + 1 < t_.size()) ++k_;
        return tok;
    }
    [[noreturn]] void error(const std::string& msg) const { fail_at(cur().pos, msg); }
    [[noreturn]] void error_at(SrcPos pos, const std::string& msg) const { fail_at(pos, msg); }

    static bool is_op(const Token& tok, std::string_view op) { return tok.type == Tok::Op && tok.text == op; }
    static bool is_name(const Token& tok, std::string_view n) { return tok.type == Tok::Name && tok.text == n; }
    bool skip_op(std::string_view op) {
        if (!is_op(cur(), op)) return false;
        next();
        return true;
    }
    bool skip_name(std::string_view n) {
        if (!is_name(cur(), n)) return false;
        next();
        return true;
    }

    static std::string describe(const Token& tok) {
        switch (tok.type) {
            case Tok::Data: return "template data";
            case Tok::VarBegin: return "begin of print statement";
            case Tok::VarEnd: return "end of print statement";
            case Tok::BlockBegin: return "begin of statement block";
            case Tok::BlockEnd: return "end of statement block";
            case Tok::Name: return tok.text;
            case Tok::String: return "string";
            case Tok::Int: return "integer";
            case Tok::Float: return "float";
            case Tok::Op: return tok.text;
            case Tok::Eof: return "end of template";
        }
        return "token";
    }

    void expect_op(std::string_view op) {
        if (!skip_op(op)) error("expected '" + std::string(op) + "', got '" + describe(cur()) + "'");
    }
    void expect_name(std::string_view n) {
        if (!skip_name(n)) error("expected '" + std::string(n) + "', got '" + describe(cur()) + "'");
    }
    std::string expect_identifier() {
        if (cur().type != Tok::Name) error("expected a name, got '" + describe(cur()) + "'");
        return next().text;
    }
    void expect_type(Tok type, const char* what) {
        if (cur().type != type) {
            if (cur().type == Tok::Eof) fail_eof();
            error(std::string("expected ") + what + ", got '" + describe(cur()) + "'");
        }
        next();
    }

    [[noreturn]] void fail_eof() {
        std::string msg = "unexpected end of template.";
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
        error(msg);
    }

    static ExprPtr node(ExprOp op, SrcPos pos) {
        auto e = std::make_unique<Expr>();
        e->op = op;
        e->pos = pos;
        return e;
    }
    static StmtPtr stmt(StmtKind kind, SrcPos pos) {
        auto s = std::make_unique<Stmt>();
        s->kind = kind;
        s->pos = pos;
        return s;
    }

    // Statements (parse_statements.cpp).
    Body subparse(const std::vector<std::string_view>* end_names);
    Body parse_statements(std::vector<std::string_view> end_names, bool drop_needle);
    void parse_statement(Body& body);
    StmtPtr parse_for();
    StmtPtr parse_if();
    StmtPtr parse_set();
    StmtPtr parse_with();
    void parse_signature(MacroDef& m);
    StmtPtr parse_macro();
    StmtPtr parse_call_block();
    StmtPtr parse_filter_block();
    // Which of varargs / kwargs / caller the macro body reads (jinja2 decides the signature so).
    static void scan_expr(const Expr* e, MacroDef& m);
    static void scan_body(const Body& body, MacroDef& m);
    static void scan_macro_names(MacroDef& m);
    ExprPtr parse_assign_target(bool with_tuple, bool name_only, Names extra_end, bool with_namespace);
    void check_assignable(const Expr* e) const;

    // Expressions (parse_expressions.cpp).
    bool is_tuple_end(Names extra_end) const;
    ExprPtr parse_tuple(bool simplified, bool with_condexpr, Names extra_end, bool explicit_parens);
    ExprPtr parse_expression(bool with_condexpr);
    ExprPtr parse_condexpr();
    ExprPtr binary(ExprOp op, ExprPtr l, ExprPtr r, SrcPos pos);
    ExprPtr parse_or();
    ExprPtr parse_and();
    ExprPtr parse_not();
    ExprPtr parse_compare();
    ExprPtr parse_math1();
    ExprPtr parse_concat();
    ExprPtr parse_math2();
    ExprPtr parse_pow();
    ExprPtr parse_unary(bool with_filter);
    ExprPtr parse_primary();
    ExprPtr parse_postfix(ExprPtr n);
    ExprPtr parse_filter_expr(ExprPtr n);
    ExprPtr parse_subscript(ExprPtr n);
    // One subscript: an expression or a slice [b]:[c][:[d]]. A Slice node keeps its bounds in
    // b, c and d; parse_subscript fills in the sliced object (a).
    ExprPtr parse_subscribed();
    void parse_call_args(Expr& e);
    ExprPtr parse_call(ExprPtr callee);
    ExprPtr parse_filter(ExprPtr n, bool start_inline);
    ExprPtr parse_test(ExprPtr n);
};

}  // namespace arbor::tmpl
