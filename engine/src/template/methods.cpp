// Attribute and item access as jinja2's ImmutableSandboxedEnvironment performs it, and Python's
// methods on str, dict and list (mutating methods are refused, as the sandbox refuses them).
#include "template/builtins.hpp"
#include "template/objects.hpp"
#include "template/pyformat.hpp"
#include "template/pyops.hpp"
#include "template/strings.hpp"
#include "template/unicode.hpp"

#include <algorithm>

namespace arbor::tmpl {
namespace {

Value unsafe_attr(const Value& obj, std::string_view name) {
    return Value::undefined("access to attribute '" + std::string(name) + "' of '" + type_name(obj) +
                                "' object is unsafe.",
                            true);
}

Value no_attr(const Value& obj, std::string_view name) {
    std::string what = obj.is_none() ? "None" : "'" + type_name(obj) + " object'";
    return Value::undefined(what + " has no attribute '" + std::string(name) + "'");
}

const std::string& str_arg(const Bound& b, size_t k, const char* fn) {
    if (b.get(k).kind != Kind::String)
        fail(std::string(fn) + "() argument must be str, not " + type_name(b.get(k)));
    return b.get(k).s;
}

Value method(const Value& self, std::string_view name, Value (*impl)(const Value&, std::string_view, CallArgs&)) {
    std::string n(name);
    return native(n, [self, n, impl](Interpreter&, CallArgs& a) { return impl(self, n, a); },
                  "<built-in method " + n + " of " + type_name(self) + " object>");
}

// ---- str -------------------------------------------------------------------------------

bool is_str_method(std::string_view n) {
    static const char* names[] = {
        "strip", "lstrip", "rstrip", "split", "rsplit", "splitlines", "startswith", "endswith", "upper", "lower",
        "title", "capitalize", "swapcase", "casefold", "replace", "find", "rfind", "index", "rindex", "count",
        "join", "format", "format_map", "center", "ljust", "rjust", "zfill", "isdigit", "isalpha", "isalnum",
        "isspace", "islower", "isupper", "isnumeric", "isdecimal", "istitle", "removeprefix", "removesuffix",
        "partition", "rpartition", "expandtabs"};
    return std::find(std::begin(names), std::end(names), n) != std::end(names);
}

// start/end arguments of find/count/startswith: a code point sub-range of s.
std::string_view sub_range(const std::string& s, const Bound& b, size_t k_start, std::u32string& storage,
                           std::string& out) {
    if (!b.has(k_start) && !b.has(k_start + 1)) return s;
    storage = uni::decode(s);
    int64_t n = int64_t(storage.size());
    auto norm = [n](const Value& v, int64_t dflt) {
        if (v.is_none() || v.is_undefined()) return dflt;
        int64_t i = v.as_int();
        if (i < 0) i = std::max<int64_t>(0, i + n);
        return std::min(i, n);
    };
    int64_t lo = b.has(k_start) ? norm(b.get(k_start), 0) : 0;
    int64_t hi = b.has(k_start + 1) ? norm(b.get(k_start + 1), n) : n;
    if (hi < lo) hi = lo;
    out = uni::encode(std::u32string_view(storage).substr(size_t(lo), size_t(hi - lo)));
    return out;
}

Value call_str_method(const Value& self, std::string_view name, CallArgs& a) {
    const std::string& s = self.s;
    const std::string fn = "str." + std::string(name);
    auto str = [&](std::string r) { return Value::string(std::move(r)); };
    if (name == "strip" || name == "lstrip" || name == "rstrip") {
        Bound b = bind_args(fn, a, {"chars"});
        const Value* chars = (b.has(0) && !b.get(0).is_none()) ? &b.get(0) : nullptr;
        if (chars && chars->kind != Kind::String) fail(fn + " arg must be None or str");
        return Value::string(py_strip(s, chars ? &chars->s : nullptr, name != "rstrip", name != "lstrip"), self.safe);
    }
    if (name == "split" || name == "rsplit") {
        Bound b = bind_args(fn, a, {"sep", "maxsplit"});
        const Value* sep = (b.has(0) && !b.get(0).is_none()) ? &b.get(0) : nullptr;
        if (sep && sep->kind != Kind::String) fail("must be str or None, not " + type_name(*sep));
        int64_t maxsplit = b.has(1) ? b.get(1).as_int() : -1;
        std::vector<std::string> parts = py_split(s, sep ? &sep->s : nullptr, maxsplit, name == "rsplit");
        std::vector<Value> out;
        for (auto& p : parts) out.push_back(Value::string(std::move(p)));
        return Value::make_list(std::move(out));
    }
    if (name == "splitlines") {
        Bound b = bind_args(fn, a, {"keepends"});
        std::vector<Value> out;
        for (auto& p : py_splitlines(s, b.has(0) && truthy(b.get(0)))) out.push_back(Value::string(std::move(p)));
        return Value::make_list(std::move(out));
    }
    if (name == "startswith" || name == "endswith") {
        Bound b = bind_args(fn, a, {"prefix", "start", "end"}, 1);
        std::u32string storage;
        std::string buf;
        std::string_view hay = sub_range(s, b, 1, storage, buf);
        std::vector<std::string> cands;
        const Value& p = b.get(0);
        if (p.kind == Kind::String) {
            cands.push_back(p.s);
        } else if (p.kind == Kind::List && p.seq == SeqKind::Tuple) {
            for (const auto& x : p.items()) {
                if (x.kind != Kind::String) fail("tuple for " + std::string(name) + " must only contain str");
                cands.push_back(x.s);
            }
        } else {
            fail(std::string(name) + " first arg must be str or a tuple of str, not " + type_name(p));
        }
        for (const auto& c : cands) {
            if (c.size() > hay.size()) continue;
            if (name == "startswith" ? hay.substr(0, c.size()) == c : hay.substr(hay.size() - c.size()) == c)
                return Value::boolean(true);
        }
        return Value::boolean(false);
    }
    if (name == "upper") return bind_args(fn, a, {}), str(uni::upper(s));
    if (name == "lower" || name == "casefold") return bind_args(fn, a, {}), str(uni::lower(s));
    if (name == "title") return bind_args(fn, a, {}), str(uni::title(s));
    if (name == "capitalize") return bind_args(fn, a, {}), str(uni::capitalize(s));
    if (name == "swapcase") return bind_args(fn, a, {}), str(uni::swapcase(s));
    if (name == "replace") {
        Bound b = bind_args(fn, a, {"old", "new", "count"}, 2);
        return str(py_replace(s, str_arg(b, 0, "replace"), str_arg(b, 1, "replace"), b.has(2) ? b.get(2).as_int() : -1));
    }
    if (name == "find" || name == "rfind" || name == "index" || name == "rindex" || name == "count") {
        Bound b = bind_args(fn, a, {"sub", "start", "end"}, 1);
        const std::string& sub = str_arg(b, 0, std::string(name).c_str());
        std::u32string storage;
        std::string buf;
        std::string_view hay = sub_range(s, b, 1, storage, buf);
        int64_t offset = 0;
        if (b.has(1) && !b.get(1).is_none()) {
            int64_t n = int64_t(uni::length(s));
            int64_t i = b.get(1).as_int();
            offset = i < 0 ? std::max<int64_t>(0, i + n) : std::min(i, n);
        }
        if (name == "count") {
            if (sub.empty()) return Value::integer(int64_t(uni::length(hay)) + 1);
            int64_t c = 0;
            for (size_t p = hay.find(sub); p != std::string_view::npos; p = hay.find(sub, p + sub.size())) ++c;
            return Value::integer(c);
        }
        size_t p = (name == "find" || name == "index") ? hay.find(sub) : hay.rfind(sub);
        if (p == std::string_view::npos) {
            if (name == "index" || name == "rindex") fail("substring not found");
            return Value::integer(-1);
        }
        return Value::integer(offset + int64_t(uni::length(hay.substr(0, p))));
    }
    if (name == "join") {
        Bound b = bind_args(fn, a, {"iterable"}, 1);
        std::string out;
        size_t k = 0;
        for (const Value& x : iterate(b.get(0))) {
            if (x.kind != Kind::String)
                fail("sequence item " + std::to_string(k) + ": expected str instance, " + type_name(x) + " found");
            if (k++) out += s;
            out += x.s;
        }
        return str(std::move(out));
    }
    if (name == "format") return str(py_format(s, a));
    if (name == "format_map") {
        Bound b = bind_args(fn, a, {"mapping"}, 1);
        if (b.get(0).kind != Kind::Dict) fail("format_map() argument must be a mapping");
        CallArgs kw;
        for (const auto& kv : b.get(0).dict->items) kw.kw.emplace_back(to_str(kv.first), kv.second);
        return str(py_format(s, kw));
    }
    if (name == "center" || name == "ljust" || name == "rjust") {
        Bound b = bind_args(fn, a, {"width", "fillchar"}, 1);
        std::string fill = b.has(1) ? str_arg(b, 1, std::string(name).c_str()) : " ";
        if (uni::length(fill) != 1) fail("The fill character must be exactly one character long");
        return str(py_justify(s, b.get(0).as_int(), fill, name[0]));
    }
    if (name == "zfill") {
        Bound b = bind_args(fn, a, {"width"}, 1);
        int64_t width = b.get(0).as_int();
        int64_t len = int64_t(uni::length(s));
        if (width <= len) return str(s);
        std::string zeros(size_t(width - len), '0');
        if (!s.empty() && (s[0] == '+' || s[0] == '-')) return str(s.substr(0, 1) + zeros + s.substr(1));
        return str(zeros + s);
    }
    if (name == "removeprefix" || name == "removesuffix") {
        Bound b = bind_args(fn, a, {"affix"}, 1);
        const std::string& x = str_arg(b, 0, std::string(name).c_str());
        if (name == "removeprefix" && s.compare(0, x.size(), x) == 0) return str(s.substr(x.size()));
        if (name == "removesuffix" && !x.empty() && s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0)
            return str(s.substr(0, s.size() - x.size()));
        return str(s);
    }
    if (name == "partition" || name == "rpartition") {
        Bound b = bind_args(fn, a, {"sep"}, 1);
        const std::string& sep = str_arg(b, 0, std::string(name).c_str());
        if (sep.empty()) fail("empty separator");
        size_t p = name == "partition" ? s.find(sep) : s.rfind(sep);
        std::vector<Value> parts;
        if (p == std::string::npos) {
            if (name == "partition") parts = {str(s), str(""), str("")};
            else parts = {str(""), str(""), str(s)};
        } else {
            parts = {str(s.substr(0, p)), str(sep), str(s.substr(p + sep.size()))};
        }
        return Value::make_list(std::move(parts), SeqKind::Tuple);
    }
    if (name == "expandtabs") {
        Bound b = bind_args(fn, a, {"tabsize"});
        int64_t tab = b.has(0) ? b.get(0).as_int() : 8;
        std::string out;
        int64_t col = 0;
        for (char32_t c : uni::decode(s)) {
            if (c == '\t') {
                if (tab > 0) {
                    int64_t n = tab - col % tab;
                    out.append(size_t(n), ' ');
                    col += n;
                }
            } else {
                uni::append_utf8(out, c);
                col = (c == '\n' || c == '\r') ? 0 : col + 1;
            }
        }
        return str(std::move(out));
    }
    // is* predicates
    bind_args(fn, a, {});
    std::u32string u = uni::decode(s);
    if (name == "islower") return Value::boolean(uni::str_islower(s));
    if (name == "isupper") return Value::boolean(uni::str_isupper(s));
    if (name == "istitle") return Value::boolean(!s.empty() && uni::title(s) == s && uni::lower(s) != s);
    if (u.empty()) return Value::boolean(false);
    bool (*pred)(char32_t) = nullptr;
    if (name == "isdigit") pred = uni::is_digit;
    else if (name == "isalpha") pred = uni::is_alpha;
    else if (name == "isspace") pred = uni::is_space;
    else if (name == "isnumeric") pred = uni::is_numeric;
    else if (name == "isdecimal") pred = uni::is_decimal;
    if (name == "isalnum")
        return Value::boolean(std::all_of(u.begin(), u.end(), [](char32_t c) {
            return uni::is_alpha(c) || uni::is_numeric(c) || uni::is_digit(c) || uni::is_decimal(c);
        }));
    if (!pred) fail("str has no method '" + std::string(name) + "'");
    return Value::boolean(std::all_of(u.begin(), u.end(), pred));
}

// ---- dict and list ---------------------------------------------------------------------

Value call_dict_method(const Value& self, std::string_view name, CallArgs& a) {
    const std::string fn = "dict." + std::string(name);
    if (name == "get") {
        Bound b = bind_args(fn, a, {"key", "default"}, 1);
        const Value* v = self.dict->find(b.get(0));
        if (v) return *v;
        return b.has(1) ? b.get(1) : Value::none();
    }
    bind_args(fn, a, {});
    if (name == "copy") return Value::make_dict(std::make_shared<DictData>(*self.dict));
    std::vector<Value> out;
    for (const auto& kv : self.dict->items) {
        if (name == "keys") out.push_back(kv.first);
        else if (name == "values") out.push_back(kv.second);
        else out.push_back(Value::make_list({kv.first, kv.second}, SeqKind::Tuple));
    }
    SeqKind k = name == "keys" ? SeqKind::DictKeys : name == "values" ? SeqKind::DictValues : SeqKind::DictItems;
    return Value::make_list(std::move(out), k);
}

Value call_list_method(const Value& self, std::string_view name, CallArgs& a) {
    const std::string fn = type_name(self) + "." + std::string(name);
    if (name == "copy") {
        bind_args(fn, a, {});
        return Value::make_list(self.items());
    }
    if (name == "clear") {
        bind_args(fn, a, {});
        self.list->items.clear();
        return Value::none();
    }
    if (name == "pop") {
        // jinja2's ImmutableSandboxedEnvironment allows list.pop (it is not in its list of
        // mutating methods), so templates may use it; the list changes in place.
        Bound b = bind_args(fn, a, {"index"});
        auto& items = self.list->items;
        if (items.empty()) fail("pop from empty list");
        int64_t i = b.has(0) ? b.get(0).as_int() : -1;
        if (i < 0) i += int64_t(items.size());
        if (i < 0 || i >= int64_t(items.size())) fail("pop index out of range");
        Value v = std::move(items[size_t(i)]);
        items.erase(items.begin() + long(i));
        return v;
    }
    Bound b = bind_args(fn, a, {"value", "start", "stop"}, 1);
    const auto& items = self.items();
    if (name == "count")
        return Value::integer(int64_t(std::count_if(items.begin(), items.end(), [&](const Value& x) { return equals(x, b.get(0)); })));
    for (size_t k = 0; k < items.size(); ++k)
        if (equals(items[k], b.get(0))) return Value::integer(int64_t(k));
    fail(repr(b.get(0)) + " is not in list");
}

}  // namespace

Value get_attr(const Value& obj, std::string_view name) {
    if (name.size() >= 2 && name.substr(0, 2) == "__") return unsafe_attr(obj, name);
    switch (obj.kind) {
        case Kind::String:
            if (is_str_method(name)) return method(obj, name, call_str_method);
            return no_attr(obj, name);
        case Kind::Dict: {
            if (name == "get" || name == "keys" || name == "values" || name == "items" || name == "copy")
                return method(obj, name, call_dict_method);
            if (name == "pop" || name == "popitem" || name == "update" || name == "setdefault" || name == "clear")
                return unsafe_attr(obj, name);
            const Value* v = obj.dict->find(name);
            if (v) return *v;
            return no_attr(obj, name);
        }
        case Kind::List: {
            bool is_list = obj.seq == SeqKind::List;
            bool is_seq = is_list || obj.seq == SeqKind::Tuple || obj.seq == SeqKind::Range;
            if ((is_seq && (name == "index" || name == "count")) ||
                (is_list && (name == "copy" || name == "pop" || name == "clear")))
                return method(obj, name, call_list_method);
            if (is_list && (name == "append" || name == "extend" || name == "insert" || name == "remove" ||
                            name == "reverse" || name == "sort"))
                return unsafe_attr(obj, name);
            return no_attr(obj, name);
        }
        case Kind::Object: {
            Value out;
            if (obj.obj->get_attr(name, out)) return out;
            return no_attr(obj, name);
        }
        case Kind::Int:
        case Kind::Bool:
        case Kind::Float: {
            const bool flt = obj.kind == Kind::Float;
            if (name == "real") return flt ? obj : Value::integer(obj.as_int());
            if (name == "imag") return flt ? Value::number(0.0) : Value::integer(0);
            if (!flt && name == "numerator") return Value::integer(obj.as_int());
            if (!flt && name == "denominator") return Value::integer(1);
            return no_attr(obj, name);
        }
        default: return no_attr(obj, name);
    }
}

Value get_item(const Value& obj, const Value& key) {
    switch (obj.kind) {
        case Kind::Dict: {
            const Value* v = obj.dict->find(key);
            if (v) return *v;
            break;
        }
        case Kind::List:
        case Kind::String: {
            if (!key.is_int()) break;
            int64_t i = key.as_int();
            if (obj.kind == Kind::String) {
                std::u32string u = uni::decode(obj.s);
                int64_t n = int64_t(u.size());
                if (i < 0) i += n;
                if (i < 0 || i >= n) return Value::undefined("string index out of range");
                std::string one;
                uni::append_utf8(one, u[size_t(i)]);
                return Value::string(one, obj.safe);
            }
            const auto& items = obj.items();
            int64_t n = int64_t(items.size());
            if (i < 0) i += n;
            if (i < 0 || i >= n)
                return Value::undefined("'" + type_name(obj) + " object' has no element " + std::to_string(key.as_int()));
            return items[size_t(i)];
        }
        case Kind::Object:
            if (obj.obj->is_namespace() && key.kind == Kind::String) {
                Value out;
                if (obj.obj->get_attr(key.s, out)) return out;
            }
            break;
        default: break;
    }
    if (key.kind == Kind::String && obj.kind != Kind::Dict) return get_attr(obj, key.s);
    if (key.kind == Kind::String && obj.kind == Kind::Dict) {
        Value m = get_attr(obj, key.s);
        if (!m.is_undefined() || m.unsafe) return m;
    }
    return Value::undefined("'" + type_name(obj) + " object' has no element " + repr(key));
}

}  // namespace arbor::tmpl
