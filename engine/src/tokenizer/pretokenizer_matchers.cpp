// Hand-written matchers for the pre-tokenizer expressions (pretokenizer_matchers.hpp).
//
// Each follows ECMAScript matching of its expression: alternatives are tried in order and the
// first that matches at the position wins; greedy quantifiers take as much as they can and give
// back only when what follows needs it. Where giving back can never help (the next item cannot
// match what was given back) the matcher does not try.
#include "tokenizer/pretokenizer_matchers.hpp"

#include "tokenizer/unicode_props.hpp"

#include <algorithm>
#include <iterator>

namespace arbor::tok::match {
namespace {

struct Range {
    uint32_t lo, hi;
};

// The cased-letter list of the deepseek-llm expression.
constexpr Range kDeepseekLetters[] = {
    {0x0041, 0x005A}, {0x0061, 0x007A}, {0x00B5, 0x00B5}, {0x00C0, 0x00D6}, {0x00D8, 0x00F6}, {0x00F8, 0x01BA},
    {0x01BC, 0x01BF}, {0x01C4, 0x0293}, {0x0295, 0x02AF}, {0x0370, 0x0373}, {0x0376, 0x0377}, {0x037B, 0x037D},
    {0x037F, 0x037F}, {0x0386, 0x0386}, {0x0388, 0x038A}, {0x038C, 0x038C}, {0x038E, 0x03A1}, {0x03A3, 0x03F5},
    {0x03F7, 0x0481}, {0x048A, 0x052F}, {0x0531, 0x0556}, {0x10A0, 0x10C5}, {0x13A0, 0x13F5}, {0x13F8, 0x13FD},
    {0x1C90, 0x1CBA}, {0x1CBD, 0x1CBF}, {0x1D00, 0x1D2B}, {0x1D6B, 0x1D77}, {0x1D79, 0x1D9A}, {0x1E00, 0x1F15},
    {0x1F18, 0x1F1D}, {0x1F20, 0x1F45}, {0x1F48, 0x1F4D}, {0x1F50, 0x1F57}, {0x1F59, 0x1F59}, {0x1F5B, 0x1F5B},
    {0x1F5D, 0x1F5D}, {0x1F5F, 0x1F7D}, {0x1F80, 0x1FB4}, {0x1FB6, 0x1FBC}, {0x1FBE, 0x1FBE}, {0x1FC2, 0x1FC4},
    {0x1FC6, 0x1FCC}, {0x1FD0, 0x1FD3}, {0x1FD6, 0x1FDB}, {0x1FE0, 0x1FEC}, {0x1FF2, 0x1FF4}, {0x1FF6, 0x1FFC},
    {0x2102, 0x2102}, {0x2107, 0x2107}, {0x210A, 0x2113}, {0x2115, 0x2115}, {0x2119, 0x211D}, {0x2124, 0x2124},
    {0x2126, 0x2126}, {0x2128, 0x2128}, {0x212A, 0x212D}, {0x212F, 0x2134}, {0x2139, 0x2139}, {0x213C, 0x213F},
    {0x2145, 0x2149}, {0x214E, 0x214E}, {0x2183, 0x2184}, {0x2C00, 0x2C7B}, {0x2C7E, 0x2CE4}, {0x2CEB, 0x2CEE},
    {0x2CF2, 0x2CF3}, {0xA640, 0xA66D}, {0xA680, 0xA69B}, {0xA722, 0xA76F}, {0xA771, 0xA787}, {0xA78B, 0xA78E},
    {0xAB70, 0xABBF}, {0xFB00, 0xFB06}, {0xFB13, 0xFB17}, {0xFF21, 0xFF3A}, {0xFF41, 0xFF5A}, {0x10400, 0x1044F},
    {0x104B0, 0x104D3}, {0x104D8, 0x104FB}, {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x118A0, 0x118DF}, {0x1E900, 0x1E943},
};

bool in_ranges(const Range* b, const Range* e, uint32_t c) {
    const Range* it = std::upper_bound(b, e, c, [](uint32_t v, const Range& r) { return v < r.lo; });
    return it != b && c <= it[-1].hi;
}

// Character tests at a position; all are false at or past the piece end.
struct At {
    const CpText& t;
    size_t end;
    uint32_t cp(size_t i) const { return i < end ? t.cp[i] : 0xFFFFFFFFu; }
    uint8_t cat(size_t i) const { return t.pr[i] & kCatMask; }
    bool ws(size_t i) const { return i < end && (t.pr[i] & kWhiteSpaceBit); }
    bool L(size_t i) const { return i < end && cat(i) == kCatLetter; }
    bool N(size_t i) const { return i < end && cat(i) == kCatNumber; }
    bool M(size_t i) const { return i < end && cat(i) == kCatMark; }
    bool P(size_t i) const { return i < end && cat(i) == kCatPunct; }
    // \p{S} as the reference's collapsed std::regex path sees it: ASCII '~' is not a symbol.
    bool S(size_t i) const { return i < end && cat(i) == kCatSymbol && t.cp[i] != '~'; }
    bool nl(size_t i) const { return i < end && (t.cp[i] == '\r' || t.cp[i] == '\n'); }
    // [^\s\p{L}\p{N}]
    bool other(size_t i) const { return i < end && !ws(i) && !L(i) && !N(i); }
    // The code point as the reference's std::wregex path sees it (non-ASCII White_Space -> VT).
    uint32_t wcp(size_t i) const { return (t.cp[i] > 0x7F && (t.pr[i] & kWhiteSpaceBit)) ? 0x0B : t.cp[i]; }

