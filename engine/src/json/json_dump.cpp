// JSON serialization: compact or indented output, string quoting and Python-repr number format.
#include <arbor/json.hpp>

#include <charconv>
#include <cmath>
#include <system_error>

namespace arbor::json {
namespace {

// Shortest round-trip digits from std::to_chars' scientific form ("-1.25e+16"), laid out the
// way Python's float repr does: exponent form when the decimal point position is <= -4 or > 16.
std::string python_repr_from_scientific(const char* b, const char* e) {
    std::string out;
    if (b < e && *b == '-') {
        out += '-';
        ++b;
    }
    std::string digits;
    const char* p = b;
    for (; p < e && *p != 'e'; ++p)
        if (*p != '.') digits += *p;
    int exp10 = 0;
    if (p < e) {
        ++p;
        std::from_chars(p + (*p == '+' ? 1 : 0), e, exp10);
    }
    while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
    const int decpt = exp10 + 1;  // value = 0.DIGITS * 10^decpt
    const int n = int(digits.size());
    if (decpt <= -4 || decpt > 16) {
        out += digits[0];
        if (n > 1) {
            out += '.';
            out.append(digits, 1, std::string::npos);
        }
        out += 'e';
        int x = decpt - 1;
        out += x < 0 ? '-' : '+';
        if (x < 0) x = -x;
        if (x < 10) out += '0';
        out += std::to_string(x);
    } else if (decpt <= 0) {
        out += "0.";
        out.append(size_t(-decpt), '0');
        out += digits;
    } else if (decpt < n) {
        out.append(digits, 0, size_t(decpt));
        out += '.';
        out.append(digits, size_t(decpt), std::string::npos);
    } else {
        out += digits;
        out.append(size_t(decpt - n), '0');
        out += ".0";
    }
    return out;
}

template <class F>
std::string format_floating(F d) {
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
    if (r.ec != std::errc()) return "nan";
    return python_repr_from_scientific(buf, r.ptr);
}

void dump_to(std::string& out, const Value& v, int indent, int level) {
    switch (v.kind()) {
        case Value::Kind::Null: out += "null"; return;
        case Value::Kind::Bool: out += v.as_bool() ? "true" : "false"; return;
        case Value::Kind::Int: {
            char buf[24];
            auto r = std::to_chars(buf, buf + sizeof buf, v.as_int());
            out.append(buf, r.ptr);
            return;
        }
        case Value::Kind::Float: {
            double d = v.as_double();
            if (!std::isfinite(d)) {
                out += "null";
                return;
            }
            out += v.is_float32() ? format_float32(float(d)) : format_double(d);
            return;
        }
        case Value::Kind::String: append_quoted(out, v.as_string()); return;
        case Value::Kind::Array: {
            const Array& a = v.as_array();
            if (a.empty()) {
                out += "[]";
                return;
            }
            out += '[';
            for (size_t i = 0; i < a.size(); ++i) {
                if (i) out += ',';
                if (indent >= 0) {
                    out += '\n';
                    out.append(size_t(indent) * size_t(level + 1), ' ');
                }
                dump_to(out, a[i], indent, level + 1);
            }
            if (indent >= 0) {
                out += '\n';
                out.append(size_t(indent) * size_t(level), ' ');
            }
            out += ']';
            return;
        }
        case Value::Kind::Object: {
            const Object& o = v.as_object();
            if (o.empty()) {
                out += "{}";
                return;
            }
            out += '{';
            for (size_t i = 0; i < o.size(); ++i) {
                if (i) out += ',';
                if (indent >= 0) {
                    out += '\n';
                    out.append(size_t(indent) * size_t(level + 1), ' ');
                }
                append_quoted(out, o[i].first);
                out += indent >= 0 ? ": " : ":";
                dump_to(out, o[i].second, indent, level + 1);
            }
            if (indent >= 0) {
                out += '\n';
                out.append(size_t(indent) * size_t(level), ' ');
            }
            out += '}';
            return;
        }
    }
}

}  // namespace

std::string format_double(double d) { return format_floating(d); }
std::string format_float32(float f) { return format_floating(f); }

void append_quoted(std::string& out, std::string_view s) {
    static constexpr char kHex[] = "0123456789abcdef";
    out += '"';
    size_t run = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        out.append(s.data() + run, i - run);
        run = i + 1;
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            default:
                out += "\\u00";
                out += kHex[c >> 4];
                out += kHex[c & 15];
        }
    }
    out.append(s.data() + run, s.size() - run);
    out += '"';
}

std::string quote(std::string_view s) {
    std::string out;
    out.reserve(s.size() + 2);
    append_quoted(out, s);
    return out;
}

std::string dump(const Value& v, int indent) {
    std::string out;
    dump_to(out, v, indent, 0);
    return out;
}

}  // namespace arbor::json
