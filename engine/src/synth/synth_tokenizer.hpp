// The tokenizer every synthetic model carries: byte-level BPE (tokenizer.ggml.model "gpt2",
// pre "qwen2") trained on a short built-in English text, plus ChatML special tokens, padded
// with unused tokens to the shape's vocabulary size.
#pragma once

#include <arbor/gguf.hpp>

#include <cstdint>

namespace arbor::synth {

// Adds tokenizer.* keys (tokens, token types, merges, special ids, chat template) to `w`.
void add_bpe_tokenizer(GgufWriter& w, uint32_t n_vocab);

}  // namespace arbor::synth
