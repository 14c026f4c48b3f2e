// Template lexer (see lexer.hpp). Behaviour follows jinja2 3.1's lexer rules for
// trim_blocks=True, lstrip_blocks=True: a block or comment tag eats one newline after it, and
// whitespace between a line start and a block/comment tag is removed unless the tag starts with
// '+'; '-' strips all whitespace on that side.
#include "template/lexer.hpp"

#include "template/errors.hpp"
#include "template/unicode.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>

namespace arbor::tmpl {

std::string normalize_newlines(std::string_view src) {
    std::string out;
    out.reserve(src.size());
    for (size_t k = 0; k < src.size(); ++k) {
        char c = src[k];
        if (c == '\r') {
            out += '\n';
            if (k + 1 < src.size() && src[k + 1] == '\n') ++k;
        } else {
            out += c;
        }
    }
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
}

LineMap::LineMap(std::string_view text) : text_(text) {
    starts_.push_back(0);
    for (size_t k = 0; k < text.size(); ++k)
        if (text[k] == '\n') starts_.push_back(k + 1);
}

SrcPos LineMap::at(size_t offset) const {
    offset = std::min(offset, text_.size());
    auto it = std::upper_bound(starts_.begin(), starts_.end(), offset);
    size_t line = size_t(it - starts_.begin());
    size_t start = starts_[line - 1];
    int col = 1 + int(uni::length(text_.substr(start, offset - start)));
    return SrcPos{int(line), col};
}

namespace {

// Decodes one code point at s[p] (valid UTF-8 is checked up front); returns its byte length.
size_t cp_at(std::string_view s, size_t p, char32_t& c) {
    unsigned char b = static_cast<unsigned char>(s[p]);
    if (b < 0x80) {
        c = b;
        return 1;
    }
    size_t n = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2;
    std::u32string u = uni::decode(s.substr(p, n));
    c = u.empty() ? 0xFFFD : u[0];
    return n;
}

// Length of the run of Python whitespace starting at p.
size_t space_run(std::string_view s, size_t p) {
    size_t q = p;
    while (q < s.size()) {
        char32_t c;
        size_t n = cp_at(s, q, c);
        if (!uni::is_space(c)) break;
        q += n;
    }
    return q - p;
}

// True when all of s is Python whitespace (and s is not empty).
bool all_space(std::string_view s) { return !s.empty() && space_run(s, 0) == s.size(); }

// str.rstrip(): strip trailing Python whitespace.
std::string_view rstrip_space(std::string_view s) {
    std::u32string u = uni::decode(s);
    size_t keep = u.size();
    while (keep > 0 && uni::is_space(u[keep - 1])) --keep;
    size_t bytes = uni::encode(std::u32string_view(u).substr(0, keep)).size();
    return s.substr(0, bytes);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

class Lexer {
public:
    explicit Lexer(std::string_view src) : s_(src), lines_(src) {}

    std::vector<Token> run() {
        size_t pos = 0;
        bool line_starting = true;
        while (pos < s_.size()) {
            size_t t = find_tag(pos);
            if (t == std::string_view::npos) {
                emit_data(s_.substr(pos), pos);
                break;
            }
            char kind = s_[t + 1];  // '{' '%' '#'
            size_t after = t + 2;
            char sign = 0;
            if (after < s_.size() && (s_[after] == '-' || s_[after] == '+')) sign = s_[after++];
            size_t raw_end = kind == '%' ? match_raw_begin(t) : 0;

            std::string_view text = s_.substr(pos, t - pos);
            if (sign == '-') {
                text = rstrip_space(text);
            } else if (sign != '+' && kind != '{') {
                size_t l = text.rfind('\n');
                l = (l == std::string_view::npos) ? 0 : l + 1;
                if ((l > 0 || line_starting) && all_space(text.substr(l))) text = text.substr(0, l);
            }
            emit_data(text, pos);

            if (raw_end) {
                pos = lex_raw(raw_end, s_[raw_end - 1] == '\n', line_starting);
            } else if (kind == '#') {
                pos = lex_comment(after, t, line_starting);
            } else {
                pos = lex_tag(kind == '{', t, after, line_starting);
            }
        }
        Token eof;
        eof.type = Tok::Eof;
        eof.pos = lines_.at(s_.size());
        out_.push_back(std::move(eof));
        return std::move(out_);
    }

private:
    std::string_view s_;
    LineMap lines_;
    std::vector<Token> out_;

    [[noreturn]] void error(size_t at, const std::string& msg) { fail_at(lines_.at(at), msg); }

    size_t find_tag(size_t from) const {
        for (size_t p = s_.find('{', from); p != std::string_view::npos; p = s_.find('{', p + 1)) {
            if (p + 1 < s_.size() && (s_[p + 1] == '{' || s_[p + 1] == '%' || s_[p + 1] == '#')) return p;
        }
        return std::string_view::npos;
    }

    void emit_data(std::string_view text, size_t at) {
        if (text.empty()) return;
        Token tok;
        tok.type = Tok::Data;
        tok.text = std::string(text);
        tok.pos = lines_.at(at);
        out_.push_back(std::move(tok));
    }

    void emit(Tok type, size_t at, std::string text = {}) {
        Token tok;
        tok.type = type;
        tok.text = std::move(text);
        tok.pos = lines_.at(at);
        out_.push_back(std::move(tok));
    }

    // `{%[-+]?\s*raw\s*(-%}\s*|%})` at t: returns the offset after it, or 0.
    size_t match_raw_begin(size_t t) const {
        size_t p = t + 2;
        if (p < s_.size() && (s_[p] == '-' || s_[p] == '+')) ++p;
        p += space_run(s_, p);
        if (s_.substr(p, 3) != "raw") return 0;
        p += 3;
        p += space_run(s_, p);
        if (s_.substr(p, 3) == "-%}") return p + 3 + space_run(s_, p + 3);
        if (s_.substr(p, 2) == "%}") return p + 2;
        return 0;
    }

    // Block end at p (when not inside brackets): returns the offset after it (and after the
    // whitespace it eats), or 0.
    size_t match_block_end(size_t p) const {
        if (s_.substr(p, 3) == "+%}") return p + 3;
        if (s_.substr(p, 3) == "-%}") return p + 3 + space_run(s_, p + 3);
        if (s_.substr(p, 2) == "%}") return p + 2 + ((p + 2 < s_.size() && s_[p + 2] == '\n') ? 1 : 0);
        return 0;
    }

    size_t match_var_end(size_t p) const {
        if (s_.substr(p, 3) == "-}}") return p + 3 + space_run(s_, p + 3);
        if (s_.substr(p, 2) == "}}") return p + 2;
        return 0;
    }

    size_t lex_raw(size_t body, bool begin_ended_newline, bool& line_starting) {
        line_starting = begin_ended_newline;
        for (size_t p = s_.find("{%", body); p != std::string_view::npos; p = s_.find("{%", p + 1)) {
            size_t q = p + 2;
            char sign = 0;
            if (q < s_.size() && (s_[q] == '-' || s_[q] == '+')) sign = s_[q++];
            q += space_run(s_, q);
            if (s_.substr(q, 6) != "endraw") continue;
            q += 6;
            q += space_run(s_, q);
            size_t end = match_block_end(q);
            if (!end) continue;
            std::string_view text = s_.substr(body, p - body);
            if (sign == '-') {
                text = rstrip_space(text);
            } else if (sign != '+') {
                size_t l = text.rfind('\n');
                l = (l == std::string_view::npos) ? 0 : l + 1;
                if ((l > 0 || line_starting) && all_space(text.substr(l))) text = text.substr(0, l);
            }
            emit_data(text, body);
            line_starting = s_[end - 1] == '\n';
            return end;
        }
        error(body, "missing end of raw directive");
    }

    size_t lex_comment(size_t p, size_t begin, bool& line_starting) {
        for (; p < s_.size(); ++p) {
            size_t end = 0;
            if (s_.substr(p, 3) == "+#}")
                end = p + 3;
            else if (s_.substr(p, 3) == "-#}")
                end = p + 3 + space_run(s_, p + 3);
            else if (s_.substr(p, 2) == "#}")
                end = p + 2 + ((p + 2 < s_.size() && s_[p + 2] == '\n') ? 1 : 0);
            if (end) {
                line_starting = s_[end - 1] == '\n';
                return end;
            }
        }
        error(begin, "missing end of comment tag");
    }

    size_t lex_tag(bool variable, size_t begin, size_t p, bool& line_starting) {
        emit(variable ? Tok::VarBegin : Tok::BlockBegin, begin);
        std::vector<char> balance;
        while (p < s_.size()) {
            if (balance.empty()) {
                size_t end = variable ? match_var_end(p) : match_block_end(p);
                if (end) {
                    emit(variable ? Tok::VarEnd : Tok::BlockEnd, p);
                    line_starting = s_[end - 1] == '\n';
                    return end;
                }
            }
            size_t ws = space_run(s_, p);
            if (ws) {
                p += ws;
                continue;
            }
            char c = s_[p];
            if (is_digit(c)) {
                p = lex_number(p);
                continue;
            }
            if (is_name_start(c)) {
                size_t q = p;
                while (q < s_.size() && is_name_char(s_[q])) ++q;
                emit(Tok::Name, p, std::string(s_.substr(p, q - p)));
                p = q;
                continue;
            }
            if (c == '\'' || c == '"') {
                p = lex_string(p);
                continue;
            }
            static const char* two[] = {"//", "**", "==", "!=", ">=", "<="};
            bool matched = false;
            for (const char* op : two) {
                if (s_.substr(p, 2) == op) {
                    emit(Tok::Op, p, op);
                    p += 2;
                    matched = true;
                    break;
                }
            }
            if (matched) continue;
            if (std::string_view("+-/*%~[](){}|,.:;=<>").find(c) != std::string_view::npos) {
                if (c == '(' || c == '[' || c == '{') {
                    balance.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
                } else if (c == ')' || c == ']' || c == '}') {
                    if (balance.empty()) error(p, std::string("unexpected '") + c + "'");
                    if (balance.back() != c)
                        error(p, std::string("unexpected '") + c + "', expected '" + balance.back() + "'");
                    balance.pop_back();
                }
                emit(Tok::Op, p, std::string(1, c));
                ++p;
                continue;
            }
            char32_t cp;
            cp_at(s_, p, cp);
            std::string shown;
            uni::append_utf8(shown, cp);
            error(p, "unexpected char '" + shown + "'");
        }
        error(begin, std::string("unexpected end of template, the ") + (variable ? "'{{'" : "'{%'") +
                         " tag is never closed");
    }

    // digits with single underscores between them: returns end, or p if none
    size_t digits(size_t p, bool (*ok)(char)) const {
        size_t q = p;
        if (q >= s_.size() || !ok(s_[q])) return p;
        ++q;
        while (q < s_.size()) {
            if (ok(s_[q])) {
                ++q;
            } else if (s_[q] == '_' && q + 1 < s_.size() && ok(s_[q + 1])) {
                q += 2;
            } else {
                break;
            }
        }
        return q;
    }

    size_t lex_number(size_t p) {
        auto dec = [](char c) { return c >= '0' && c <= '9'; };
        // Float: digits ( (.digits)? e[+-]?digits | .digits ), not right after a '.'.
        if (p == 0 || s_[p - 1] != '.') {
            size_t q = digits(p, dec);
            size_t frac = q;
            if (q < s_.size() && s_[q] == '.') {
                size_t r = digits(q + 1, dec);
                if (r > q + 1) frac = r;
            }
            size_t end = 0;
            if (frac < s_.size() && (s_[frac] == 'e' || s_[frac] == 'E')) {
                size_t r = frac + 1;
                if (r < s_.size() && (s_[r] == '+' || s_[r] == '-')) ++r;
                size_t e = digits(r, dec);
                if (e > r) end = e;
            }
            if (!end && frac > q) end = frac;
            if (end) {
                std::string clean;
                for (char c : s_.substr(p, end - p))
                    if (c != '_') clean += c;
                Token tok;
                tok.type = Tok::Float;
                tok.fval = std::strtod(clean.c_str(), nullptr);
                tok.pos = lines_.at(p);
                out_.push_back(std::move(tok));
                return end;
            }
        }
        // Integer: 0b.. 0o.. 0x.. decimal, or zeros.
        int base = 10;
        size_t start = p, end;
        char c1 = p + 1 < s_.size() ? char(s_[p + 1] | 0x20) : 0;
        auto bin = [](char c) { return c == '0' || c == '1'; };
        auto oct = [](char c) { return c >= '0' && c <= '7'; };
        auto hex = [](char c) { return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'); };
        auto prefixed = [&](bool (*ok)(char)) {
            // 0x(_?[digits])+
            size_t q = p + 2;
            size_t last = q;
            while (q < s_.size()) {
                size_t r = q + (s_[q] == '_' ? 1 : 0);
                if (r < s_.size() && ok(s_[r])) {
                    q = r + 1;
                    last = q;
                } else {
                    break;
                }
            }
            return last;
        };
        if (s_[p] == '0' && c1 == 'b' && (end = prefixed(bin)) > p + 2) {
            base = 2;
            start = p + 2;
        } else if (s_[p] == '0' && c1 == 'o' && (end = prefixed(oct)) > p + 2) {
            base = 8;
            start = p + 2;
        } else if (s_[p] == '0' && c1 == 'x' && (end = prefixed(hex)) > p + 2) {
            base = 16;
            start = p + 2;
        } else if (s_[p] != '0') {
            end = digits(p, dec);
        } else {
            end = digits(p, [](char c) { return c == '0'; });
        }
        std::string clean;
        for (char c : s_.substr(start, end - start))
            if (c != '_') clean += c;
        Token tok;
        tok.type = Tok::Int;
        auto r = std::from_chars(clean.data(), clean.data() + clean.size(), tok.ival, base);
        if (r.ec != std::errc()) error(p, "integer literal too large");
        tok.pos = lines_.at(p);
        out_.push_back(std::move(tok));
        return end;
    }

    size_t lex_string(size_t p) {
        char quote = s_[p];
        size_t q = p + 1;
        while (q < s_.size() && s_[q] != quote) q += (s_[q] == '\\') ? 2 : 1;
        if (q >= s_.size()) error(p, "unexpected char " + std::string(1, quote) + " (unterminated string)");
        Token tok;
        tok.type = Tok::String;
        tok.text = unescape(s_.substr(p + 1, q - p - 1), p);
        tok.pos = lines_.at(p);
        out_.push_back(std::move(tok));
        return q + 1;
    }

    // Python's unicode-escape decoding of the literal's text (jinja2 does exactly that).
    std::string unescape(std::string_view t, size_t at) {
        std::string out;
        auto hexval = [](char c) -> int {
            if (c >= '0' && c <= '9') return c - '0';
            c = char(c | 0x20);
            if (c >= 'a' && c <= 'f') return c - 'a' + 10;
            return -1;
        };
        for (size_t k = 0; k < t.size(); ++k) {
            if (t[k] != '\\') {
                out += t[k];
                continue;
            }
            if (k + 1 >= t.size()) error(at, "\\ at end of string");
            char e = t[++k];
            switch (e) {
                case '\n': break;
                case '\\': out += '\\'; break;
                case '\'': out += '\''; break;
                case '"': out += '"'; break;
                case 'a': out += '\a'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'v': out += '\v'; break;
                case 'x':
                case 'u':
                case 'U': {
                    int n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
                    uint32_t cp = 0;
                    for (int d = 0; d < n; ++d) {
                        int h = (k + 1 + size_t(d) < t.size()) ? hexval(t[k + 1 + size_t(d)]) : -1;
                        if (h < 0) error(at, std::string("truncated \\") + e + " escape in string literal");
                        cp = cp * 16 + uint32_t(h);
                    }
                    k += size_t(n);
                    if (cp > 0x10FFFF) error(at, "illegal Unicode character in string literal");
                    if (cp >= 0xD800 && cp <= 0xDFFF) error(at, "surrogate code point in string literal is not supported");
                    uni::append_utf8(out, cp);
                    break;
                }
                case 'N': error(at, "\\N{...} escapes are not supported");
                default:
                    if (e >= '0' && e <= '7') {
                        uint32_t cp = uint32_t(e - '0');
                        for (int d = 0; d < 2 && k + 1 < t.size() && t[k + 1] >= '0' && t[k + 1] <= '7'; ++d)
                            cp = cp * 8 + uint32_t(t[++k] - '0');
                        uni::append_utf8(out, cp);
                    } else if (static_cast<unsigned char>(e) >= 0x80) {
                        // A backslash before a non-ASCII character: jinja2 backslash-escapes the
                        // character first, so the result is a backslash and that escape's text.
                        char32_t cp;
                        size_t n = cp_at(t, k, cp);
                        k += n - 1;
                        char buf[16];
                        if (cp < 0x100)
                            std::snprintf(buf, sizeof buf, "\\x%02x", unsigned(cp));
                        else if (cp < 0x10000)
                            std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(cp));
                        else
                            std::snprintf(buf, sizeof buf, "\\U%08x", unsigned(cp));
                        out += buf;
                    } else {
                        out += '\\';
                        out += e;
                    }
            }
        }
        return out;
    }
};

}  // namespace

std::vector<Token> tokenize(std::string_view source) { return Lexer(source).run(); }

}  // namespace arbor::tmpl
