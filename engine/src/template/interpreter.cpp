// Template interpreter: statements and scopes (see interpreter.hpp). Expressions are evaluated
// in eval.cpp.
#include "template/interpreter.hpp"

#include "template/builtins.hpp"
#include "template/objects.hpp"
#include "template/pyops.hpp"

namespace arbor::tmpl {

const Value* Scope::find(std::string_view name) const {
    for (const Scope* s = this; s; s = s->parent.get())
        for (auto it = s->vars.rbegin(); it != s->vars.rend(); ++it)
            if (it->first == name) return &it->second;
    return nullptr;
}

void Scope::set(std::string_view name, Value v) {
    for (auto& kv : vars) {
        if (kv.first == name) {
            kv.second = std::move(v);
            return;
        }
    }
    vars.emplace_back(std::string(name), std::move(v));
}

namespace {

// An expression jinja2 can evaluate at compile time: literals combined by operators.
bool is_literal(const Expr& e) {
    switch (e.op) {
        case ExprOp::Const:
        case ExprOp::List:
        case ExprOp::Tuple:
        case ExprOp::Dict:
        case ExprOp::Slice:
        case ExprOp::GetItem:
        case ExprOp::Concat:
        case ExprOp::Compare:
        case ExprOp::CondExpr:
        case ExprOp::Not:
        case ExprOp::Neg:
        case ExprOp::Pos:
        case ExprOp::Add:
        case ExprOp::Sub:
        case ExprOp::Mul:
        case ExprOp::Div:
        case ExprOp::FloorDiv:
        case ExprOp::Mod:
        case ExprOp::Pow:
        case ExprOp::And:
        case ExprOp::Or: break;
        default: return false;
    }
    for (const Expr* x : {e.a.get(), e.b.get(), e.c.get(), e.d.get()})
        if (x && !is_literal(*x)) return false;
    for (const auto& x : e.args)
        if (!is_literal(*x)) return false;
    return true;
}

}  // namespace

Interpreter::Interpreter(std::shared_ptr<const TemplateAst> ast, Limits limits, std::optional<std::string> now_iso)
    : ast_(std::move(ast)), limits_(limits), now_iso_(std::move(now_iso)) {}

std::string Interpreter::render(std::vector<std::pair<std::string, Value>> vars) {
    deadline_ = std::chrono::steady_clock::now() +
                std::chrono::microseconds(int64_t(limits_.max_seconds * 1e6));
    auto globals = std::make_shared<Scope>();
    globals->vars = make_globals();
    auto root = std::make_shared<Scope>();
    root->parent = globals;
    for (auto& kv : vars) root->set(kv.first, std::move(kv.second));
    struct Release {
        Interpreter& in;
        ~Release() { in.release_cycles(); }
    } release{*this};
    closure_scopes_.push_back(root);
    std::string out;
    exec(ast_->body, root, out);
    return out;
}

void Interpreter::release_cycles() {
    // Hold everything first, then empty it: dropping one object's contents must not start a
    // chain of destructions (a long chain of namespaces would recurse deeply).
    std::vector<ScopePtr> scopes;
    std::vector<std::shared_ptr<Object>> objects;
    for (auto& w : closure_scopes_)
        if (auto s = w.lock()) scopes.push_back(std::move(s));
    for (auto& w : objects_)
        if (auto o = w.lock()) objects.push_back(std::move(o));
    std::vector<Value> dropped;
    for (auto& s : scopes) {
        for (auto& kv : s->vars) dropped.push_back(std::move(kv.second));
        s->vars.clear();
    }
    for (auto& o : objects) o->release();
    closure_scopes_.clear();
    objects_.clear();
}

void Interpreter::tick() {
    if ((++steps_ & 1023) == 0 && std::chrono::steady_clock::now() > deadline_)
        fail("rendering took longer than " + std::to_string(limits_.max_seconds) + " s");
}

void Interpreter::check_size(size_t bytes) const {
    if (bytes > limits_.max_string_bytes)
        fail("a value grew beyond " + std::to_string(limits_.max_string_bytes) + " bytes");
}

void Interpreter::append(std::string& out, const std::string& text) {
    if (out.size() + text.size() > limits_.max_output_bytes)
        fail("output exceeds " + std::to_string(limits_.max_output_bytes) + " bytes");
    out += text;
}

Flow Interpreter::exec(const Body& body, const ScopePtr& scope, std::string& out) {
    for (const auto& s : body) {
        Flow f = exec_stmt(*s, scope, out);
        if (f != Flow::Normal) return f;
    }
    return Flow::Normal;
}

std::string Interpreter::render_block(const Body& body, const ScopePtr& scope) {
    auto inner = std::make_shared<Scope>();
    inner->parent = scope;
    std::string buf;
    exec(body, inner, buf);
    return buf;
}

Flow Interpreter::exec_stmt(const Stmt& s, const ScopePtr& scope, std::string& out) {
    DepthGuard guard(*this);
    tick();
    try {
        switch (s.kind) {
            case StmtKind::Text: append(out, s.text); return Flow::Normal;
            case StmtKind::Print: {
                const_output_ = is_literal(*s.expr);
                Value v;
                try {
                    v = eval(*s.expr, scope);
                } catch (...) {
                    const_output_ = false;
                    throw;
                }
                const_output_ = false;
                append(out, to_str(v));
                return Flow::Normal;
            }
            case StmtKind::If:
                for (const auto& br : s.branches)
                    if (truthy(eval(*br.first, scope))) return exec(br.second, scope, out);
                return exec(s.else_body, scope, out);
            case StmtKind::For: exec_for(s, scope, out); return Flow::Normal;
            case StmtKind::Set: assign(*s.target, eval(*s.expr, scope), scope); return Flow::Normal;
            case StmtKind::SetBlock: {
                Value body = Value::string(render_block(s.body, scope));
                const Value* saved = block_value_;
                block_value_ = &body;
                Value v;
                try {
                    v = eval(*s.filter, scope);
                } catch (...) {
                    block_value_ = saved;
                    throw;
                }
                block_value_ = saved;
                assign(*s.target, std::move(v), scope);
                return Flow::Normal;
            }
            case StmtKind::FilterBlock: {
                Value body = Value::string(render_block(s.body, scope));
                const Value* saved = block_value_;
                block_value_ = &body;
                Value v;
                try {
                    v = eval(*s.filter, scope);
                } catch (...) {
                    block_value_ = saved;
                    throw;
                }
                block_value_ = saved;
                append(out, to_str(v));
                return Flow::Normal;
            }
            case StmtKind::Macro:
                closure_scopes_.push_back(scope);
                scope->set(s.macro->name, Value::callable(std::make_shared<MacroFn>(s.macro, scope, nullptr)));
                return Flow::Normal;
            case StmtKind::CallBlock: {
                closure_scopes_.push_back(scope);
                Value caller = Value::callable(std::make_shared<MacroFn>(s.macro, scope, nullptr));
                if (!s.expr) {
                    // {% generation %}: the body, rendered like a caller with no arguments.
                    CallArgs none;
                    append(out, to_str(call(caller, none, s.pos)));
                    return Flow::Normal;
                }
                const Expr& call_expr = *s.expr;
                Value callee = eval(*call_expr.a, scope);
                CallArgs args = eval_args(call_expr, scope);
                for (const auto& kv : args.kw)
                    if (kv.first == "caller") fail("caller was passed twice");
                args.kw.emplace_back("caller", caller);
                append(out, to_str(call(callee, args, call_expr.pos)));
                return Flow::Normal;
            }
            case StmtKind::With: {
                auto inner = std::make_shared<Scope>();
                inner->parent = scope;
                std::vector<Value> values;
                for (const auto& wv : s.with_vars) values.push_back(eval(*wv.second, scope));
                for (size_t k = 0; k < values.size(); ++k) assign(*s.with_vars[k].first, values[k], inner);
                return exec(s.body, inner, out);
            }
            case StmtKind::Break: return Flow::Break;
            case StmtKind::Continue: return Flow::Continue;
        }
    } catch (RenderError& e) {
        if (!e.has_pos) {
            e.pos = s.pos;
            e.has_pos = true;
        }
        throw;
    }
    return Flow::Normal;
}

void Interpreter::exec_for(const Stmt& s, const ScopePtr& scope, std::string& out) {
    Value iterable = eval(*s.expr, scope);
    if (iterable.kind == Kind::None || iterable.is_number() || iterable.kind == Kind::Callable ||
        iterable.kind == Kind::Object)
        fail_at(s.expr->pos, "'" + type_name(iterable) + "' object is not iterable");
    std::vector<Value> all = iterate(iterable);
    auto items = std::make_shared<std::vector<Value>>();
    if (s.cond) {
        for (auto& v : all) {
            auto test_scope = std::make_shared<Scope>();
            test_scope->parent = scope;
            assign(*s.target, v, test_scope);
            if (truthy(eval(*s.cond, test_scope))) items->push_back(std::move(v));
        }
    } else {
        *items = std::move(all);
    }
    if (items->empty()) {
        if (!s.else_body.empty()) {
            auto inner = std::make_shared<Scope>();
            inner->parent = scope;
            exec(s.else_body, inner, out);
        }
        return;
    }
    auto loop = std::make_shared<LoopObj>();
    track(loop);
    loop->items = items;
    Value loop_value = Value::object(loop);
    for (size_t k = 0; k < items->size(); ++k) {
        if (++iterations_ > limits_.max_loop_iterations)
            fail_at(s.pos, "more than " + std::to_string(limits_.max_loop_iterations) + " loop iterations");
        tick();
        loop->index0 = k;
        auto it_scope = std::make_shared<Scope>();
        it_scope->parent = scope;
        it_scope->vars.reserve(4);
        assign(*s.target, (*items)[k], it_scope);
        it_scope->set("loop", loop_value);
        Flow f = exec(s.body, it_scope, out);
        if (f == Flow::Break) break;
    }
}

void Interpreter::assign(const Expr& target, Value v, const ScopePtr& scope) {
    switch (target.op) {
        case ExprOp::Name: scope->set(target.name, std::move(v)); return;
        case ExprOp::Tuple: {
            if (v.is_undefined()) fail(v.s.empty() ? "value is undefined" : v.s);
            std::vector<Value> parts = iterate(v);
            if (parts.size() < target.args.size())
                fail("not enough values to unpack (expected " + std::to_string(target.args.size()) + ", got " +
                     std::to_string(parts.size()) + ")");
            if (parts.size() > target.args.size())
                fail("too many values to unpack (expected " + std::to_string(target.args.size()) + ")");
            for (size_t k = 0; k < parts.size(); ++k) assign(*target.args[k], std::move(parts[k]), scope);
            return;
        }
        case ExprOp::NSRef: {
            const Value* ns = scope->find(target.a->name);
            if (!ns || ns->kind != Kind::Object || !ns->obj->is_namespace())
                fail("cannot assign attribute on non-namespace object");
            ns->obj->set_attr(target.name, std::move(v));
            return;
        }
        default: fail("can't assign to this expression");
    }
}

Value Interpreter::call(const Value& callee, CallArgs& args, SrcPos at) {
    if (callee.is_undefined()) {
        if (callee.unsafe) fail(callee.s);
        fail(callee.s.empty() ? "value is undefined" : callee.s);
    }
    if (callee.kind != Kind::Callable) fail("'" + type_name(callee) + "' object is not callable");
    return callee.fn->call(*this, args, at);
}

Value Interpreter::call_macro(const MacroDef& def, const ScopePtr& closure, CallArgs& args) {
    if (call_depth_ >= limits_.max_call_depth)
        fail("macro calls nested deeper than " + std::to_string(limits_.max_call_depth));
    auto scope = std::make_shared<Scope>();
    scope->parent = closure;
    const size_t nparams = def.params.size();
    std::vector<std::pair<std::string, Value>> kwargs = args.kw;
    std::vector<bool> given(nparams, false);
    std::vector<Value> values(nparams);
    for (size_t k = 0; k < nparams && k < args.pos.size(); ++k) {
        values[k] = args.pos[k];
        given[k] = true;
    }
    bool found_caller = false;
    for (size_t k = args.pos.size(); k < nparams; ++k) {
        for (auto it = kwargs.begin(); it != kwargs.end(); ++it) {
            if (it->first == def.params[k]) {
                values[k] = std::move(it->second);
                given[k] = true;
                kwargs.erase(it);
                break;
            }
        }
        if (def.params[k] == "caller") found_caller = true;
    }
    Value caller_value = Value::undefined("No caller defined");
    if (def.uses_caller && !found_caller) {
        for (auto it = kwargs.begin(); it != kwargs.end(); ++it) {
            if (it->first == "caller") {
                caller_value = std::move(it->second);
                kwargs.erase(it);
                break;
            }
        }
    }
    if (!def.catch_kwargs && !kwargs.empty()) {
        if (kwargs[0].first == "caller")
            fail("macro '" + def.name + "' was invoked with two values for the special caller argument");
        fail("macro '" + def.name + "' takes no keyword argument '" + kwargs[0].first + "'");
    }
    if (!def.catch_varargs && args.pos.size() > nparams)
        fail("macro '" + def.name + "' takes not more than " + std::to_string(nparams) + " argument(s)");

    // Parameters bind in order; a default is evaluated in the macro's scope, so it can use
    // the parameters before it. A parameter without default that was not given is undefined.
    const size_t first_default = nparams - def.defaults.size();
    ++call_depth_;
    struct CallDepth {
        int& d;
        ~CallDepth() { --d; }
    } depth_guard{call_depth_};
    for (size_t k = 0; k < nparams; ++k) {
        if (given[k]) {
            scope->set(def.params[k], std::move(values[k]));
        } else if (k >= first_default) {
            scope->set(def.params[k], eval(*def.defaults[k - first_default], scope));
        } else {
            scope->set(def.params[k], Value::undefined("parameter '" + def.params[k] + "' was not provided"));
        }
    }
    if (def.uses_caller && !found_caller) scope->set("caller", caller_value);
    if (def.catch_kwargs) {
        auto d = std::make_shared<DictData>();
        for (auto& kv : kwargs) d->set(Value::string(kv.first), std::move(kv.second));
        scope->set("kwargs", Value::make_dict(d));
    }
    if (def.catch_varargs) {
        std::vector<Value> rest;
        for (size_t k = nparams; k < args.pos.size(); ++k) rest.push_back(args.pos[k]);
        scope->set("varargs", Value::make_list(std::move(rest), SeqKind::Tuple));
    }
    std::string buf;
    exec(def.body, scope, buf);
    return Value::string(std::move(buf));
}

}  // namespace arbor::tmpl
