// Splitting text at special-token text, the reference's way: special tokens are taken longest
// first; each one splits every remaining text fragment at its occurrences (left to right, not
// overlapping), and the pieces between are searched by the next, shorter tokens. A token with
// the LSTRIP/RSTRIP attribute also swallows the whitespace before/after it.
//
// Only the tokens that occur somewhere in the text can split it, so those are found first with
// one pass over the text (a trie of first bytes), which keeps long inputs fast.
#include "tokenizer/tokenizer_impl.hpp"

#include <algorithm>
#include <cctype>
#include <list>

namespace arbor::tok {
namespace {

bool c_isspace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// The candidate tokens (in priority order) whose text occurs in `text`.
std::vector<TokenId> occurring(const Tokenizer::Impl& impl, std::string_view text, bool parse_special) {
    std::vector<TokenId> cands;
    bool first_byte[256] = {};
    for (TokenId id : impl.special_by_length) {
        if (!parse_special && impl.has(id, kAttrControl | kAttrUnknown)) continue;
        const std::string& s = impl.text[static_cast<size_t>(id)];
        if (s.empty() || s.size() > text.size()) continue;
        cands.push_back(id);
        first_byte[static_cast<uint8_t>(s[0])] = true;
    }
    if (cands.empty()) return cands;
    std::vector<bool> seen(cands.size(), false);
    size_t n_seen = 0;
    // Bucket candidates by first byte for the scan.
    std::vector<std::vector<size_t>> by_first(256);
    for (size_t k = 0; k < cands.size(); ++k) by_first[static_cast<uint8_t>(impl.text[static_cast<size_t>(cands[k])][0])].push_back(k);
    for (size_t pos = 0; pos < text.size() && n_seen < cands.size(); ++pos) {
        const auto b = static_cast<uint8_t>(text[pos]);
        if (!first_byte[b]) continue;
        for (size_t k : by_first[b]) {
            if (seen[k]) continue;
            const std::string& s = impl.text[static_cast<size_t>(cands[k])];
            if (text.compare(pos, s.size(), s) == 0) {
                seen[k] = true;
                ++n_seen;
            }
        }
    }
    std::vector<TokenId> out;
    for (size_t k = 0; k < cands.size(); ++k) {
        if (seen[k]) out.push_back(cands[k]);
    }
    return out;
}

}  // namespace

std::vector<Fragment> split_special(const Tokenizer::Impl& impl, std::string_view text, bool parse_special) {
    std::list<Fragment> frags;
    if (!text.empty()) frags.push_back({kNoToken, 0, text.size()});
    for (TokenId id : occurring(impl, text, parse_special)) {
        const std::string& s = impl.text[static_cast<size_t>(id)];
        const bool lstrip = impl.has(id, kAttrLstrip);
        const bool rstrip = impl.has(id, kAttrRstrip);
        for (auto it = frags.begin(); it != frags.end(); ++it) {
            if (it->id != kNoToken) continue;
            size_t base = it->begin;
            size_t end = it->end;
            for (;;) {
                const size_t m = text.substr(0, end).find(s, base);
                if (m == std::string_view::npos) break;
                size_t left_end = m;
                if (lstrip) {
                    while (left_end > base && c_isspace(text[left_end - 1])) --left_end;
                }
                if (left_end > base) frags.insert(it, Fragment{kNoToken, base, left_end});
                frags.insert(it, Fragment{id, 0, 0});
                size_t right = m + s.size();
                if (rstrip) {
                    while (right < end && c_isspace(text[right])) ++right;
                }
                base = right;
                if (base >= end) break;
            }
            if (base == it->begin) continue;  // no occurrence in this fragment
            if (base < end) {
                it->begin = base;  // the remainder stays as this fragment
            } else {
                it = frags.erase(it);
                --it;
            }
        }
    }
    return {frags.begin(), frags.end()};
}

}  // namespace arbor::tok
