// Python-str-compatible code point helpers over the generated Unicode tables.
#include "template/unicode.hpp"
#include "core/utf8_append.hpp"

#include "template/unicode_tables.hpp"

#include <algorithm>

namespace arbor::tmpl::uni {
namespace {

using unicode_tables::CaseMapping;
using unicode_tables::Range;

bool in_ranges(const Range* r, size_t n, char32_t c) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (r[mid].last < c)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && r[lo].first <= c && c <= r[lo].last;
}

const CaseMapping* find_mapping(const CaseMapping* m, size_t n, char32_t c) {
    auto it = std::lower_bound(m, m + n, c, [](const CaseMapping& a, char32_t v) { return a.cp < v; });
    return (it != m + n && it->cp == c) ? it : nullptr;
}

void append_mapped(std::string& out, const CaseMapping* m, size_t n, char32_t c) {
    const CaseMapping* f = find_mapping(m, n, c);
    if (!f) {
        append_utf8(out, c);
        return;
    }
    for (char32_t x : f->out)
        if (x) append_utf8(out, x);
}

bool is_titlecase(char32_t c) {
    return c == 0x1C5 || c == 0x1C8 || c == 0x1CB || c == 0x1F2 || (c >= 0x1F88 && c <= 0x1F8F) ||
           (c >= 0x1F98 && c <= 0x1F9F) || (c >= 0x1FA8 && c <= 0x1FAF) || c == 0x1FBC || c == 0x1FCC ||
           c == 0x1FFC;
}

// Lowercases s[i] into out, applying the Greek final-sigma rule as CPython does.
void append_lower_at(std::string& out, const std::u32string& s, size_t i) {
    char32_t c = s[i];
    if (c != 0x3A3) {
        append_mapped(out, unicode_tables::kLower, unicode_tables::kLower_count, c);
        return;
    }
    bool final_sigma = false;
    size_t j = i;
    while (j > 0 && is_case_ignorable(s[j - 1])) --j;
    final_sigma = j > 0 && is_cased(s[j - 1]);
    if (final_sigma) {
        size_t k = i + 1;
        while (k < s.size() && is_case_ignorable(s[k])) ++k;
        final_sigma = k == s.size() || !is_cased(s[k]);
    }
    append_utf8(out, final_sigma ? 0x3C2 : 0x3C3);
}

}  // namespace

void append_utf8(std::string& out, char32_t cp) { utf8_append(out, static_cast<uint32_t>(cp)); }

// Length of the valid sequence at s[i] (0 if invalid).
static size_t seq_len(std::string_view s, size_t i, char32_t& cp) {
    const auto* u = reinterpret_cast<const unsigned char*>(s.data());
    size_t n = s.size();
    unsigned char c = u[i];
    auto cont = [&](size_t k) { return i + k < n && (u[i + k] & 0xC0) == 0x80; };
    if (c < 0x80) {
        cp = c;
        return 1;
    }
    if (c >= 0xC2 && c <= 0xDF && cont(1)) {
        cp = char32_t(c & 0x1F) << 6 | (u[i + 1] & 0x3F);
        return 2;
    }
    if (c >= 0xE0 && c <= 0xEF && cont(1) && cont(2)) {
        if (c == 0xE0 && u[i + 1] < 0xA0) return 0;
        if (c == 0xED && u[i + 1] >= 0xA0) return 0;
        cp = char32_t(c & 0x0F) << 12 | char32_t(u[i + 1] & 0x3F) << 6 | (u[i + 2] & 0x3F);
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4 && cont(1) && cont(2) && cont(3)) {
        if (c == 0xF0 && u[i + 1] < 0x90) return 0;
        if (c == 0xF4 && u[i + 1] >= 0x90) return 0;
        cp = char32_t(c & 0x07) << 18 | char32_t(u[i + 1] & 0x3F) << 12 | char32_t(u[i + 2] & 0x3F) << 6 |
             (u[i + 3] & 0x3F);
        return 4;
    }
    return 0;
}

