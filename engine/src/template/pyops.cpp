// Python object semantics for template values (see pyops.hpp).
#include "template/pyops.hpp"

#include "template/unicode.hpp"

#include <algorithm>
#include <cmath>

namespace arbor::tmpl {
namespace {

[[noreturn]] void fail_undefined(const Value& u) { fail(u.s.empty() ? "value is undefined" : u.s); }

void append_hex(std::string& out, uint32_t v, int digits) {
    static constexpr char kHex[] = "0123456789abcdef";
    for (int k = digits - 1; k >= 0; --k) out += kHex[(v >> (4 * k)) & 15];
}

// repr() state: the containers being printed (a namespace can hold itself; Python prints the
// inner occurrence as {...}) and the nesting depth.
struct ReprState {
    std::vector<const void*> active;
    int depth = 0;
};

std::string repr_impl(const Value& v, ReprState& st);

std::string seq_repr(const Value& v, ReprState& st) {
    if (std::find(st.active.begin(), st.active.end(), v.list.get()) != st.active.end())
        return v.seq == SeqKind::Tuple ? "(...)" : "[...]";
    st.active.push_back(v.list.get());
    struct Pop {
        ReprState& st;
        ~Pop() { st.active.pop_back(); }
    } pop{st};
    const auto& items = v.items();
    std::string out;
    switch (v.seq) {
        case SeqKind::Range: return v.s;
        case SeqKind::Generator: return "<" + v.s + " object>";
        case SeqKind::Tuple: {
            out = "(";
            for (size_t k = 0; k < items.size(); ++k) {
                if (k) out += ", ";
                out += repr_impl(items[k], st);
            }
            if (items.size() == 1) out += ',';
            return out + ")";
        }
        case SeqKind::DictKeys: out = "dict_keys(["; break;
        case SeqKind::DictValues: out = "dict_values(["; break;
        case SeqKind::DictItems: out = "dict_items(["; break;
        case SeqKind::List: out = "["; break;
    }
    for (size_t k = 0; k < items.size(); ++k) {
        if (k) out += ", ";
        out += repr_impl(items[k], st);
    }
    out += ']';
    if (v.seq != SeqKind::List) out += ')';
    return out;
}

bool same_seq_family(const Value& a, const Value& b) {
    auto fam = [](SeqKind k) { return k == SeqKind::Tuple ? 1 : (k == SeqKind::List ? 0 : 2 + int(k)); };
    return fam(a.seq) == fam(b.seq);
}

std::string float_key(double d) {
    if (std::isnan(d)) return "NaN";
    if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
    return json::format_double(d);
}

void dump_string(std::string& out, std::string_view s, bool ensure_ascii) {
    if (!ensure_ascii) {
        json::append_quoted(out, s);
        return;
    }
    out += '"';
    for (char32_t c : uni::decode(s)) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            default:
                if (c >= 0x20 && c < 0x7F) {
                    out += char(c);
                } else if (c < 0x10000) {
                    out += "\\u";
                    append_hex(out, c, 4);
                } else {
                    char32_t v = c - 0x10000;
                    out += "\\u";
                    append_hex(out, 0xD800 + (v >> 10), 4);
                    out += "\\u";
                    append_hex(out, 0xDC00 + (v & 0x3FF), 4);
                }
        }
    }
    out += '"';
}

