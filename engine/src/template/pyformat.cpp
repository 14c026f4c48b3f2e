// Python string formatting: str.format(), printf-style '%', and strftime (see pyformat.hpp).
#include "template/pyformat.hpp"

#include "template/builtins.hpp"
#include "template/errors.hpp"
#include "template/pyops.hpp"
#include "template/unicode.hpp"

#include <cmath>
#include <cstdio>
#include <ctime>

namespace arbor::tmpl {
namespace {

struct Spec {
    char fill = ' ';
    std::string fill_utf8 = " ";
    char align = 0;  // < > = ^
    char sign = 0;   // + - space
    bool alt = false;
    bool zero = false;
    int width = -1;
    char grouping = 0;
    int precision = -1;
    char type = 0;
};

Spec parse_spec(std::string_view s) {
    Spec sp;
    size_t p = 0;
    auto is_align = [](char c) { return c == '<' || c == '>' || c == '=' || c == '^'; };
    // [[fill]align]: the fill may be any (UTF-8) character
    if (!s.empty()) {
        size_t first_len = 1;
        unsigned char c0 = static_cast<unsigned char>(s[0]);
        if (c0 >= 0x80) first_len = c0 >= 0xF0 ? 4 : c0 >= 0xE0 ? 3 : 2;
        if (first_len < s.size() && is_align(s[first_len])) {
            sp.fill_utf8 = std::string(s.substr(0, first_len));
            sp.align = s[first_len];
            p = first_len + 1;
        } else if (is_align(s[0])) {
            sp.align = s[0];
            p = 1;
        }
    }
    if (p < s.size() && (s[p] == '+' || s[p] == '-' || s[p] == ' ')) sp.sign = s[p++];
    if (p < s.size() && s[p] == '#') {
        sp.alt = true;
        ++p;
    }
    if (p < s.size() && s[p] == '0') {
        sp.zero = true;
        ++p;
    }
    if (p < s.size() && s[p] >= '0' && s[p] <= '9') {
        sp.width = 0;
        while (p < s.size() && s[p] >= '0' && s[p] <= '9') {
            sp.width = sp.width * 10 + (s[p++] - '0');
            if (sp.width > 100000) fail("format width too large");
        }
    }
    if (p < s.size() && (s[p] == ',' || s[p] == '_')) sp.grouping = s[p++];
    if (p < s.size() && s[p] == '.') {
        ++p;
        if (p >= s.size() || s[p] < '0' || s[p] > '9') fail("Format specifier missing precision");
        sp.precision = 0;
        while (p < s.size() && s[p] >= '0' && s[p] <= '9') {
            sp.precision = sp.precision * 10 + (s[p++] - '0');
            if (sp.precision > 1000) fail("format precision too large");
        }
    }
    if (p < s.size()) sp.type = s[p++];
    if (p != s.size()) fail("Invalid format specifier");
    if (sp.zero && !sp.align) {
        sp.fill_utf8 = "0";
        sp.align = '=';
    }
    return sp;
}

std::string pad(const std::string& body, const Spec& sp, char default_align, size_t sign_len = 0) {
    if (sp.width < 0) return body;
    size_t len = uni::length(body);
    if (len >= size_t(sp.width)) return body;
    size_t n = size_t(sp.width) - len;
    auto fill = [&](size_t k) {
        std::string f;
        for (size_t i = 0; i < k; ++i) f += sp.fill_utf8;
        return f;
    };
    char align = sp.align ? sp.align : default_align;
    switch (align) {
        case '<': return body + fill(n);
        case '^': return fill(n / 2) + body + fill(n - n / 2);
        case '=': return body.substr(0, sign_len) + fill(n) + body.substr(sign_len);
        default: return fill(n) + body;
    }
}

std::string group_digits(const std::string& digits, char sep, int every) {
    std::string out;
    int count = 0;
    for (size_t k = digits.size(); k-- > 0;) {
        out.insert(out.begin(), digits[k]);
        if (++count % every == 0 && k > 0) out.insert(out.begin(), sep);
    }
    return out;
}

std::string fmt_double(double v, char type, int precision, bool alt) {
    char f[16];
    std::snprintf(f, sizeof f, "%%%s.%d%c", alt ? "#" : "", precision, type);
    char buf[512];
    int n = std::snprintf(buf, sizeof buf, f, v);
    if (n < 0) fail("cannot format number");
    if (size_t(n) < sizeof buf) return std::string(buf, size_t(n));
    std::string big(size_t(n) + 1, '\0');
    std::snprintf(big.data(), big.size(), f, v);
    big.resize(size_t(n));
    return big;
}

std::string format_number(const Value& v, const Spec& sp) {
    char type = sp.type;
    bool is_float = v.kind == Kind::Float;
    if (!is_float && (type == 'e' || type == 'E' || type == 'f' || type == 'F' || type == 'g' || type == 'G' || type == '%'))
        is_float = true;
    std::string sign, body;
    if (!is_float) {
        int64_t i = v.as_int();
        if (type == 'c') return pad(std::string(1, char(i)), sp, '<');
        uint64_t mag = i < 0 ? uint64_t(0) - uint64_t(i) : uint64_t(i);
        if (i < 0) sign = "-";
        else if (sp.sign == '+') sign = "+";
        else if (sp.sign == ' ') sign = " ";
        int base = 10;
        std::string prefix;
        if (type == 'x' || type == 'X') base = 16, prefix = type == 'x' ? "0x" : "0X";
        else if (type == 'o') base = 8, prefix = "0o";
        else if (type == 'b') base = 2, prefix = "0b";
        else if (type && type != 'd' && type != 'n')
            fail(std::string("Unknown format code '") + type + "' for object of type '" + type_name(v) + "'");
        const char* digits = type == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
        do {
            body.insert(body.begin(), digits[mag % uint64_t(base)]);
            mag /= uint64_t(base);
        } while (mag);
        if (sp.grouping) body = group_digits(body, sp.grouping, base == 10 ? 3 : 4);
        if (sp.alt) sign += prefix;
    } else {
        double d = v.as_double();
        if (std::signbit(d) && !std::isnan(d)) sign = "-", d = -d;
        else if (sp.sign == '+') sign = "+";
        else if (sp.sign == ' ') sign = " ";
        int prec = sp.precision < 0 ? 6 : sp.precision;
        if (std::isinf(d) || std::isnan(d)) {
            body = std::isnan(d) ? "nan" : "inf";
            if (type == 'E' || type == 'F' || type == 'G') body = std::isnan(d) ? "NAN" : "INF";
            if (type == '%') body += '%';
        } else if (type == '%') {
            body = fmt_double(d * 100, 'f', prec, sp.alt) + "%";
        } else if (type) {
            if (type != 'e' && type != 'E' && type != 'f' && type != 'F' && type != 'g' && type != 'G')
                fail(std::string("Unknown format code '") + type + "' for object of type 'float'");
            body = fmt_double(d, type, prec, sp.alt);
        } else if (sp.precision < 0) {
            body = json::format_double(d);
        } else {
            body = fmt_double(d, 'g', sp.precision == 0 ? 1 : sp.precision, sp.alt);
            if (body.find_first_of(".e") == std::string::npos) body += ".0";
        }
        if (sp.grouping) {
            size_t int_end = body.find_first_not_of("0123456789");
            std::string ip = body.substr(0, int_end);
            body = group_digits(ip, sp.grouping, 3) + (int_end == std::string::npos ? "" : body.substr(int_end));
        }
    }
    return pad(sign + body, sp, '>', sign.size());
}

// Python's ascii(): repr with non-ASCII characters escaped.
std::string ascii_repr(const Value& v) {
    std::string r = repr(v), out;
    for (char32_t c : uni::decode(r)) {
        char buf[16];
        if (c < 0x80) {
            out += char(c);
            continue;
        }
        if (c <= 0xFF) std::snprintf(buf, sizeof buf, "\\x%02x", unsigned(c));
        else if (c <= 0xFFFF) std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(c));
        else std::snprintf(buf, sizeof buf, "\\U%08x", unsigned(c));
        out += buf;
    }
    return out;
}

}  // namespace

