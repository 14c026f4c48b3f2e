// Tokenizers: text to token ids and back, exactly as the reference implementation (llama.cpp's
// vocabulary code) does it for the same GGUF metadata.
//
// Three models are covered:
//   - BPE, byte-level (tokenizer.ggml.model = "gpt2"), with the pre-tokenizer named by
//     tokenizer.ggml.pre (gpt-2, llama3/llama-bpe, qwen2, deepseek-llm, deepseek-coder,
//     deepseek-v3, gpt-4o, falcon, mpt, starcoder, refact, command-r, and the names that share
//     their rules). An unknown name is an error naming it; a missing one means "default", with
//     a warning.
//   - SentencePiece BPE ("llama"): score-ordered merges, byte fallback (<0xXX>), and the
//     leading-space rule (a space is prepended to the first text fragment and to each fragment
//     that follows a special token).
//   - WordPiece ("bert"): lowercase + accent stripping as the metadata says, greedy longest match.
//
// Special tokens (CONTROL, USER_DEFINED and UNKNOWN types) are split out of the text first,
// longest first. USER_DEFINED tokens always are; CONTROL and UNKNOWN ones only with
// parse_special, and plain text never produces a CONTROL or UNKNOWN token otherwise.
//
// A Tokenizer is immutable once built, cheap to copy (shared state) and safe to use from many
// threads at once. Nothing here throws or aborts on bad input: invalid UTF-8 tokenizes (each bad
// byte reads as U+FFFD, as the reference does), out-of-range ids detokenize to nothing.
//
// Where we knowingly differ from the reference: merges and whole-word lookups never produce a
// CONTROL or UNKNOWN token from plain text (the reference's could spell one out); a UTF-8
// sequence above U+10FFFF reads as U+FFFD (the reference fails); a byte with no token falls
// back to UNK (the reference aborts); when several texts could be the EOT (or EOM, FIM) token,
// the first in the reference's list wins (the reference takes whichever its hash map yields).
// Unicode properties come from Python's unicodedata (gen_unicode_tables.py).
#pragma once

#include <arbor/result.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace arbor {

class GgufFile;

using TokenId = int32_t;
constexpr TokenId kNoToken = -1;

// GGUF tokenizer.ggml.token_type values.
enum class TokenType : int32_t {
    Undefined = 0,
    Normal = 1,
    Unknown = 2,
    Control = 3,
    UserDefined = 4,
    Unused = 5,
    Byte = 6,
};

enum class TokenizerModel { Bpe, SentencePiece, WordPiece };

// Everything a tokenizer is built from: the tokenizer.ggml.* metadata, already read. Optional
// fields that are absent take the reference defaults for the model type.
struct TokenizerData {
    std::string model;                 // tokenizer.ggml.model: "gpt2", "llama" or "bert"
    std::optional<std::string> pre;    // tokenizer.ggml.pre
    std::vector<std::string> tokens;   // tokenizer.ggml.tokens, indexed by id
    std::vector<float> scores;         // tokenizer.ggml.scores (empty: all 0)
    std::vector<int32_t> token_types;  // tokenizer.ggml.token_type (empty: all NORMAL)
    std::vector<std::string> merges;   // tokenizer.ggml.merges, "left right", rank = index
    std::optional<int64_t> bos_id, eos_id, eot_id, eom_id, unk_id, sep_id, pad_id, mask_id;
    std::optional<int64_t> fim_pre_id, fim_suf_id, fim_mid_id, fim_pad_id, fim_rep_id, fim_sep_id;
    std::optional<bool> add_bos, add_eos, add_sep, add_space_prefix;
    std::optional<bool> lowercase, strip_accents;  // tokenizer.ggml.normalizer.* (WordPiece)
    std::string model_name;            // general.name (a few per-model token rules use it)
};

struct TokenizeOptions {
    bool add_special = false;    // add BOS/EOS (and WordPiece's CLS/SEP) as the model asks
    bool parse_special = false;  // special-token text in the input becomes those tokens
};

