// Expression evaluation for the template interpreter.
#include "template/builtins.hpp"
#include "template/interpreter.hpp"
#include "template/pyops.hpp"
#include "template/unicode.hpp"

namespace arbor::tmpl {
namespace {

[[noreturn]] void fail_undefined(const Value& u) { fail(u.s.empty() ? "value is undefined" : u.s); }

// Python's slice.indices(length) followed by the slice itself.
Value slice_value(const Value& obj, const Value* start, const Value* stop, const Value* step) {
    int64_t st = 1;
    if (step) {
        st = step->as_int();
        if (st == 0) fail("slice step cannot be zero");
    }
    std::u32string chars;
    size_t len;
    if (obj.kind == Kind::String) {
        chars = uni::decode(obj.s);
        len = chars.size();
    } else {
        len = obj.items().size();
    }
    const int64_t n = int64_t(len);
    auto clamp = [&](const Value* v, int64_t dflt) -> int64_t {
        if (!v) return dflt;
        int64_t i = v->as_int();
        if (i < 0) {
            i += n;
            if (i < 0) i = st < 0 ? -1 : 0;
        } else if (i >= n) {
            i = st < 0 ? n - 1 : n;
        }
        return i;
    };
    int64_t lo = clamp(start, st < 0 ? n - 1 : 0);
    int64_t hi = clamp(stop, st < 0 ? -1 : n);
    std::vector<size_t> idx;
    if (st > 0)
        for (int64_t i = lo; i < hi; i += st) idx.push_back(size_t(i));
    else
        for (int64_t i = lo; i > hi; i += st) idx.push_back(size_t(i));
    if (obj.kind == Kind::String) {
        std::u32string r;
        for (size_t i : idx) r += chars[i];
        return Value::string(uni::encode(r), obj.safe);
    }
    std::vector<Value> r;
    const auto& items = obj.items();
    for (size_t i : idx) r.push_back(items[i]);
    return Value::make_list(std::move(r), obj.seq == SeqKind::Tuple ? SeqKind::Tuple : SeqKind::List);
}

}  // namespace

Value Interpreter::eval(const Expr& e, const ScopePtr& scope) {
    DepthGuard guard(*this);
    try {
        return eval_inner(e, scope);
    } catch (RenderError& err) {
        if (!err.has_pos) {
            err.pos = e.pos;
            err.has_pos = true;
        }
        throw;
    }
}

CallArgs Interpreter::eval_args(const Expr& e, const ScopePtr& scope) {
    CallArgs args;
    for (const auto& a : e.args) args.pos.push_back(eval(*a, scope));
    for (const auto& kv : e.kwargs) args.kw.emplace_back(kv.first, eval(*kv.second, scope));
    if (e.dyn_args) {
        Value extra = eval(*e.dyn_args, scope);
        for (auto& v : iterate(extra)) args.pos.push_back(std::move(v));
    }
    if (e.dyn_kwargs) {
        Value extra = eval(*e.dyn_kwargs, scope);
        if (extra.kind != Kind::Dict) fail("argument after ** must be a mapping, not " + type_name(extra));
        for (const auto& kv : extra.dict->items) {
            if (kv.first.kind != Kind::String) fail("keywords must be strings");
            args.kw.emplace_back(kv.first.s, kv.second);
        }
    }
    return args;
}

Value Interpreter::eval_inner(const Expr& e, const ScopePtr& scope) {
    switch (e.op) {
        case ExprOp::Const: return e.value;
        case ExprOp::Name: {
            const Value* v = scope->find(e.name);
            if (v) return *v;
            return Value::undefined("'" + e.name + "' is undefined");
        }
        case ExprOp::GetAttr: {
            Value obj = eval(*e.a, scope);
            if (obj.is_undefined()) fail_undefined(obj);
            return get_attr(obj, e.name);
        }
        case ExprOp::GetItem: {
            Value obj = eval(*e.a, scope);
            Value key = eval(*e.b, scope);
            if (obj.is_undefined()) fail_undefined(obj);
            return get_item(obj, key);
        }
        case ExprOp::Slice: return eval_slice(e, scope);
        case ExprOp::Call: {
            Value callee = eval(*e.a, scope);
            CallArgs args = eval_args(e, scope);
            return call(callee, args, e.pos);
        }
        case ExprOp::Filter: {
            Value v;
            if (e.a->op == ExprOp::BlockValue) {
                if (!block_value_) fail("internal error: block value missing");
                v = *block_value_;
            } else {
                v = eval(*e.a, scope);
            }
            if (e.unknown) fail("No filter named '" + e.name + "' found.");
            CallArgs args = eval_args(e, scope);
            Value r = apply_filter(*this, e.name, v, args);
            if (r.kind == Kind::String) check_size(r.s.size());
            return r;
        }
        case ExprOp::Test: {
            Value v = eval(*e.a, scope);
            if (e.unknown) fail("No test named '" + e.name + "' found.");
            CallArgs args = eval_args(e, scope);
            return Value::boolean(apply_test(*this, e.name, v, args));
        }
        case ExprOp::Not: return Value::boolean(!truthy(eval(*e.a, scope)));
        case ExprOp::Neg:
        case ExprOp::Pos: {
            Value v = eval(*e.a, scope);
            if (v.is_undefined()) fail_undefined(v);
            if (!v.is_number())
                fail(std::string("bad operand type for unary ") + (e.op == ExprOp::Neg ? "-" : "+") + ": '" +
                     type_name(v) + "'");
            if (e.op == ExprOp::Pos) return v.kind == Kind::Bool ? Value::integer(v.as_int()) : v;
            if (v.kind == Kind::Float) return Value::number(-v.f);
            if (v.as_int() == INT64_MIN) fail("integer overflow: results beyond 64 bits are not supported");
            return Value::integer(-v.as_int());
        }
        case ExprOp::Add:
        case ExprOp::Sub:
        case ExprOp::Mul:
        case ExprOp::Div:
        case ExprOp::FloorDiv:
        case ExprOp::Mod:
        case ExprOp::Pow: return eval_binary(e, scope);
        case ExprOp::And: {
            Value l = eval(*e.a, scope);
            if (!truthy(l)) return l;
            return eval(*e.b, scope);
        }
        case ExprOp::Or: {
            Value l = eval(*e.a, scope);
            if (truthy(l)) return l;
            return eval(*e.b, scope);
        }
        case ExprOp::Compare: return eval_compare(e, scope);
        case ExprOp::Concat: {
            std::string s;
            for (const auto& a : e.args) {
                s += to_str(eval(*a, scope));
                check_size(s.size());
            }
            return Value::string(std::move(s));
        }
        case ExprOp::CondExpr:
            if (truthy(eval(*e.a, scope))) return eval(*e.b, scope);
            if (e.c) return eval(*e.c, scope);
            return Value::undefined("the inline if-expression on line " + std::to_string(e.pos.line) +
                                    " evaluated to false and no else section was defined.");
        case ExprOp::List:
        case ExprOp::Tuple: {
            std::vector<Value> items;
            items.reserve(e.args.size());
            for (const auto& a : e.args) items.push_back(eval(*a, scope));
            return Value::make_list(std::move(items), e.op == ExprOp::Tuple ? SeqKind::Tuple : SeqKind::List);
        }
        case ExprOp::Dict: {
            auto d = std::make_shared<DictData>();
            for (size_t k = 0; k + 1 < e.args.size(); k += 2) {
                Value key = eval(*e.args[k], scope);
                Value val = eval(*e.args[k + 1], scope);
                if (key.kind == Kind::Dict || (key.kind == Kind::List && key.seq != SeqKind::Tuple) ||
                    key.kind == Kind::Object)
                    fail("unhashable type: '" + type_name(key) + "'");
                d->set(std::move(key), std::move(val));
            }
            return Value::make_dict(d);
        }
        case ExprOp::NSRef: fail("namespace reference outside an assignment");
        case ExprOp::BlockValue:
            if (!block_value_) fail("internal error: block value missing");
            return *block_value_;
    }
    fail("internal error: unknown expression");
}

Value Interpreter::eval_binary(const Expr& e, const ScopePtr& scope) {
    Value a = eval(*e.a, scope);
    Value b = eval(*e.b, scope);
    Value r = py_arith(e.op, a, b);
    if (r.kind == Kind::String) check_size(r.s.size());
    if (r.kind == Kind::List) check_size(r.items().size() * 16);
    return r;
}

Value Interpreter::eval_compare(const Expr& e, const ScopePtr& scope) {
    Value left = eval(*e.a, scope);
    for (size_t k = 0; k < e.cmp.size(); ++k) {
        Value right = eval(*e.args[k], scope);
        bool ok = false;
        switch (e.cmp[k]) {
            case CmpKind::Eq: ok = equals(left, right); break;
            case CmpKind::Ne: ok = !equals(left, right); break;
            case CmpKind::Lt: ok = compare(CmpOp::Lt, left, right); break;
            case CmpKind::Le: ok = compare(CmpOp::Le, left, right); break;
            case CmpKind::Gt: ok = compare(CmpOp::Gt, left, right); break;
            case CmpKind::Ge: ok = compare(CmpOp::Ge, left, right); break;
            case CmpKind::In: ok = contains(right, left); break;
            case CmpKind::NotIn: ok = !contains(right, left); break;
        }
        if (!ok) return Value::boolean(false);
        left = std::move(right);
    }
    return Value::boolean(true);
}

Value Interpreter::eval_slice(const Expr& e, const ScopePtr& scope) {
    if (!e.a) fail("slices inside a subscript tuple are not supported");
    Value obj = eval(*e.a, scope);
    Value b, c, d;
    const Value *start = nullptr, *stop = nullptr, *step = nullptr;
    auto bound = [&](const ExprPtr& x, Value& slot, const Value*& ptr) {
        if (!x) return;
        slot = eval(*x, scope);
        if (slot.is_undefined()) fail("slice indices must be integers or None or have an __index__ method");
        if (!slot.is_none()) ptr = &slot;
    };
    bound(e.b, b, start);
    bound(e.c, c, stop);
    bound(e.d, d, step);
    if (step && step->is_int() && step->as_int() == 0) fail("slice step cannot be zero");
    // jinja2 compiles obj[a:b] to a plain Python subscript, so errors raise (unlike obj[key]),
    // except in a literal expression it folds at compile time.
    if (const_output_) {
        try {
            return eval_slice_checked(obj, start, stop, step);
        } catch (const RenderError& err) {
            return Value::undefined(err.message);
        }
    }
    return eval_slice_checked(obj, start, stop, step);
}

Value Interpreter::eval_slice_checked(const Value& obj, const Value* start, const Value* stop, const Value* step) {
    if (obj.is_undefined()) fail_undefined(obj);
    bool sliceable = obj.kind == Kind::String ||
                     (obj.kind == Kind::List && (obj.seq == SeqKind::List || obj.seq == SeqKind::Tuple ||
                                                 obj.seq == SeqKind::Range));
    if (obj.kind == Kind::Dict) fail("unhashable type: 'slice'");
    if (!sliceable) fail("'" + type_name(obj) + "' object is not subscriptable");
    for (const Value* v : {start, stop, step})
        if (v && !v->is_int()) fail("slice indices must be integers or None or have an __index__ method");
    return slice_value(obj, start, stop, step);
}

}  // namespace arbor::tmpl