void dump_to(std::string& out, const Value& v, const DumpOptions& o, int level) {
    switch (v.kind) {
        case Kind::None: out += "null"; return;
        case Kind::Bool: out += v.b ? "true" : "false"; return;
        case Kind::Int: out += std::to_string(v.i); return;
        case Kind::Float: out += float_key(v.f); return;
        case Kind::String: dump_string(out, v.s, o.ensure_ascii); return;
        case Kind::List: {
            if (v.seq != SeqKind::List && v.seq != SeqKind::Tuple)
                fail("Object of type " + type_name(v) + " is not JSON serializable");
            const auto& items = v.items();
            if (items.empty()) {
                out += "[]";
                return;
            }
            out += '[';
            std::string nl;
            if (o.has_indent) {
                nl = "\n";
                for (int k = 0; k <= level; ++k) nl += o.indent;
                out += nl;
            }
            for (size_t k = 0; k < items.size(); ++k) {
                if (k) {
                    out += o.item_sep;
                    out += nl;
                }
                dump_to(out, items[k], o, level + 1);
            }
            if (o.has_indent) {
                out += '\n';
                for (int k = 0; k < level; ++k) out += o.indent;
            }
            out += ']';
            return;
        }
        case Kind::Dict: {
            std::vector<std::pair<std::string, const Value*>> members;
            std::vector<const std::pair<Value, Value>*> order;
            for (const auto& kv : v.dict->items) order.push_back(&kv);
            if (o.sort_keys) {
                std::stable_sort(order.begin(), order.end(), [](auto* x, auto* y) {
                    return compare(CmpOp::Lt, x->first, y->first);
                });
            }
            for (auto* kv : order) {
                const Value& key = kv->first;
                std::string k;
                switch (key.kind) {
                    case Kind::String: k = key.s; break;
                    case Kind::Float: k = float_key(key.f); break;
                    case Kind::Bool: k = key.b ? "true" : "false"; break;
                    case Kind::None: k = "null"; break;
                    case Kind::Int: k = std::to_string(key.i); break;
                    default: fail("keys must be str, int, float, bool or None, not " + type_name(key));
                }
                members.emplace_back(std::move(k), &kv->second);
            }
            if (members.empty()) {
                out += "{}";
                return;
            }
            out += '{';
            std::string nl;
            if (o.has_indent) {
                nl = "\n";
                for (int k = 0; k <= level; ++k) nl += o.indent;
                out += nl;
            }
            for (size_t k = 0; k < members.size(); ++k) {
                if (k) {
                    out += o.item_sep;
                    out += nl;
                }
                dump_string(out, members[k].first, o.ensure_ascii);
                out += o.key_sep;
                dump_to(out, *members[k].second, o, level + 1);
            }
            if (o.has_indent) {
                out += '\n';
                for (int k = 0; k < level; ++k) out += o.indent;
            }
            out += '}';
            return;
        }
        default: fail("Object of type " + type_name(v) + " is not JSON serializable");
    }
}

}  // namespace

std::string type_name(const Value& v) {
    switch (v.kind) {
        case Kind::Undefined: return "Undefined";
        case Kind::None: return "NoneType";
        case Kind::Bool: return "bool";
        case Kind::Int: return "int";
        case Kind::Float: return "float";
        case Kind::String: return v.safe ? "Markup" : "str";
        case Kind::List:
            switch (v.seq) {
                case SeqKind::Tuple: return "tuple";
                case SeqKind::DictKeys: return "dict_keys";
                case SeqKind::DictValues: return "dict_values";
                case SeqKind::DictItems: return "dict_items";
                case SeqKind::Range: return "range";
                case SeqKind::Generator: return v.s;
                default: return "list";
            }
        case Kind::Dict: return "dict";
        case Kind::Object: return std::string(v.obj->type_name());
        case Kind::Callable: return "function";
    }
    return "object";
}

bool truthy(const Value& v) {
    switch (v.kind) {
        case Kind::Undefined:
        case Kind::None: return false;
        case Kind::Bool: return v.b;
        case Kind::Int: return v.i != 0;
        case Kind::Float: return v.f != 0.0;
        case Kind::String: return !v.s.empty();
        case Kind::List: return v.is_generator() || !v.items().empty();
        case Kind::Dict: return !v.dict->items.empty();
        default: return true;
    }
}

