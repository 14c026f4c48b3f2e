// Synthetic GGUF models: any supported architecture at tiny or real shapes, with random
// weights of sane scale (activations stay finite through every layer), a small byte-level BPE
// tokenizer and a ChatML template, so every command works on them. Used by tests and
// benchmarks; exposed as `arbor-cli synth`.
#pragma once

#include <arbor/result.hpp>
#include <arbor/tensor_types.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace arbor {

struct SynthShape {
    std::string name;          // "tiny", "qwen3-0.6b", ...
    uint32_t n_embd = 0, n_layer = 0, n_head = 0, n_head_kv = 0, head_dim = 0, n_ff = 0;
    uint32_t n_vocab = 0, n_ctx = 0;
    uint32_t n_expert = 0, n_expert_used = 0, n_ff_expert = 0;
    bool tied_embeddings = false;
    float rope_base = 1e6f, rms_eps = 1e-6f;
    // flashnext: shared expert width, indexer heads, key length and cell budget.
    uint32_t n_ff_shexp = 0, n_index_head = 0, index_dim = 0, index_top_k = 0;
};

struct SynthOptions {
    std::string arch;                    // llama, qwen2, qwen3, qwen3moe, flashnext
    std::string shape = "tiny";
    std::optional<TensorType> type;      // main weight type; default: the shape's release mix
    uint64_t seed = 1;
    bool zero_data = false;              // header only, tensor data left as a sparse hole
    // With zero_data: the token embeddings, the one-dimensional tensors (the norm weights) and
    // the MoE routers (ffn_gate_inp*) are still generated, so a MoE's tokens spread over the
    // experts as in a random-weight model (all-zero routers or norms tie every logit, and every
    // token takes experts 0 .. k-1). Every other tensor stays a hole.
    bool routed = false;
    int threads = 0;                     // 0: all cores
};

std::vector<std::string> synth_architectures();
// The shapes an architecture offers, and one by name.
std::vector<SynthShape> synth_shapes(const std::string& arch);
Result<SynthShape> synth_shape(const std::string& arch, const std::string& shape);

Status synthesize_model(const SynthOptions& opt, const std::string& out_path);

}  // namespace arbor