struct DetokenizeOptions {
    bool render_special = true;   // CONTROL/UNKNOWN tokens print as their text
    bool remove_special = false;  // drop a leading BOS / trailing EOS the model would add
    bool clean_spaces = false;    // apply the model's clean_up_tokenization_spaces rule, if any
};

class Tokenizer {
public:
    // Builds from metadata already read; the error names the field that is wrong.
    static Result<Tokenizer> build(TokenizerData data);
    // Reads tokenizer.ggml.* (and general.name) from a GGUF, then build().
    static Result<Tokenizer> from_gguf(const GgufFile& gguf);
    // Reads the tokenizer metadata of a GGUF without building (tools, tests).
    static Result<TokenizerData> read_gguf(const GgufFile& gguf);

    std::vector<TokenId> tokenize(std::string_view text, TokenizeOptions opts = {}) const;

    // The bytes one token stands for (byte-level BPE decoded, SentencePiece's U+2581 turned
    // back into spaces). CONTROL/UNKNOWN tokens give their text only with render_special.
    std::string token_to_piece(TokenId id, bool render_special = true) const;
    std::string detokenize(std::span<const TokenId> ids, DetokenizeOptions opts = {}) const;

    TokenizerModel model() const;
    const std::string& pre() const;  // pre-tokenizer name in effect ("default" when missing)
    size_t n_tokens() const;
    const std::string& token_text(TokenId id) const;  // raw vocabulary text ("" out of range)
    TokenType token_type(TokenId id) const;           // after the reference's adjustments
    bool is_special(TokenId id) const;                // CONTROL or UNKNOWN
    bool is_eog(TokenId id) const;                    // ends generation (EOS, EOT, EOM, ...)
    const std::vector<TokenId>& eog_ids() const;      // sorted
    std::optional<TokenId> token_id(std::string_view text) const;  // exact vocabulary text

    TokenId bos() const;  // kNoToken when the model has none
    TokenId eos() const;
    TokenId eot() const;
    TokenId eom() const;
    TokenId unk() const;
    TokenId sep() const;
    TokenId pad() const;
    bool add_bos() const;  // the model's own setting (what add_special does)
    bool add_eos() const;
    bool add_space_prefix() const;

    // Notes from building, e.g. a missing tokenizer.ggml.pre. Never errors.
    const std::vector<std::string>& warnings() const;

    struct Impl;

private:
    explicit Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
    std::shared_ptr<const Impl> impl_;
    friend class StreamDetokenizer;
};

// Turns a stream of generated tokens into text, one token at a time. A token whose bytes end
// inside a UTF-8 sequence is held back until the sequence completes, so every string returned
// by push() is valid UTF-8 on its own wherever the token bytes are. Bytes that can never
// complete (a stray continuation byte, a lead byte followed by a non-continuation) are passed
// through as they are, so no byte is lost.
//
// With at_text_start, the tokens begin a text (as detokenize() sees a whole sequence): a
// SentencePiece model's leading space is dropped from the first piece. Generated tokens that
// continue a prompt are not at the start of a text, and keep every space.
class StreamDetokenizer {
public:
    explicit StreamDetokenizer(Tokenizer tokenizer, bool render_special = true, bool at_text_start = false);

    std::string push(TokenId id);  // text that is now complete (possibly empty)
    std::string finish();          // whatever is still held back; resets to the initial state

    // The state between tokens, for saving a context to disk and resuming it.
    struct State {
        std::string held;        // bytes of an incomplete UTF-8 sequence (at most 3)
        bool at_start = false;   // the next token begins a text (the leading-space rule applies)
    };
    State state() const;
    Status restore(const State& s);  // error if held is not a plausible incomplete sequence
    // A compact byte form of State (version byte, flag, length, bytes), and its reader.
    static std::string serialize(const State& s);
    static Result<State> deserialize(std::string_view bytes);

private:
    Tokenizer tok_;
    bool render_special_;
    bool at_text_start_;
    State st_;
};

}  // namespace arbor
