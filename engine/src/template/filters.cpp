// jinja2's built-in filters on strings and scalars, plus the dispatch table for all filters.
// Sequence filters live in filters_seq.cpp.
#include "template/filters.hpp"

#include "template/objects.hpp"
#include "template/pyformat.hpp"
#include "template/pyops.hpp"
#include "template/strings.hpp"
#include "template/unicode.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace arbor::tmpl {
namespace {

// jinja2's soft_str: str(value) unless it is already a string (Markup stays Markup).
Value soft_str(const Value& v) {
    if (v.kind == Kind::String) return v;
    return Value::string(to_str(v));
}

Value f_string(Interpreter&, const Value& v, CallArgs& a) {
    bind_args("string", a, {});
    return soft_str(v);
}

Value f_lower(Interpreter&, const Value& v, CallArgs& a) {
    bind_args("lower", a, {});
    Value s = soft_str(v);
    return Value::string(uni::lower(s.s), s.safe);
}

Value f_upper(Interpreter&, const Value& v, CallArgs& a) {
    bind_args("upper", a, {});
    Value s = soft_str(v);
    return Value::string(uni::upper(s.s), s.safe);
}

Value f_capitalize(Interpreter&, const Value& v, CallArgs& a) {
    bind_args("capitalize", a, {});
    Value s = soft_str(v);
    return Value::string(uni::capitalize(s.s), s.safe);
}

// jinja2's title: each run after [-\s([{<] starts with an upper-cased letter, the rest lowered.
Value f_title(Interpreter&, const Value& v, CallArgs& a) {
    bind_args("title", a, {});
    Value s = soft_str(v);
    std::u32string u = uni::decode(s.s);
    auto is_sep = [](char32_t c) { return c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || uni::is_space(c); };
    std::string out;
    size_t i = 0;
    while (i < u.size()) {
        size_t j = i;
        bool sep = is_sep(u[i]);
        while (j < u.size() && is_sep(u[j]) == sep) ++j;
        std::u32string_view word(u.data() + i, j - i);
        if (sep) {
            out += uni::encode(word);
        } else {
            out += uni::upper(uni::encode(word.substr(0, 1)));
            out += uni::lower(uni::encode(word.substr(1)));
        }
        i = j;
    }
    return Value::string(out, s.safe);
}

Value f_trim(Interpreter&, const Value& v, CallArgs& a) {
    Bound b = bind_args("trim", a, {"chars"});
    Value s = soft_str(v);
    const Value* chars = (b.has(0) && !b.get(0).is_none()) ? &b.get(0) : nullptr;
    if (chars && chars->kind != Kind::String) fail("strip arg must be None or str");
    return Value::string(py_strip(s.s, chars ? &chars->s : nullptr, true, true), s.safe);
}

Value f_replace(Interpreter&, const Value& v, CallArgs& a) {
    Bound b = bind_args("replace", a, {"old", "new", "count"}, 2);
    int64_t count = (b.has(2) && !b.get(2).is_none()) ? b.get(2).as_int() : -1;
    return Value::string(py_replace(to_str(v), to_str(b.get(0)), to_str(b.get(1)), count));
}

Value f_center(Interpreter&, const Value& v, CallArgs& a) {
    Bound b = bind_args("center", a, {"width"});
    return Value::string(py_justify(to_str(v), b.has(0) ? b.get(0).as_int() : 80, " ", 'c'));
}

Value f_indent(Interpreter&, const Value& v, CallArgs& a) {
    Bound b = bind_args("indent", a, {"width", "first", "blank"});
    std::string indention;
    if (b.has(0) && b.get(0).kind == Kind::String) indention = b.get(0).s;
    else indention = std::string(size_t(std::max<int64_t>(0, b.has(0) ? b.get(0).as_int() : 4)), ' ');
    bool first = b.has(1) && truthy(b.get(1));
    bool blank = b.has(2) && truthy(b.get(2));
    Value s = soft_str(v);
    std::vector<std::string> lines = py_splitlines(s.s + "\n", false);
    std::string rv;
    if (blank) {
        for (size_t k = 0; k < lines.size(); ++k) {
            if (k) rv += "\n" + indention;
            rv += lines[k];
        }
    } else {
        rv = lines.empty() ? std::string() : lines[0];
        for (size_t k = 1; k < lines.size(); ++k) {
            rv += "\n";
            if (!lines[k].empty()) rv += indention;
            rv += lines[k];
        }
    }
    if (first) rv = indention + rv;
    return Value::string(std::move(rv), s.safe);
}

Value f_truncate(Interpreter&, const Value& v, CallArgs& a) {
    Bound b = bind_args("truncate", a, {"length", "killwords", "end", "leeway"});
    int64_t length = b.has(0) ? b.get(0).as_int() : 255;
    bool killwords = b.has(1) && truthy(b.get(1));
    std::string end = b.has(2) ? to_str(b.get(2)) : "...";
    int64_t leeway = (b.has(3) && !b.get(3).is_none()) ? b.get(3).as_int() : 5;
    int64_t end_len = int64_t(uni::length(end));
    if (length < end_len) fail("expected length >= " + std::to_string(end_len) + ", got " + std::to_string(length));
    if (leeway < 0) fail("expected leeway >= 0, got " + std::to_string(leeway));
    std::u32string u = uni::decode(to_str(v));
    if (int64_t(u.size()) <= length + leeway) return Value::string(uni::encode(u));
    std::u32string cut = u.substr(0, size_t(length - end_len));
    if (killwords) return Value::string(uni::encode(cut) + end);
    size_t sp = cut.rfind(U' ');
    if (sp != std::u32string::npos) cut = cut.substr(0, sp);
    return Value::string(uni::encode(cut) + end);
}

Value f_wordcount(Interpreter&, const Value& v, CallArgs& a) {
    bind_args("wordcount", a, {});
    int64_t n = 0;
    bool in_word = false;
    for (char32_t c : uni::decode(to_str(v))) {
        bool w = c == '_' || uni::is_alpha(c) || uni::is_digit(c) || uni::is_numeric(c) || uni::is_decimal(c);
        if (w && !in_word) ++n;
        in_word = w;
    }
    return Value::integer(n);
}

Value f_safe(Interpreter&, const Value& v, CallArgs& a) {
    bind_args("safe", a, {});
    return Value::string(to_str(v), true);
}

Value f_escape(Interpreter&, const Value& v, CallArgs& a) {
    bind_args("escape", a, {});
    if (v.kind == Kind::String && v.safe) return v;
    return Value::string(html_escape(to_str(v)), true);
}

Value f_forceescape(Interpreter&, const Value& v, CallArgs& a) {
    bind_args("forceescape", a, {});
    return Value::string(html_escape(to_str(v)), true);
}

Value f_format(Interpreter&, const Value& v, CallArgs& a) {
    if (!a.pos.empty() && !a.kw.empty()) fail("can't handle positional and keyword arguments at the same time");
    Value args;
    if (!a.kw.empty()) {
        auto d = std::make_shared<DictData>();
        for (auto& kv : a.kw) d->set(Value::string(kv.first), kv.second);
        args = Value::make_dict(d);
    } else {
        args = Value::make_list(a.pos, SeqKind::Tuple);
    }
    Value s = soft_str(v);
    return Value::string(py_percent(s.s, args), s.safe);
}

bool parse_py_int(std::string text, int base, int64_t& out) {
    std::string t = py_strip(text, nullptr, true, true);
    std::string clean;
    bool neg = false;
    size_t p = 0;
    if (p < t.size() && (t[p] == '+' || t[p] == '-')) neg = t[p++] == '-';
    if (base == 0 || base == 16 || base == 8 || base == 2) {
        if (t.size() > p + 1 && t[p] == '0') {
            char c = char(t[p + 1] | 0x20);
            int prefixed = c == 'x' ? 16 : c == 'o' ? 8 : c == 'b' ? 2 : 0;
            if (prefixed && (base == 0 || base == prefixed)) {
                base = prefixed;
                p += 2;
                if (p < t.size() && t[p] == '_') ++p;
            }
        }
        if (base == 0) base = 10;
    }
    bool last_us = true;
    for (; p < t.size(); ++p) {
        if (t[p] == '_') {
            if (last_us) return false;
            last_us = true;
            continue;
        }
        last_us = false;
        clean += t[p];
    }
    if (clean.empty() || last_us) return false;
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(clean.c_str(), &end, base);
    if (*end || errno) return false;
    for (char c : clean)
        if (c == '-' || c == '+' || c == ' ') return false;
    out = neg ? -v : v;
    return true;
}

bool parse_py_float(const std::string& text, double& out) {
    std::string t = py_strip(text, nullptr, true, true);
    std::string clean;
    for (char c : t)
        if (c != '_') clean += c;
    if (clean.empty()) return false;
    std::string low = uni::lower(clean);
    std::string body = (low[0] == '+' || low[0] == '-') ? low.substr(1) : low;
    double sign = low[0] == '-' ? -1.0 : 1.0;
    if (body == "inf" || body == "infinity") {
        out = sign * INFINITY;
        return true;
    }
    if (body == "nan") {
        out = NAN;
        return true;
    }
    for (char c : body)
        if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == '+' || c == '-')) return false;
    char* end = nullptr;
    out = std::strtod(clean.c_str(), &end);
    return *end == 0;
}

