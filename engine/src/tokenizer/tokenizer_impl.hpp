// The tokenizer's shared, immutable state (Tokenizer::Impl) and the per-model entry points.
#pragma once

#include <arbor/tokenizer.hpp>

#include "tokenizer/hash_maps.hpp"
#include "tokenizer/pretokenizer.hpp"

#include <array>
#include <deque>
#include <string>
#include <vector>

namespace arbor::tok {

// Token attributes as bit flags (a token can gain CONTROL on top of its type, as in the
// reference).
enum : uint32_t {
    kAttrUndefined = 0,
    kAttrUnknown = 1u << 0,
    kAttrUnused = 1u << 1,
    kAttrNormal = 1u << 2,
    kAttrControl = 1u << 3,
    kAttrUserDefined = 1u << 4,
    kAttrByte = 1u << 5,
    kAttrLstrip = 1u << 7,
    kAttrRstrip = 1u << 8,
};

// Byte-level BPE tables over raw bytes: every vocabulary text and merge part that decodes
// through the GPT-2 byte alphabet becomes a "piece" (its raw bytes); merges map piece pairs.
struct BpeTables {
    std::deque<std::string> pieces;     // raw bytes of each piece (never moved: piece_of views them)
    StrMap piece_of;                    // raw bytes -> piece
    std::vector<int32_t> token_of;      // piece -> token id, or -1
    PairMap merges;
    std::array<int32_t, 256> byte_piece{};                  // single raw byte -> piece, or -1
    std::array<std::array<int32_t, 2>, 256> byte_fallback{};  // tokens the reference emits for a
                                                              // byte of an unknown symbol (-1: none)
};

}  // namespace arbor::tok

namespace arbor {

struct Tokenizer::Impl {
    TokenizerModel model = TokenizerModel::Bpe;
    std::string pre_name;
    tok::PreTokenizer pre;

    std::vector<std::string> text;  // vocabulary text by id
    std::vector<float> score;
    std::vector<uint32_t> attr;
    tok::StrMap id_of;              // vocabulary text -> id
    size_t max_token_len = 0;

    tok::BpeTables bpe;
    tok::StrMap spm_pairs;  // SentencePiece: adjacent character pairs found in some token
    TokenId bos = kNoToken, eos = kNoToken, eot = kNoToken, eom = kNoToken, unk = kNoToken;
    TokenId sep = kNoToken, pad = kNoToken, mask = kNoToken;
    TokenId fim_pre = kNoToken, fim_suf = kNoToken, fim_mid = kNoToken;
    TokenId fim_pad = kNoToken, fim_rep = kNoToken, fim_sep = kNoToken;
    bool add_bos = false, add_eos = false, add_sep = false;
    bool add_space_prefix = false, clean_spaces = false, ignore_merges = false;
    bool lowercase = true, strip_accents = true;

    std::vector<TokenId> special_by_length;  // CONTROL|USER_DEFINED|UNKNOWN, longest first
    std::vector<TokenId> eog;                // sorted
    std::vector<std::string> piece;          // token_to_piece(id, render_special = true)
    std::vector<std::string> warnings;

    bool valid(TokenId id) const { return id >= 0 && static_cast<size_t>(id) < text.size(); }
    bool has(TokenId id, uint32_t a) const { return (attr[static_cast<size_t>(id)] & a) != 0; }
    // A vocabulary lookup that plain text may produce (never CONTROL or UNKNOWN tokens).
    TokenId text_token(std::string_view s) const {
        const int32_t id = id_of.find(s);
        if (id < 0 || has(id, tok::kAttrControl | tok::kAttrUnknown)) return kNoToken;
        return id;
    }
};

// The bytes a token stands for (tokenizer.cpp); the build caches it for every id.
std::string piece_for(const Tokenizer::Impl& impl, TokenId id, bool render_special);

}  // namespace arbor

namespace arbor::tok {

// Builds the byte-level tables (bpe_tables.cpp).
Status build_bpe_tables(Tokenizer::Impl& impl, const std::vector<std::string>& merges);
// Builds Impl::spm_pairs (spm.cpp).
void build_spm_pairs(Tokenizer::Impl& impl);
// Appends the tokens of one text fragment (no special tokens in it) for each model.
void bpe_tokenize(const Tokenizer::Impl& impl, std::string_view text, std::vector<TokenId>& out);
void spm_tokenize(const Tokenizer::Impl& impl, std::string_view text, std::vector<TokenId>& out);
void wpm_tokenize(const Tokenizer::Impl& impl, std::string_view text, std::vector<TokenId>& out);

// Splits text at special tokens (special_split.cpp). A fragment is either a token (id >= 0)
// or a byte range of the text.
struct Fragment {
    TokenId id = kNoToken;
    size_t begin = 0, end = 0;
};
std::vector<Fragment> split_special(const Tokenizer::Impl& impl, std::string_view text, bool parse_special);

// GPT-2 byte alphabet: byte -> code point, and the inverse (-1 for code points outside it).
uint32_t byte_to_cpt(uint8_t b);
int cpt_to_byte(uint32_t cp);

}  // namespace arbor::tok
