// The flashnext part of the model pass as the megakernel sees it (docs/MODEL-flashnext.md):
// the weights the architecture adds, its dimensions, its pass buffers and its device ops.
// Shared by host and device code; plain data only. MkPass::fn points at one MkFnPass in device
// memory (null for every other architecture); the host (gpu_flashnext.hip) writes it at init
// and again only when a buffer that grows with the context is reallocated. Everything that
// changes per pass is derived on the device from MkPass (tokens, positions, max_chunks).
#pragma once

#include "mk_model.hpp"

namespace arbor::quant {
struct BlockQ8A;
}

namespace arbor::gpu {

struct MkFnLayerW {
    MkW hc_fn[2];               // [kFnWrapAttn], [kFnWrapFfn]: [4 n_embd] x 24, float types
    const float* hc_base[2];    // [24]
    const float* hc_scale[2];   // [3]
    MkW idx_q;                  // indexer.attn_q_b: H_I * d_I rows
    MkW idx_proj;               // indexer.proj: H_I rows (float types)
    MkW idx_k;                  // indexer.attn_k: d_I rows
    const float* idx_k_norm;    // [d_I]
    MkW gate_shexp, up_shexp, down_shexp;
    const float* gate_inp_shexp;  // [n_embd]
};

struct MkFnPass {
    const MkFnLayerW* layers;
    MkW out_hc_fn;              // output_hc_fn: [4 n_embd] x 4
    const float* out_hc_base;   // [4]
    const float* index_freq;    // [d_I / 2] the indexer's RoPE table
    float out_hc_scale;
    float hc_eps;
    float idx_q_scale;          // float(1 / sqrt(d_I))
    float idx_w_scale;          // float(1 / sqrt(H_I))
    int sinkhorn;               // hyper_connection.sinkhorn_iterations
    int repool;                 // measurement only (ARBOR_FN_REPOOL=1): score items re-pool their blocks first
    long long n_idx_head;       // H_I
    long long idx_dim;          // d_I
    long long budget;           // attention.indexer.top_k (cells)
    long long n_ff_shexp;

    // Buffers (device memory, sized for max_batch_tokens T). Scores rows are 64 * max_chunks
    // long (64 index blocks per 256-cell page), the buffer sized for the longest context seen.
    float* x4;       // [T][4][n_embd] the hyper-connection streams
    float* hcm;      // [T][24] the wrap's 24 dots (the head: its 4 dots, then pre at 8..11)
    float* hc;       // [T][24] pre (4), post (4), comb (16) of the current wrap
    float* idx_raw;  // [T][H_I * d_I + H_I] indexer query and head-weight dots
    float* iq;       // [T][H_I * d_I] rotated, scaled indexer queries
    float* iw;       // [T][H_I] scaled head weights
    float* scores;   // [T][64 * max_chunks] block scores
    int* sel;        // [T][budget / 4] selected blocks, increasing
    float* gs;       // [T] shared-expert gate
    float* hs;       // [T][n_ff_shexp] shared-expert activations
    quant::BlockQ8A* hsq;
};

// Index blocks per indexer score item: a warp scores them one after another, so a 31.9k-cell
// token gives about 1000 items for the grid's warps.
constexpr long long kMkFnScoreBlocks = 8;
constexpr long long kMkFnBlocksPerPage = 64;  // index blocks (4 cells) per 256-cell page

// flashnext's device ops (MkStage::op values 40..59, after mk_model.hpp's).
enum MkFnOp : int {
    kOpFnEmbedHc = 40,        // X4[t][i] = decoded embedding row, i = 0..3                 items: T
    kOpFnHcDots = 41,         // HcM[row][o] = fn_o . rms(X4[t])                             items: rows * 24 (head: * 4)
    kOpFnHcFinish = 42,       // Hc[t] = mix (head: pre); XN[row] = rmsnorm(sum pre_i X4[t][i]) (+ XQ)
                              //                                                            items: T (head: n_out)
    kOpFnIdxDots = 43,        // indexer rows 2j, 2j+1 for every token: q, w into idx_raw, keys into the cells
                              //                                                            items: (H_I d_I + H_I + d_I) / 2, rounded up per matrix
    kOpFnIdxFinish = 44,      // (t, j): j < H_I query head j (RoPE, scale); H_I: weights; H_I + 1: the
                              // pooled key of the block t completes                         items: T * (H_I + 2)
    kOpFnIdxScore = 45,       // (t, g): scores of blocks [8g, 8g + 8), a warp per block      items: T * 64 / 8 * max_chunks
    kOpFnIdxSelect = 46,      // Sel[t]: the top budget/4 blocks, in increasing order, by a workgroup  items: T
    kOpFnAttnChunk = 47,      // chunk ch of (g, t) over its attended cells   items: n_kv * T * max_chunks * head_parts
    kOpFnAttnCombine = 48,    // the non-empty chunks of (g, t) combined in order (+ AttQ), by a workgroup (mk_attn_combine_block)  items: as kOpAttnCombine
    kOpFnMatMulHcPost = 49,   // rows 2j, 2j+1 of W . Att[t]; the four streams' update       items: ceil(n_embd / 2)
    kOpFnSharedGate = 50,     // GS[t] = sigmoid(gate_inp_shexp . XN[t])                     items: T
    kOpFnSharedFfn = 51,      // HS[t][r] = silu(Wg[r] . XN[t]) * (Wu[r] . XN[t])            items: n_ff_shexp
    kOpFnSharedQuantize = 52, // HSQ[t]                                                     items: T
    kOpFnMoeDownHcPost = 53,  // rows 2j, 2j+1 of the routed + shared down combine; streams' update
                              //                                                            items: ceil(n_embd / 2)
    kOpFnLast = 59,
};

// Which wrap an HcDots / HcFinish stage is (MkModelStage::out_buf of those stages).
enum MkFnWrap : int { kFnWrapAttn = 0, kFnWrapFfn = 1, kFnWrapHead = 2 };

}  // namespace arbor::gpu