Value f_int(Interpreter&, const Value& v, CallArgs& a) {
    Bound b = bind_args("int", a, {"default", "base"});
    Value dflt = b.has(0) ? b.get(0) : Value::integer(0);
    int base = b.has(1) ? int(b.get(1).as_int()) : 10;
    if (v.kind == Kind::String) {
        int64_t i;
        if (base != 10) {
            if (parse_py_int(v.s, base, i)) return Value::integer(i);
            return dflt;
        }
        if (parse_py_int(v.s, 10, i)) return Value::integer(i);
        double d;
        if (parse_py_float(v.s, d) && std::isfinite(d) && std::fabs(d) < 9.2e18) return Value::integer(int64_t(d));
        return dflt;
    }
    if (v.is_int()) return Value::integer(v.as_int());
    if (v.kind == Kind::Float) {
        if (!std::isfinite(v.f) || std::fabs(v.f) >= 9.2e18) return dflt;
        return Value::integer(int64_t(v.f));
    }
    return dflt;
}

Value f_float(Interpreter&, const Value& v, CallArgs& a) {
    Bound b = bind_args("float", a, {"default"});
    Value dflt = b.has(0) ? b.get(0) : Value::number(0.0);
    if (v.kind == Kind::String) {
        double d;
        return parse_py_float(v.s, d) ? Value::number(d) : dflt;
    }
    if (v.is_number()) return Value::number(v.as_double());
    return dflt;
}

