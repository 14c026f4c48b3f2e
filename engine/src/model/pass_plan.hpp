// The pass plan: a model compiled into an ordered list of stages. Every backend executes the
// same plan (the CPU backend here, the GPU megakernel later), so an architecture is written
// once, as a stage builder (pass_plan.cpp).
//
// A pass evaluates T tokens, each belonging to some sequence at some position (a prefill
// chunk, a decode step of several sequences, or any mix), and produces logits for the n_out
// tokens that asked for them. Stages are grouped in dependency levels: a stage reads only
// buffers written at lower levels, stages of one level are independent, and a backend runs a
// level to completion before the next (a barrier on the CPU, a grid barrier on the GPU).
//
// Each stage has a fixed work decomposition: items(stage, shape) work items, each writing its
// own disjoint outputs with the reduction order of numerics.hpp. So no item depends on which
// worker runs it or on which other tokens share the pass: bits are independent of the thread
// count, the batch composition and the prefill chunking by construction.
//
// Buffers (per pass, float32 unless said; "Q8A" = arbor/quant.hpp's activation blocks):
//   X    [T][n_embd]        the residual stream
//   XN   [T][n_embd]        normalised stream (+ XQ, its Q8A form, when a consumer is quantized)
//   Q    [T][n_head*hd_k]   rotated queries
//   Att  [T][n_head*hd_v]   attention output (+ AttQ)
//   H    [T][n_ff]          gated FFN activations (+ HQ)
//   Rope [T][n_rot/2][2]    cos and sin per token and rotated pair
//   Route[T][k]             chosen experts and weights (slot order)
//   HE   [T][k][n_ff_exp]   expert activations per slot (+ HEQ)
//   Logits [n_out][n_vocab]
// and the sequences' KV cells (see arbor/kv_cache.hpp), written by QkvRope, read by Attention.
// flashnext (docs/MODEL-flashnext.md) adds:
//   X4   [T][4][n_embd]     the four hyper-connection streams (replace X)
//   Hc   [T][24]            pre (4), post (4) and comb (16) of the current sublayer
//   IndexQ [T][H_I*d_I]     rotated, scaled indexer queries; IndexW [T][H_I] head weights
//   Scores [T][n_blocks]    indexer block scores (sized for the pass's largest position)
//   Sel  [T][budget/4]      selected blocks per token, increasing
//   GS   [T]                shared-expert gate; HS [T][F_s] its activations (+ HSQ)
// and in the KV pages the indexer keys (IndexerProj) and pooled block keys (IndexerProj, on
// the token that completes a block).
#pragma once

#include <arbor/model.hpp>

#include "model/model_weights.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace arbor::plan {

