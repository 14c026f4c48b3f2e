// SentencePiece BPE (tokenizer.ggml.model = "llama"), as the reference implements it.
//
// The fragment (spaces already escaped to U+2581) starts as one symbol per UTF-8 sequence (by
// its lead byte, unchecked). Adjacent symbols whose concatenation is a vocabulary token are
// candidates; the candidate with the highest score (leftmost on ties) merges, repeatedly. A
// final symbol that is not a token falls back to its bytes' <0xXX> tokens (or one-byte tokens,
// or UNK when the vocabulary has neither).
#include "tokenizer/tokenizer_impl.hpp"

#include "tokenizer/utf8.hpp"

#include <algorithm>
#include <queue>

namespace arbor::tok {
namespace {

struct Sym {
    uint32_t start, len;
    int32_t prev, next;
};

struct Cand {
    float score;
    int32_t left, right;
    uint32_t size;
};

struct CandOrder {
    bool operator()(const Cand& a, const Cand& b) const {
        return a.score < b.score || (a.score == b.score && a.left > b.left);
    }
};

void byte_fallback(const Tokenizer::Impl& impl, uint8_t b, std::vector<TokenId>& out) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    const char name[6] = {'<', '0', 'x', kHex[b >> 4], kHex[b & 15], '>'};
    int32_t id = impl.id_of.find(std::string_view(name, 6));
    if (id < 0) id = impl.text_token(std::string_view(reinterpret_cast<const char*>(&b), 1));
    if (id < 0) id = impl.unk;
    if (id >= 0) out.push_back(id);
}

// The reference's algorithm on one segment.
void spm_segment(const Tokenizer::Impl& impl, std::string_view text, std::vector<TokenId>& out) {
    std::vector<Sym> syms;
    for (size_t off = 0; off < text.size();) {
        const size_t len = std::min(utf8_seq_len(static_cast<uint8_t>(text[off])), text.size() - off);
        const int32_t idx = static_cast<int32_t>(syms.size());
        syms.push_back({static_cast<uint32_t>(off), static_cast<uint32_t>(len), idx - 1,
                        off + len == text.size() ? -1 : idx + 1});
        off += len;
    }
    if (syms.empty()) return;

    std::priority_queue<Cand, std::vector<Cand>, CandOrder> q;
    auto try_add = [&](int32_t l, int32_t r) {
        if (l < 0 || r < 0) return;
        const Sym& a = syms[static_cast<size_t>(l)];
        const Sym& b = syms[static_cast<size_t>(r)];
        const TokenId id = impl.text_token(text.substr(a.start, a.len + b.len));
        if (id < 0) return;
        q.push({impl.score[static_cast<size_t>(id)], l, r, a.len + b.len});
    };
    for (size_t i = 1; i < syms.size(); ++i) try_add(static_cast<int32_t>(i - 1), static_cast<int32_t>(i));

    while (!q.empty()) {
        const Cand c = q.top();
        q.pop();
        Sym& l = syms[static_cast<size_t>(c.left)];
        Sym& r = syms[static_cast<size_t>(c.right)];
        if (l.len == 0 || r.len == 0 || l.len + r.len != c.size) continue;
        l.len += r.len;
        r.len = 0;
        l.next = r.next;
        if (r.next >= 0) syms[static_cast<size_t>(r.next)].prev = c.left;
        try_add(l.prev, c.left);
        try_add(c.left, l.next);
    }

    for (int32_t i = 0; i >= 0; i = syms[static_cast<size_t>(i)].next) {
        const Sym& s = syms[static_cast<size_t>(i)];
        const std::string_view piece = text.substr(s.start, s.len);
        const TokenId id = impl.text_token(piece);
        if (id >= 0) {
            out.push_back(id);
            continue;
        }
        for (char ch : piece) byte_fallback(impl, static_cast<uint8_t>(ch), out);
    }
}

}  // namespace

void build_spm_pairs(Tokenizer::Impl& impl) {
    size_t total = 0;
    for (const std::string& t : impl.text) total += t.size();
    impl.spm_pairs.reserve(total / 2 + 16);
    for (size_t id = 0; id < impl.text.size(); ++id) {
        if (impl.has(static_cast<TokenId>(id), kAttrControl | kAttrUnknown)) continue;
        const std::string_view t = impl.text[id];
        size_t prev = 0, prev_len = 0;
        for (size_t off = 0; off < t.size();) {
            const size_t len = std::min(utf8_seq_len(static_cast<uint8_t>(t[off])), t.size() - off);
            if (prev_len > 0) impl.spm_pairs.insert(t.substr(prev, prev_len + len), 1);
            prev = off;
            prev_len = len;
            off += len;
        }
    }
}

void spm_tokenize(const Tokenizer::Impl& impl, std::string_view text, std::vector<TokenId>& out) {
    // Merges only join symbols whose concatenation is a token, so no merge can cross a point
    // between two characters that are adjacent in no token. Cutting the text there gives
    // segments that merge independently, in the same order, to the same result; and texts
    // repeat their segments (mostly words), so each call keeps their tokens.
    constexpr size_t kCacheSegments = 1 << 16;
    constexpr size_t kCacheSegmentBytes = 64;
    struct Span {
        uint32_t off, n;
    };
    StrMap cache;
    std::vector<Span> spans;
    std::vector<TokenId> pool;
    cache.reserve(256);
    auto segment = [&](std::string_view seg) {
        const bool cacheable = seg.size() <= kCacheSegmentBytes;
        if (cacheable) {
            const int32_t c = cache.find(seg);
            if (c >= 0) {
                const Span& sp = spans[static_cast<size_t>(c)];
                out.insert(out.end(), pool.begin() + sp.off, pool.begin() + sp.off + sp.n);
                return;
            }
        }
        const size_t before = out.size();
        spm_segment(impl, seg, out);
        if (cacheable && spans.size() < kCacheSegments) {
            spans.push_back({static_cast<uint32_t>(pool.size()), static_cast<uint32_t>(out.size() - before)});
            pool.insert(pool.end(), out.begin() + static_cast<std::ptrdiff_t>(before), out.end());
            cache.insert(seg, static_cast<int32_t>(spans.size() - 1));
        }
    };
    size_t seg_start = 0, prev = 0, prev_len = 0;
    for (size_t off = 0; off < text.size();) {
        const size_t len = std::min(utf8_seq_len(static_cast<uint8_t>(text[off])), text.size() - off);
        if (prev_len > 0 && impl.spm_pairs.find(text.substr(prev, prev_len + len)) < 0) {
            segment(text.substr(seg_start, off - seg_start));
            seg_start = off;
        }
        prev = off;
        prev_len = len;
        off += len;
    }
    if (seg_start < text.size()) segment(text.substr(seg_start));
}

}  // namespace arbor::tok