Value f_abs(Interpreter&, const Value& v, CallArgs& a) {
    bind_args("abs", a, {});
    if (v.kind == Kind::Float) return Value::number(std::fabs(v.f));
    if (v.is_int()) {
        if (v.as_int() == INT64_MIN) fail("integer overflow");
        return Value::integer(v.as_int() < 0 ? -v.as_int() : v.as_int());
    }
    fail("bad operand type for abs(): '" + type_name(v) + "'");
}

double round_half_even(double x, int64_t digits) {
    if (!std::isfinite(x)) return x;
    if (digits > 300) return x;
    if (digits < -308) return 0.0 * x;
    char buf[512];
    if (digits >= 0) {
        std::snprintf(buf, sizeof buf, "%.*f", int(digits), x);
        return std::strtod(buf, nullptr);
    }
    double p = std::pow(10.0, double(-digits));
    double y = std::nearbyint(x / p) * p;
    return y;
}

Value f_round(Interpreter&, const Value& v, CallArgs& a) {
    Bound b = bind_args("round", a, {"precision", "method"});
    int64_t prec = b.has(0) ? b.get(0).as_int() : 0;
    std::string method = b.has(1) ? to_str(b.get(1)) : "common";
    if (method != "common" && method != "ceil" && method != "floor")
        fail("method must be 'common', 'ceil' or 'floor'");
    if (!v.is_number()) fail("type " + type_name(v) + " doesn't define __round__ method");
    if (method == "common") {
        if (v.kind != Kind::Float) return Value::integer(v.as_int());
        return Value::number(round_half_even(v.f, prec));
    }
    double p = std::pow(10.0, double(prec));
    double x = v.as_double() * p;
    x = method == "ceil" ? std::ceil(x) : std::floor(x);
    return Value::number(x / p);
}