bool equals(const Value& a, const Value& b) {
    if (a.is_number() && b.is_number()) {
        if (a.kind == Kind::Float || b.kind == Kind::Float) return a.as_double() == b.as_double();
        return a.as_int() == b.as_int();
    }
    if (a.kind != b.kind) return false;
    switch (a.kind) {
        case Kind::Undefined:
        case Kind::None: return true;
        case Kind::String: return a.s == b.s;
        case Kind::List: {
            if (a.is_generator() || b.is_generator()) return a.list == b.list;
            if (!same_seq_family(a, b)) return false;
            const auto& x = a.items();
            const auto& y = b.items();
            if (x.size() != y.size()) return false;
            for (size_t k = 0; k < x.size(); ++k)
                if (!equals(x[k], y[k])) return false;
            return true;
        }
        case Kind::Dict: {
            if (a.dict == b.dict) return true;
            if (a.dict->items.size() != b.dict->items.size()) return false;
            for (const auto& kv : a.dict->items) {
                const Value* other = b.dict->find(kv.first);
                if (!other || !equals(kv.second, *other)) return false;
            }
            return true;
        }
        case Kind::Object: return a.obj == b.obj;
        case Kind::Callable: return a.fn == b.fn;
        default: return false;
    }
}

bool compare(CmpOp op, const Value& a, const Value& b) {
    if (a.is_undefined()) fail_undefined(a);
    if (b.is_undefined()) fail_undefined(b);
    auto apply = [op](auto x, auto y) {
        switch (op) {
            case CmpOp::Lt: return x < y;
            case CmpOp::Le: return x <= y;
            case CmpOp::Gt: return x > y;
            case CmpOp::Ge: return x >= y;
        }
        return false;
    };
    if (a.is_number() && b.is_number()) {
        if (a.kind == Kind::Float || b.kind == Kind::Float) return apply(a.as_double(), b.as_double());
        return apply(a.as_int(), b.as_int());
    }
    if (a.kind == Kind::String && b.kind == Kind::String) return apply(a.s.compare(b.s), 0);
    if (a.kind == Kind::List && b.kind == Kind::List && same_seq_family(a, b) &&
        (a.seq == SeqKind::List || a.seq == SeqKind::Tuple)) {
        const auto& x = a.items();
        const auto& y = b.items();
        for (size_t k = 0; k < x.size() && k < y.size(); ++k)
            if (!equals(x[k], y[k])) return compare(op, x[k], y[k]);
        return apply(x.size(), y.size());
    }
    static const char* names[] = {"<", "<=", ">", ">="};
    fail(std::string("'") + names[int(op)] + "' not supported between instances of '" + type_name(a) + "' and '" +
         type_name(b) + "'");
}

std::string repr_string(std::string_view s) {
    bool has_single = s.find('\'') != std::string_view::npos;
    bool has_double = s.find('"') != std::string_view::npos;
    char quote = (has_single && !has_double) ? '"' : '\'';
    std::string out(1, quote);
    for (char32_t c : uni::decode(s)) {
        if (c == char32_t(quote) || c == '\\') {
            out += '\\';
            out += char(c);
        } else if (c == '\t') {
            out += "\\t";
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c < 0x20 || c == 0x7F) {
            out += "\\x";
            append_hex(out, c, 2);
        } else if (c < 0x7F || uni::is_printable(c)) {
            uni::append_utf8(out, c);
        } else if (c <= 0xFF) {
            out += "\\x";
            append_hex(out, c, 2);
        } else if (c <= 0xFFFF) {
            out += "\\u";
            append_hex(out, c, 4);
        } else {
            out += "\\U";
            append_hex(out, c, 8);
        }
    }
    out += quote;
    return out;
}

namespace {

std::string dict_repr(const DictData& d, ReprState& st) {
    if (std::find(st.active.begin(), st.active.end(), &d) != st.active.end()) return "{...}";
    st.active.push_back(&d);
    std::string out = "{";
    bool first = true;
    for (const auto& kv : d.items) {
        if (!first) out += ", ";
        first = false;
        out += repr_impl(kv.first, st);
        out += ": ";
        out += repr_impl(kv.second, st);
    }
    st.active.pop_back();
    return out + "}";
}

std::string repr_impl(const Value& v, ReprState& st) {
    if (++st.depth > int(kMaxValueDepth) + 10) fail("repr() nested too deeply");
    std::string out;
    switch (v.kind) {
        case Kind::Undefined: out = "Undefined"; break;
        case Kind::String: out = v.safe ? "Markup(" + repr_string(v.s) + ")" : repr_string(v.s); break;
        case Kind::List: out = seq_repr(v, st); break;
        case Kind::Dict: out = dict_repr(*v.dict, st); break;
        case Kind::Object:
            if (const DictData* attrs = v.obj->namespace_attrs()) out = "<Namespace " + dict_repr(*attrs, st) + ">";
            else out = v.obj->repr();
            break;
        default: out = to_str(v);
    }
    --st.depth;
    return out;
}

}  // namespace

