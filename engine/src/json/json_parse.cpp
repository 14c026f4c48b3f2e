// Strict RFC 8259 JSON parser: recursive descent over the bytes, depth-bounded, UTF-8 checked.
// Errors report line:column (1-based, column counted in bytes) and the byte offset.
#include <arbor/json.hpp>
#include "core/utf8_append.hpp"

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <unordered_map>

namespace arbor::json {
namespace {

class Parser {
public:
    explicit Parser(std::string_view text) : s_(text), p_(0) {}

    Result<Value> run() {
        skip_ws();
        Value v;
        if (!parse_value(v, 0)) return make_error(err_);
        skip_ws();
        if (p_ != s_.size()) {
            fail("unexpected content after the JSON value");
            return make_error(err_);
        }
        return v;
    }

private:
    std::string_view s_;
    size_t p_;
    std::string err_;

    bool fail(const std::string& what) { return fail_at(p_, what); }

    bool fail_at(size_t at, const std::string& what) {
        if (!err_.empty()) return false;
        size_t line = 1, col = 1;
        for (size_t i = 0; i < at && i < s_.size(); ++i) {
            if (s_[i] == '\n') {
                ++line;
                col = 1;
            } else {
                ++col;
            }
        }
        err_ = "json: line " + std::to_string(line) + ", column " + std::to_string(col) + " (byte " +
               std::to_string(at) + "): " + what;
        return false;
    }

    std::string here() const {
        if (p_ >= s_.size()) return "end of input";
        unsigned char c = static_cast<unsigned char>(s_[p_]);
        if (c >= 0x20 && c < 0x7f) return std::string("'") + char(c) + "'";
        char buf[16];
        std::snprintf(buf, sizeof buf, "byte 0x%02x", c);
        return buf;
    }

    void skip_ws() {
        while (p_ < s_.size()) {
            char c = s_[p_];
            if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
                ++p_;
            else
                break;
        }
    }

    bool literal(std::string_view word) {
        if (s_.substr(p_, word.size()) != word) return fail("invalid literal, expected '" + std::string(word) + "'");
        p_ += word.size();
        return true;
    }

    bool parse_value(Value& out, int depth) {
        if (p_ >= s_.size()) return fail("unexpected end of input, expected a value");
        char c = s_[p_];
        switch (c) {
            case '{': return parse_object(out, depth + 1);
            case '[': return parse_array(out, depth + 1);
            case '"': {
                std::string str;
                if (!parse_string(str)) return false;
                out = Value(std::move(str));
                return true;
            }
            case 't':
                if (!literal("true")) return false;
                out = Value(true);
                return true;
            case 'f':
                if (!literal("false")) return false;
                out = Value(false);
                return true;
            case 'n':
                if (!literal("null")) return false;
                out = Value();
                return true;
            default:
                if (c == '-' || (c >= '0' && c <= '9')) return parse_number(out);
                return fail("unexpected " + here() + ", expected a value");
        }
    }

    bool parse_array(Value& out, int depth) {
        if (depth > kMaxDepth) return fail("nesting deeper than " + std::to_string(kMaxDepth));
        ++p_;  // [
        Array arr;
        skip_ws();
        if (p_ < s_.size() && s_[p_] == ']') {
            ++p_;
            out = Value(std::move(arr));
            return true;
        }
        for (;;) {
            skip_ws();
            arr.emplace_back();
            if (!parse_value(arr.back(), depth)) return false;
            skip_ws();
            if (p_ >= s_.size()) return fail("unexpected end of input in array, expected ',' or ']'");
            if (s_[p_] == ',') {
                ++p_;
                continue;
            }
            if (s_[p_] == ']') {
                ++p_;
                break;
            }
            return fail("unexpected " + here() + " in array, expected ',' or ']'");
        }
        out = Value(std::move(arr));
        return true;
    }

