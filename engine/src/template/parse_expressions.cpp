// Template parser, expressions: jinja2's precedence from conditional expressions down to
// primaries, with subscripts, slices, calls, filters and tests.
#include "template/builtins.hpp"
#include "template/parser_impl.hpp"

namespace arbor::tmpl {

bool Parser::is_tuple_end(Names extra_end) const {
    const Token& tok = cur();
    if (tok.type == Tok::VarEnd || tok.type == Tok::BlockEnd || is_op(tok, ")")) return true;
    for (auto n : extra_end)
        if (is_name(tok, n)) return true;
    return false;
}

ExprPtr Parser::parse_tuple(bool simplified, bool with_condexpr, Names extra_end, bool explicit_parens) {
    SrcPos pos = cur().pos;
    std::vector<ExprPtr> items;
    bool is_tuple = false;
    for (;;) {
        if (!items.empty()) expect_op(",");
        if (is_tuple_end(extra_end)) break;
        if (simplified)
            items.push_back(parse_primary());
        else
            items.push_back(parse_expression(with_condexpr));
        if (is_op(cur(), ","))
            is_tuple = true;
        else
            break;
    }
    if (!is_tuple) {
        if (!items.empty()) return std::move(items[0]);
        if (!explicit_parens) error("expected an expression, got '" + describe(cur()) + "'");
    }
    auto e = node(ExprOp::Tuple, pos);
    e->args = std::move(items);
    return e;
}

ExprPtr Parser::parse_expression(bool with_condexpr) {
    return with_condexpr ? parse_condexpr() : parse_or();
}

ExprPtr Parser::parse_condexpr() {
    DepthGuard guard(*this);
    SrcPos pos = cur().pos;
    ExprPtr expr1 = parse_or();
    while (skip_name("if")) {
        auto e = node(ExprOp::CondExpr, pos);
        e->a = parse_or();
        if (skip_name("else")) e->c = parse_condexpr();
        e->b = std::move(expr1);
        expr1 = std::move(e);
        pos = cur().pos;
    }
    return expr1;
}

ExprPtr Parser::binary(ExprOp op, ExprPtr l, ExprPtr r, SrcPos pos) {
    auto e = node(op, pos);
    e->a = std::move(l);
    e->b = std::move(r);
    return e;
}

ExprPtr Parser::parse_or() {
    ExprPtr left = parse_and();
    while (is_name(cur(), "or")) {
        SrcPos pos = next().pos;
        left = binary(ExprOp::Or, std::move(left), parse_and(), pos);
    }
    return left;
}

ExprPtr Parser::parse_and() {
    ExprPtr left = parse_not();
    while (is_name(cur(), "and")) {
        SrcPos pos = next().pos;
        left = binary(ExprOp::And, std::move(left), parse_not(), pos);
    }
    return left;
}

ExprPtr Parser::parse_not() {
    DepthGuard guard(*this);
    if (is_name(cur(), "not")) {
        auto e = node(ExprOp::Not, next().pos);
        e->a = parse_not();
        return e;
    }
    return parse_compare();
}

ExprPtr Parser::parse_compare() {
    SrcPos pos = cur().pos;
    ExprPtr expr = parse_math1();
    std::vector<CmpKind> ops;
    std::vector<ExprPtr> rhs;
    for (;;) {
        const Token& tok = cur();
        CmpKind k;
        if (is_op(tok, "==")) k = CmpKind::Eq;
        else if (is_op(tok, "!=")) k = CmpKind::Ne;
        else if (is_op(tok, "<")) k = CmpKind::Lt;
        else if (is_op(tok, "<=")) k = CmpKind::Le;
        else if (is_op(tok, ">")) k = CmpKind::Gt;
        else if (is_op(tok, ">=")) k = CmpKind::Ge;
        else if (is_name(tok, "in")) k = CmpKind::In;
        else if (is_name(tok, "not") && is_name(look(), "in")) {
            next();
            k = CmpKind::NotIn;
        } else {
            break;
        }
        next();
        ops.push_back(k);
        rhs.push_back(parse_math1());
    }
    if (ops.empty()) return expr;
    auto e = node(ExprOp::Compare, pos);
    e->a = std::move(expr);
    e->cmp = std::move(ops);
    e->args = std::move(rhs);
    return e;
}

ExprPtr Parser::parse_math1() {
    ExprPtr left = parse_concat();
    while (is_op(cur(), "+") || is_op(cur(), "-")) {
        ExprOp op = cur().text == "+" ? ExprOp::Add : ExprOp::Sub;
        SrcPos pos = next().pos;
        left = binary(op, std::move(left), parse_concat(), pos);
    }
    return left;
}

ExprPtr Parser::parse_concat() {
    SrcPos pos = cur().pos;
    ExprPtr first = parse_math2();
    if (!is_op(cur(), "~")) return first;
    auto e = node(ExprOp::Concat, pos);
    e->args.push_back(std::move(first));
    while (skip_op("~")) e->args.push_back(parse_math2());
    return e;
}

ExprPtr Parser::parse_math2() {
    ExprPtr left = parse_pow();
    for (;;) {
        ExprOp op;
        if (is_op(cur(), "*")) op = ExprOp::Mul;
        else if (is_op(cur(), "/")) op = ExprOp::Div;
        else if (is_op(cur(), "//")) op = ExprOp::FloorDiv;
        else if (is_op(cur(), "%")) op = ExprOp::Mod;
        else break;
        SrcPos pos = next().pos;
        left = binary(op, std::move(left), parse_pow(), pos);
    }
    return left;
}

ExprPtr Parser::parse_pow() {
    ExprPtr left = parse_unary(true);
    while (is_op(cur(), "**")) {
        SrcPos pos = next().pos;
        left = binary(ExprOp::Pow, std::move(left), parse_unary(true), pos);
    }
    return left;
}

ExprPtr Parser::parse_unary(bool with_filter) {
    DepthGuard guard(*this);
    ExprPtr n;
    if (is_op(cur(), "-") || is_op(cur(), "+")) {
        ExprOp op = cur().text == "-" ? ExprOp::Neg : ExprOp::Pos;
        n = node(op, next().pos);
        n->a = parse_unary(false);
    } else {
        n = parse_primary();
    }
    n = parse_postfix(std::move(n));
    if (with_filter) n = parse_filter_expr(std::move(n));
    return n;
}

ExprPtr Parser::parse_primary() {
    DepthGuard guard(*this);
    const Token& tok = cur();
    if (tok.type == Tok::Name) {
        ExprPtr e;
        if (tok.text == "true" || tok.text == "True" || tok.text == "false" || tok.text == "False") {
            e = node(ExprOp::Const, tok.pos);
            e->value = Value::boolean(tok.text[0] == 't' || tok.text[0] == 'T');
        } else if (tok.text == "none" || tok.text == "None") {
            e = node(ExprOp::Const, tok.pos);
            e->value = Value::none();
        } else {
            e = node(ExprOp::Name, tok.pos);
            e->name = tok.text;
        }
        next();
        return e;
    }
    if (tok.type == Tok::String) {
        auto e = node(ExprOp::Const, tok.pos);
        std::string s;
        while (cur().type == Tok::String) s += next().text;
        e->value = Value::string(std::move(s));
        return e;
    }
    if (tok.type == Tok::Int || tok.type == Tok::Float) {
        auto e = node(ExprOp::Const, tok.pos);
        e->value = tok.type == Tok::Int ? Value::integer(tok.ival) : Value::number(tok.fval);
        next();
        return e;
    }
    if (is_op(tok, "(")) {
        next();
        ExprPtr e = parse_tuple(false, true, {}, true);
        expect_op(")");
        return e;
    }
    if (is_op(tok, "[")) {
        auto e = node(ExprOp::List, next().pos);
        while (!is_op(cur(), "]")) {
            if (!e->args.empty()) expect_op(",");
            if (is_op(cur(), "]")) break;
            e->args.push_back(parse_expression(true));
        }
        expect_op("]");
        return e;
    }
    if (is_op(tok, "{")) {
        auto e = node(ExprOp::Dict, next().pos);
        while (!is_op(cur(), "}")) {
            if (!e->args.empty()) expect_op(",");
            if (is_op(cur(), "}")) break;
            e->args.push_back(parse_expression(true));
            expect_op(":");
            e->args.push_back(parse_expression(true));
        }
        expect_op("}");
        return e;
    }
    if (tok.type == Tok::Eof) fail_eof();
    error("unexpected '" + describe(tok) + "'");
}

ExprPtr Parser::parse_postfix(ExprPtr n) {
    for (;;) {
        if (is_op(cur(), ".") || is_op(cur(), "["))
            n = parse_subscript(std::move(n));
        else if (is_op(cur(), "("))
            n = parse_call(std::move(n));
        else
            return n;
    }
}

ExprPtr Parser::parse_filter_expr(ExprPtr n) {
    for (;;) {
        if (is_op(cur(), "|"))
            n = parse_filter(std::move(n), false);
        else if (is_name(cur(), "is"))
            n = parse_test(std::move(n));
        else if (is_op(cur(), "("))
            n = parse_call(std::move(n));
        else
            return n;
    }
}

ExprPtr Parser::parse_subscript(ExprPtr n) {
    const Token& tok = next();
    SrcPos pos = tok.pos;
    if (tok.text == ".") {
        const Token& attr = next();
        if (attr.type == Tok::Name) {
            auto e = node(ExprOp::GetAttr, pos);
            e->a = std::move(n);
            e->name = attr.text;
            return e;
        }
        if (attr.type != Tok::Int) error_at(attr.pos, "expected name or number");
        auto e = node(ExprOp::GetItem, pos);
        e->a = std::move(n);
        e->b = node(ExprOp::Const, attr.pos);
        e->b->value = Value::integer(attr.ival);
        return e;
    }
    std::vector<ExprPtr> args;
    while (!is_op(cur(), "]")) {
        if (!args.empty()) expect_op(",");
        args.push_back(parse_subscribed());
    }
    expect_op("]");
    auto e = node(ExprOp::GetItem, pos);
    e->a = std::move(n);
    if (args.size() == 1) {
        if (args[0]->op == ExprOp::Slice) {
            args[0]->a = std::move(e->a);
            return std::move(args[0]);
        }
        e->b = std::move(args[0]);
    } else {
        e->b = node(ExprOp::Tuple, pos);
        e->b->args = std::move(args);
    }
    return e;
}

// One subscript: an expression or a slice [b]:[c][:[d]]. A Slice node keeps its bounds in
// b, c and d; parse_subscript fills in the sliced object (a).
ExprPtr Parser::parse_subscribed() {
    SrcPos pos = cur().pos;
    ExprPtr start;
    if (is_op(cur(), ":")) {
        next();
    } else {
        ExprPtr e = parse_expression(true);
        if (!is_op(cur(), ":")) return e;
        next();
        start = std::move(e);
    }
    auto s = node(ExprOp::Slice, pos);
    s->b = std::move(start);
    if (!is_op(cur(), ":") && !is_op(cur(), "]") && !is_op(cur(), ",")) s->c = parse_expression(true);
    if (is_op(cur(), ":")) {
        next();
        if (!is_op(cur(), "]") && !is_op(cur(), ",")) s->d = parse_expression(true);
    }
    return s;
}

void Parser::parse_call_args(Expr& e) {
    SrcPos pos = cur().pos;
    expect_op("(");
    bool require_comma = false;
    auto ensure = [&](bool ok) {
        if (!ok) error_at(pos, "invalid syntax for function call expression");
    };
    while (!is_op(cur(), ")")) {
        if (require_comma) {
            expect_op(",");
            if (is_op(cur(), ")")) break;
        }
        if (is_op(cur(), "*")) {
            ensure(!e.dyn_args && !e.dyn_kwargs);
            next();
            e.dyn_args = parse_expression(true);
        } else if (is_op(cur(), "**")) {
            ensure(!e.dyn_kwargs);
            next();
            e.dyn_kwargs = parse_expression(true);
        } else if (cur().type == Tok::Name && is_op(look(), "=")) {
            ensure(!e.dyn_kwargs);
            std::string key = next().text;
            next();
            e.kwargs.emplace_back(std::move(key), parse_expression(true));
        } else {
            ensure(!e.dyn_args && !e.dyn_kwargs && e.kwargs.empty());
            e.args.push_back(parse_expression(true));
        }
        require_comma = true;
    }
    expect_op(")");
}

ExprPtr Parser::parse_call(ExprPtr callee) {
    auto e = node(ExprOp::Call, callee->pos);
    e->a = std::move(callee);
    parse_call_args(*e);
    return e;
}

ExprPtr Parser::parse_filter(ExprPtr n, bool start_inline) {
    while (is_op(cur(), "|") || start_inline) {
        if (!start_inline) next();
        start_inline = false;
        SrcPos pos = cur().pos;
        std::string name = expect_identifier();
        while (is_op(cur(), ".")) {
            next();
            name += "." + expect_identifier();
        }
        auto e = node(ExprOp::Filter, pos);
        e->a = std::move(n);
        e->name = name;
        e->unknown = !is_known_filter(name);
        if (is_op(cur(), "(")) parse_call_args(*e);
        n = std::move(e);
    }
    return n;
}

ExprPtr Parser::parse_test(ExprPtr n) {
    SrcPos pos = next().pos;  // is
    bool negated = skip_name("not");
    std::string name = expect_identifier();
    while (is_op(cur(), ".")) {
        next();
        name += "." + expect_identifier();
    }
    auto e = node(ExprOp::Test, pos);
    e->a = std::move(n);
    e->name = name;
    e->unknown = !is_known_test(name);
    const Token& tok = cur();
    if (is_op(tok, "(")) {
        parse_call_args(*e);
    } else if ((tok.type == Tok::Name || tok.type == Tok::String || tok.type == Tok::Int ||
                tok.type == Tok::Float || is_op(tok, "[") || is_op(tok, "{")) &&
               !is_name(tok, "else") && !is_name(tok, "or") && !is_name(tok, "and")) {
        if (is_name(tok, "is")) error("You cannot chain multiple tests with is");
        e->args.push_back(parse_postfix(parse_primary()));
    }
    if (!negated) return e;
    auto neg = node(ExprOp::Not, pos);
    neg->a = std::move(e);
    return neg;
}

}  // namespace arbor::tmpl
