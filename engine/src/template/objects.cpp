// Runtime objects (namespace, loop, macros, native functions) and the template globals.
#include "template/objects.hpp"

#include "template/pyformat.hpp"
#include "template/pyops.hpp"

#include <cmath>

namespace arbor::tmpl {

bool NamespaceObj::get_attr(std::string_view name, Value& out) const {
    const Value* v = attrs.find(name);
    if (!v) return false;
    out = *v;
    return true;
}

void NamespaceObj::set_attr(std::string_view name, Value v) { attrs.set(Value::string(std::string(name)), std::move(v)); }

std::string NamespaceObj::repr() const { return "<Namespace>"; }

bool LoopObj::get_attr(std::string_view name, Value& out) const {
    const size_t n = items->size();
    const auto i = int64_t(index0);
    if (name == "index") out = Value::integer(i + 1);
    else if (name == "index0") out = Value::integer(i);
    else if (name == "revindex") out = Value::integer(int64_t(n) - i);
    else if (name == "revindex0") out = Value::integer(int64_t(n) - i - 1);
    else if (name == "first") out = Value::boolean(index0 == 0);
    else if (name == "last") out = Value::boolean(index0 + 1 == n);
    else if (name == "length") out = Value::integer(int64_t(n));
    else if (name == "depth") out = Value::integer(1);
    else if (name == "depth0") out = Value::integer(0);
    else if (name == "previtem")
        out = index0 > 0 ? (*items)[index0 - 1] : Value::undefined("there is no previous item");
    else if (name == "nextitem")
        out = index0 + 1 < n ? (*items)[index0 + 1] : Value::undefined("there is no next item");
    else if (name == "cycle") {
        size_t idx = index0;
        out = native("cycle", [idx](Interpreter&, CallArgs& a) {
            if (!a.kw.empty()) fail("cycle() takes no keyword arguments");
            if (a.pos.empty()) fail("no items for cycling given");
            return a.pos[idx % a.pos.size()];
        });
    } else if (name == "changed") {
        auto last = last_changed;
        auto has = has_last_changed;
        out = native("changed", [last, has](Interpreter&, CallArgs& a) {
            Value now = Value::make_list(a.pos, SeqKind::Tuple);
            if (*has && equals(*last, now)) return Value::boolean(false);
            *last = now;
            *has = true;
            return Value::boolean(true);
        });
    } else {
        return false;
    }
    return true;
}

std::string LoopObj::repr() const {
    return "<LoopContext " + std::to_string(index0 + 1) + "/" + std::to_string(items->size()) + ">";
}

Value MacroFn::call(Interpreter& in, CallArgs& args, SrcPos) {
    return in.call_macro(*def_, closure_, args);
}

Value native(std::string name, NativeFn::Impl impl, std::string repr_text) {
    return Value::callable(std::make_shared<NativeFn>(std::move(name), std::move(impl), std::move(repr_text)));
}

Bound bind_args(const std::string& fn, const CallArgs& args, std::initializer_list<const char*> params,
                size_t required) {
    Bound b;
    b.values.resize(params.size());
    b.given.assign(params.size(), false);
    if (args.pos.size() > params.size())
        fail(fn + "() takes at most " + std::to_string(params.size()) + " argument(s) (" +
             std::to_string(args.pos.size()) + " given)");
    for (size_t k = 0; k < args.pos.size(); ++k) {
        b.values[k] = args.pos[k];
        b.given[k] = true;
    }
    for (const auto& [key, val] : args.kw) {
        size_t idx = 0;
        bool found = false;
        for (const char* p : params) {
            if (key == p) {
                found = true;
                break;
            }
            ++idx;
        }
        if (!found) fail(fn + "() got an unexpected keyword argument '" + key + "'");
        if (b.given[idx]) fail(fn + "() got multiple values for argument '" + key + "'");
        b.values[idx] = val;
        b.given[idx] = true;
    }
    for (size_t k = 0; k < required; ++k)
        if (!b.given[k]) fail(fn + "() missing required argument '" + std::string(params.begin()[k]) + "'");
    return b;
}

namespace {

int64_t int_arg(const Value& v, const char* fn) {
    if (v.is_int()) return v.as_int();
    fail("'" + type_name(v) + "' object cannot be interpreted as an integer (in " + fn + "())");
}

void fill_dict(DictData& d, CallArgs& a, const char* fn) {
    if (a.pos.size() > 1) fail(std::string(fn) + "() expected at most 1 positional argument");
    if (!a.pos.empty()) {
        const Value& src = a.pos[0];
        if (src.kind == Kind::Dict) {
            for (const auto& kv : src.dict->items) d.set(kv.first, kv.second);
        } else {
            for (const Value& pair : iterate(src)) {
                auto kv = iterate(pair);
                if (kv.size() != 2) fail(std::string(fn) + "(): sequence elements must have length 2");
                d.set(kv[0], kv[1]);
            }
        }
    }
    for (auto& [k, v] : a.kw) d.set(Value::string(k), v);
}

class CyclerObj : public Object {
public:
    std::string_view type_name() const override { return "Cycler"; }
    bool get_attr(std::string_view name, Value& out) const override {
        auto st = state;
        if (name == "current") {
            out = st->items.empty() ? Value::none() : st->items[st->pos];
        } else if (name == "next") {
            out = native("next", [st](Interpreter&, CallArgs&) {
                if (st->items.empty()) return Value::none();
                Value v = st->items[st->pos];
                st->pos = (st->pos + 1) % st->items.size();
                return v;
            });
        } else if (name == "reset") {
            out = native("reset", [st](Interpreter&, CallArgs&) {
                st->pos = 0;
                return Value::none();
            });
        } else {
            return false;
        }
        return true;
    }
    struct State {
        std::vector<Value> items;
        size_t pos = 0;
    };
    std::shared_ptr<State> state = std::make_shared<State>();
};

}  // namespace

std::vector<std::pair<std::string, Value>> make_globals() {
    std::vector<std::pair<std::string, Value>> g;
    g.emplace_back("range", native("range", [](Interpreter&, CallArgs& a) {
        if (!a.kw.empty()) fail("range() takes no keyword arguments");
        if (a.pos.empty() || a.pos.size() > 3) fail("range expected 1 to 3 arguments");
        int64_t start = 0, stop, step = 1;
        if (a.pos.size() == 1) {
            stop = int_arg(a.pos[0], "range");
        } else {
            start = int_arg(a.pos[0], "range");
            stop = int_arg(a.pos[1], "range");
            if (a.pos.size() == 3) step = int_arg(a.pos[2], "range");
        }
        if (step == 0) fail("range() arg 3 must not be zero");
        // Count with care for overflow: the sandbox allows at most 100000 items.
        long double span = (long double)stop - (long double)start;
        long double count = span / step;
        int64_t n = 0;
        if (count > 0) n = int64_t(std::ceil((double)count));
        if (n > 100000) fail("Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
        std::vector<Value> items;
        items.reserve(size_t(n));
        for (int64_t k = 0; k < n; ++k) items.push_back(Value::integer(start + k * step));
        Value v = Value::make_list(std::move(items), SeqKind::Range);
        v.s = "range(" + std::to_string(start) + ", " + std::to_string(stop) +
              (step != 1 ? ", " + std::to_string(step) : std::string()) + ")";
        return v;
    }));
    g.emplace_back("namespace", native("namespace", [](Interpreter& in, CallArgs& a) {
        auto ns = std::make_shared<NamespaceObj>();
        in.track(ns);
        fill_dict(ns->attrs, a, "namespace");
        return Value::object(ns);
    }));
    g.emplace_back("dict", native("dict", [](Interpreter&, CallArgs& a) {
        auto d = std::make_shared<DictData>();
        fill_dict(*d, a, "dict");
        return Value::make_dict(d);
    }));
    g.emplace_back("joiner", native("joiner", [](Interpreter&, CallArgs& a) {
        Bound b = bind_args("joiner", a, {"sep"});
        std::string sep = b.has(0) ? to_str(b.get(0)) : ", ";
        auto used = std::make_shared<bool>(false);
        return native("joiner", [sep, used](Interpreter&, CallArgs&) {
            if (!*used) {
                *used = true;
                return Value::string("");
            }
            return Value::string(sep);
        });
    }));
    g.emplace_back("cycler", native("cycler", [](Interpreter&, CallArgs& a) {
        auto c = std::make_shared<CyclerObj>();
        c->state->items = a.pos;
        return Value::object(c);
    }));
    g.emplace_back("raise_exception", native("raise_exception", [](Interpreter&, CallArgs& a) -> Value {
        Bound b = bind_args("raise_exception", a, {"message"});
        fail("template raised an exception: " + (b.has(0) ? to_str(b.get(0)) : std::string()));
    }));
    g.emplace_back("strftime_now", native("strftime_now", [](Interpreter& in, CallArgs& a) {
        Bound b = bind_args("strftime_now", a, {"format"}, 1);
        if (b.get(0).kind != Kind::String) fail("strftime_now() argument must be str, not " + type_name(b.get(0)));
        return Value::string(strftime_now(b.get(0).s, in.now_iso()));
    }));
    return g;
}

}  // namespace arbor::tmpl
