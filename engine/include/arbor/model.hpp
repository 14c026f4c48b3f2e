// A loaded language model: its hyperparameters, its weights (in place in the GGUF mapping)
// and its tokenizer. Immutable once loaded and shared by everything that runs it
// (std::shared_ptr<const Model>), so it is safe to read from many threads.
//
// Architectures (general.architecture):
//   llama     Llama 2/3, Mistral, TinyLlama, stories260K: RoPE on adjacent pairs (GGUF's
//             permuted Q/K layout), optional rope_freqs (Llama 3.1 frequency factors),
//             optional experts (Mixtral-style: softmax, top-k, renormalised).
//   qwen2     Q/K/V biases, RoPE on halves (NEOX).
//   qwen3     per-head RMSNorm of Q and K before RoPE, RoPE on halves.
//   qwen3moe  qwen3 attention; softmax router over the experts, top-k, renormalised.
//   flashnext qwen3moe with a shared expert, indexer block selection in attention and a
//             four-stream hyper-connected residual (docs/MODEL-flashnext.md).
//
// Metadata defaults that real files rely on: head_count_kv = head_count; key/value length =
// embedding_length / head_count; rope.dimension_count = key length; rope.freq_base = 10000;
// layer_norm_rms_epsilon = 1e-5 (llama) / 1e-6 (qwen); context_length = 2048 when absent.
// output.weight absent means the LM head is tied to token_embd.weight.
#pragma once

#include <arbor/gguf.hpp>
#include <arbor/result.hpp>
#include <arbor/tokenizer.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace arbor {

enum class Architecture { Llama, Qwen2, Qwen3, Qwen3Moe, FlashNext };
std::string_view architecture_name(Architecture a);

enum class RopeStyle {
    Normal,  // pairs (2i, 2i+1)
    Neox,    // pairs (i, i + n_rot/2)
};

enum class RopeScaling { None, Linear, Yarn };

struct ModelConfig {
    Architecture arch = Architecture::Llama;
    std::string arch_name;
    int64_t n_vocab = 0;
    int64_t n_embd = 0;
    int64_t n_layer = 0;
    int64_t n_head = 0;
    int64_t n_head_kv = 0;
    int64_t head_dim_k = 0;  // attention.key_length
    int64_t head_dim_v = 0;  // attention.value_length
    int64_t n_ff = 0;        // dense FFN width (0 for MoE layers)
    int64_t n_expert = 0;
    int64_t n_expert_used = 0;
    int64_t n_ff_exp = 0;
    bool expert_weights_norm = true;  // renormalise the top-k weights
    float rms_eps = 1e-5f;
    float attn_scale = 0;  // q.k scale; 1/sqrt(head_dim_k) unless the file says otherwise
    int64_t n_ctx_train = 0;
    bool qk_norm = false;   // per-head RMSNorm of Q and K (qwen3)
    bool qkv_bias = false;  // biases on Q, K, V (qwen2)
    bool tied_embeddings = false;

    RopeStyle rope_style = RopeStyle::Normal;
    int64_t n_rot = 0;  // rope.dimension_count
    float rope_freq_base = 10000.0f;
    RopeScaling rope_scaling = RopeScaling::None;
    float rope_scale_factor = 1.0f;  // context extension factor (linear and yarn)
    int64_t rope_orig_ctx = 0;       // yarn: original context length
    float yarn_ext_factor = 0;       // yarn: 1 when scaling is yarn, unless given
    float yarn_attn_factor = 1.0f;
    float yarn_beta_fast = 32.0f;
    float yarn_beta_slow = 1.0f;
    bool has_rope_freqs = false;     // a rope_freqs tensor divides the frequencies

    // flashnext (0 elsewhere): shared expert, hyper-connections, indexer.
    int64_t n_ff_shexp = 0;          // expert_shared_feed_forward_length
    int64_t n_hc = 0;                // hyper_connection.count (4)
    int64_t hc_sinkhorn_iters = 0;   // hyper_connection.sinkhorn_iterations
    float hc_eps = 0;                // hyper_connection.epsilon
    int64_t n_index_head = 0;        // attention.indexer.head_count (H_I)
    int64_t index_dim = 0;           // attention.indexer.key_length (d_I)
    int64_t index_top_k = 0;         // attention.indexer.top_k (the cell budget)
    int64_t index_block = 0;         // attention.indexer.block_size (4)

    bool is_flashnext() const { return arch == Architecture::FlashNext; }

    bool is_moe() const { return n_expert > 0; }
};

struct ModelWeights;  // engine-internal (src/model/model_weights.hpp)

class Model {
public:
    // Maps the file, reads and checks the hyperparameters, binds and checks every tensor
    // (names, shapes, types) and builds the tokenizer. Errors name the file and what is wrong.
    static Result<std::shared_ptr<const Model>> load(const std::string& path);

    ~Model();
    Model(const Model&) = delete;
    Model& operator=(const Model&) = delete;

    const ModelConfig& config() const { return config_; }
    const Tokenizer& tokenizer() const { return *tokenizer_; }
    const GgufFile& gguf() const { return *gguf_; }
    const std::string& path() const { return gguf_->path(); }
    const ModelWeights& weights() const { return *weights_; }
    // Bytes of KV cache per cell (all layers, K and V) at the given element size.
    int64_t kv_bytes_per_cell(int64_t elem_bytes) const;

private:
    Model() = default;
    ModelConfig config_;
    std::unique_ptr<GgufFile> gguf_;
    std::unique_ptr<Tokenizer> tokenizer_;
    std::unique_ptr<ModelWeights> weights_;
};

// Reads and checks the hyperparameters only (no tensor binding, no tokenizer).
Result<ModelConfig> read_model_config(const GgufFile& file);

}  // namespace arbor