enum class Op : uint8_t {
    Embed,           // X[t] = row token(t) of token_embd (decoded)                 items: T
    RopeTable,       // Rope[t][i] = (cos, sin) of pos(t) * freq_i (numerics.hpp)     items: T
    RmsNorm,         // XN[t] = rmsnorm(X[t]) * w; XQ[t] when quantize_out           items: T (n_out: outputs_only)
    QkvRope,         // head h of [Q | K | V]: its rows for every token, + bias; Q and K heads:
                     // per-head RMSNorm (qk_norm), RoPE; Q into Q, K/V into the token's cell
                     //                                                               items: n_head + 2*n_head_kv
    Attention,       // Att[t] for the q heads of kv head g (+ AttQ when quantize_out) items: n_head_kv * T
    Quantize,        // in -> its Q8A form, when the producer could not               items: T
    MatMulAdd,       // X[t][r] = X[t][r] + W[r] . in[t]                               items: ceil(rows / tile)
    GatedFfn,        // H[t][r] = silu(Wg[r] . XN[t]) * (Wu[r] . XN[t]); HQ             items: ceil(n_ff / tile)
    Router,          // Route[t] = top-k(softmax(Wr . XN[t]))                          items: T
    ExpertGatedFfn,  // HE[t][k] rows for the (t, k) routed to expert e; HEQ           items: n_expert * ceil(n_ff_exp / tile)
    ExpertDownAdd,   // X[t][r] += sum over slots k (w_k * (Wd_e(k)[r] . HE[t][k]))    items: ceil(n_embd / tile)
    LmHead,          // Logits[o][r] = Wout[r] . XN[o]                                 items: ceil(n_vocab / tile)
    // flashnext (appended: backends refuse ops they do not know).
    EmbedHc,         // X4[t][i] = row token(t) of token_embd, i = 0..3                 items: T
    HcPre,           // Hc[t] = mix(fn . rms(X4[t])); XN[t] = rmsnorm(sum pre_i X4[t][i]) * w (+ XQ);
                     // outputs_only: the head's pre, XN[o] for the output tokens      items: T (n_out)
    IndexerProj,     // items 0..H_I-1: indexer query head h of every token (RoPE, scale);
                     // item H_I: head weights; item H_I+1: indexer keys into the cells, then
                     // the pooled key of each block a token completes                 items: H_I + 2
    IndexScore,      // Scores[t][b] for 32 blocks b of token t (sparse tokens only)   items: T * ceil(max_blocks / 32), 0 when no token is sparse
    IndexSelect,     // Sel[t] = the top budget/4 blocks of token t                    items: T, 0 when no token is sparse
    SparseAttention, // Attention over the token's selected cells (dense when it sees <= budget+3)
                     //                                                               items: n_head_kv * T
    MatMulHcPost,    // X4[t][k][r] = post_k * (W[r] . in[t]) + sum_j comb[j][k] X4[t][j][r]
                     //                                                               items: ceil(n_embd / tile)
    SharedGate,      // GS[t] = sigmoid(gate_inp_shexp . XN[t])                        items: T
    SharedGatedFfn,  // HS[t][r] = silu(Wg[r] . XN[t]) * (Wu[r] . XN[t]); HSQ          items: ceil(F_s / tile)
    MoeDownHcPost,   // y = sum_k w_k (Wd_e(k)[r] . HE[t][k]) + GS[t] (Wds[r] . HS[t]); X4 update as MatMulHcPost
                     //                                                               items: ceil(n_embd / tile)
};

enum class Buf : uint8_t { None, X, XN, Rope, Q, Att, H, Route, HE, Logits, X4, Hc, IndexQ, Scores, Sel, GS, HS };

struct Stage {
    Op op = Op::Embed;
    int32_t layer = -1;     // -1 for the embedding and the head
    int32_t level = 0;
    Buf in = Buf::None;
    Buf out = Buf::None;
    bool quantize_out = false;  // the stage also writes the Q8A form of its output
    bool outputs_only = false;  // RmsNorm over the n_out output tokens (before the LM head)
    int32_t tile = 0;           // rows per item (matmul stages)
    const WeightRef* weight = nullptr;  // MatMulAdd / LmHead: the matrix
    const std::vector<float>* norm = nullptr;  // RmsNorm: the weight vector
};

struct PassPlan {
    std::vector<Stage> stages;  // in level order
    int32_t n_levels = 0;
};

struct PassShape {
    int64_t n_tokens = 0;
    int64_t n_out = 0;
    int64_t max_pos = 0;  // the largest position of a token of the pass (sizes IndexScore)
};

// flashnext: whether a token at `pos` attends to selected blocks (it sees more than budget + 3
// cells), and the complete blocks before its own block.
bool index_sparse(const ModelConfig& cfg, int64_t pos);
inline int64_t index_blocks_before(int64_t pos) { return pos / 4; }
constexpr int32_t kScoreBlocks = 32;  // blocks per IndexScore item

constexpr int32_t kMatTile = 32;    // rows per item of MatMulAdd, GatedFfn, ExpertGatedFfn, ExpertDownAdd
constexpr int32_t kHeadTile = 64;   // rows per item of LmHead

PassPlan build_pass_plan(const ModelConfig& cfg, const ModelWeights& w);
int64_t stage_items(const Stage& s, const ModelConfig& cfg, const PassShape& shape);
const char* op_name(Op op);
std::string describe(const PassPlan& plan);

}  // namespace arbor::plan
