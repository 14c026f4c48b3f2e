// Byte-level BPE pre-tokenizers: split text into the words that BPE merges within.
//
// Each pre-tokenizer is a list of stages, each a regular expression from the model's
// tokenizer.json. A stage splits every current piece into its matches and the gaps between
// them, searching leftmost-first with ECMAScript (backtracking, ordered alternation) semantics,
// and the next stage refines the result. The expressions are hand-written matchers
// (pretokenizer_matchers.cpp) over code points and their Unicode properties.
//
// Character classes follow the reference: \s is White_Space; \p{L}, \p{N}, \p{P}, \p{M}, \p{S}
// are general-category classes, except that in stages the reference runs through its
// "collapsed" std::regex path ASCII '~' is not \p{S}, and explicit character ranges (as in the
// deepseek expressions) see every non-ASCII White_Space character as U+000B.
#pragma once

#include <arbor/result.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace arbor::tok {

// The text a matcher reads: code points and their props bytes (unicode_props.hpp).
struct CpText {
    const uint32_t* cp = nullptr;
    const uint8_t* pr = nullptr;
};

// Tries the expression at position i of a piece that ends at `end`. Returns the end of the
// match, or i when the expression does not match there. Matches are never empty.
using Matcher = size_t (*)(const CpText& t, size_t i, size_t end);

struct PreTokenizer {
    const char* family = "";             // the rules' name, for messages
    std::vector<Matcher> stages;
    bool ignore_merges = false;          // a word that is a whole token is taken as it is
    bool clean_spaces = true;            // clean_up_tokenization_spaces default
    std::optional<bool> add_bos;         // overrides the BPE default (false) when set
    bool no_bos = false;                 // the model has no BOS unless the metadata names one
};

// The pre-tokenizer for a tokenizer.ggml.pre value; an error names an unknown value.
Result<PreTokenizer> pre_tokenizer_for(std::string_view name);

// Splits [0, n) into pieces; appends each piece's end (exclusive) to `ends`.
void pre_tokenize(const PreTokenizer& pt, const CpText& t, size_t n, std::vector<uint32_t>& ends);

}  // namespace arbor::tok
