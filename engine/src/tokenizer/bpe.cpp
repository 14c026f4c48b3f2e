// Byte-level BPE: pre-tokenize, then merge within each word.
//
// Merging follows the reference: start from single bytes, repeatedly merge the adjacent pair
// with the lowest merge rank (the leftmost of equal ranks) until no pair has a merge. A final
// symbol that is a vocabulary token is emitted; one that is not falls back byte by byte.
// Short words use a linear scan for the best pair, long ones a heap; both pick the same pair.
#include "tokenizer/tokenizer_impl.hpp"

#include "tokenizer/unicode_props.hpp"
#include "tokenizer/utf8.hpp"

#include <queue>

namespace arbor::tok {
namespace {

struct Sym {
    int32_t piece;
    uint32_t start, len;
    int32_t prev, next;
};

void emit_symbol(const Tokenizer::Impl& impl, const Sym& s, std::string_view word, std::vector<TokenId>& out) {
    const BpeTables& t = impl.bpe;
    if (s.piece >= 0) {
        const int32_t tok = t.token_of[static_cast<size_t>(s.piece)];
        if (tok >= 0 && !impl.has(tok, kAttrControl | kAttrUnknown)) {
            out.push_back(tok);
            return;
        }
    }
    for (uint32_t k = 0; k < s.len; ++k) {
        for (int32_t f : t.byte_fallback[static_cast<uint8_t>(word[s.start + k])]) {
            if (f >= 0) out.push_back(f);
        }
    }
}

constexpr int32_t kNoRank = INT32_MAX;

void merge_linear(const BpeTables& t, std::vector<Sym>& syms, std::vector<int32_t>& rank,
                  std::vector<int32_t>& result) {
    const size_t n = syms.size();
    rank.assign(n, kNoRank);
    result.assign(n, -1);
    auto eval = [&](int32_t i) {
        const Sym& s = syms[static_cast<size_t>(i)];
        if (s.next < 0) {
            rank[static_cast<size_t>(i)] = kNoRank;
            return;
        }
        const PairMap::Merge m = t.merges.find(s.piece, syms[static_cast<size_t>(s.next)].piece);
        rank[static_cast<size_t>(i)] = m.rank < 0 ? kNoRank : m.rank;
        result[static_cast<size_t>(i)] = m.result;
    };
    for (size_t i = 0; i + 1 < n; ++i) eval(static_cast<int32_t>(i));
    for (;;) {
        int32_t best = -1;
        int32_t best_rank = kNoRank;
        for (int32_t i = 0; i >= 0; i = syms[static_cast<size_t>(i)].next) {
            if (rank[static_cast<size_t>(i)] < best_rank) {
                best_rank = rank[static_cast<size_t>(i)];
                best = i;
            }
        }
        if (best < 0) return;
        Sym& l = syms[static_cast<size_t>(best)];
        Sym& r = syms[static_cast<size_t>(l.next)];
        l.piece = result[static_cast<size_t>(best)];
        l.len += r.len;
        l.next = r.next;
        if (r.next >= 0) syms[static_cast<size_t>(r.next)].prev = best;
        r.len = 0;
        eval(best);
        if (l.prev >= 0) eval(l.prev);
    }
}

void merge_heap(const BpeTables& t, std::vector<Sym>& syms) {
    struct Cand {
        int32_t rank, left, result;
        uint32_t size;  // combined length when queued: a stale candidate no longer matches
    };
    auto worse = [](const Cand& a, const Cand& b) { return a.rank > b.rank || (a.rank == b.rank && a.left > b.left); };
    std::priority_queue<Cand, std::vector<Cand>, decltype(worse)> q(worse);
    auto push = [&](int32_t l) {
        if (l < 0) return;
        const Sym& s = syms[static_cast<size_t>(l)];
        if (s.next < 0) return;
        const Sym& r = syms[static_cast<size_t>(s.next)];
        const PairMap::Merge m = t.merges.find(s.piece, r.piece);
        if (m.rank >= 0) q.push({m.rank, l, m.result, s.len + r.len});
    };
    for (size_t i = 0; i + 1 < syms.size(); ++i) push(static_cast<int32_t>(i));
    while (!q.empty()) {
        const Cand c = q.top();
        q.pop();
        Sym& l = syms[static_cast<size_t>(c.left)];
        if (l.len == 0 || l.next < 0) continue;
        Sym& r = syms[static_cast<size_t>(l.next)];
        // Symbols only grow, so an unchanged combined length means an unchanged pair.
        if (l.len + r.len != c.size) continue;
        l.piece = c.result;
        l.len += r.len;
        l.next = r.next;
        if (r.next >= 0) syms[static_cast<size_t>(r.next)].prev = c.left;
        r.len = 0;
        push(l.prev);
        push(c.left);
    }
}

void bpe_word(const Tokenizer::Impl& impl, std::string_view word, std::vector<Sym>& syms, std::vector<int32_t>& rank,
              std::vector<int32_t>& result, std::vector<TokenId>& out) {
    const BpeTables& t = impl.bpe;
    if (impl.ignore_merges) {
        const int32_t p = t.piece_of.find(word);
        if (p >= 0) {
            const int32_t tok = t.token_of[static_cast<size_t>(p)];
            if (tok >= 0 && !impl.has(tok, kAttrControl | kAttrUnknown)) {
                out.push_back(tok);
                return;
            }
        }
    }
    const size_t n = word.size();
    syms.resize(n);
    for (size_t i = 0; i < n; ++i) {
        syms[i] = Sym{t.byte_piece[static_cast<uint8_t>(word[i])], static_cast<uint32_t>(i), 1,
                      static_cast<int32_t>(i) - 1, i + 1 < n ? static_cast<int32_t>(i + 1) : -1};
    }
    if (n <= 96) {
        merge_linear(t, syms, rank, result);
    } else {
        merge_heap(t, syms);
    }
    for (int32_t i = 0; i >= 0; i = syms[static_cast<size_t>(i)].next) emit_symbol(impl, syms[static_cast<size_t>(i)], word, out);
}

}  // namespace

void bpe_tokenize(const Tokenizer::Impl& impl, std::string_view text, std::vector<TokenId>& out) {
    if (text.empty()) return;
    // Decode; where a byte was invalid the reference continues with U+FFFD's UTF-8 bytes.
    std::vector<uint32_t> cps;
    cps.reserve(text.size());
    bool clean = true;
    for (size_t pos = 0; pos < text.size();) {
        const size_t before = pos;
        const uint32_t cp = utf8_decode_one(text, pos);
        if (cp == kReplacementChar && pos - before == 1) clean = false;
        cps.push_back(cp);
    }
    std::string fixed;
    if (!clean) {
        fixed.reserve(text.size() + 16);
        for (uint32_t cp : cps) utf8_append(fixed, cp);
        text = fixed;
    }
    std::vector<uint8_t> props(cps.size());
    for (size_t i = 0; i < cps.size(); ++i) props[i] = cpt_props(cps[i]);

    std::vector<uint32_t> ends;
    ends.reserve(cps.size() / 3 + 4);
    pre_tokenize(impl.pre, CpText{cps.data(), props.data()}, cps.size(), ends);

    // Texts repeat their words, so each call keeps the tokens of the words it has merged
    // (bounded, and only for words of ordinary length).
    constexpr size_t kCacheWords = 1 << 16;
    constexpr size_t kCacheWordBytes = 48;
    struct Span {
        uint32_t off, n;
    };
    StrMap cache;
    std::vector<Span> spans;
    std::vector<TokenId> pool;
    cache.reserve(1024);

    std::vector<Sym> syms;
    std::vector<int32_t> rank, result;
    size_t cp_pos = 0, byte_pos = 0;
    for (uint32_t e : ends) {
        size_t b = byte_pos;
        for (; cp_pos < e; ++cp_pos) {
            const uint32_t c = cps[cp_pos];
            b += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
        }
        const std::string_view word = text.substr(byte_pos, b - byte_pos);
        byte_pos = b;
        const bool cacheable = word.size() > 1 && word.size() <= kCacheWordBytes;
        if (cacheable) {
            const int32_t c = cache.find(word);
            if (c >= 0) {
                const Span& sp = spans[static_cast<size_t>(c)];
                out.insert(out.end(), pool.begin() + sp.off, pool.begin() + sp.off + sp.n);
                continue;
            }
        }
        const size_t before = out.size();
        bpe_word(impl, word, syms, rank, result, out);
        if (cacheable && spans.size() < kCacheWords) {
            spans.push_back({static_cast<uint32_t>(pool.size()), static_cast<uint32_t>(out.size() - before)});
            pool.insert(pool.end(), out.begin() + static_cast<std::ptrdiff_t>(before), out.end());
            cache.insert(word, static_cast<int32_t>(spans.size() - 1));
        }
    }
}

}  // namespace arbor::tok
