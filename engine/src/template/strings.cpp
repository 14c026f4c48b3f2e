// Python str algorithms by code point (see strings.hpp).
#include "template/strings.hpp"

#include "template/errors.hpp"
#include "template/unicode.hpp"

#include <algorithm>

namespace arbor::tmpl {

std::string py_strip(std::string_view s, const std::string* chars, bool left, bool right) {
    std::u32string u = uni::decode(s);
    std::u32string set;
    if (chars) set = uni::decode(*chars);
    auto strip_me = [&](char32_t c) { return chars ? set.find(c) != std::u32string::npos : uni::is_space(c); };
    size_t lo = 0, hi = u.size();
    if (left)
        while (lo < hi && strip_me(u[lo])) ++lo;
    if (right)
        while (hi > lo && strip_me(u[hi - 1])) --hi;
    return uni::encode(std::u32string_view(u).substr(lo, hi - lo));
}

std::vector<std::string> py_split(std::string_view s, const std::string* sep, int64_t maxsplit, bool from_right) {
    std::vector<std::string> out;
    if (maxsplit < 0) maxsplit = INT64_MAX;
    if (sep) {
        if (sep->empty()) fail("empty separator");
        if (!from_right) {
            size_t start = 0;
            int64_t n = 0;
            for (size_t p = s.find(*sep); p != std::string_view::npos && n < maxsplit; p = s.find(*sep, start), ++n) {
                out.emplace_back(s.substr(start, p - start));
                start = p + sep->size();
            }
            out.emplace_back(s.substr(start));
        } else {
            size_t end = s.size();
            int64_t n = 0;
            while (n < maxsplit && end >= sep->size()) {
                size_t p = s.substr(0, end).rfind(*sep);
                if (p == std::string_view::npos) break;
                out.emplace_back(s.substr(p + sep->size(), end - p - sep->size()));
                end = p;
                ++n;
            }
            out.emplace_back(s.substr(0, end));
            std::reverse(out.begin(), out.end());
        }
        return out;
    }
    std::u32string u = uni::decode(s);
    std::vector<std::u32string> parts;
    if (!from_right) {
        size_t i = 0;
        int64_t n = 0;
        while (i < u.size()) {
            while (i < u.size() && uni::is_space(u[i])) ++i;
            if (i >= u.size()) break;
            if (n >= maxsplit) {
                size_t end = u.size();
                parts.push_back(u.substr(i, end - i));
                break;
            }
            size_t j = i;
            while (j < u.size() && !uni::is_space(u[j])) ++j;
            parts.push_back(u.substr(i, j - i));
            ++n;
            i = j;
        }
        // Python keeps the remainder's trailing whitespace only when maxsplit cut it; strip none.
    } else {
        size_t i = u.size();
        int64_t n = 0;
        while (i > 0) {
            while (i > 0 && uni::is_space(u[i - 1])) --i;
            if (i == 0) break;
            if (n >= maxsplit) {
                parts.push_back(u.substr(0, i));
                break;
            }
            size_t j = i;
            while (j > 0 && !uni::is_space(u[j - 1])) --j;
            parts.push_back(u.substr(j, i - j));
            ++n;
            i = j;
        }
        std::reverse(parts.begin(), parts.end());
    }
    for (auto& p : parts) out.push_back(uni::encode(p));
    return out;
}

std::vector<std::string> py_splitlines(std::string_view s, bool keepends) {
    std::u32string u = uni::decode(s);
    std::vector<std::string> out;
    auto is_break = [](char32_t c) {
        return c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D || c == 0x1E || c == 0x85 ||
               c == 0x2028 || c == 0x2029;
    };
    size_t start = 0, i = 0;
    while (i < u.size()) {
        if (!is_break(u[i])) {
            ++i;
            continue;
        }
        size_t eol = i + 1;
        if (u[i] == '\r' && eol < u.size() && u[eol] == '\n') ++eol;
        out.push_back(uni::encode(std::u32string_view(u).substr(start, (keepends ? eol : i) - start)));
        start = i = eol;
    }
    if (start < u.size()) out.push_back(uni::encode(std::u32string_view(u).substr(start)));
    return out;
}

std::string py_replace(std::string_view s, std::string_view old, std::string_view repl, int64_t count) {
    if (count < 0) count = INT64_MAX;
    std::string out;
    if (old.empty()) {
        // Inserts repl before every character and at the end.
        std::u32string u = uni::decode(s);
        int64_t n = 0;
        for (char32_t c : u) {
            if (n < count) {
                out += repl;
                ++n;
            }
            uni::append_utf8(out, c);
        }
        if (n < count) out += repl;
        return out;
    }
    size_t start = 0;
    int64_t n = 0;
    for (size_t p = s.find(old); p != std::string_view::npos && n < count; p = s.find(old, start), ++n) {
        out.append(s.substr(start, p - start));
        out.append(repl);
        start = p + old.size();
        if (out.size() > (size_t(64) << 20)) fail("replace result is too large");
    }
    out.append(s.substr(start));
    return out;
}

std::string py_justify(std::string_view s, int64_t width, std::string_view fill, char how) {
    int64_t len = int64_t(uni::length(s));
    if (width <= len) return std::string(s);
    if (width > (int64_t(16) << 20)) fail("justify width is too large");
    size_t marg = size_t(width - len);
    size_t left = 0;
    if (how == 'r') left = marg;
    else if (how == 'c') left = marg / 2 + (marg & size_t(width) & 1);
    std::string out;
    for (size_t k = 0; k < left; ++k) out += fill;
    out += s;
    for (size_t k = 0; k < marg - left; ++k) out += fill;
    return out;
}

}  // namespace arbor::tmpl
