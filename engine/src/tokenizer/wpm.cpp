// WordPiece (tokenizer.ggml.model = "bert"), as the reference implements it.
//
// Normalization: accents stripped through the first code point of NFD (and marks dropped) when
// strip_accents, simple lowercase when lowercase; control characters, NUL and U+FFFD dropped.
// Words split at White_Space; punctuation, ASCII symbols and CJK ideographs are words of their
// own. Each word, prefixed with U+2581 (how the GGUF marks word starts), is covered greedily by
// the longest vocabulary matches; a word with an uncoverable position becomes one UNK.
#include "tokenizer/tokenizer_impl.hpp"

#include "tokenizer/unicode_props.hpp"
#include "tokenizer/utf8.hpp"

#include <algorithm>

namespace arbor::tok {
namespace {

bool is_cjk_ideograph(uint32_t c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

std::vector<std::string> split_words(const Tokenizer::Impl& impl, std::string_view text) {
    std::vector<std::string> words(1);
    size_t pos = 0;
    while (pos < text.size()) {
        uint32_t c = utf8_decode_one(text, pos);
        if (impl.strip_accents) c = cpt_nfd_first(c);
        const uint8_t props = cpt_props(c);
        const uint8_t cat = props & kCatMask;
        if (props & kWhiteSpaceBit) {
            if (!words.back().empty()) words.emplace_back();
            continue;
        }
        if (c == 0 || c == kReplacementChar || cat == kCatControl) continue;
        if (impl.strip_accents && cat == kCatMark) continue;
        std::string s;
        utf8_append(s, impl.lowercase ? cpt_tolower(c) : c);
        if (cat == kCatPunct || (c < 0x7F && cat == kCatSymbol) || is_cjk_ideograph(c)) {
            if (!words.back().empty()) words.emplace_back();
            words.back() = std::move(s);
            words.emplace_back();
        } else {
            words.back() += s;
        }
    }
    if (words.back().empty()) words.pop_back();
    return words;
}

}  // namespace

void wpm_tokenize(const Tokenizer::Impl& impl, std::string_view text, std::vector<TokenId>& out) {
    for (const std::string& w : split_words(impl, text)) {
        const std::string word = "\xE2\x96\x81" + w;
        const size_t n = word.size();
        const size_t mark = out.size();
        for (size_t i = 0; i < n; ++i) {
            bool found = false;
            for (size_t j = std::min(n, i + impl.max_token_len + 1); j > i; --j) {
                const TokenId id = impl.text_token(std::string_view(word).substr(i, j - i));
                if (id >= 0) {
                    out.push_back(id);
                    found = true;
                    i = j - 1;
                    break;
                }
            }
            if (!found) {
                out.resize(mark);
                break;
            }
        }
        if (out.size() == mark && impl.unk >= 0) out.push_back(impl.unk);
    }
}

}  // namespace arbor::tok