std::string repr(const Value& v) {
    ReprState st;
    return repr_impl(v, st);
}

std::string to_str(const Value& v) {
    switch (v.kind) {
        case Kind::Undefined: return "";
        case Kind::None: return "None";
        case Kind::Bool: return v.b ? "True" : "False";
        case Kind::Int: return std::to_string(v.i);
        case Kind::Float: return json::format_double(v.f);
        case Kind::String: return v.s;
        case Kind::List:
        case Kind::Dict: return repr(v);
        case Kind::Object: return repr(v);
        case Kind::Callable: return v.fn->repr();
    }
    return "";
}

std::vector<Value> iterate(const Value& v) {
    switch (v.kind) {
        case Kind::Undefined: return {};
        case Kind::List:
            if (v.is_generator()) {
                std::vector<Value> rest = std::move(v.list->items);
                v.list->items.clear();
                return rest;
            }
            return v.items();
        case Kind::Dict: {
            std::vector<Value> keys;
            keys.reserve(v.dict->items.size());
            for (const auto& kv : v.dict->items) keys.push_back(kv.first);
            return keys;
        }
        case Kind::String: {
            std::vector<Value> chars;
            std::string one;
            for (char32_t c : uni::decode(v.s)) {
                one.clear();
                uni::append_utf8(one, c);
                chars.push_back(Value::string(one, v.safe));
            }
            return chars;
        }
        default: fail("'" + type_name(v) + "' object is not iterable");
    }
}

int64_t length(const Value& v) {
    switch (v.kind) {
        case Kind::Undefined: return 0;
        case Kind::String: return int64_t(uni::length(v.s));
        case Kind::List:
            if (v.is_generator()) break;
            return int64_t(v.items().size());
        case Kind::Dict: return int64_t(v.dict->items.size());
        default: break;
    }
    fail("object of type '" + type_name(v) + "' has no len()");
}

bool contains(const Value& container, const Value& item) {
    switch (container.kind) {
        case Kind::String:
            if (item.kind != Kind::String)
                fail("'in <string>' requires string as left operand, not " + type_name(item));
            return container.s.find(item.s) != std::string::npos;
        case Kind::List:
            if (container.is_generator()) {
                auto& items = container.list->items;
                for (size_t k = 0; k < items.size(); ++k) {
                    if (equals(items[k], item)) {
                        items.erase(items.begin(), items.begin() + long(k) + 1);
                        return true;
                    }
                }
                items.clear();
                return false;
            }
            for (const auto& x : container.items())
                if (equals(x, item)) return true;
            return false;
        case Kind::Dict: return container.dict->find(item) != nullptr;
        case Kind::Undefined: return false;
        default: fail("argument of type '" + type_name(container) + "' is not iterable");
    }
}

std::string html_escape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&#34;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

Value from_json(const json::Value& j) {
    switch (j.kind()) {
        case json::Value::Kind::Null: return Value::none();
        case json::Value::Kind::Bool: return Value::boolean(j.as_bool());
        case json::Value::Kind::Int: return Value::integer(j.as_int());
        case json::Value::Kind::Float: return Value::number(j.as_double());
        case json::Value::Kind::String: return Value::string(j.as_string());
        case json::Value::Kind::Array: {
            std::vector<Value> items;
            items.reserve(j.size());
            for (const auto& x : j.as_array()) items.push_back(from_json(x));
            return Value::make_list(std::move(items));
        }
        case json::Value::Kind::Object: {
            auto d = std::make_shared<DictData>();
            for (const auto& m : j.as_object()) d->set(Value::string(m.first), from_json(m.second));
            return Value::make_dict(std::move(d));
        }
    }
    return Value::none();
}

std::string dumps(const Value& v, const DumpOptions& o) {
    std::string out;
    dump_to(out, v, o, 0);
    return out;
}

}  // namespace arbor::tmpl