Value f_default(Interpreter&, const Value& v, CallArgs& a) {
    Bound b = bind_args("default", a, {"default_value", "boolean"});
    Value dflt = b.has(0) ? b.get(0) : Value::string("");
    bool boolean = b.has(1) && truthy(b.get(1));
    if (v.is_undefined() || (boolean && !truthy(v))) return dflt;
    return v;
}

Value f_tojson(Interpreter&, const Value& v, CallArgs& a) {
    Bound b = bind_args("tojson", a, {"ensure_ascii", "indent", "separators", "sort_keys"});
    DumpOptions o;
    o.ensure_ascii = b.has(0) && truthy(b.get(0));
    if (b.has(1) && !b.get(1).is_none()) {
        const Value& ind = b.get(1);
        o.has_indent = true;
        if (ind.kind == Kind::String) o.indent = ind.s;
        else if (ind.is_int()) o.indent = std::string(size_t(std::max<int64_t>(0, std::min<int64_t>(ind.as_int(), 1000))), ' ');
        else fail("indent must be an int or a string");
        o.item_sep = ",";
    }
    if (b.has(2) && !b.get(2).is_none()) {
        auto parts = iterate(b.get(2));
        if (parts.size() != 2 || parts[0].kind != Kind::String || parts[1].kind != Kind::String)
            fail("separators must be a pair of strings");
        o.item_sep = parts[0].s;
        o.key_sep = parts[1].s;
    }
    o.sort_keys = b.has(3) && truthy(b.get(3));
    return Value::string(dumps(v, o));
}

Value f_attr(Interpreter&, const Value& v, CallArgs& a) {
    Bound b = bind_args("attr", a, {"name"}, 1);
    std::string name = to_str(b.get(0));
    if (v.is_undefined()) fail(v.s);
    if (v.kind == Kind::Dict) {
        // Only real attributes (methods), never items.
        if (name == "get" || name == "keys" || name == "values" || name == "items" || name == "copy" ||
            name.rfind("__", 0) == 0 || name == "pop" || name == "popitem" || name == "update" ||
            name == "setdefault" || name == "clear")
            return get_attr(v, name);
        return Value::undefined("'dict object' has no attribute '" + name + "'");
    }
    return get_attr(v, name);
}

struct FilterEntry {
    const char* name;
    FilterFn fn;
};

const FilterEntry kFilters[] = {
    {"abs", f_abs}, {"attr", f_attr}, {"batch", f_batch}, {"capitalize", f_capitalize}, {"center", f_center},
    {"count", f_length}, {"d", f_default}, {"default", f_default}, {"dictsort", f_dictsort}, {"e", f_escape},
    {"escape", f_escape}, {"first", f_first}, {"float", f_float}, {"forceescape", f_forceescape},
    {"format", f_format}, {"indent", f_indent}, {"int", f_int}, {"items", f_items}, {"join", f_join},
    {"last", f_last}, {"length", f_length}, {"list", f_list}, {"lower", f_lower}, {"map", f_map}, {"max", f_max},
    {"min", f_min}, {"reject", f_reject}, {"rejectattr", f_rejectattr}, {"replace", f_replace},
    {"reverse", f_reverse}, {"round", f_round}, {"safe", f_safe}, {"select", f_select},
    {"selectattr", f_selectattr}, {"slice", f_slice}, {"sort", f_sort}, {"string", f_string}, {"sum", f_sum},
    {"title", f_title}, {"tojson", f_tojson}, {"trim", f_trim}, {"truncate", f_truncate}, {"unique", f_unique},
    {"upper", f_upper}, {"wordcount", f_wordcount},
};

}  // namespace

bool is_known_filter(std::string_view name) {
    for (const auto& f : kFilters)
        if (name == f.name) return true;
    return false;
}

Value apply_filter(Interpreter& in, std::string_view name, const Value& value, CallArgs& args) {
    for (const auto& f : kFilters)
        if (name == f.name) return f.fn(in, value, args);
    fail("No filter named '" + std::string(name) + "' found.");
}

}  // namespace arbor::tmpl
