// The CPU backend's view of one pass: the buffers of pass_plan.hpp, the tokens with their
// sequences and positions, and one function per stage op that runs a single work item.
#pragma once

#include <arbor/kv_cache.hpp>
#include <arbor/model.hpp>
#include <arbor/quant.hpp>

#include "model/cpu_kernels.hpp"
#include "model/model_weights.hpp"
#include "model/pass_plan.hpp"

#include <cstdint>
#include <vector>

namespace arbor::cpu {

using quant::BlockQ8A;

// Scratch owned by one worker thread (no allocation inside a pass).
struct WorkerScratch {
    std::vector<float> a, b;          // matmul tiles, q/k/v head rows
    std::vector<float> scores;        // [group][kAttnChunk]
    std::vector<float> chunks;        // attention chunk results [chunk][group][hd_v + 2]
    std::vector<float> fx;            // flashnext: streams' norm input and mixes
    std::vector<uint8_t> gather;      // flashnext: the selected K and V rows of one chunk
    std::vector<int32_t> order;       // flashnext: block ranking
};

// Per-expert list of the (token, slot) pairs routed to it, in token order.
struct ExpertRoutes {
    std::vector<int32_t> start;  // [n_expert + 1] offsets into pairs
    std::vector<int32_t> pairs;  // t * k + slot
    std::vector<int32_t> fill;   // scratch
};

struct Pass {
    const ModelConfig* cfg = nullptr;
    const ModelWeights* w = nullptr;
    const Kernels* k = nullptr;
    quant::Isa isa = quant::Isa::Scalar;  // for the quant row dots and Q8A
    KvLayout kv;

    // Tokens of the pass.
    int64_t n_tokens = 0;
    const TokenId* token = nullptr;
    const int32_t* pos = nullptr;
    const int32_t* seq = nullptr;                // index into seq_pages
    const std::vector<std::vector<uint8_t*>>* seq_pages = nullptr;  // per sequence: page pointers
    int64_t n_out = 0;
    const int32_t* out_token = nullptr;          // the tokens whose logits are wanted

    // Buffers (sized for max_batch_tokens).
    float* x = nullptr;      // [T][n_embd]
    float* xn = nullptr;     // [T][n_embd]
    BlockQ8A* xq = nullptr;  // [T][n_embd/32]
    float* rope = nullptr;   // [T][n_rot/2][2]
    float* q = nullptr;      // [T][n_head*hd_k]
    float* att = nullptr;    // [T][n_head*hd_v]
    BlockQ8A* attq = nullptr;
    float* h = nullptr;      // [T][n_ff]
    BlockQ8A* hq = nullptr;
    int32_t* route_idx = nullptr;  // [T][k]
    float* route_w = nullptr;      // [T][k]
    float* he = nullptr;           // [T][k][n_ff_exp]
    BlockQ8A* heq = nullptr;
    float* logits = nullptr;       // [n_out][n_vocab]
    ExpertRoutes* routes = nullptr;
    // flashnext buffers (pass_plan.hpp).
    float* x4 = nullptr;           // [T][4][n_embd]
    float* hc = nullptr;           // [T][24]
    float* iq = nullptr;           // [T][H_I*d_I]
    float* iw = nullptr;           // [T][H_I]
    float* scores = nullptr;       // [T][score_stride]
    int64_t score_stride = 0;
    int64_t score_groups = 0;      // IndexScore items per token
    int32_t* sel = nullptr;        // [T][budget/4]
    float* gs = nullptr;           // [T]
    float* hs = nullptr;           // [T][n_ff_shexp]
    BlockQ8A* hsq = nullptr;

    WorkerScratch* scratch = nullptr;  // [threads]