    bool parse_object(Value& out, int depth) {
        if (depth > kMaxDepth) return fail("nesting deeper than " + std::to_string(kMaxDepth));
        ++p_;  // {
        Object obj;
        // Duplicate detection: linear for small objects, a hash index once an object grows.
        std::unordered_map<std::string_view, size_t> index;
        constexpr size_t kIndexFrom = 16;
        skip_ws();
        if (p_ < s_.size() && s_[p_] == '}') {
            ++p_;
            out = Value(std::move(obj));
            return true;
        }
        for (;;) {
            skip_ws();
            if (p_ >= s_.size()) return fail("unexpected end of input in object, expected a key");
            if (s_[p_] != '"') return fail("unexpected " + here() + " in object, expected a string key");
            std::string key;
            if (!parse_string(key)) return false;
            skip_ws();
            if (p_ >= s_.size() || s_[p_] != ':') return fail("unexpected " + here() + " after object key, expected ':'");
            ++p_;
            skip_ws();
            Value v;
            if (!parse_value(v, depth)) return false;

            size_t dup = SIZE_MAX;
            if (obj.size() < kIndexFrom) {
                for (size_t i = 0; i < obj.size(); ++i)
                    if (obj[i].first == key) dup = i;
            } else {
                if (index.empty())
                    for (size_t i = 0; i < obj.size(); ++i) index.emplace(obj[i].first, i);
                auto it = index.find(key);
                if (it != index.end()) dup = it->second;
            }
            if (dup != SIZE_MAX) {
                obj[dup].second = std::move(v);
            } else {
                // Keys are referenced by the index as string_views: reserve so that growth of
                // obj moves strings (and SSO strings would move their bytes). Rebuild on growth.
                size_t cap = obj.capacity();
                obj.emplace_back(std::move(key), std::move(v));
                if (!index.empty()) {
                    if (obj.capacity() != cap) {
                        index.clear();
                        for (size_t i = 0; i < obj.size(); ++i) index.emplace(obj[i].first, i);
                    } else {
                        index.emplace(obj.back().first, obj.size() - 1);
                    }
                }
            }

            skip_ws();
            if (p_ >= s_.size()) return fail("unexpected end of input in object, expected ',' or '}'");
            if (s_[p_] == ',') {
                ++p_;
                continue;
            }
            if (s_[p_] == '}') {
                ++p_;
                break;
            }
            return fail("unexpected " + here() + " in object, expected ',' or '}'");
        }
        out = Value(std::move(obj));
        return true;
    }

    static int hex_value(char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    }

    bool read_hex4(uint32_t& cp) {
        if (s_.size() - p_ < 4) return fail("truncated \\u escape");
        cp = 0;
        for (int i = 0; i < 4; ++i) {
            int h = hex_value(s_[p_ + i]);
            if (h < 0) return fail_at(p_ + i, "invalid hex digit in \\u escape");
            cp = cp * 16 + uint32_t(h);
        }
        p_ += 4;
        return true;
    }

    // Length of the valid UTF-8 sequence starting at p_ (lead byte >= 0x80), or 0.
    size_t utf8_len() const {
        const auto* u = reinterpret_cast<const unsigned char*>(s_.data());
        size_t n = s_.size();
        unsigned char c = u[p_];
        auto cont = [&](size_t i) { return p_ + i < n && (u[p_ + i] & 0xC0) == 0x80; };
        if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
        if (c >= 0xE0 && c <= 0xEF) {
            if (!cont(1) || !cont(2)) return 0;
            unsigned char c1 = u[p_ + 1];
            if (c == 0xE0 && c1 < 0xA0) return 0;   // overlong
            if (c == 0xED && c1 >= 0xA0) return 0;  // surrogate
            return 3;
        }
        if (c >= 0xF0 && c <= 0xF4) {
            if (!cont(1) || !cont(2) || !cont(3)) return 0;
            unsigned char c1 = u[p_ + 1];
            if (c == 0xF0 && c1 < 0x90) return 0;  // overlong
            if (c == 0xF4 && c1 >= 0x90) return 0; // above U+10FFFF
            return 4;
        }
        return 0;
    }