std::string py_format_value(const Value& v, std::string_view spec_text) {
    if (v.is_undefined()) fail(v.s.empty() ? "value is undefined" : v.s);
    if (spec_text.empty()) return to_str(v);
    Spec sp = parse_spec(spec_text);
    if (v.kind == Kind::String) {
        if (sp.type && sp.type != 's')
            fail(std::string("Unknown format code '") + sp.type + "' for object of type 'str'");
        if (sp.sign) fail("Sign not allowed in string format specifier");
        if (sp.align == '=') fail("'=' alignment not allowed in string format specifier");
        std::string body = v.s;
        if (sp.precision >= 0) {
            std::u32string u = uni::decode(body);
            if (u.size() > size_t(sp.precision)) body = uni::encode(std::u32string_view(u).substr(0, size_t(sp.precision)));
        }
        return pad(body, sp, '<');
    }
    if (v.is_number()) return format_number(v, sp);  // bool with a spec formats as int
    fail("unsupported format string passed to " + type_name(v) + ".__format__");
}

std::string py_format(std::string_view f, const CallArgs& args) {
    std::string out;
    size_t auto_index = 0;
    bool used_auto = false, used_manual = false;
    for (size_t p = 0; p < f.size();) {
        char c = f[p];
        if (c == '}') {
            if (p + 1 < f.size() && f[p + 1] == '}') {
                out += '}';
                p += 2;
                continue;
            }
            fail("Single '}' encountered in format string");
        }
        if (c != '{') {
            out += c;
            ++p;
            continue;
        }
        if (p + 1 < f.size() && f[p + 1] == '{') {
            out += '{';
            p += 2;
            continue;
        }
        // Find the matching '}' (format specs may nest one level of {}).
        size_t q = p + 1;
        int depth = 1;
        while (q < f.size() && depth > 0) {
            if (f[q] == '{') ++depth;
            else if (f[q] == '}') --depth;
            if (depth > 0) ++q;
        }
        if (q >= f.size()) fail("expected '}' before end of string");
        std::string_view field = f.substr(p + 1, q - p - 1);
        p = q + 1;
        std::string_view name = field, conv, spec;
        size_t colon = std::string_view::npos, bang = std::string_view::npos;
        for (size_t k = 0, br = 0; k < field.size(); ++k) {
            if (field[k] == '[') ++br;
            else if (field[k] == ']' && br) --br;
            else if (!br && field[k] == '!' && bang == std::string_view::npos && colon == std::string_view::npos) bang = k;
            else if (!br && field[k] == ':' && colon == std::string_view::npos) {
                colon = k;
                break;
            }
        }
        if (colon != std::string_view::npos) spec = field.substr(colon + 1);
        if (bang != std::string_view::npos) {
            name = field.substr(0, bang);
            conv = field.substr(bang + 1, (colon == std::string_view::npos ? field.size() : colon) - bang - 1);
        } else if (colon != std::string_view::npos) {
            name = field.substr(0, colon);
        }
        // arg_name
        size_t k = 0;
        while (k < name.size() && name[k] != '.' && name[k] != '[') ++k;
        std::string_view arg = name.substr(0, k);
        Value v;
        if (arg.empty()) {
            if (used_manual) fail("cannot switch from manual field specification to automatic field numbering");
            used_auto = true;
            if (auto_index >= args.pos.size()) fail("Replacement index " + std::to_string(auto_index) + " out of range for positional args tuple");
            v = args.pos[auto_index++];
        } else if (arg.find_first_not_of("0123456789") == std::string_view::npos) {
            if (used_auto) fail("cannot switch from automatic field numbering to manual field specification");
            used_manual = true;
            size_t idx = std::stoul(std::string(arg.substr(0, 9)));
            if (idx >= args.pos.size()) fail("Replacement index " + std::string(arg) + " out of range for positional args tuple");
            v = args.pos[idx];
        } else {
            const Value* found = nullptr;
            for (const auto& kv : args.kw)
                if (kv.first == arg) found = &kv.second;
            if (!found) fail("KeyError: '" + std::string(arg) + "'");
            v = *found;
        }
        while (k < name.size()) {
            if (name[k] == '.') {
                size_t e = k + 1;
                while (e < name.size() && name[e] != '.' && name[e] != '[') ++e;
                v = get_attr(v, name.substr(k + 1, e - k - 1));
                k = e;
            } else {
                size_t e = name.find(']', k);
                if (e == std::string_view::npos) fail("Missing ']' in format string");
                std::string_view key = name.substr(k + 1, e - k - 1);
                Value kv = (!key.empty() && key.find_first_not_of("0123456789") == std::string_view::npos)
                               ? Value::integer(std::stoll(std::string(key.substr(0, 18))))
                               : Value::string(std::string(key));
                Value got = get_item(v, kv);
                if (got.is_undefined()) fail("KeyError: " + repr(kv));
                v = got;
                k = e + 1;
            }
        }
        std::string spec_text(spec);
        if (spec_text.find('{') != std::string::npos) spec_text = py_format(spec_text, args);
        if (conv == "r") v = Value::string(repr(v));
        else if (conv == "s") v = Value::string(to_str(v));
        else if (conv == "a") v = Value::string(ascii_repr(v));
        else if (!conv.empty()) fail("Unknown conversion specifier " + std::string(conv));
        out += py_format_value(v, spec_text);
    }
    return out;
}