    int64_t q_width() const { return cfg->n_head * cfg->head_dim_k; }
    int64_t att_width() const { return cfg->n_head * cfg->head_dim_v; }
    // Pointer to the K (or V) row of (layer, kv head) for cell `pos` of token t's sequence.
    uint8_t* kv_row(int64_t t, int layer, int64_t head, int64_t cell, bool v) const {
        uint8_t* page = (*seq_pages)[size_t(seq[t])][size_t(cell / kKvPageCells)];
        const int64_t hd = v ? kv.head_dim_v : kv.head_dim_k;
        const size_t off = v ? kv.v_offset(layer, head) : kv.k_offset(layer, head);
        return page + off + size_t((cell % kKvPageCells) * hd * kv.elem_bytes);
    }
    // The indexer key row of `cell` of token t's sequence, and that sequence's pages.
    uint8_t* index_row(int64_t t, int layer, int64_t cell) const {
        uint8_t* page = (*seq_pages)[size_t(seq[t])][size_t(cell / kKvPageCells)];
        return page + kv.index_offset(layer) + size_t((cell % kKvPageCells) * kv.index_dim * kv.elem_bytes);
    }
    const std::vector<uint8_t*>& pages_of(int64_t t) const { return (*seq_pages)[size_t(seq[t])]; }
};

// The pooled key of index block `block` of a sequence (pages: its page pointers), from the
// stored indexer keys of its 4 cells: mean, RMSNorm with k_norm, RoPE at the block's first
// cell with the indexer table (docs/MODEL-flashnext.md). tmp: index_dim floats.
void pool_index_block(const KvLayout& kv, const std::vector<uint8_t*>& pages, int layer, int64_t block,
                      const ModelConfig& cfg, const LayerWeights& L, const std::vector<float>& index_freq, float* tmp);
// Recomputes the pooled keys of every complete block of cells [0, n) in every layer (at wake:
// they are derived state, not parked). No-op for models without an indexer.
void rebuild_index_pools(const Model& model, KvSequence& seq, int64_t n);

void run_embed(const Pass& p, int64_t item);
void run_rope_table(const Pass& p, int64_t item);
void run_rms_norm(const Pass& p, const plan::Stage& s, int64_t item);
void run_quantize(const Pass& p, const plan::Stage& s, int64_t item);
void run_matmul_add(const Pass& p, const plan::Stage& s, int64_t item, int worker);
void run_gated_ffn(const Pass& p, const plan::Stage& s, int64_t item, int worker);
void gated_ffn_tile(const Pass& p, const WeightRef& gate, const WeightRef& up, int64_t n_ff, int64_t r0, int64_t rows,
                    bool quantize_out, float* h_out, BlockQ8A* hq_out, int worker);
void run_lm_head(const Pass& p, const plan::Stage& s, int64_t item, int worker);
void run_qkv_rope(const Pass& p, const plan::Stage& s, int64_t item, int worker);
void run_attention(const Pass& p, const plan::Stage& s, int64_t item, int worker);
void attention_chunk_heads(const Pass& p, float* sc, int n, const uint8_t* v, size_t v_stride, int group, float* r);
void combine_attention_chunks(const Pass& p, const plan::Stage& s, const float* res, int64_t n_chunks, int64_t t,
                              int64_t g);
void run_router(const Pass& p, const plan::Stage& s, int64_t item, int worker);
void build_expert_routes(const Pass& p);
void run_expert_gated_ffn(const Pass& p, const plan::Stage& s, int64_t item, int worker);
void run_expert_down_add(const Pass& p, const plan::Stage& s, int64_t item, int worker);
// flashnext (cpu_stage_flashnext_*.cpp).
void run_embed_hc(const Pass& p, int64_t item);
void run_hc_pre(const Pass& p, const plan::Stage& s, int64_t item, int worker);
void run_matmul_hc_post(const Pass& p, const plan::Stage& s, int64_t item, int worker);
void run_indexer_proj(const Pass& p, const plan::Stage& s, int64_t item, int worker);
void run_index_score(const Pass& p, const plan::Stage& s, int64_t item, int worker);
void run_index_select(const Pass& p, const plan::Stage& s, int64_t item, int worker);
void run_sparse_attention(const Pass& p, const plan::Stage& s, int64_t item, int worker);
void run_shared_gate(const Pass& p, const plan::Stage& s, int64_t item, int worker);
void run_shared_gated_ffn(const Pass& p, const plan::Stage& s, int64_t item, int worker);
void run_moe_down_hc_post(const Pass& p, const plan::Stage& s, int64_t item, int worker);

}  // namespace arbor::cpu
