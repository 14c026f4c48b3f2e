// Tree-walking interpreter for the template syntax tree, with jinja2's scoping rules:
// if-blocks share their scope; each for-loop iteration, macro call, call/filter/set block gets
// a child scope; macros see their defining scope as it is when they are called.
//
// Everything it does is bounded (Limits): output and string sizes, total loop iterations,
// macro call depth, evaluation nesting and wall time. Exceeding a bound is a RenderError.
#pragma once

#include "template/ast.hpp"
#include "template/errors.hpp"
#include "template/value.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace arbor::tmpl {

struct Limits {
    size_t max_output_bytes = size_t(16) << 20;
    size_t max_string_bytes = size_t(16) << 20;
    uint64_t max_loop_iterations = 1'000'000;
    int max_call_depth = 100;
    int max_eval_depth = 1000;
    double max_seconds = 10.0;
};

struct Scope {
    std::shared_ptr<Scope> parent;
    std::vector<std::pair<std::string, Value>> vars;

    const Value* find(std::string_view name) const;
    void set(std::string_view name, Value v);
};
using ScopePtr = std::shared_ptr<Scope>;

enum class Flow { Normal, Break, Continue };

class Interpreter {
public:
    Interpreter(std::shared_ptr<const TemplateAst> ast, Limits limits, std::optional<std::string> now_iso);

    // Renders the template with `vars` as the template's variables (over the globals).
    std::string render(std::vector<std::pair<std::string, Value>> vars);

    // Helpers for the built-ins.
    Value call(const Value& callee, CallArgs& args, SrcPos at);
    void check_size(size_t bytes) const;  // a produced string/list may not exceed the bound
    void tick();                          // counts work; enforces the time bound
    const std::optional<std::string>& now_iso() const { return now_iso_; }
    // Objects that may end up in reference cycles (namespaces, loops); released after render.
    void track(const std::shared_ptr<Object>& o) { objects_.push_back(o); }
    const Limits& limits() const { return limits_; }

    // Called by macro callables.
    Value call_macro(const MacroDef& def, const ScopePtr& closure, CallArgs& args);

private:
    std::shared_ptr<const TemplateAst> ast_;
    Limits limits_;
    std::optional<std::string> now_iso_;
    std::chrono::steady_clock::time_point deadline_;
    uint64_t steps_ = 0;
    uint64_t iterations_ = 0;
    int call_depth_ = 0;
    int eval_depth_ = 0;
    const Value* block_value_ = nullptr;
    // Scopes that macros close over (a macro stored in its own scope is a cycle) and objects
    // that can hold themselves: emptied when the render ends, so nothing leaks.
    std::vector<std::weak_ptr<Scope>> closure_scopes_;
    std::vector<std::weak_ptr<Object>> objects_;
    void release_cycles();
    // Set while printing an expression made only of literals: jinja2 evaluates those when it
    // compiles the template, where a failed subscript (even a slice) gives Undefined.
    bool const_output_ = false;

    struct DepthGuard;

    Flow exec(const Body& body, const ScopePtr& scope, std::string& out);
    Flow exec_stmt(const Stmt& s, const ScopePtr& scope, std::string& out);
    void exec_for(const Stmt& s, const ScopePtr& scope, std::string& out);
    void assign(const Expr& target, Value v, const ScopePtr& scope);
    std::string render_block(const Body& body, const ScopePtr& scope);
    void append(std::string& out, const std::string& text);

    Value eval(const Expr& e, const ScopePtr& scope);
    Value eval_inner(const Expr& e, const ScopePtr& scope);
    Value eval_binary(const Expr& e, const ScopePtr& scope);
    Value eval_compare(const Expr& e, const ScopePtr& scope);
    Value eval_slice(const Expr& e, const ScopePtr& scope);
    Value eval_slice_checked(const Value& obj, const Value* start, const Value* stop, const Value* step);
    CallArgs eval_args(const Expr& e, const ScopePtr& scope);
};

struct Interpreter::DepthGuard {
    Interpreter& in;
    explicit DepthGuard(Interpreter& i) : in(i) {
        if (++in.eval_depth_ > in.limits_.max_eval_depth) {
            --in.eval_depth_;
            fail("template evaluation nested deeper than " + std::to_string(in.limits_.max_eval_depth));
        }
    }
    ~DepthGuard() { --in.eval_depth_; }
};

// Arithmetic with Python semantics (used by the interpreter and a few filters).
Value py_add(const Value& a, const Value& b);
Value py_arith(ExprOp op, const Value& a, const Value& b);

}  // namespace arbor::tmpl
