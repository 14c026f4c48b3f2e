// The pre-tokenizer expressions as matchers (see pretokenizer.hpp for the contract). Each
// comment quotes the expression it implements.
#pragma once

#include "tokenizer/pretokenizer.hpp"

namespace arbor::tok::match {

// gpt-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)
size_t gpt2(const CpText& t, size_t i, size_t end);
// llama3: (?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|
//         \p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
size_t llama3(const CpText& t, size_t i, size_t end);
// qwen2: the llama3 expression with \p{N} in place of \p{N}{1,3}
size_t qwen2(const CpText& t, size_t i, size_t end);
// qwen35: qwen2 with [\p{L}\p{M}]+ words and [^\s\p{L}\p{M}\p{N}] punctuation
size_t qwen35(const CpText& t, size_t i, size_t end);
// seed-coder: qwen2 with ` ?[^\s\p{L}\p{N}\r\n]+` (no trailing newlines)
size_t seed_coder(const CpText& t, size_t i, size_t end);
// bailingmoe: qwen2 with \s*[\r\n] (one newline) in place of \s*[\r\n]+
size_t bailingmoe(const CpText& t, size_t i, size_t end);
// ufakzeka: qwen2 without the contractions
size_t ufakzeka(const CpText& t, size_t i, size_t end);
// minicpm5 (second stage): the llama3 expression with \p{N}+
size_t llama3_digits_unbounded(const CpText& t, size_t i, size_t end);

// gpt-4o: [^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+(?:contractions)?|
//         [^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*(?:contractions)?|
//         \p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
size_t gpt4o(const CpText& t, size_t i, size_t end);
// tekken: the gpt-4o expression without contractions and with \p{N}
size_t tekken(const CpText& t, size_t i, size_t end);

// deepseek-v3 third stage:
// [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+|
// ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
size_t deepseek3_words(const CpText& t, size_t i, size_t end);
// deepseek-llm: \s?[A-Za-zµÀ-ÖØ-öø-ƺ...]+ (its list of Latin/Greek/Cyrillic/... letters)
size_t deepseek_llm_letters(const CpText& t, size_t i, size_t end);
// deepseek-llm: \s?[!-/:-~！-／：-～‘-‟　-。]+
size_t deepseek_llm_punct(const CpText& t, size_t i, size_t end);
// \s+$
size_t trailing_space(const CpText& t, size_t i, size_t end);
// [一-龥ࠀ-一가-퟿]+
size_t cjk_hangul(const CpText& t, size_t i, size_t end);
// [一-龥぀-ゟ゠-ヿ]+
size_t cjk_kana(const CpText& t, size_t i, size_t end);
// deepseek-coder: \s?\p{L}+ and \s?\p{P}+
size_t space_letters(const CpText& t, size_t i, size_t end);
size_t space_punct(const CpText& t, size_t i, size_t end);

// [\r\n]
size_t newline_char(const CpText& t, size_t i, size_t end);
// \p{N}, \p{N}+, \p{N}{1,3}
size_t digit_one(const CpText& t, size_t i, size_t end);
size_t digit_run(const CpText& t, size_t i, size_t end);
size_t digit_three(const CpText& t, size_t i, size_t end);
// [0-9][0-9][0-9]
size_t ascii_digit_three(const CpText& t, size_t i, size_t end);
// default: [\p{P}\$\+<=>\^~\|]+   falcon: [\p{P}\$\+<=>\^~\|`]+
size_t punct_default(const CpText& t, size_t i, size_t end);
size_t punct_falcon(const CpText& t, size_t i, size_t end);
// bloom / poro: ` ?[^(\s|.,!?…。，、।۔،)]+`
size_t bloom(const CpText& t, size_t i, size_t end);

}  // namespace arbor::tok::match
