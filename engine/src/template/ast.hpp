// Template syntax tree: expressions and statements as the parser builds them and the
// interpreter walks them. One generic node type each keeps the tree easy to build and bound.
#pragma once

#include "template/value.hpp"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace arbor::tmpl {

enum class ExprOp {
    Const,       // value
    Name,        // name
    GetAttr,     // a.name
    GetItem,     // a[b]
    Slice,       // a[b:c:d]: a, then b/c/d (each may be null)
    Call,        // a(args, kwargs, *dyn_args, **dyn_kwargs)
    Filter,      // a|name(args...); a is null in a {% filter %} / {% set %} block chain
    Test,        // a is name(args...)
    Not,         // not a
    Neg,         // -a
    Pos,         // +a
    Add, Sub, Mul, Div, FloorDiv, Mod, Pow,  // a op b
    And, Or,     // a and b, a or b
    Compare,     // a op1 args[0] op2 args[1] ...
    Concat,      // args[0] ~ args[1] ~ ...
    CondExpr,    // b if a else c (c may be null)
    List,        // [args...]
    Tuple,       // (args...)
    Dict,        // {args[0]: args[1], ...}
    NSRef,       // name.attr as an assignment target
    BlockValue,  // the rendered body of a {% filter %} or {% set %} block
};

enum class CmpKind { Eq, Ne, Lt, Le, Gt, Ge, In, NotIn };

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
    ExprOp op = ExprOp::Const;
    SrcPos pos;
    Value value;
    std::string name;
    ExprPtr a, b, c, d;
    std::vector<ExprPtr> args;
    std::vector<std::pair<std::string, ExprPtr>> kwargs;
    ExprPtr dyn_args, dyn_kwargs;
    std::vector<CmpKind> cmp;
    // Filter/Test whose name is unknown: jinja2 rejects it at compile time unless it sits in
    // an if-statement or a conditional expression, where the error waits until it runs.
    bool unknown = false;
};

enum class StmtKind {
    Text, Print, If, For, Set, SetBlock, Macro, CallBlock, FilterBlock, Break, Continue, With,
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct MacroDef {
    std::string name;
    std::vector<std::string> params;
    std::vector<ExprPtr> defaults;  // for the last defaults.size() params
    bool catch_varargs = false;     // the body reads `varargs`
    bool catch_kwargs = false;      // the body reads `kwargs`
    bool uses_caller = false;       // the body reads `caller`
    Body body;
    SrcPos pos;
};

struct Stmt {
    StmtKind kind = StmtKind::Text;
    SrcPos pos;
    std::string text;                              // Text
    ExprPtr expr;                                  // Print, Set value, For iterable, CallBlock call
    ExprPtr target;                                // Set / SetBlock / For target
    ExprPtr cond;                                  // For: the `if` filter
    ExprPtr filter;                                // SetBlock / FilterBlock: filter chain on BlockValue
    std::vector<std::pair<ExprPtr, Body>> branches;  // If / elif
    Body body, else_body;
    std::shared_ptr<MacroDef> macro;               // Macro, CallBlock (the caller)
    std::vector<std::pair<ExprPtr, ExprPtr>> with_vars;  // With: target = value
};

struct TemplateAst {
    Body body;
    std::string source;  // normalised source the positions refer to
};

}  // namespace arbor::tmpl