std::string py_percent(std::string_view f, const Value& args) {
    std::vector<Value> list;
    const Value* mapping = nullptr;
    if (args.kind == Kind::List && args.seq == SeqKind::Tuple) list = args.items();
    else if (args.kind == Kind::Dict) mapping = &args;
    else list.push_back(args);
    size_t next = 0;
    std::string out;
    auto take = [&]() -> Value {
        if (next >= list.size()) fail("not enough arguments for format string");
        return list[next++];
    };
    for (size_t p = 0; p < f.size();) {
        if (f[p] != '%') {
            out += f[p++];
            continue;
        }
        ++p;
        if (p >= f.size()) fail("incomplete format");
        Value v;
        bool have_value = false;
        if (f[p] == '(') {
            size_t e = f.find(')', p);
            if (e == std::string_view::npos) fail("incomplete format key");
            if (!mapping) fail("format requires a mapping");
            const Value* got = mapping->dict->find(std::string_view(f.substr(p + 1, e - p - 1)));
            if (!got) fail("KeyError: '" + std::string(f.substr(p + 1, e - p - 1)) + "'");
            v = *got;
            have_value = true;
            p = e + 1;
        }
        Spec sp;
        bool left = false;
        while (p < f.size() && std::string_view("-+ #0").find(f[p]) != std::string_view::npos) {
            char c = f[p++];
            if (c == '-') left = true;
            else if (c == '+') sp.sign = '+';
            else if (c == ' ' && sp.sign != '+') sp.sign = ' ';
            else if (c == '#') sp.alt = true;
            else if (c == '0') sp.zero = true;
        }
        if (p < f.size() && f[p] == '*') {
            sp.width = int(take().as_int());
            ++p;
        } else {
            while (p < f.size() && f[p] >= '0' && f[p] <= '9') {
                sp.width = (sp.width < 0 ? 0 : sp.width) * 10 + (f[p++] - '0');
                if (sp.width > 100000) fail("format width too large");
            }
        }
        if (p < f.size() && f[p] == '.') {
            ++p;
            sp.precision = 0;
            if (p < f.size() && f[p] == '*') {
                sp.precision = int(take().as_int());
                ++p;
            } else {
                while (p < f.size() && f[p] >= '0' && f[p] <= '9') {
                    sp.precision = sp.precision * 10 + (f[p++] - '0');
                    if (sp.precision > 1000) fail("format precision too large");
                }
            }
        }
        while (p < f.size() && (f[p] == 'h' || f[p] == 'l' || f[p] == 'L')) ++p;
        if (p >= f.size()) fail("incomplete format");
        char type = f[p++];
        if (type == '%') {
            out += '%';
            continue;
        }
        if (!have_value) v = take();
        if (left) sp.align = '<';
        else if (sp.zero && type != 's' && type != 'r' && type != 'a' && type != 'c') sp.fill_utf8 = "0", sp.align = '=';
        else sp.align = '>';
        std::string piece;
        switch (type) {
            case 's': piece = to_str(v); break;
            case 'r': piece = repr(v); break;
            case 'a': piece = ascii_repr(v); break;
            case 'c':
                if (v.kind == Kind::String) piece = v.s;
                else {
                    piece.clear();
                    uni::append_utf8(piece, char32_t(v.as_int()));
                }
                break;
            case 'd': case 'i': case 'u': case 'x': case 'X': case 'o': {
                if (!v.is_number()) fail(std::string("%") + type + " format: a real number is required, not " + type_name(v));
                Value iv = Value::integer(v.kind == Kind::Float ? int64_t(std::trunc(v.f)) : v.as_int());
                Spec s2 = sp;
                s2.type = (type == 'i' || type == 'u') ? 'd' : type;
                if (type == 'o' && sp.alt) s2.alt = true;
                piece = format_number(iv, s2);
                if (sp.precision > 0) {
                    // %.Nd pads the digits with zeros to N
                    size_t start = piece.find_first_of("0123456789");
                    std::string digits = piece.substr(start);
                    if (digits.size() < size_t(sp.precision)) piece = piece.substr(0, start) + std::string(size_t(sp.precision) - digits.size(), '0') + digits;
                }
                s2.width = -1;
                goto padded;
            }
            case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': {
                if (!v.is_number()) fail(std::string("must be real number, not ") + type_name(v));
                Spec s2 = sp;
                s2.type = type;
                s2.width = -1;
                if (s2.precision < 0) s2.precision = 6;
                piece = format_number(Value::number(v.as_double()), s2);
                goto padded;
            }
            default: fail(std::string("unsupported format character '") + type + "'");
        }
        sp.precision = (type == 's' || type == 'r' || type == 'a') ? sp.precision : -1;
        if (sp.precision >= 0) {
            std::u32string u = uni::decode(piece);
            if (u.size() > size_t(sp.precision)) piece = uni::encode(std::u32string_view(u).substr(0, size_t(sp.precision)));
        }
    padded:
        {
            size_t sign_len = (!piece.empty() && (piece[0] == '-' || piece[0] == '+' || piece[0] == ' ')) ? 1 : 0;
            if (sp.alt && (type == 'x' || type == 'X' || type == 'o')) sign_len += 2;
            out += pad(piece, sp, '>', sign_len);
        }
    }
    if (!mapping && next < list.size()) fail("not all arguments converted during string formatting");
    return out;
}

}  // namespace arbor::tmpl
