// The tensors of a loaded model, bound by name and checked against the hyperparameters.
// Matrices stay in place in the GGUF mapping; small vectors (norm weights, biases, RoPE
// frequencies) are decoded to float32 once at load.
#pragma once

#include <arbor/gguf.hpp>
#include <arbor/model.hpp>
#include <arbor/result.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace arbor {

// A matrix (or a stack of n_mat matrices, for experts) as GGUF stores it: `rows` rows of
// `cols` elements of `type`, row r of matrix m at data + m * mat_bytes + r * row_bytes.
struct WeightRef {
    const uint8_t* data = nullptr;
    TensorType type = TensorType::F32;
    int64_t cols = 0;
    int64_t rows = 0;
    int64_t n_mat = 1;
    size_t row_bytes = 0;
    size_t mat_bytes = 0;
    std::string name;

    explicit operator bool() const { return data != nullptr; }
    const uint8_t* row(int64_t r, int64_t m = 0) const { return data + size_t(m) * mat_bytes + size_t(r) * row_bytes; }
};

struct LayerWeights {
    std::vector<float> attn_norm, ffn_norm, q_norm, k_norm, bq, bk, bv;
    WeightRef wq, wk, wv, wo;
    WeightRef ffn_gate, ffn_up, ffn_down;                  // dense FFN
    WeightRef gate_inp, gate_exps, up_exps, down_exps;     // experts
    bool moe = false;
    // flashnext: the shared expert, the two hyper-connection wraps and the indexer.
    WeightRef gate_shexp, up_shexp, down_shexp;
    std::vector<float> gate_inp_shexp;                      // [n_embd]
    WeightRef hc_attn_fn, hc_ffn_fn;                        // [4 n_embd] x 24 rows, float types
    std::vector<float> hc_attn_base, hc_attn_scale, hc_ffn_base, hc_ffn_scale;  // [24], [3]
    WeightRef idx_q, idx_k, idx_proj;                       // attn_q_b, attn_k, proj
    std::vector<float> idx_k_norm;                          // [index_dim]
};

struct ModelWeights {
    WeightRef tok_embd;
    WeightRef output;  // the LM head (token_embd when tied)
    std::vector<float> output_norm;
    std::vector<LayerWeights> layers;
    // RoPE: per pair i < n_rot/2 the frequency after every scaling rule, and the magnitude
    // factor of cos/sin (yarn). Computed on the host in double, rounded to float once; the GPU
    // takes these same tables.
    std::vector<float> rope_freq;
    float rope_mscale = 1.0f;
    // flashnext: the head's hyper-connection pre weights and the indexer's own RoPE table
    // (freq_i = base^(-2i/index_dim), i < index_dim/2, double rounded once).
    WeightRef output_hc_fn;                                 // [4 n_embd] x 4 rows
    std::vector<float> output_hc_base, output_hc_scale;     // [4], [1]
    std::vector<float> index_rope_freq;
};

// Binds and checks every tensor of `file` for `cfg`; fills in cfg.n_vocab and
// cfg.tied_embeddings.
Result<ModelWeights> bind_weights(const GgufFile& file, ModelConfig& cfg);

// The RoPE frequency table and magnitude for cfg (rope_freqs: the file's frequency factors, or
// empty).
void compute_rope_tables(const ModelConfig& cfg, const std::vector<float>& rope_freqs, std::vector<float>* freq,
                         float* mscale);

}  // namespace arbor