    template <class F>
    size_t run(size_t i, F f) const {
        while (i < end && f(i)) ++i;
        return i;
    }
    // A run of at most `limit` characters (0: unbounded).
    template <class F>
    size_t run_max(size_t i, size_t limit, F f) const {
        const size_t stop = limit == 0 || end - i < limit ? end : i + limit;
        while (i < stop && f(i)) ++i;
        return i;
    }
    size_t ws_run(size_t i) const { return run(i, [&](size_t k) { return ws(k); }); }
    size_t letter_run(size_t i) const { return run(i, [&](size_t k) { return L(k); }); }
    size_t nl_run(size_t i) const { return run(i, [&](size_t k) { return nl(k); }); }
};

uint32_t ascii_lower(uint32_t c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

// '[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD] (case-insensitive, ASCII only)
size_t contraction_ci(const At& a, size_t i) {
    if (a.cp(i) != '\'' || i + 1 >= a.end) return i;
    const uint32_t c1 = ascii_lower(a.cp(i + 1));
    if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') return i + 2;
    if (i + 2 >= a.end) return i;
    const uint32_t c2 = ascii_lower(a.cp(i + 2));
    if ((c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l')) return i + 3;
    return i;
}

// 's|'t|'re|'ve|'m|'ll|'d (case-sensitive)
size_t contraction_cs(const At& a, size_t i) {
    if (a.cp(i) != '\'' || i + 1 >= a.end) return i;
    const uint32_t c1 = a.cp(i + 1);
    if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') return i + 2;
    if (i + 2 >= a.end) return i;
    const uint32_t c2 = a.cp(i + 2);
    if ((c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l')) return i + 3;
    return i;
}

// The whitespace tail shared by most expressions: \s*[\r\n]+|\s+(?!\S)|\s+ (with `single_nl`,
// \s*[\r\n] instead of \s*[\r\n]+; without `newlines`, only \s+(?!\S)|\s+).
size_t whitespace_tail(const At& a, size_t i, bool newlines, bool single_nl, bool plain_run) {
    const size_t w = a.ws_run(i);
    if (w == i) return i;
    if (newlines) {
        // \s* gives back until [\r\n] can match: the match ends after the last CR/LF of the run
        // (with [\r\n]+ greedy, it cannot extend past the run's last CR/LF either).
        for (size_t k = w; k > i; --k) {
            if (a.nl(k - 1)) return single_nl ? k : k;
        }
    }
    if (w == a.end) return w;      // \s+(?!\S): nothing follows the run
    if (w - i >= 2) return w - 1;  // give back one whitespace, which is not \S
    return plain_run ? w : i;      // \s+
}

// The qwen2 family: [contractions]|[^\r\n\p{L}\p{N}]?LETTERS+|DIGITS| ?[^\s\p{L}\p{N}]+[\r\n]*|
// \s*[\r\n]+|\s+(?!\S)|\s+
struct QwenStyle {
    bool contractions = true;
    bool marks = false;          // letters are [\p{L}\p{M}] and marks are not punctuation
    int digits = 1;              // 1, 3 or 0 (unbounded)
    bool punct_newlines = true;  // [\r\n]* after punctuation
    bool single_nl = false;      // \s*[\r\n] instead of \s*[\r\n]+
};

size_t qwen_style(const CpText& t, size_t i, size_t end, const QwenStyle& s) {
    const At a{t, end};
    if (s.contractions) {
        const size_t c = contraction_ci(a, i);
        if (c != i) return c;
    }
    auto letter = [&](size_t k) { return a.L(k) || (s.marks && a.M(k)); };
    auto word_run = [&](size_t k) { return a.run(k, letter); };
    // [^\r\n\p{L}\p{N}]?LETTERS+
    if (letter(i)) {
        // A mark is in the optional class too; taking it there and the rest as LETTERS+ ends
        // at the same place, so the greedy optional changes nothing.
        return word_run(i);
    }
    if (!a.nl(i) && !a.N(i) && !a.L(i) && letter(i + 1)) return word_run(i + 1);
    // DIGITS
    if (a.N(i)) return a.run_max(i, static_cast<size_t>(s.digits), [&](size_t k) { return a.N(k); });
    //  ?[^\s\p{L}\p{N}]+[\r\n]*   ([^\s\p{L}\p{M}\p{N}] with marks)
    auto punct = [&](size_t k) { return a.other(k) && !(s.marks && a.M(k)); };
    const size_t j = i + (a.cp(i) == ' ' ? 1 : 0);
    if (punct(j)) {
        size_t k = a.run(j, punct);
        if (s.punct_newlines) k = a.nl_run(k);
        return k;
    }
    return whitespace_tail(a, i, true, s.single_nl, true);
}

// gpt-4o style words: "upper-ish" letters are letters other than a-z, "lower-ish" letters are
// letters other than A-Z (so a non-ASCII letter is both).
size_t gpt4o_style(const CpText& t, size_t i, size_t end, bool contractions, int digits) {
    const At a{t, end};
    auto U = [&](size_t k) { return a.L(k) && !(a.t.cp[k] >= 'a' && a.t.cp[k] <= 'z'); };
    auto W = [&](size_t k) { return a.L(k) && !(a.t.cp[k] >= 'A' && a.t.cp[k] <= 'Z'); };
    auto tail = [&](size_t k) { return contractions ? contraction_ci(a, k) : k; };
    const bool x = !a.nl(i) && !a.L(i) && !a.N(i) && i < end;  // [^\r\n\p{L}\p{N}]
    const size_t s = x ? i + 1 : i;                               // if s fails, s = i fails too
    // X? U* W+ C?
    {
        const size_t u_end = a.run(s, U);
        for (size_t k = u_end + 1; k-- > s;) {
            if (W(k)) return tail(a.run(k, W));
        }
    }
    // X? U+ W* C?
    if (U(s)) return tail(a.run(a.run(s, U), W));
    // DIGITS
    if (a.N(i)) return a.run_max(i, static_cast<size_t>(digits), [&](size_t k) { return a.N(k); });
    //  ?[^\s\p{L}\p{N}]+[\r\n/]*
    const size_t j = i + (a.cp(i) == ' ' ? 1 : 0);
    if (a.other(j)) {
        const size_t k = a.run(j, [&](size_t q) { return a.other(q); });
        return a.run(k, [&](size_t q) { return a.nl(q) || a.t.cp[q] == '/'; });
    }
    return whitespace_tail(a, i, true, false, true);
}

}  // namespace

size_t gpt2(const CpText& t, size_t i, size_t end) {
    const At a{t, end};
    const size_t c = contraction_cs(a, i);
    if (c != i) return c;
    const size_t j = i + (a.cp(i) == ' ' ? 1 : 0);
    if (a.L(j)) return a.letter_run(j);
    if (a.N(j)) return a.run(j, [&](size_t k) { return a.N(k); });
    if (a.other(j)) return a.run(j, [&](size_t k) { return a.other(k); });
    return whitespace_tail(a, i, false, false, false);
}

size_t llama3(const CpText& t, size_t i, size_t end) { return qwen_style(t, i, end, {true, false, 3, true, false}); }
size_t qwen2(const CpText& t, size_t i, size_t end) { return qwen_style(t, i, end, {true, false, 1, true, false}); }
size_t qwen35(const CpText& t, size_t i, size_t end) { return qwen_style(t, i, end, {true, true, 1, true, false}); }
size_t seed_coder(const CpText& t, size_t i, size_t end) { return qwen_style(t, i, end, {true, false, 1, false, false}); }
size_t bailingmoe(const CpText& t, size_t i, size_t end) { return qwen_style(t, i, end, {true, false, 1, true, true}); }
size_t ufakzeka(const CpText& t, size_t i, size_t end) { return qwen_style(t, i, end, {false, false, 1, true, false}); }
size_t llama3_digits_unbounded(const CpText& t, size_t i, size_t end) {
    return qwen_style(t, i, end, {true, false, 0, true, false});
}

size_t gpt4o(const CpText& t, size_t i, size_t end) { return gpt4o_style(t, i, end, true, 3); }
size_t tekken(const CpText& t, size_t i, size_t end) { return gpt4o_style(t, i, end, false, 1); }

size_t deepseek3_words(const CpText& t, size_t i, size_t end) {
    const At a{t, end};
    auto ascii_punct = [&](size_t k) {
        const uint32_t c = a.cp(k);
        return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
               (c >= 0x7B && c <= 0x7E);
    };
    auto ascii_letter = [&](size_t k) {
        const uint32_t c = a.cp(k);
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
    };
    if (ascii_punct(i) && ascii_letter(i + 1)) return a.run(i + 1, ascii_letter);
    auto LM = [&](size_t k) { return a.L(k) || a.M(k); };
    const bool x = i < end && !a.nl(i) && !a.L(i) && !a.P(i) && !a.S(i);
    if (x && LM(i + 1)) return a.run(i + 1, LM);
    if (LM(i)) return a.run(i, LM);
    auto PS = [&](size_t k) { return a.P(k) || a.S(k); };
    const size_t j = i + (a.cp(i) == ' ' ? 1 : 0);
    if (PS(j)) return a.nl_run(a.run(j, PS));
    return whitespace_tail(a, i, true, false, true);
}

size_t deepseek_llm_letters(const CpText& t, size_t i, size_t end) {
    const At a{t, end};
    auto in = [&](size_t k) {
        return k < end && in_ranges(std::begin(kDeepseekLetters), std::end(kDeepseekLetters), a.wcp(k));
    };
    if (a.ws(i) && in(i + 1)) return a.run(i + 1, in);
    return in(i) ? a.run(i, in) : i;
}

size_t deepseek_llm_punct(const CpText& t, size_t i, size_t end) {
    const At a{t, end};
    auto in = [&](size_t k) {
        if (k >= end) return false;
        const uint32_t c = a.wcp(k);
        return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x7E) || (c >= 0xFF01 && c <= 0xFF0F) ||
               (c >= 0xFF1A && c <= 0xFF5E) || (c >= 0x2018 && c <= 0x201F) || (c >= 0x3000 && c <= 0x3002);
    };
    if (a.ws(i) && in(i + 1)) return a.run(i + 1, in);
    return in(i) ? a.run(i, in) : i;
}

size_t trailing_space(const CpText& t, size_t i, size_t end) {
    // The driver splits this stage directly (pre_tokenize); this is the plain definition.
    const At a{t, end};
    const size_t w = a.ws_run(i);
    return (w > i && w == end) ? w : i;
}

size_t cjk_hangul(const CpText& t, size_t i, size_t end) {
    const At a{t, end};
    auto in = [&](size_t k) {
        const uint32_t c = a.wcp(k);
        return (c >= 0x4E00 && c <= 0x9FA5) || (c >= 0x0800 && c <= 0x4E00) || (c >= 0xAC00 && c <= 0xD7FF);
    };
    return a.run(i, in);
}

size_t cjk_kana(const CpText& t, size_t i, size_t end) {
    const At a{t, end};
    auto in = [&](size_t k) {
        const uint32_t c = a.wcp(k);
        return (c >= 0x4E00 && c <= 0x9FA5) || (c >= 0x3040 && c <= 0x309F) || (c >= 0x30A0 && c <= 0x30FF);
    };
    return a.run(i, in);
}

size_t space_letters(const CpText& t, size_t i, size_t end) {
    const At a{t, end};
    if (a.ws(i) && a.L(i + 1)) return a.letter_run(i + 1);
    return a.letter_run(i);
}

size_t space_punct(const CpText& t, size_t i, size_t end) {
    const At a{t, end};
    auto p = [&](size_t k) { return a.P(k); };
    if (a.ws(i) && a.P(i + 1)) return a.run(i + 1, p);
    return a.run(i, p);
}

size_t newline_char(const CpText& t, size_t i, size_t end) {
    const At a{t, end};
    return a.nl(i) ? i + 1 : i;
}

size_t digit_one(const CpText& t, size_t i, size_t end) { return At{t, end}.N(i) ? i + 1 : i; }

size_t digit_run(const CpText& t, size_t i, size_t end) {
    const At a{t, end};
    return a.run(i, [&](size_t k) { return a.N(k); });
}

size_t digit_three(const CpText& t, size_t i, size_t end) {
    const At a{t, end};
    return a.run_max(i, 3, [&](size_t k) { return a.N(k); });
}

size_t ascii_digit_three(const CpText& t, size_t i, size_t end) {
    auto d = [&](size_t k) { return k < end && t.cp[k] >= '0' && t.cp[k] <= '9'; };
    return (d(i) && d(i + 1) && d(i + 2)) ? i + 3 : i;
}

size_t punct_default(const CpText& t, size_t i, size_t end) {
    const At a{t, end};
    return a.run(i, [&](size_t k) {
        const uint32_t c = t.cp[k];
        return a.P(k) || c == '$' || c == '+' || c == '<' || c == '=' || c == '>' || c == '^' || c == '~' ||
               c == '|';
    });
}

size_t punct_falcon(const CpText& t, size_t i, size_t end) {
    const At a{t, end};
    return a.run(i, [&](size_t k) {
        const uint32_t c = t.cp[k];
        return a.P(k) || c == '$' || c == '+' || c == '<' || c == '=' || c == '>' || c == '^' || c == '~' ||
               c == '|' || c == '`';
    });
}

size_t bloom(const CpText& t, size_t i, size_t end) {
    const At a{t, end};
    auto in = [&](size_t k) {
        if (k >= end || a.ws(k)) return false;
        const uint32_t c = t.cp[k];
        switch (c) {
            case '(': case ')': case '|': case '.': case ',': case '!': case '?': case 0x2026: case 0x3002:
            case 0xFF0C: case 0x3001: case 0x0964: case 0x06D4: case 0x060C:
                return false;
            default:
                return true;
        }
    };
    if (a.cp(i) == ' ' && in(i + 1)) return a.run(i + 1, in);
    return a.run(i, in);
}

}  // namespace arbor::tok::match