std::u32string decode(std::string_view s) {
    std::u32string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        char32_t cp = 0;
        size_t n = seq_len(s, i, cp);
        if (n == 0) {
            out += char32_t(0xFFFD);
            ++i;
        } else {
            out += cp;
            i += n;
        }
    }
    return out;
}

std::string encode(std::u32string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char32_t c : s) append_utf8(out, c);
    return out;
}

size_t invalid_utf8_at(std::string_view s) {
    for (size_t i = 0; i < s.size();) {
        char32_t cp;
        size_t n = seq_len(s, i, cp);
        if (n == 0) return i;
        i += n;
    }
    return std::string_view::npos;
}

size_t length(std::string_view s) {
    size_t n = 0;
    for (unsigned char c : s)
        if ((c & 0xC0) != 0x80) ++n;
    return n;
}

bool is_space(char32_t c) {
    if (c < 0x80) return c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
    return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
           c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

#define ARBOR_UNI_RANGE_PRED(fn, table) \
    bool fn(char32_t c) { return in_ranges(unicode_tables::table, unicode_tables::table##_count, c); }
ARBOR_UNI_RANGE_PRED(is_cased, kCased)
ARBOR_UNI_RANGE_PRED(is_case_ignorable, kCaseIgnorable)
ARBOR_UNI_RANGE_PRED(is_lower, kLowercase)
ARBOR_UNI_RANGE_PRED(is_upper, kUppercase)
ARBOR_UNI_RANGE_PRED(is_alpha, kAlpha)
ARBOR_UNI_RANGE_PRED(is_decimal, kDecimal)
ARBOR_UNI_RANGE_PRED(is_digit, kDigit)
ARBOR_UNI_RANGE_PRED(is_numeric, kNumeric)
#undef ARBOR_UNI_RANGE_PRED

bool is_printable(char32_t c) {
    if (c >= 0x20 && c < 0x7F) return true;
    return !in_ranges(unicode_tables::kNonPrintable, unicode_tables::kNonPrintable_count, c);
}

std::string upper(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char32_t c : decode(s)) append_mapped(out, unicode_tables::kUpper, unicode_tables::kUpper_count, c);
    return out;
}

std::string lower(std::string_view s) {
    std::u32string u = decode(s);
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < u.size(); ++i) append_lower_at(out, u, i);
    return out;
}

std::string title(std::string_view s) {
    std::u32string u = decode(s);
    std::string out;
    out.reserve(s.size());
    bool previous_is_cased = false;
    for (size_t i = 0; i < u.size(); ++i) {
        if (previous_is_cased)
            append_lower_at(out, u, i);
        else
            append_mapped(out, unicode_tables::kTitle, unicode_tables::kTitle_count, u[i]);
        previous_is_cased = is_cased(u[i]);
    }
    return out;
}

std::string capitalize(std::string_view s) {
    std::u32string u = decode(s);
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < u.size(); ++i) {
        if (i == 0)
            append_mapped(out, unicode_tables::kTitle, unicode_tables::kTitle_count, u[i]);
        else
            append_lower_at(out, u, i);
    }
    return out;
}

std::string swapcase(std::string_view s) {
    std::u32string u = decode(s);
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < u.size(); ++i) {
        if (is_upper(u[i]))
            append_lower_at(out, u, i);
        else if (is_lower(u[i]))
            append_mapped(out, unicode_tables::kUpper, unicode_tables::kUpper_count, u[i]);
        else
            append_utf8(out, u[i]);
    }
    return out;
}

bool str_islower(std::string_view s) {
    bool cased = false;
    for (char32_t c : decode(s)) {
        if (is_upper(c) || is_titlecase(c)) return false;
        if (is_lower(c)) cased = true;
    }
    return cased;
}

bool str_isupper(std::string_view s) {
    bool cased = false;
    for (char32_t c : decode(s)) {
        if (is_lower(c) || is_titlecase(c)) return false;
        if (is_upper(c)) cased = true;
    }
    return cased;
}

}  // namespace arbor::tmpl::uni