    bool parse_string(std::string& out) {
        const size_t open = p_;
        ++p_;  // opening quote
        for (;;) {
            // Fast path: copy a run of plain ASCII.
            size_t run = p_;
            while (run < s_.size()) {
                unsigned char c = static_cast<unsigned char>(s_[run]);
                if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
                ++run;
            }
            out.append(s_.data() + p_, run - p_);
            p_ = run;
            if (p_ >= s_.size()) return fail_at(open, "unterminated string");
            unsigned char c = static_cast<unsigned char>(s_[p_]);
            if (c == '"') {
                ++p_;
                return true;
            }
            if (c < 0x20) return fail("control character (byte 0x" + hex2(c) + ") in string; it must be escaped");
            if (c >= 0x80) {
                size_t n = utf8_len();
                if (n == 0) return fail("invalid UTF-8 in string");
                out.append(s_.data() + p_, n);
                p_ += n;
                continue;
            }
            // Backslash escape.
            ++p_;
            if (p_ >= s_.size()) return fail_at(open, "unterminated string");
            char e = s_[p_++];
            switch (e) {
                case '"': out += '"'; break;
                case '\\': out += '\\'; break;
                case '/': out += '/'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'u': {
                    size_t at = p_ - 2;
                    uint32_t cp = 0;
                    if (!read_hex4(cp)) return false;
                    if (cp >= 0xD800 && cp <= 0xDBFF) {
                        uint32_t lo = 0;
                        if (s_.size() - p_ < 2 || s_[p_] != '\\' || s_[p_ + 1] != 'u')
                            return fail_at(at, "unpaired high surrogate in \\u escape");
                        p_ += 2;
                        if (!read_hex4(lo)) return false;
                        if (lo < 0xDC00 || lo > 0xDFFF) return fail_at(at, "unpaired high surrogate in \\u escape");
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                        return fail_at(at, "unpaired low surrogate in \\u escape");
                    }
                    utf8_append(out, cp);
                    break;
                }
                default:
                    p_ -= 1;
                    return fail("invalid escape '\\" + (e >= 0x20 && e < 0x7f ? std::string(1, e) : "?") + "' in string");
            }
        }
    }

    static std::string hex2(unsigned c) {
        const char* d = "0123456789abcdef";
        return std::string{d[(c >> 4) & 15], d[c & 15]};
    }

    static bool digit(char c) { return c >= '0' && c <= '9'; }

    bool parse_number(Value& out) {
        const size_t start = p_;
        bool neg = false;
        if (s_[p_] == '-') {
            neg = true;
            ++p_;
        }
        if (p_ >= s_.size() || !digit(s_[p_])) return fail("invalid number: expected a digit");
        if (s_[p_] == '0') {
            ++p_;
            if (p_ < s_.size() && digit(s_[p_])) return fail("invalid number: leading zero");
        } else {
            while (p_ < s_.size() && digit(s_[p_])) ++p_;
        }
        bool is_float = false;
        if (p_ < s_.size() && s_[p_] == '.') {
            is_float = true;
            ++p_;
            if (p_ >= s_.size() || !digit(s_[p_])) return fail("invalid number: expected a digit after '.'");
            while (p_ < s_.size() && digit(s_[p_])) ++p_;
        }
        if (p_ < s_.size() && (s_[p_] == 'e' || s_[p_] == 'E')) {
            is_float = true;
            ++p_;
            if (p_ < s_.size() && (s_[p_] == '+' || s_[p_] == '-')) ++p_;
            if (p_ >= s_.size() || !digit(s_[p_])) return fail("invalid number: expected a digit in the exponent");
            while (p_ < s_.size() && digit(s_[p_])) ++p_;
        }
        const char* b = s_.data() + start;
        const char* e = s_.data() + p_;
        if (!is_float) {
            int64_t i = 0;
            auto r = std::from_chars(b, e, i);
            if (r.ec == std::errc() && r.ptr == e) {
                out = Value(i);
                return true;
            }
            (void)neg;  // too big for int64: fall through to double
        }
        double d = 0;
        auto r = std::from_chars(b, e, d);
        if (r.ec == std::errc::result_out_of_range) {
            // Overflow to +-inf or underflow to 0, as strtod and Python do.
            d = std::strtod(std::string(b, e).c_str(), nullptr);
        } else if (r.ec != std::errc() || r.ptr != e) {
            return fail_at(start, "invalid number");
        }
        out = Value(d);
        return true;
    }
};

}  // namespace

Result<Value> parse(std::string_view text) { return Parser(text).run(); }

}  // namespace arbor::json
