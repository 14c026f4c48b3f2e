// The model pass as the megakernel sees it: the device copy of the weights' addresses, the
// model's dimensions, the pass buffers and the tokens of the current pass. Shared by host and
// device code; plain data only. The host backend (gpu_backend.hip) keeps one MkPass in device
// memory and rewrites its per-pass part before each launch.
//
// The GPU decomposes the pass plan's stages into its own work items (one warp per matmul row,
// per (kv head, token, chunk) of attention, ...), but every output element is computed by the
// same element and combine functions as the CPU (numerics.hpp, quant_blocks.hpp), in the same
// order, so the bits are the CPU's.
#pragma once

#include "arbor_vendor.hpp"

#include <cstdint>

// ARBOR_MK_EXPERT_PAIRS=1 (with ARBOR_MK_EXPERT_MAJOR): the expert-major gated-FFN items take
// their expert's routed pairs two at a time, both pairs' dots in one pass over the rows
// (warp_dot_quant_rows_acts, each output the single dot's bits), in a function of its own
// (mk_expert_gated_ffn_major_pairs, not inlined, so the rest of the entry compiles as without
// it); ARBOR_GPU_EXPERT_PAIRS=1 at run time: one at a time. Measured on the H200 (gpu-next18,
// docs/BENCHMARKS.md call 1): exact (371/0, 28/0, 10/0), the MoE's read50@229 66.0 to 59.7 ms and
// prefill256@229 279.9 to 240.9. On by default where ARBOR_MK_EXPERT_MAJOR is (NVIDIA). (The
// down items paired as well, measured on gpu-next17 at 7a723bd, were slower: 4.2 to 5.5 us.)
#ifndef ARBOR_MK_EXPERT_PAIRS
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
#define ARBOR_MK_EXPERT_PAIRS 1
#else
#define ARBOR_MK_EXPERT_PAIRS 0
#endif
#endif

// ARBOR_MK_MAJOR_ROWS=2 (with ARBOR_MK_EXPERT_PAIRS): an expert-major gated-FFN item takes two
// rows (2i, 2i + 1) of its expert's gate and up, so its route scan, its pairs' activation loads
// and its memory round trips serve four weight rows instead of two (warp_dot_quant_rows_acts<4,
// A>, each output the single dot's bits; mk_expert_gated_ffn_major_pairs<2>). With the routing of a
// random-weight file (synth --routed: about 3 pairs an expert in a read of 50 tokens) an item
// was mostly those round trips: 8.3 us, the stage 428 us a layer. Measured on the H200
// (gpu-next22, docs/BENCHMARKS.md calls 3-4): exact (371/0, 28/0, 10/0); `moer` read50@16384
// 136.8 to 133.4 ms, prefill256@16384 608.6 to 600.0 (the gated stage 428 to 382 us a layer);
// with every token on experts 0-7 (zero-data `moe`) read50 -0.3%, prefill256 +0.9%; decode
// unchanged. On by default on NVIDIA (AMD builds have no expert pairs); 1: one row an item. (Down
// items of four rows, ARBOR_MK_MAJOR_DOWN4 in the same calls, cost +1.6% on `moer`'s read50 and
// were taken out.)
#ifndef ARBOR_MK_MAJOR_ROWS
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
#define ARBOR_MK_MAJOR_ROWS 2
#else
#define ARBOR_MK_MAJOR_ROWS 1
#endif
#endif

// ARBOR_MK_DOWN_PAIRS=1 (with ARBOR_MK_EXPERT_PAIRS): an expert-major down item takes its
// expert's pairs two at a time, both pairs' dots in one pass over its two rows
// (warp_dot_quant_rows_acts<2, 2>, each output the single dot's bits), an odd last pair alone.
// Measured slower on gpu-next17 (4.2 to 5.5 us an item) when every token went to experts 0-7
// (50 pairs an item); with the routing spread (`moer`, about 3 pairs an expert in a read of 50)
// an item is 5.75 us of mostly round trips, two of which pairing merges into one. Measured on
// the H200 (gpu-next23, docs/BENCHMARKS.md calls 1 and 4): exact (371/0, 28/0, 10/0); `moer`
// read50@16384 -2.1%, prefill256@16384 -3.8%, decode and dense models unchanged. On by default
// on NVIDIA (AMD builds have no expert pairs).
#ifndef ARBOR_MK_DOWN_PAIRS
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
#define ARBOR_MK_DOWN_PAIRS 1
#else
#define ARBOR_MK_DOWN_PAIRS 0
#endif
#endif

// ARBOR_MK_ATTN_TOKENS=1: in a pass of many tokens over several chunks, an attention chunk item
// takes up to ARBOR_MK_ATTN_ROWS (below) / heads-an-item consecutive tokens; when they are of one
// context and each sees the chunk whole (the earlier chunks of a read or prefill at depth), the
// chunk's K and V are staged once for all of them instead of once a token (mk_attn_chunk_tokens,
// attn_chunk_cells' rows; ARBOR_GPU_ATTN_TOKENS=N at run time caps the tokens, 1: off). The bits
// do not change.
// Measured on the H200 (gpu-next18, docs/BENCHMARKS.md calls 3-7): exact (371/0, 28/0, 10/0);
// read50@16384 198.4 to 179.6 ms on the MoE and 220.8 to 164.6 on qwen3-4b, prefill256@16384
// 944.9 to 847.0 and 1062.7 to 758.1; decode@16384 +2%. On by default on NVIDIA; AMD builds keep
// it off until a gfx1151 run measures it (they compile it with -DARBOR_MK_ATTN_TOKENS=1).
#ifndef ARBOR_MK_ATTN_TOKENS
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
#define ARBOR_MK_ATTN_TOKENS 1
#else
#define ARBOR_MK_ATTN_TOKENS 0
#endif
#endif

// ARBOR_MK_ATTN_ROWS=32 (with ARBOR_MK_ATTN_TOKENS): a grouped chunk item takes up to 32 (token,
// head) rows instead of 16 (qwen3moe's 8 heads a KV head: 4 tokens, not 2), so a read or prefill
// at depth stages each earlier chunk's K and V half as often, runs half the items, and its o loop
// (attn_o_write<8, 2>: 16 chains a thread) converts each staged V element for twice the rows.
// The queries go to four blocks of 8 rows (attn_score_tiles_qreg<8, 4>); the stage left beside
// 32 rows' queries and scores is smaller, so K and V come in more pieces. Each row's arithmetic
// is the one-token item's: the bits do not change. Measured on the H200 (gpu-next23,
// docs/BENCHMARKS.md calls 3-4): exact (371/0, 28/0, 10/0); `moer` read50@16384 -7.9%,
// prefill256@16384 -10.0%, qwen3-4b -6.3% and -7.8%, decode unchanged. On by default on NVIDIA
// (where ARBOR_MK_ATTN_TOKENS is on); other builds keep 16. (The sums l in a lane each, one row a
// lane, measured no faster on top of it and were taken out; so was a 96 KiB arena, 1-2% slower.)
#ifndef ARBOR_MK_ATTN_ROWS
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
#define ARBOR_MK_ATTN_ROWS 32
#else
#define ARBOR_MK_ATTN_ROWS 16
#endif
#endif
static_assert(ARBOR_MK_ATTN_ROWS == 16 || ARBOR_MK_ATTN_ROWS == 32, "ARBOR_MK_ATTN_ROWS is 16 or 32");

// ARBOR_MK_SMEM_ASSUME=1: the functions that are not inlined into the entry and take the arena
// (the attention chunk, o and combine items, the tiles, the router's top-k, flashnext's blocks)
// tell the compiler their arena pointers are shared memory (arbor_assume_shared), so that they
// read it by shared-memory loads instead of generic ones. The bits do not change. Measured on the
// H200 (gpu-next19, docs/BENCHMARKS.md calls 1-4): exact (371/0, 28/0, 10/0); the MoE's
// read50@16384 179.5 to 151.7 ms, prefill256@16384 848.2 to 709.1, decode@16384 11.63 to 11.00,
// decode@229 8.05 to 7.89. On by default on NVIDIA; AMD builds keep it off until a gfx1151 run
// (there it takes the default build's spills from 202 to 138).
#ifndef ARBOR_MK_SMEM_ASSUME
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
#define ARBOR_MK_SMEM_ASSUME 1
#else
#define ARBOR_MK_SMEM_ASSUME 0
#endif
#endif

// ARBOR_MK_ATTN_O_GROUPS=1: the o loop of an attention chunk item loads the eight cells' weights
// of all of a thread's heads (up to 8 at once) before any FMA, then takes the cells in order with
// the heads interleaved (each head's o still the same fmaf chain, cell after cell), instead of
// one head after another behind a branch (each head's loads, then its eight dependent FMAs).
// The bits do not change. Measured on the H200 with ARBOR_MK_SMEM_ASSUME (gpu-next19): exact; over
// that switch alone the MoE's read50@16384 151.7 to 145.9 ms, prefill256@16384 709.1 to 678.6,
// decode@16384 11.00 to 10.73, decode@229 7.89 to 7.74 (qwen3-4b: 143.4 to 139.3, 653.0 to 630.8).
// On by default on NVIDIA; AMD builds keep it off until a gfx1151 run.
#ifndef ARBOR_MK_ATTN_O_GROUPS
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
#define ARBOR_MK_ATTN_O_GROUPS 1
#else
#define ARBOR_MK_ATTN_O_GROUPS 0
#endif
#endif

// ARBOR_MK_O_PAIR_GROUP=4 (with ARBOR_MK_ATTN_O_GROUPS): where a thread takes two dims (f16 V,
// ARBOR_MK_O_PAIRS), its heads' weights are loaded four heads at a time, not eight. The 32-row
// items' o loop (attn_o_write<8, 2>) holds 64 weights, 16 V elements and 16 o chains at once:
// ptxas (sm_90, -O3) spills 320/372 bytes there, where <4, 2> spills 176/176 (160/160 is every
// small instance's floor); with groups of four, 192/192 (flashnext's <8, 2>: 292/928 to
// 180/248). Each head's o is still the same chain, cell after cell: the bits do not change.
// Measured on the H200 (gpu-next24, docs/BENCHMARKS.md calls 1, 2 and 4): exact (371/0, 28/0,
// 10/0); the o phase of the 32-row items 13% shorter, `moer` read50@16384 -1.3% and
// prefill256@16384 -1.2% (qwen3-4b -0.6% and -1.0%), decode unchanged. 4 by default on NVIDIA
// (AMD builds take two dims a thread only with ARBOR_MK_O_PAIRS, off there: 8).
#ifndef ARBOR_MK_O_PAIR_GROUP
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
#define ARBOR_MK_O_PAIR_GROUP 4
#else
#define ARBOR_MK_O_PAIR_GROUP 8
#endif
#endif
static_assert(ARBOR_MK_O_PAIR_GROUP == 4 || ARBOR_MK_O_PAIR_GROUP == 8, "ARBOR_MK_O_PAIR_GROUP is 4 or 8");

// ARBOR_MK_F16_GROUPS=1: the attention's K staging and o loop convert f16 K and V elements eight
// at a time by the hardware's conversion alone, and take fp16_to_f32 (its NaN select, about six
// instructions an element) for the eight only when their sum is a NaN (any of them a NaN, or an
// infinity against another): the same bits, for about a third of the instructions. Measured on
// the H200 (gpu-next19, docs/BENCHMARKS.md calls 5-7): exact (371/0); the MoE's read50@16384
// 145.9 to 141.6 ms, prefill256@16384 677.5 to 655.8, decode@16384 10.84 to 10.66, decode@229
// 7.91 to 7.76 (qwen3-4b: 139.2 to 135.8, 630.1 to 614.9). On by default on NVIDIA; AMD builds
// keep it off until a gfx1151 run. With ARBOR_MK_SCORE_UNROLL the raw f16 score tiles take it too.
#ifndef ARBOR_MK_F16_GROUPS
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
#define ARBOR_MK_F16_GROUPS 1
#else
#define ARBOR_MK_F16_GROUPS 0
#endif
#endif

// ARBOR_MK_SCORE_QREG=1: an attention chunk item of 5 to 16 rows (reads and prefills: 16 on
// the MoE, 8 in its decode) with head dims up to 128 keeps its queries in registers for the scores
// (attn_score_tiles_qreg in mk_block_ops.hpp): a warp's tile loads its cells' K elements alone,
// 16 loads a lane for 128 multiply-adds where mkb::score_tile<8, 4> loaded 48. Items of more than 8
// rows take them as two blocks of 8 rows on four warps each (one block of 16 on all eight
// warps spilled 92/116 bytes and measured no faster). The bits do not change. Measured on the
// H200 (gpu-next20, docs/BENCHMARKS.md): exact (356/0); the MoE's read50@16384 141.4 to 134.6 ms,
// prefill256@16384 654.3 to 619.4, decode@16384 10.70 to 10.59 (qwen3-4b: 135.7 to 130.8, 614.1
// to 586.4). On by default on NVIDIA; AMD builds keep it off until a gfx1151 run.
#ifndef ARBOR_MK_SCORE_QREG
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
#define ARBOR_MK_SCORE_QREG 1
#else
#define ARBOR_MK_SCORE_QREG 0
#endif
#endif

// ARBOR_MK_O_PAIRS=1: in an attention chunk item of 8 or more heads a thread (reads and prefills:
// 16 rows of 128 dims) with f16 V rows, the o loop's thread takes two adjacent dims of half as
// many heads (attn_o_write<HM, 2>): per 8 cells 8 four-byte V loads and 8 weight words (4 heads)
// where it took 8 two-byte V loads and 16 weight words (8 heads), for the same 64 FMAs and fewer
// registers (weights 32 against 64). Each (head, dim)'s o is the same fmaf chain over the cells
// in order: the bits do not change. Measured on the H200 (gpu-next21, docs/BENCHMARKS.md):
// exact (371/0, 28/0, 10/0); read50@16384 134.7 to 129.7 ms on the MoE, 130.5 to 126.8 on
// qwen3-4b, prefill256@16384 617.3 to 593.2 and 585.0 to 566.3; decode rows within their
// rounds' spread (their items take one or two heads a thread, not this path). On by default on
// NVIDIA; AMD builds keep it off until a gfx1151 run.
#ifndef ARBOR_MK_O_PAIRS
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
#define ARBOR_MK_O_PAIRS 1
#else
#define ARBOR_MK_O_PAIRS 0
#endif
#endif

namespace arbor::quant {
struct BlockQ8A;
}

namespace arbor::gpu {

struct MkFnPass;  // flashnext's part of the pass (mk_flashnext.hpp)

// A matrix (or a stack of expert matrices) in device memory.
struct MkW {
    const uint8_t* data;
    unsigned long long row_bytes;
    unsigned long long mat_bytes;
    long long rows;
    long long cols;
    int type;  // arbor::TensorType
    int pad;
};

struct MkLayerW {
    MkW wq, wk, wv, wo;
    MkW gate, up, down;                        // dense FFN
    MkW gate_inp, gate_exps, up_exps, down_exps;  // experts
    const float* attn_norm;
    const float* ffn_norm;
    const float* q_norm;  // null without qk norm
    const float* k_norm;
    const float* bq;      // null without biases
    const float* bk;
    const float* bv;
};

struct MkDims {
    long long n_embd, n_head, n_head_kv, hd_k, hd_v, n_rot, n_ff, n_vocab;
    long long n_expert, n_used, n_ff_exp;
    float rms_eps, attn_scale, rope_mscale;
    int rope_neox;
    int qk_norm;
    int norm_topk;
    // KV page layout (arbor/kv_cache.hpp): per layer the K block [n_head_kv][256][hd_k], then
    // the V block [n_head_kv][256][hd_v], elements of elem_bytes (2: IEEE half, 4: float).
    long long kv_elem_bytes;
    unsigned long long kv_layer_bytes;
};

struct MkPass {
    MkDims d;
    const MkLayerW* layers;
    MkW tok_embd;
    MkW output;
    const float* output_norm;
    const float* rope_freq;  // [n_rot/2]

    // The current pass.
    long long n_tokens;
    long long n_out;
    long long max_chunks;        // attention chunks of the longest sequence in the pass
    // 1: a decode pass (one token a sequence) whose sequences' K and V cells, over the layers,
    // are at least the L2's size; ARBOR_MK_KV_EVICT_FIRST builds stage its decode items' K and V
    // evict-first. 0 otherwise (and in every other build).
    long long kv_stream;
    const int* token;            // [T]
    const int* pos;              // [T]
    const int* seq;              // [T] index into pages
    const int* out_token;        // [n_out]
    uint8_t* const* pages;       // [n_seq][pages_stride] page addresses
    long long pages_stride;

    // Buffers (device memory, sized for max_batch_tokens).
    float* x;          // [T][n_embd]
    float* xn;         // [T][n_embd]
    quant::BlockQ8A* xq;
    float* rope;       // [T][n_rot/2][2]
    float* qkv;        // [T][n_head*hd_k + n_head_kv*(hd_k + hd_v)] raw projections
    float* q;          // [T][n_head*hd_k]
    float* att;        // [T][n_head*hd_v]
    quant::BlockQ8A* attq;
    float* attn_part;  // [T][n_head_kv][max_chunks][group][hd_v + 2]
    float* h;          // [T][n_ff]
    quant::BlockQ8A* hq;
    float* router;     // [T][n_expert] logits, then probabilities
    int* route_idx;    // [T][k]
    float* route_w;    // [T][k]
    float* he;         // [T][k][n_ff_exp]
    quant::BlockQ8A* heq;
    float* logits;     // [n_out][n_vocab]
    float* ye;         // [kMkDownSplitTokens][k][n_embd] the expert down dots (ARBOR_MK_DOWN_SPLIT)
    // ARBOR_MK_FUSE_TAILS / ARBOR_MK_DOWN_SPLIT: one counter per dependency of a stage with a
    // tail (the items of a Q/K/V head, of a Q8A block of H or HE, of an expert down row pair),
    // zero between stages: the warp whose count completes a dependency runs its tail and sets
    // the counter back to zero. At most one stage with a tail runs in a kernel level (the plans
    // give each such stage a level of its own), since they share these counters.
    unsigned* dep;
    const MkFnPass* fn;     // flashnext's weights and buffers (device memory); null otherwise
};

// Floats of the workgroup's shared-memory arena (mk_block_ops.hpp): with flashnext's selection
// histogram (8 KiB) just under the 48 KiB of static shared memory. It holds a staged
// activation row (n_embd below this), or an attention chunk's q and scores
// (group * (hd_k + 256) + 2 kMkAttnRows floats) plus the K/V rows it stages, at least
// kMkStageFloats.
// ARBOR_MK_SMEM_FLOATS above 10176 (NVIDIA: up to about 28000 with two workgroups an SM) makes the
// arena dynamic shared memory (megakernel.hip, mk_launch.hip), so that an attention chunk stages
// its K and V rows in fewer, larger pieces. kernels/CMakeLists.txt sets 20480 (80 KiB) for CUDA
// builds whose architectures are all sm_90 to sm_11x; every other build keeps 10176, static.
#ifndef ARBOR_MK_SMEM_FLOATS
#define ARBOR_MK_SMEM_FLOATS 10176
#endif
constexpr int kMkSmemFloats = ARBOR_MK_SMEM_FLOATS;
constexpr bool kMkSmemDynamic = ARBOR_MK_SMEM_FLOATS > 10176;
constexpr int kMkSmemDynamicBytes = kMkSmemDynamic ? kMkSmemFloats * 4 : 0;  // the launch's dynamic shared memory
constexpr int kMkStageFloats = 2048;
// The most (token, head) rows an attention chunk item takes (ARBOR_MK_ATTN_ROWS; a group's heads
// are at most 16): the item keeps a maximum and a sum for each.
constexpr int kMkAttnRows = ARBOR_MK_ATTN_ROWS;

// The MatMulAdd tiles of many-token passes (mk_tile_ops.hpp): rows x tokens per workgroup item.
// A range stages kTileRows rows of 32 sub-blocks (at most 1088 bytes, Q8_0) and kTileTokens
// tokens' 32 Q8A blocks (40 bytes each) in the arena.
constexpr int kTileRows = 16;
constexpr int kTileTokens = 8;
constexpr int kQ8ABytes = 40;  // sizeof(quant::BlockQ8A), asserted in arbor/quant.hpp (declared only here)
static_assert(kTileRows * 32 * 34 + 16 + kTileTokens * 32 * kQ8ABytes <= kMkSmemFloats * 4,
              "a tile range (Q8_0 rows, the widest) must fit the arena");

// ARBOR_MK_TILE_IMMA (gpu-next29, the issue's lever "exact integer matrix instructions for
// prefill": the tiles' integer dots by mma.sync s8 on NVIDIA) measured exact but slower in
// gpu-next30 (qwen3-4b read50@229 +11%, prefill256@229 +9%): at 16 rows x 8 tokens an item each
// mma replaces four dp4a a lane and costs the codes' byte stores, two barriers and the dots' trip
// through the arena. Taken out of the source (docs/BENCHMARKS.md "gpu-next30"; commit a75e4c5
// has it); an integer-matrix tile would need many more tokens an item.

// Model stage ops (MkStage::op values of the model; see mk_program.hpp for the others).
enum MkModelOp : int {
    kOpEmbed = 10,          // X[t] = decoded embedding row                      items: T
    kOpRopeTable = 11,      // Rope[t]                                           items: T
    kOpRmsNorm = 12,        // XN[row] = rmsnorm(X[t]) * w (+ XQ)                items: (T or n_out) * norm_parts
    kOpQkvDots = 13,        // qkv[t][r] = W_qkv[r] . XN[t] (+ bias)             items: qkv rows / 2
    kOpQkvFinish = 14,      // q/k norm, RoPE; Q -> q, K/V -> the token's cell   items: (n_head + 2 n_kv) * T
    kOpAttnChunk = 15,      // one 256-cell chunk of the attention of (g, t)     items: n_kv * T * max_chunks * head_parts
    kOpAttnCombine = 16,    // chunks of (g, t, head part) combined in order (+ AttQ)  items: attn_combine_items
    kOpQuantize = 17,       // Q8A block of a buffer's row                       items: rows * width / 32
    kOpMatMulAdd = 18,      // X[t][r] += W[r] . in[t]                           items: W rows / 2
    kOpGatedFfn = 19,       // H[t][r] = silu(Wg[r].XN[t]) * (Wu[r].XN[t])       items: n_ff
    kOpMatMulStore = 20,    // out[t][r] = W[r] . in[t] (router logits, LM head) items: W rows / 2 (row_items: W rows; token_items: x tokens)
    kOpRouterSelect = 21,   // softmax, top-k, weights (a workgroup, or its warp 0) items: T
    kOpExpertDownDots = 22, // YE[pair][r] = Wd_e[r] . HE[pair], 2 rows; the combine as the tail (ARBOR_MK_DOWN_SPLIT)  items: (n_embd + 1) / 2 * T * k
    kOpExpertGatedFfn = 23, // HE row r of the expert of (token, slot) pair      items: T * k * n_ff_exp
    kOpExpertDownAdd = 24,  // X[t][r] += sum over slots of w_k (Wd_e(k)[r] . HE) items: n_embd / 2
    kOpMatMulAddTile = 25,  // MatMulAdd by 16-row x 8-token workgroup tiles      items: row tiles * token tiles
    kOpGatedFfnTile = 26,   // GatedFfn by 8-row x 8-token workgroup tiles        items: row tiles * token tiles
    kOpQkvDotsTile = 27,    // QkvDots by 16-row x 8-token workgroup tiles        items: row tiles * token tiles
    // ARBOR_MK_EXPERT_MAJOR: the expert FFN of a pass of many tokens by (expert, row) items.
    kOpExpertGatedFfnMajor = 28,  // HE row r of every pair routed to expert e   items: n_expert * n_ff_exp / major_rows
    kOpExpertDownMajor = 29,      // YE[pair][2i, 2i+1] of every pair routed to e items: n_expert * ((n_embd + 1) / 2)
    kOpExpertDownCombine = 30,    // X[t][r] += slot-order chain of YE, a row a lane  items: T * ceil(n_embd / 32)
    // 40..59: flashnext's ops (mk_flashnext.hpp).
};

// Which buffer a stage reads (MkModelStage::buf).
enum MkBuf : int { kBufXN = 0, kBufAtt = 1, kBufH = 2, kBufHE = 3, kBufRouter = 4, kBufLogits = 5 };

// Attention chunk items per chunk (MkModelStage::head_parts): the q heads of a KV head are
// independent through the whole chunk (scores, softmax, o), so a pass with fewer chunk items
// than workgroups (a decode step) splits each chunk's heads over up to `group` items, the
// largest divisor p of group that keeps the items within the grid and each part's output span
// ((group / p) * hd_v values) whole Q8A blocks, which a one-chunk item quantizes itself. The
// bits do not change: each head's arithmetic is the same whichever item runs it. (Two heads an
// item at least, ARBOR_MK_ITEM_HEADS_MIN=2 in commit eefce95: the probe's level +0.2 to +0.5 us.
// A one-chunk pass's attention as two levels instead, scores by 32-cell slices and o by 32-dim
// slices of every head of a KV head, ARBOR_MK_ATTN_SPLIT in commit b6386e6: exact, each item
// copying 8-15 KiB where a head-split item copies 58 KiB of K and of V, but the two levels took
// 8 + 11 us against the one's 22 and a barrier more: decode@229 within the spread, gpu-next48.)
inline int attn_head_parts(long long chunk_items, long long group, long long hd_v, long long workgroups) {
    int best = 1;
    for (long long p = 2; p <= group; ++p)
        if (group % p == 0 && chunk_items * p <= workgroups && (group / p) * hd_v % 32 == 0) best = static_cast<int>(p);
    return best;
}

// Threads of a megakernel workgroup (mk_launch.hip launches the grid with them).
constexpr int kMkBlockThreads = 256;

// An attention chunk's score tiles (mkb::score_tile): a warp takes 32 (head, cell) dots of a
// staged K piece as attn_tile_heads(gh) heads x attn_tile_cells(gh) cells (one head: 16 cells,
// each dot in two lanes). A piece holds whole tiles, so the stage must fit attn_tile_cells rows
// (gpu_backend.hip checks it for every head count an item can take).
__host__ __device__ inline int attn_tile_heads(int gh) { return gh > 4 ? 8 : gh > 2 ? 4 : gh; }
__host__ __device__ inline int attn_tile_cells(int gh) { return gh == 1 ? 16 : 32 / attn_tile_heads(gh); }
// Floats of an attention chunk item's stage with gh heads: the arena less their queries
// (gh * hd_k), scores (gh * 256) and 2 kMkAttnRows floats of maxima and sums (mkb attn_chunk_cells).
__host__ __device__ inline long long attn_stage_floats(long long gh, long long hd_k) {
    return kMkSmemFloats - gh * (hd_k + 256) - 2 * kMkAttnRows;
}

// Q heads per attention combine item (mk_attn_combine_block, a thread per (head, dim)): the
// largest divisor hp of group with hp * hd_v within a workgroup's threads and whole Q8A blocks
// (the item quantizes its span); the whole group when no divisor fits. A decode step's combine
// level then has n_kv * group / hp items instead of n_kv. The bits do not change: each head's
// arithmetic is the same whichever item runs it.
__host__ __device__ inline int attn_combine_heads(long long group, long long hd_v) {
    for (long long hp = group; hp >= 1; --hp)
        if (group % hp == 0 && hp * hd_v <= kMkBlockThreads && hp * hd_v % 32 == 0) return static_cast<int>(hp);
    return static_cast<int>(group);
}
// RMSNorm items per row (MkModelStage::norm_parts): in a pass of few rows, the row's elements
// and Q8A blocks are split over items of the largest span of 256, 128, 64 or 32 elements that
// makes at least two (256: a Q8A block a warp), each item computing the row's scale itself, the
// same chain in the same order; 1 (one item a row) when n is no multiple of 32, is below 64, or
// the split rows would not fit in one round of the grid's workgroups (any pass that fits splits,
// a decode step's above all).
inline int mk_norm_parts(long long rows, long long n, long long workgroups) {
    for (long long span = 256; span >= 32; span /= 2)
        if (n % span == 0 && n / span >= 2) return rows * (n / span) <= workgroups ? static_cast<int>(n / span) : 1;
    return 1;
}

// The combine level's items: (KV head, token, head part).
inline long long attn_combine_items(long long n_kv, long long tokens, long long group, long long hd_v) {
    return n_kv * tokens * (group / attn_combine_heads(group, hd_v));
}

struct MkModelStage {
    const MkPass* pass;  // device address
    int layer;
    int buf;             // input (MatMul*) or the quantized buffer (Quantize)
    int out_buf;         // MatMulStore: kBufRouter or kBufLogits
    int quantize_out;
    int outputs_only;
    int direct;          // AttnChunk: the pass has one chunk per token; write Att (and AttQ) directly
    int head_parts;      // AttnChunk, FnAttnChunk: items per chunk, each 1/head_parts of the group's q heads
    int norm_parts;      // RmsNorm: items per row (mk_norm_parts), each 1/norm_parts of its elements and Q8A blocks
    int row_items;       // MatMulStore: an item is one row (of a float type: F32, F16, BF16), not two
    int token_items;     // MatMulStore (the router): an item is one token's row or row pair, item t * units + u
    // Fields of compile-time switches are here whether the switch is on or not: a layout that
    // followed the switches broke the program when two translation units saw different ones
    // (gpu-next18: ARBOR_MK_EXPERT_PAIRS's default was decided from a vendor macro mk_launch.hip
    // had not yet defined; arbor_vendor.hpp now decides it in every unit).
    int attn_tokens;     // AttnChunk: tokens an item takes (1: one; ARBOR_MK_ATTN_TOKENS builds' mk_attn_chunk_tokens)
    int pair_batch;      // ExpertGatedFfnMajor: routed pairs a dot takes at once (1 or 2; ARBOR_MK_EXPERT_PAIRS builds)
    int major_rows;      // ExpertGatedFfnMajor: rows of gate and up an item takes (1 or 2; ARBOR_MK_MAJOR_ROWS builds)
    int fold_finish;     // AttnChunk of a one-token pass: the Q/K/V finish is done by the chunk items (no level of its own)
    const float* norm;   // RmsNorm weight
    MkW w;               // MatMulAdd / MatMulStore
    // The layer's weight record: the device address of pass->layers[layer] (null for a stage
    // outside the layers), or with ARBOR_MK_SMEM_DESC the workgroup's shared copy of it.
    const MkLayerW* lw;
    // ARBOR_MK_FUSE_TAILS / ARBOR_MK_DOWN_SPLIT: the stage's items count into P.dep, and the
    // warp that completes a dependency runs what was the next level's work on it (mk_dep_tail):
    // the norm and RoPE of a Q/K/V head (QkvDots), the Q8A block of H (GatedFfn) or of HE
    // (ExpertGatedFfn), the slot-order combine of an expert down row pair (ExpertDownDots).
    int dep_tail;
};
// Every translation unit that copies stage records (mk_launch.hip) or reads them (megakernel.hip)
// must see this one layout; a switch that changed it broke every pass (gpu-next18). Change the
// number only with the fields.
static_assert(sizeof(MkModelStage) == 136, "MkModelStage's layout changed: update every translation unit");

// ARBOR_MK_SMEM_DESC=1: each workgroup copies the next level's first stages, their pass and
// their layer record into shared memory while it waits at the grid barrier (megakernel.hip,
// mk_desc.hpp), and the ops read their layer record through MkModelStage::lw, so that an item's
// first loads are its weights, not a chain of descriptor loads from L2. Off: measured at noise
// level on the H200 (gpu-next14, docs/BENCHMARKS.md).
#ifndef ARBOR_MK_SMEM_DESC
#define ARBOR_MK_SMEM_DESC 0
#endif

// ARBOR_MK_FUSE_TAILS=1: in a pass of fewer than kTileTokens tokens, the Q/K/V finish and the FFN
// Q8A blocks run as the tails of the dot stages before them, behind per-dependency counters,
// where each took a level of its own (docs/GPU.md). Off by default: slower on the H200.
#ifndef ARBOR_MK_FUSE_TAILS
#define ARBOR_MK_FUSE_TAILS 0
#endif

// ARBOR_MK_BARRIER_TAILS=1: a level that is one small workgroup stage (a decode step's RMSNorm
// or router select, at most kMkTailItems items) runs in the last workgroup to arrive at the grid
// barrier before it, which then arrives at that level's barrier for everyone: the level costs no
// barrier of its own. Off: slower on the H200 (gpu-next14); kept for gfx1151, not measured there.
#ifndef ARBOR_MK_BARRIER_TAILS
#define ARBOR_MK_BARRIER_TAILS 0
#endif
constexpr long long kMkTailItems = 2;

// ARBOR_MK_PROLOGUES=1 (gpu-next34; on by default on NVIDIA, where the barrier tails are off): in a
// one-token pass, a level of one workgroup stage followed by a level of one consumer stage (named
// below) becomes the consumer's prologue: every workgroup runs all of its items, then its share
// of the consumer, with no grid barrier between (gpu_backend.hip, megakernel.hip). Each workgroup
// reads what it wrote itself; the others write the same bytes, so the bits do not change (356/0,
// 25/0). Later levels read the prologue's output behind their barriers as before. In a profile a
// prologue's item clocks count its items once for every workgroup that ran them (all of them).
// ARBOR_GPU_PROLOGUES=N picks them (0: none):
// - bit 2 (the default): the router select before the expert gated FFN (16 words written). On an
//   H100, `moer` decode@229 -0.02 to -0.24 ms in five rounds (median -0.15, -2.2%), decode@16384
//   +0.01 to +0.12, flashnext within the spread (docs/BENCHMARKS.md "gpu-next34", calls 11-12);
// - bit 1: an RMSNorm before the Q/K/V dots, a dense gated FFN, the router logits or the LM head
//   (one item a row, mk_rms_norm_block: the same scale chain, elements and Q8A blocks). Measured
//   +1.0 ms on `moer` and +1.35 on qwen3-4b at decode@229 (call 7), about 14 us for each barrier
//   removed: most likely 132 workgroups storing the same 10 KiB of XN and XQ lines while the
//   dots read them (not measured apart from the whole-row norm's own time).
// AMD builds: off until a gfx1151 run measures it.
#ifndef ARBOR_MK_PROLOGUES
#if defined(ARBOR_GPU_VENDOR_NVIDIA) && !ARBOR_MK_BARRIER_TAILS
#define ARBOR_MK_PROLOGUES 1
#else
#define ARBOR_MK_PROLOGUES 0
#endif
#endif
#if ARBOR_MK_PROLOGUES && ARBOR_MK_BARRIER_TAILS
#error "ARBOR_MK_PROLOGUES and ARBOR_MK_BARRIER_TAILS both take a decode step's small levels"
#endif
// Workgroup items are dealt from the last workgroup down. Dealing a level of few attention chunk
// items over the whole grid instead (ARBOR_MK_ATTN_SPREAD, gpu-next46; 06ca8f2 has it) took the
// decode item 20.8 to 20.1 us (K stage 2.11 to 1.98, V 4.71 to 4.13, one profiled pass; the
// attention probe's ARBOR_PROBE_SPREAD=8: K 3.97 to 2.38, V unchanged), but the dealing's
// arithmetic made the other levels slower: decode@229 +0.10 to +0.24 ms. Out.

// ARBOR_MK_DOWN_SPLIT=1: a pass of at most kMkDownSplitTokens tokens runs the expert down
// projection as one item per (row pair, slot) (kOpExpertDownDots), where one item ran a row
// pair's slots one after another; the warp completing a row pair's slots combines them in slot
// order into X (mk_dep_tail). Off: slower on the H200 (gpu-next14); kept for gfx1151.
#ifndef ARBOR_MK_DOWN_SPLIT
#define ARBOR_MK_DOWN_SPLIT 0
#endif
constexpr long long kMkDownSplitTokens = 8;
#ifdef ARBOR_MK_DEP_TAILS
#error "ARBOR_MK_DEP_TAILS is derived: set ARBOR_MK_FUSE_TAILS or ARBOR_MK_DOWN_SPLIT"
#endif
#define ARBOR_MK_DEP_TAILS (ARBOR_MK_FUSE_TAILS || ARBOR_MK_DOWN_SPLIT)

// ARBOR_MK_DOWN_SLOT_PAIRS=1: a token-major expert down item (a decode step's: rows 2i and 2i + 1
// over the token's 8 slots) takes its slots two at a time, both slots' experts' rows and both
// activations in one pass (warp_dot_quant_row_groups<Fmt, 4, 2>), where each slot's dots waited for the one
// before. Each dot keeps its bits, and the fmaf chain over the slots its order. A decode step
// of `moer` at 229 cells (profile, gpu-next24): the item is 14 us of mostly memory round trips,
// 8 slot dots one after another, and the stage's slowest item 18.3 us. Measured on the H200
// (gpu-next24, docs/BENCHMARKS.md calls 5-6, one round): exact (371/0, 28/0, 10/0); `moer`
// decode@229 7.02 to 6.91 ms, decode@16384 10.58 to 10.52 (predicted -0.25 each), within about a
// round's spread, and its reads (which do not take the path) 0.4-1.4% slower. Off until a
// three-round A/B decides it.
#ifndef ARBOR_MK_DOWN_SLOT_PAIRS
#define ARBOR_MK_DOWN_SLOT_PAIRS 0
#endif
// ARBOR_MK_LEAN_DOWN_SLOTS=S (gpu-next38; 1 = off): the lean expert down (mkl::down_loop, a decode
// step's) takes its token's slots S at a time, the S experts' rows and activations in one pass,
// where each of the 8 slot dots waited for the one before (`moer`'s expert down level: 10-11 us a
// layer). The same dots' bits and the same fmaf chain in slot order. S = 4 is NVIDIA's default
// (where the lean dots are): exact (356/0, 25/0); H100, against main in one call, three rounds:
// the expert down level -15 to -17% (497-500 to 416-425 us summed over `moer`'s 48 layers), `moer`
// decode@229 -0.02 to -0.13 ms alone (calls 5-6), with ARBOR_MK_LUT_NIBBLES -0.12 to -0.20;
// S = 2 took less off (docs/BENCHMARKS.md "gpu-next38").
#ifndef ARBOR_MK_LEAN_DOWN_SLOTS
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
#define ARBOR_MK_LEAN_DOWN_SLOTS 4
#else
#define ARBOR_MK_LEAN_DOWN_SLOTS 1
#endif
#endif
#if ARBOR_MK_LEAN_DOWN_SLOTS != 1 && ARBOR_MK_LEAN_DOWN_SLOTS != 2 && ARBOR_MK_LEAN_DOWN_SLOTS != 4 && ARBOR_MK_LEAN_DOWN_SLOTS != 8
#error "ARBOR_MK_LEAN_DOWN_SLOTS is 1, 2, 4 or 8"
#endif

// ARBOR_MK_ASYNC_STAGE=1: an attention chunk item whose whole chunk of f16 K rows fits the arena
// raw (a decode step's items: up to 8 rows, 256 cells of 128 dims in 64 KiB) stages them in one
// piece by cp.async (attn_scores_raw in mk_block_ops.hpp; NVIDIA sm_80 and later, elsewhere plain
// copies), with no conversion in the stage: the score tiles convert each element as they load
// it, once, as the stage did. Every item's dense V pieces are staged by cp.async as well. Each
// thread's copies are all in flight at once and hold no registers. The same values reach the
// same chains and trees: the bits do not change. Measured on the H200 (gpu-next25,
// docs/BENCHMARKS.md calls 1-2, three rounds): exact (371/0, 28/0, 10/0); `moer` decode@16384
// 10.49 to 9.87 ms, decode@229 6.90 to 6.80, read50@16384 117.5 to 115.6, prefill256@16384 504.4
// to 493.8; qwen3-4b 8.58 to 7.75, 5.17 to 5.03, 117.8 to 115.1, 516.5 to 506.7. The decode
// item's K stage (profile, `moer` at 229 cells) went from two pieces of 3.8 us to one of 4.0;
// each stage is now about 15 GB/s of one SM, bandwidth more than round trips. On by default on
// NVIDIA; AMD builds keep it off until a gfx1151 run (they would take plain copies).
#ifndef ARBOR_MK_ASYNC_STAGE
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
#define ARBOR_MK_ASYNC_STAGE 1
#else
#define ARBOR_MK_ASYNC_STAGE 0
#endif
#endif

// ARBOR_MK_BULK_STAGE=1 (with ARBOR_MK_ASYNC_STAGE, NVIDIA sm_90): a decode item's spans (its raw
// K chunk, and the V pieces of items of up to 8 rows) go by the copy engine, one cp.async.bulk a
// span issued by one thread, completing on a shared-memory mbarrier (mk_bulk_issue and
// mk_bulk_wait in mk_block_ops.hpp); the reads' and prefills' V pieces keep cp.async. Measured
// on every span (gpu-next26, docs/BENCHMARKS.md calls 3-5, five rounds of `moer`): exact
// (371/0, 28/0, 10/0); the decode item's K and V stages 4.0 to 3.1 us each at 229 cells,
// decode@229 6.84 to 6.77 ms, decode@16384 9.99 to 9.95, but read50@16384 +0.1% and
// prefill256@16384 +0.3% (their V pieces), hence decode items only now; a copy a lane of
// warp 0 instead of one was slower. Outside the megakernel (arbor-gpu-stage-probe, the same
// calls) cp.async is the faster copy: 1.1-1.3 us for 58 KiB cold, the bulk copy 1.4-1.7. The
// same bytes land: the bits do not change.
#ifndef ARBOR_MK_BULK_STAGE
#define ARBOR_MK_BULK_STAGE 0
#endif
#if ARBOR_MK_BULK_STAGE && !ARBOR_MK_ASYNC_STAGE
#error "ARBOR_MK_BULK_STAGE replaces ARBOR_MK_ASYNC_STAGE's copies"
#endif
#if ARBOR_MK_BULK_STAGE != 0 && ARBOR_MK_BULK_STAGE != 1
#error "ARBOR_MK_BULK_STAGE is 0 or 1"
#endif
// ARBOR_MK_KV_EVICT_FIRST=1 (with ARBOR_MK_ASYNC_STAGE, NVIDIA sm_80 and later): in a decode pass
// whose KV cells outweigh the L2 (MkPass::kv_stream, set by the host), a decode item's cp.async
// copies of its raw K chunk and its V pieces carry an L2 evict-first policy (createpolicy,
// cp.async ... .L2::cache_hint), as the weights' loads do (ARBOR_MK_STREAM_W). `moer` at 16384
// cells reads 33.5 MB of K and V a layer (1.6 GB a step) through the H200's 60 MB L2, and at the
// default priority they evicted what the next levels read again: their code, descriptors and
// activations. The same bytes land: the bits do not change. Measured on the H200 (gpu-next29,
// docs/BENCHMARKS.md calls 1-6): exact (371/0, 28/0, 10/0, with ARBOR_GPU_KV_STREAM=1 so every
// decode step of the suite takes it); `moer` decode@16384 9.93 to 8.86 ms (three rounds),
// decode@32000 12.54 to 11.34, decode@4096 7.93 to 7.76, decode@229 unchanged (the pass does not
// stream); qwen3-4b decode@16384 7.77 to 7.19. Reads and prefills do not take it and moved by code
// layout alone: `moer`'s read50@16384 0.6% faster, qwen3-4b's read and prefill 0.1-0.2% slower. Nsight Compute on `moer`'s step at 16384
// cells: 9.60 to 8.48 ms, the barrier stall 9.4 to 8.2 cycles an issued instruction. With
// ARBOR_MK_BULK_STAGE, a streamed pass's spans keep cp.async (the bulk copies would drop the
// policy). On by default wherever ARBOR_MK_ASYNC_STAGE is (NVIDIA).
#ifndef ARBOR_MK_KV_EVICT_FIRST
#define ARBOR_MK_KV_EVICT_FIRST ARBOR_MK_ASYNC_STAGE
#endif
#if ARBOR_MK_KV_EVICT_FIRST && !ARBOR_MK_ASYNC_STAGE
#error "ARBOR_MK_KV_EVICT_FIRST marks ARBOR_MK_ASYNC_STAGE's copies"
#endif
// ARBOR_MK_LSUM_V4=1: an attention chunk's l (the sequential sum of its exponentials, one thread
// a head) reads 16 cells a round as four 16-byte words, the next round's issued before this
// round's adds (mkb attn_chunk_l); the same adds in the same order, so the bits do not change.
// At 229 cells the one-head decode item's softmax phase is 3.4 us (`moer`, gpu-next25), of which
// the 229 dependent adds are about 0.5 and their loads, eight at a time, up to as much again.
// =1 everywhere (gpu-next44 call 14, H100, three rounds against main, exact 331/0 and 19/0):
// read50@16384 -2.5% (`moer`) and -1.5% (qwen3-4b), the reads' V stage (the sums beside the copy)
// 3.39 to 2.75 us a mark; but decode@16384 +0.11 to +0.19 ms on both shapes and the one-head
// decode item's V stage 4.55 to 5.92 us (`moer` decode@229). =2: the 16-cell rounds only in the
// sums of attn_o_write's two-dim forms (DP = 2, ARBOR_MK_O_PAIRS: items of 16 rows or more, the
// reads' and prefills'), every decode item's sums as before. =2 is NVIDIA's default since
// gpu-next46 (exact: 331/0 and 19/0, plain and with ARBOR_GPU_KV_STREAM=1; H100 against main,
// three rounds: read50@16384 -0.9 to -1.0% on `moer` and -0.4 to -0.5% on qwen3-4b in every
// round, the decode rows within the spread, docs/BENCHMARKS.md "gpu-next46" calls 7 and 8); AMD
// builds keep 0 (they have neither ARBOR_MK_O_PAIRS nor ARBOR_MK_L_UNDER_V), and so does an NVIDIA
// build without either of those (its default is decided after ARBOR_MK_L_UNDER_V, below).
// -DARBOR_MK_LSUM_V4=0 turns it off.
// ARBOR_MK_SOFTMAX_SPREAD=1: an attention chunk item of fewer heads than warps (a decode item of
// one to four) spreads each head's max and exponentials over all its warps, not one
// (attn_softmax_spread); each exponential is the same, and the max differs at most in the sign
// of a zero, which nothing computed from it sees. A one-head item's lanes now take 8 of 229
// exponentials each, one after another (about 0.4 us); spread, one.
// gpu-next30 found it not exact (370 of 371 cases; the others, ARBOR_MK_LSUM_V4 and
// ARBOR_MK_O_UNROLL2, exact): nvcc had deleted the sums (attn_chunk_l's shared-memory assume,
// folded to false; see there). Fixed in the source, its PTX checked whole by
// scripts/ptx-assume-check.sh. Exact in gpu-next33 (with LSUM_V4 and O_UNROLL2, slower); with
// ARBOR_MK_L_UNDER_V (one barrier fewer) timed in gpu-next37 (`sl`: between main and `lv`) but
// its exactness not run in that form.
#ifndef ARBOR_MK_SOFTMAX_SPREAD
#define ARBOR_MK_SOFTMAX_SPREAD 0
#endif
// ARBOR_MK_SOFTMAX_WIDE=1 (gpu-next50, off: measured in gpu-next51, not taken): with
// ARBOR_MK_V_AHEAD, a one-head decode item's softmax takes its max on warp 0 as before
// (attn_softmax_warps' scan and warp_max_keep, into ms), then, after a workgroup barrier, every
// thread takes exponentials (229 cells: one a thread), not warp 0 alone (eight a lane, one after
// another). Each exponential is the same function of the same score and max: the bits do not
// change. The warp stage clocks (gpu-next50, `moer` decode@229) had warp 0's softmax at about 7100
// cycles of an item's 16.9 us, warps 1-7 waiting about 3550 of them at the barrier after their V
// copy's issue. gpu-next51 (calls A and B, with ARBOR_MK_SCORE_HW; call C, with ARBOR_MK_V_BULK):
// exact; the softmax phase 4.46 to 3.39 us a mark (2.66 with V_BULK), decode@229 within the spread,
// `moer` read50@16384 +2.5% with SCORE_HW, decode@16384 +0.04 to +0.08 with V_BULK.
#ifndef ARBOR_MK_SOFTMAX_WIDE
#define ARBOR_MK_SOFTMAX_WIDE 0
#endif
#if ARBOR_MK_SOFTMAX_WIDE != 0 && ARBOR_MK_SOFTMAX_WIDE != 1
#error "ARBOR_MK_SOFTMAX_WIDE is 0 or 1"
#endif

// ARBOR_MK_L_UNDER_V=1: an attention chunk's l (each head's sequential sum of its exponentials,
// one thread a head) runs while the first V piece is in flight (attn_o_write, right after the
// copy is asked for), not in the softmax step before it, so the rest of the workgroup no longer
// waits on that chain of n adds before the V copy starts. Head h's thread is lane h / 8 of warp
// 7 - h % 8: a one-head decode item's is in warp 7, which the o loop of one head (128 dims on
// threads 0-127) leaves idle. The same adds in the same order, read after the same barrier:
// the bits do not change. With ARBOR_MK_SOFTMAX_SPREAD the spread softmax also drops its second
// barrier (its sums were what it waited for).
// On by default on NVIDIA since gpu-next37: exact (356/0, 25/0, and with ARBOR_GPU_KV_STREAM=1);
// H100, against main in one call, three rounds: `moer` decode@229 -0.05 to -0.09 ms, qwen3-4b
// -0.01 to -0.03, `moer` decode@16384 -0.09 to -0.14 (docs/BENCHMARKS.md "gpu-next37"). The probe
// shows the sum is not hidden: the softmax phase 5.1 to 2.0 us, the V stage 3.3 to 5.3 (the sum
// of 229 cells takes about 2 us more than the copy). AMD builds keep it off until measured there.
// Two other placements measured no different in the probe (gpu-next37 call 6; commit cd3c03a has
// them): the sums just before the piece is asked for, and the summing warps left out of its copy.
// A one-head item's l taken instead by shuffles in the softmax, lane 0 taking each exponential
// from the lane that computed it (ARBOR_MK_L_SHFL, gpu-next46; 64663a0 has it): exact, but its
// 229 steps took 3-3.8 us in warp 0, as the shared-memory sum does beside the copy (about 16 ns a
// step, though the sum's SASS batches its loads), and the copy alone is still 4.3 us a mark: the
// item +2.4 us. Out.
#ifndef ARBOR_MK_L_UNDER_V
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
#define ARBOR_MK_L_UNDER_V 1
#else
#define ARBOR_MK_L_UNDER_V 0
#endif
#endif
// ARBOR_MK_LSUM_V4's default (above): 2 where its forms are, NVIDIA's with both switches on
#ifndef ARBOR_MK_LSUM_V4
#if defined(ARBOR_GPU_VENDOR_NVIDIA) && ARBOR_MK_L_UNDER_V && ARBOR_MK_O_PAIRS
#define ARBOR_MK_LSUM_V4 2
#else
#define ARBOR_MK_LSUM_V4 0
#endif
#endif
static_assert(ARBOR_MK_LSUM_V4 >= 0 && ARBOR_MK_LSUM_V4 <= 2, "ARBOR_MK_LSUM_V4 is 0, 1 or 2");
#if ARBOR_MK_LSUM_V4 == 2 && !(ARBOR_MK_L_UNDER_V && ARBOR_MK_O_PAIRS)
#error "ARBOR_MK_LSUM_V4=2 is for attn_o_write's two-dim forms' sums: it needs ARBOR_MK_L_UNDER_V and ARBOR_MK_O_PAIRS"
#endif

// ARBOR_MK_O_UNROLL2=1: the o loop of a thread with one head of one dim (a decode item of one q
// head: 229 cells, 29 rounds of 8 cells, each round's V and weight loads then its 8 dependent
// multiply-adds) unrolls two rounds, so the compiler may issue the next round's loads before this
// round's chain. The same multiply-adds in the same order: the bits do not change. (Measured
// before ARBOR_MK_O_FIXED, whose rounds of 16 now take such a thread's 128-dim f16 cells: with
// it on, this loop runs at most one round of 8 there.)
#ifndef ARBOR_MK_O_UNROLL2
#define ARBOR_MK_O_UNROLL2 0
#endif

// ARBOR_MK_SCORE_UNROLL=1 (gpu-next41, off: not taken): a score tile's element loop
// (mkb::score_tile: lane j takes elements j, j + 32, j + 64, j + 96 of a 128-dim head) unrolled
// whole, the K rows' stride fixed where it is 128 (raw f16 rows) or 129 (staged float rows), and
// raw f16 K converted eight halves at a time (mkb::f16x8_to_f32, with ARBOR_MK_F16_GROUPS) where
// each half took fp16_to_f32's select. Each accumulator still takes its elements in order: the bits
// do not change.
// Measured in gpu-next41 (docs/BENCHMARKS.md, built as `su3`): exact (331/0 under the plain and
// the streamed settings, the 128-dim tiny-hd128 cases among them); the attention probe's one-head
// scores at 229 cells 4.3 to 2.7 us (the level -1.0 to -1.3 us a layer) and qwen3-4b's four-head
// items at 16384 cells -2.3 to -4.6 us a layer (two probe calls); decode@229 within the spread
// (H100). gpu-next42 (calls 5-6): in the megakernel the one-head scores are slower with it (3.44
// to 4.02 us a mark, `moer` decode@229; the probe's item differs here), the decode rows at 229
// +0.01 to +0.05 ms, but `moer` read50@16384 -2.1% in three rounds out of three. Limited to tiles
// of 8 heads (call 9, commit cd7e9b3): exact, `moer` read50@16384 -1.5% and prefill256@16384
// -0.5%, but decode@16384 +0.08 to +0.18 ms on both shapes, qwen3-4b's tiles unchanged (ptxas
// gives attn_chunk_cells<DenseCells> 68 more bytes of spill loads): not taken.
// Tried with it and taken out: the o loop's loads a round ahead, or with the hardware's conversion
// alone and a re-run on a NaN o (the o phase stayed at 4.4-4.6 us, or grew; measured while the
// idle warps still ran the loop, before ARBOR_MK_O_SKIP_IDLE below); the score tiles'
// hardware conversion with a re-run on a NaN dot (slower); l by shuffles in the softmax warp (3.8
// us where the sum under the V copy costs 1.4).
#ifndef ARBOR_MK_SCORE_UNROLL
#define ARBOR_MK_SCORE_UNROLL 0
#endif
static_assert(ARBOR_MK_SCORE_UNROLL == 0 || ARBOR_MK_SCORE_UNROLL == 1, "ARBOR_MK_SCORE_UNROLL is 0 or 1");
// ARBOR_MK_SCORE_PIPE=1 (off, prepared in gpu-next49, not yet run in the megakernel):
// mkb::score_tile on raw f16 K rows (a decode item's one-chunk tiles, attn_scores_raw) loads an
// element's halves of its Ct cells together and converts them by the hardware alone, and tests
// its dots for a NaN once, by a ballot: a NaN in any lane runs the warp's tile again by the exact
// loop, from +0. The megakernel's SASS (gpu-next49, `lvp`) has the one-head tile convert each
// half by fp16_to_f32's select (7 instructions), 167 instructions an element round of 16 cells.
// Exact: a lane's chain with no NaN half has fp16_to_f32's bits in every term, and a NaN term
// leaves its dot a NaN. A first form (109af29: the next element's halves asked for early, two
// combine_lanes_multi) gave attn_scores_raw 208/120 bytes of spills (32/32 without it) and was
// slower in the probe; this one moves no function's spills (ptxas -v).
#ifndef ARBOR_MK_SCORE_PIPE
#define ARBOR_MK_SCORE_PIPE 0
#endif
#if ARBOR_MK_SCORE_PIPE != 0 && ARBOR_MK_SCORE_PIPE != 1
#error "ARBOR_MK_SCORE_PIPE is 0 or 1"
#endif
// ARBOR_MK_SCORE_HW=1 (gpu-next51, off: measured, not taken, with ARBOR_MK_SOFTMAX_WIDE above): the
// score tiles (mkb::score_tile, attn_score_tiles_qreg) take a raw f16 K element by the hardware's
// conversion alone (fp16_to_f32_hw, one instruction) where fp16_to_f32 adds a select of its own NaN
// (7 a half in the one-head tile's SASS: 112 of an element round's 167). Exact: the value only ever
// enters an fmaf, so for a half that is not a NaN both give the same float, and a NaN half makes
// the dot a NaN either way (the contract fixes no NaN payload; NVIDIA's fma returns its canonical
// NaN whatever the operands' payloads). Unlike ARBOR_MK_SCORE_PIPE, no ballot and no second loop.
#ifndef ARBOR_MK_SCORE_HW
#define ARBOR_MK_SCORE_HW 0
#endif
#if ARBOR_MK_SCORE_HW != 0 && ARBOR_MK_SCORE_HW != 1
#error "ARBOR_MK_SCORE_HW is 0 or 1"
#endif
#if ARBOR_MK_SCORE_HW && ARBOR_MK_SCORE_PIPE
#error "ARBOR_MK_SCORE_PIPE's rerun would convert by the hardware again: not with ARBOR_MK_SCORE_HW"
#endif
// ARBOR_MK_COMBINE_REGS=1 (gpu-next51; NVIDIA's default, AMD builds keep 0 until a gfx1151 run
// measures it): the attention combine item
// (mk_attn_combine_block; mk_attn_combine_regs in mk_block_ops.hpp) with its L2 round trips cut
// from about fifteen to three or four: each head's chunk l and m loaded four a lane at once (the
// first unskipped chunk by a ballot over them, its m by a shuffle) where the scan loaded them
// chunk by chunk and each m after its l; each thread's first 16 chunk values asked for before the
// scan, the next 16 before each round's fmafs; the skip tests as selects, so the sums' shared
// loads run ahead; the Q8A blocks from the registers, not from the written row. Every max, sum
// and fmaf is the same, in the same order (the per-lane scan and the lane tree included): the
// bits do not change. The profile of `moer` decode@16384 (gpu-next51 call A, H100): the combine
// item 21.1 us, 16 of them a layer, the level about 22 us of a step's 166 us a layer.
// Measured (gpu-next51 call B, H100, three rounds against the same build without it): exact
// (365/0, 19/0, plain and streamed); the combine item 22.4 to 15.3 us; decode@16384 `moer` -0.23
// to -0.27 ms and qwen3-4b -0.24 to -0.31; read50@16384 qwen3-4b -0.9% (against main too), `moer`
// -2.7% (against main -0.3%, the build's other two switches costing that read 2.5%).
#ifndef ARBOR_MK_COMBINE_REGS
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
#define ARBOR_MK_COMBINE_REGS 1
#else
#define ARBOR_MK_COMBINE_REGS 0
#endif
#endif
#if ARBOR_MK_COMBINE_REGS != 0 && ARBOR_MK_COMBINE_REGS != 1
#error "ARBOR_MK_COMBINE_REGS is 0 or 1"
#endif
// ARBOR_MK_COMBINE_STAGE=1 (gpu-next52, off until measured): a combine item that
// mk_attn_combine_regs takes asks for every chunk's rows of its heads (65 chunks x 2 heads x 130
// floats at 16384 cells, 66 KiB) into the arena by cp.async at its start, while its warps scan the
// l and m, and every thread then runs its o from there, where it took five rounds of 16 chunk
// values from L2 one after another (gpu-next51 call D: 6.42 us of the 14.1 us item). Each thread
// also runs its head's L in the same loop, the chain lane 0 ran alone (1.11 us and a barrier).
// The same values in the same order: the bits do not change. Items whose rows do not fit the
// arena (more than 77 chunks of two 128-dim heads: about 19.7k cells) keep the form above.
#ifndef ARBOR_MK_COMBINE_STAGE
#define ARBOR_MK_COMBINE_STAGE 0
#endif
#if ARBOR_MK_COMBINE_STAGE != 0 && ARBOR_MK_COMBINE_STAGE != 1
#error "ARBOR_MK_COMBINE_STAGE is 0 or 1"
#endif
#if ARBOR_MK_COMBINE_STAGE && !(ARBOR_MK_COMBINE_REGS && ARBOR_MK_ASYNC_STAGE)
#error "ARBOR_MK_COMBINE_STAGE is a form of ARBOR_MK_COMBINE_REGS's item and takes ARBOR_MK_ASYNC_STAGE's copies"
#endif
// ARBOR_MK_O_SKIP_IDLE=1 and ARBOR_MK_O_FIXED=1 (gpu-next41/42), the o loop of attn_o_write:
// - O_SKIP_IDLE: the threads of a slice that holds no head (slice >= gh: a decode item of one
//   128-dim head leaves threads 128-255 without one) skip the loop. They used to run it whole
//   for every cell (with ARBOR_MK_ATTN_O_GROUPS, on the last head's weights; without it, all but
//   the multiply-adds), on the same schedulers as the four working warps, and the phase ended at
//   the barrier after the slowest of all eight: why no form of the working threads' loop tried in
//   gpu-next41 moved it.
// - O_FIXED: a thread with one head of one dim and f16 cells of 128 dims takes rounds of 16 cells
//   whose V halves and weights are loaded at fixed offsets from one address a round (the default's
//   rounds of 8 multiply each load's address by the run-time row stride). gpu-next41's form tested
//   `vrow == 256`, which also held for 64-dim f32 rows (81 cases failed); this one tests eb and hdv.
//   A =2 (out of the source) took the same rounds for threads of two or four heads of one dim (the
//   4- and 8-head items at depth). Exact (331/0 plain and streamed), it lost in both its forms:
//   with four heads (commit e9aef91, gpu-next42 call 11) qwen3-4b decode@16384 -0.04 to -0.11 ms
//   but `moer` decode@16384 +0.01 to +0.09; with two heads alone (commit e5787e4; no spill moved,
//   ptxas -v), gpu-next43 call 9: qwen3-4b decode@16384 +0.01 to +0.11, `moer` decode@229 +0.05
//   to +0.13. (An earlier =2 for one head of two dims, commit 79c2343, was dead code: the
//   dispatch instantiates ARBOR_MK_O_PAIRS's two-dim forms only as <4, 2> and <8, 2>.)
// The same multiply-adds in the same order and the same conversion (f16x8_to_f32 gives
// fp16_to_f32's bits); threads without a head compute nothing that is used: the bits do not change.
// Measured on the H100 (gpu-next42, docs/BENCHMARKS.md calls 5-7): the attention probe's one-head
// o phase at 229 cells 4.62 to 4.12 us with O_SKIP_IDLE, 2.71 with both (the `moer` level 25.1 to
// 21.7); exact (331/0 plain and streamed, megakernel_exact 19/0); decode@229 `moer` 5.63-5.69 to
// 5.47-5.55 ms, qwen3-4b 4.82-4.83 to 4.75-4.84; decode@16384 qwen3-4b 7.21-7.24 to 7.12-7.17,
// `moer` within the spread; read50@16384 within 0.3% (`moer` -0.1%, qwen3-4b +0.1 to +0.3%). On by
// default on NVIDIA; AMD builds keep them off until a gfx1151 run.
#ifndef ARBOR_MK_O_FIXED
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
#define ARBOR_MK_O_FIXED 1
#else
#define ARBOR_MK_O_FIXED 0
#endif
#endif
static_assert(ARBOR_MK_O_FIXED == 0 || ARBOR_MK_O_FIXED == 1, "ARBOR_MK_O_FIXED is 0 or 1");
// ARBOR_MK_O_PIPE=1 (on by default on NVIDIA where ARBOR_MK_O_FIXED is, with ARBOR_MK_L_IN_O and
// ARBOR_MK_V_AHEAD): the O_FIXED rounds of a thread with one head of one dim (the one-head decode
// items, and any item of two heads or fewer) convert the halves by the hardware alone, with no NaN
// test a round, and ask (in the source) for the next round's halves before this round's
// multiply-adds: o is tested once after the rounds, and a NaN o (a NaN half or weight among them,
// an infinity times a zero, or infinities of opposite signs) sends o and l back to where they were
// and the cells through the O_FIXED rounds again. The probe's SASS (gpu-next49) had each round
// wait on its own loads, then on the first eight halves' NaN test and branch before it loaded its
// weights, about 23 cycles a cell on one warp a scheduler. The same multiply-adds in the same
// order on the same values: where o is not a NaN no half was one, and the hardware's conversion
// gives fp16_to_f32's bits for every half that is not a NaN; where it is, the O_FIXED rounds give
// the bits as before. gpu-next49 call D (H100, `lvp` = `lvb` + O_PIPE): exact (331/0, 19/0, plain
// and streamed); the one-head o phase 3.37 to 3.04 us a mark (`moer` decode@229), decode@229
// -0.04 to -0.15 ms against `lvb` on both shapes in every round. ptxas put the next round's loads
// after the multiply-adds there and packed them in pairs, so rounds do not overlap yet (a form
// with 32-bit registers and no branch before the loads had nvcc merge them into the next round's
// start: GPU.md "gpu-next49"). gpu_logits_exact's nan-kv case (tests/gpu/logits_exact_nan.cpp)
// puts NaN and infinite V elements through it (synth qwen3 tiny-hd128).
#ifndef ARBOR_MK_O_PIPE
#if defined(ARBOR_GPU_VENDOR_NVIDIA) && ARBOR_MK_O_FIXED
#define ARBOR_MK_O_PIPE 1
#else
#define ARBOR_MK_O_PIPE 0
#endif
#endif
// Measured and taken out (d6c08f3 has it): =2, the next round's halves by asm volatile ld.shared
// into 32-bit registers with no branch. ptxas then issued them in the round's second half, beside
// its last multiply-adds (77 instructions a round), and decode@229 moved -0.03 to +0.02 ms against
// =1 (gpu-next49 call F): the o rounds are no longer where the one-head item's time goes.
#if ARBOR_MK_O_PIPE != 0 && ARBOR_MK_O_PIPE != 1
#error "ARBOR_MK_O_PIPE is 0 or 1"
#endif
#if ARBOR_MK_O_PIPE && !ARBOR_MK_O_FIXED
#error "ARBOR_MK_O_PIPE runs the ARBOR_MK_O_FIXED rounds: it needs ARBOR_MK_O_FIXED=1 (or ARBOR_MK_O_PIPE=0)"
#endif
#ifndef ARBOR_MK_O_SKIP_IDLE
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
#define ARBOR_MK_O_SKIP_IDLE 1
#else
#define ARBOR_MK_O_SKIP_IDLE 0
#endif
#endif
static_assert(ARBOR_MK_O_SKIP_IDLE == 0 || ARBOR_MK_O_SKIP_IDLE == 1, "ARBOR_MK_O_SKIP_IDLE is 0 or 1");

// ARBOR_MK_L_UNDER_O (gpu-next43, out of the source; f206425 has it): a one-head decode item's l
// sum after the V stage's barrier, beside the o loop in the warp ARBOR_MK_O_SKIP_IDLE leaves idle,
// one barrier more before the write. The probe's V stage 5.36 to 3.46 us but its o phase 2.73 to
// 3.45 (the sum outlasts the loop); in the megakernel the V stage 5.30 to 4.74; `moer` decode@229
// -0.02 to -0.08 ms, qwen3-4b +0.02 to +0.07 (H100, gpu-next43 call 9). Not taken. Its =2 (those
// sums in LSUM_V4's 16-cell rounds) was not run; beside the V copy those rounds made the one-head
// sum 1.4 us longer (gpu-next44, `l4`).

// ARBOR_MK_STAGE_TWICE (measurement builds, never a default): a raw-staged decode item runs its
// K copy's instructions twice, the first run's time in the q phase's clock, so the profile's K
// stage is a copy whose code was just used: 1, K both times (its data just used too); 2, first
// as many bytes of the chunk's V, then K (its data as cold as ever). Inside the megakernel a
// decode item's 58 KiB K stage takes 4.0 us (`moer` at 229 cells); outside it
// (arbor-gpu-stage-probe, 32 workgroups copying) 1.3 us from memory and 0.8 from the L2. K near
// 0.8 us with 1 and near 1.3 with 2 puts the rest on the copy's cold code (the entry is 380k
// instructions, and each level runs other code); near 4 us with both, on the megakernel's
// surroundings; 1 fast and 2 slow, on the data.
#ifndef ARBOR_MK_STAGE_TWICE
#define ARBOR_MK_STAGE_TWICE 0
#endif
// ARBOR_MK_STAGE_CLOCKS=1 (measurement builds, never a default): a one-head
// decode item's pieces timed by the SM's cycle counter in threads 0 and 224 (mk_stc in
// mk_block_ops.hpp: the K copy's issue, wait and barrier, the score tiles, the softmax, the V
// copy's issue, wait and barrier beside warp 7's l sum (none with ARBOR_MK_L_IN_O), the o loop
// and the write), and in each warp's lane 0 its end of the score tiles, the softmax (with
// ARBOR_MK_V_AHEAD) and the o loop and its wait at the barrier after (mk_stc_warp), summed over
// the items for arbor-gpu-attn-probe and the megakernel's profile (mk_phases_read) to print.
#ifndef ARBOR_MK_STAGE_CLOCKS
#define ARBOR_MK_STAGE_CLOCKS 0
#endif
#if ARBOR_MK_STAGE_CLOCKS != 0 && ARBOR_MK_STAGE_CLOCKS != 1
#error "ARBOR_MK_STAGE_CLOCKS is 0 or 1"
#endif
#if ARBOR_MK_STAGE_CLOCKS && !ARBOR_MK_ASYNC_STAGE
#error "ARBOR_MK_STAGE_CLOCKS times ARBOR_MK_ASYNC_STAGE's copies"
#endif
// ARBOR_MK_L_IN_O=1 (on by default on NVIDIA, with ARBOR_MK_V_AHEAD; needs ARBOR_MK_L_UNDER_V): a
// thread of one head and one dim (the o loops of the one-head decode items, attn_o_write<1, 1>)
// sums its head's l in its own o loop, from the weights the loop loads anyway, cells in order
// from +0 (the contract's chain, as attn_chunk_l's), and divides by that register; no thread runs
// the sum beside the V copy. The
// probe's stage clocks (gpu-next47) had warp 7's sum after its copy issue, 6500 cycles of the V
// stage's 11800, its shared loads queued behind the copy: the same adds in the same order, the
// bits do not change. gpu-next47 call 10 (H100): exact (331/0, 19/0, plain and streamed); the
// probe's level -1.6 to -2.4 us, but in the megakernel, whose copy alone takes the V stage's 4.3
// us, the V stage 4.60 to 4.31, decode@229 within the spread and `moer` decode@16384 +0.05 to
// +0.11 ms: not taken alone (with ARBOR_MK_V_AHEAD, below, it is).
#ifndef ARBOR_MK_L_IN_O
#if defined(ARBOR_GPU_VENDOR_NVIDIA) && ARBOR_MK_L_UNDER_V
#define ARBOR_MK_L_IN_O 1
#else
#define ARBOR_MK_L_IN_O 0
#endif
#endif
#if ARBOR_MK_L_IN_O != 0 && ARBOR_MK_L_IN_O != 1
#error "ARBOR_MK_L_IN_O is 0 or 1"
#endif
#if ARBOR_MK_L_IN_O && !ARBOR_MK_L_UNDER_V
#error "ARBOR_MK_L_IN_O takes the one-head sums out of attn_o_write's attn_chunk_ls: it needs ARBOR_MK_L_UNDER_V"
#endif
// ARBOR_MK_V_AHEAD=1 (on by default on NVIDIA with ARBOR_MK_L_IN_O; ARBOR_MK_ASYNC_STAGE): a
// one-head decode item runs its softmax in attn_o_write<1, 1> (attn_chunk_cells returns after
// the score tiles), and whose V rows fit one piece asks for them first, by warps 1-7, so the copy runs under warp 0's softmax instead of after
// it; the piece loop then only waits. The same bytes and the same softmax: the bits do not change.
// gpu-next47: its first form (the copy asked for in attn_chunk_cells, a flag handed on) with
// ARBOR_MK_L_IN_O was exact, the one-head item's V stage 5.4 to 1.9 us a mark and the item -2 us
// (`moer` decode@229 -0.04 to -0.21 ms, `moer` read50@16384 -1.0%), but decode@16384 +0.05 to
// +0.14 ms on both shapes: ptxas gave attn_chunk_cells, which the deep 8-head items run, 44 more
// bytes of spill loads. This form keeps the one-head work out of attn_chunk_cells. Warps 1-3 and
// 5-7 alone issuing it (off warp 0's sub-partition) were no better in the probe. gpu-next49 (H100,
// `lvb` = L_IN_O + V_AHEAD, calls A and D): exact (331/0, 19/0, plain and streamed); against main
// decode@229 -0.08 to -0.15 ms on both shapes in every round (the item 20.3 to 17.7 us a layer),
// `moer` read50@16384 -2.1% and qwen3-4b -0.1 to -0.3%; decode@16384 +0.00 to +0.16 ms (`moer`)
// and -0.02 to +0.06 (qwen3-4b), the one loss, though the deep steps run no one-head items.
// Taken as NVIDIA's default with ARBOR_MK_O_PIPE.
#ifndef ARBOR_MK_V_AHEAD
#if defined(ARBOR_GPU_VENDOR_NVIDIA) && ARBOR_MK_L_IN_O && ARBOR_MK_ASYNC_STAGE && !ARBOR_MK_SOFTMAX_SPREAD
#define ARBOR_MK_V_AHEAD 1
#else
#define ARBOR_MK_V_AHEAD 0
#endif
#endif
#if ARBOR_MK_V_AHEAD && (!ARBOR_MK_ASYNC_STAGE || ARBOR_MK_SOFTMAX_SPREAD)
#error "ARBOR_MK_V_AHEAD issues ARBOR_MK_ASYNC_STAGE's copies beside the one-warp softmax (not ARBOR_MK_SOFTMAX_SPREAD)"
#endif
#if ARBOR_MK_V_AHEAD != 0 && ARBOR_MK_V_AHEAD != 1
#error "ARBOR_MK_V_AHEAD is 0 or 1"
#endif
#if ARBOR_MK_SOFTMAX_WIDE && !ARBOR_MK_L_IN_O && !ARBOR_MK_L_UNDER_V
#error "ARBOR_MK_SOFTMAX_WIDE writes no l: the one-head item's comes from ARBOR_MK_L_IN_O or ARBOR_MK_L_UNDER_V"
#endif
// Measured and taken out (e65233c has it): ARBOR_MK_O_PAIRS_ONE, a one-head item's o loop with
// two adjacent dims a thread (attn_o_write<1, 2>: one 4-byte V load a cell for both, on 64
// threads at 128 dims). gpu-next49 (`op1`, H100): exact, but decode@229 +0.06 to +0.11 ms against
// ARBOR_MK_L_IN_O alone, and the probe's o loop 5236 to 10062 cycles: that loop is bound by each
// thread's serial work, not by its count of shared-memory loads.
#if ARBOR_MK_STAGE_CLOCKS && ARBOR_MK_STAGE_TWICE
#error "ARBOR_MK_STAGE_CLOCKS times the K copy that ARBOR_MK_STAGE_TWICE repeats: one at a time"
#endif
// ARBOR_MK_K_EARLY=1 (gpu-next35, measured in gpu-next36, on by default where ARBOR_MK_ASYNC_STAGE
// is and none of the switches below that exclude it): while a workgroup waits at the grid barrier
// before a decode step's attention level, it asks for the K cells of its first attention item
// (items are dealt from the last workgroup down, so it knows which) into the stage where the item
// will read them: every cell but the token's own, which the level before writes (mk_attn_k_early).
// The item then copies only what is left (attn_scores_raw). Not with the fold
// (ARBOR_MK_FOLD_FINISH's items finish K in the stage first). The same bytes reach the same tiles:
// the bits do not change. In a profile the early copies' issue falls in the barrier's row, and the
// K stage phase times only the rest of the copy: compare profiles of the phases with it on and off
// with that in mind.
// Exact (356/0, 25/0, and with ARBOR_GPU_KV_STREAM=1); H100, against main in one call, four
// rounds: `moer` decode@229 -0.06 to -0.14 ms, qwen3-4b decode@229 -0.02 to -0.09, `moer`
// decode@16384 -0.08 to -0.09 (docs/BENCHMARKS.md "gpu-next36"). -DARBOR_MK_K_EARLY=0 turns it off.
// Asking the L2 for the same cells' V rows there too (ARBOR_MK_V_EARLY, gpu-next43; 95f5e1c has it)
// left the V stage as long (`moer` decode@229, 4.58 to 4.63 us a mark: its length is not L2 misses)
// and, with LSUM_V4 and ARBOR_MK_L_UNDER_O=1, decode@16384 +0.4 to +0.7 ms (gpu-next44 call 3). Out.
// Splitting a one-head decode item's V dims over 4 items, each part's old V rows asked for here
// behind its K rows and its l sum beside the o loop (ARBOR_MK_V_PARTS, gpu-next46; 4e394ba has
// it): exact, but the item as long (a part's V stage 3.2 us a mark for a quarter of the rows,
// nearly all asked for at the barrier) and every row slower, decode@16384 too (+0.2-0.4 ms). Out.
#ifndef ARBOR_MK_K_EARLY
#if ARBOR_MK_ASYNC_STAGE && !ARBOR_MK_STAGE_TWICE && !ARBOR_MK_SMEM_DESC && !ARBOR_MK_BULK_STAGE
#define ARBOR_MK_K_EARLY 1
#else
#define ARBOR_MK_K_EARLY 0
#endif
#endif
#if ARBOR_MK_K_EARLY && (!ARBOR_MK_ASYNC_STAGE || ARBOR_MK_STAGE_TWICE || ARBOR_MK_SMEM_DESC || ARBOR_MK_BULK_STAGE)
#error "ARBOR_MK_K_EARLY stages K by ARBOR_MK_ASYNC_STAGE's copies; not with ARBOR_MK_STAGE_TWICE, ARBOR_MK_SMEM_DESC (it reads the next level's stage before the descriptor cache holds it) or ARBOR_MK_BULK_STAGE (whose barrier takes one copy in flight)"
#endif
#if ARBOR_MK_STAGE_TWICE && !ARBOR_MK_ASYNC_STAGE
#error "ARBOR_MK_STAGE_TWICE repeats ARBOR_MK_ASYNC_STAGE's raw K copy"
#endif
#if ARBOR_MK_STAGE_TWICE != 0 && ARBOR_MK_STAGE_TWICE != 1 && ARBOR_MK_STAGE_TWICE != 2
#error "ARBOR_MK_STAGE_TWICE is 0, 1 or 2"
#endif
// ARBOR_MK_V_BULK=1 (gpu-next51, off: measured, not taken, with ARBOR_MK_SOFTMAX_WIDE above): a
// decode item's V pieces go by the copy engine as with ARBOR_MK_BULK_STAGE (mk_bulk_issue: one
// cp.async.bulk by thread 0, on the workgroup's mbarrier), while K keeps cp.async, so
// ARBOR_MK_K_EARLY stays on (the mbarrier then has only the V piece in flight); a streamed pass's V
// keeps cp.async (the evict-first policy), the one-head item's still asked for ahead by warps 1-7.
// With ARBOR_MK_V_AHEAD the one-head item's V goes so too, asked for before its softmax: the
// cp.async form's issue by warps 1-7 stalls once the SM's outstanding requests are full (about 4100
// cycles, gpu-next50's warp clocks), and with ARBOR_MK_SOFTMAX_WIDE every thread waits for it
// before the exponentials (gpu-next51 call A: softmax phase 3.39 us a mark). The same bytes land in
// the same place: the bits do not change.
#ifndef ARBOR_MK_V_BULK
#define ARBOR_MK_V_BULK 0
#endif
#if ARBOR_MK_V_BULK != 0 && ARBOR_MK_V_BULK != 1
#error "ARBOR_MK_V_BULK is 0 or 1"
#endif
#if ARBOR_MK_V_BULK && !ARBOR_MK_ASYNC_STAGE
#error "ARBOR_MK_V_BULK replaces ARBOR_MK_ASYNC_STAGE's V copies"
#endif
// ARBOR_MK_V_HALVES=1 (gpu-next52, off until measured): a decode chunk item of several heads whose
// chunk goes raw in one piece (attn_scores_raw) and whose V rows fit the stage in one piece scores
// its K rows in two halves (n1 cells, a multiple of 16, then the rest), and asks for each half's
// V rows into that half's K rows as soon as every warp's tiles of them are done (a barrier between
// the halves), where attn_o_write asked for the whole V after the softmax. At 16384 cells every
// one of a layer's 260 items asked for its 64 KiB of V at about the same moment, and the chunk
// item (34.5 us) waited 6.7-7.9 us a mark for it while the HBM idled through the scores
// (gpu-next51 call A). The same dots, the same bytes in the same place: the bits do not change.
#ifndef ARBOR_MK_V_HALVES
#define ARBOR_MK_V_HALVES 0
#endif
#if ARBOR_MK_V_HALVES != 0 && ARBOR_MK_V_HALVES != 1
#error "ARBOR_MK_V_HALVES is 0 or 1"
#endif
#if ARBOR_MK_V_HALVES && (!ARBOR_MK_ASYNC_STAGE || ARBOR_MK_STAGE_TWICE)
#error "ARBOR_MK_V_HALVES copies by ARBOR_MK_ASYNC_STAGE's cp.async; not with ARBOR_MK_STAGE_TWICE"
#endif
#if ARBOR_MK_V_HALVES
#define ARBOR_MK_VH(...) __VA_ARGS__
#else
#define ARBOR_MK_VH(...)
#endif
#if (ARBOR_MK_BULK_STAGE || ARBOR_MK_V_BULK) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define ARBOR_MK_BULK_ON 1
#else
#define ARBOR_MK_BULK_ON 0
#endif

// ARBOR_MK_L2_PREFETCH=1: while a workgroup waits at a grid barrier (every workgroup but the
// last to arrive), each warp prefetches into the L2 the weight rows of its first items in the
// next level's row-dot stages (mk_prefetch.hpp; NVIDIA only). =1 was within noise on the H200
// (gpu-next15, docs/BENCHMARKS.md).
// =2: only in passes that do not stream their KV cells (P.kv_stream 0: the cells fit the L2 beside
// the weights). gpu-next37 (H100, against main, three rounds): =1 `moer` decode@229 -0.08 to -0.17
// ms but decode@16384 +0.01 to +0.15, where the streamed cells already fill the L2. =2 is on by
// default on NVIDIA since gpu-next37: exact (356/0, 25/0, and with ARBOR_GPU_KV_STREAM=1); against
// main in one call, three rounds: `moer` decode@229 -0.15 to -0.34 ms, qwen3-4b -0.04 to -0.09,
// `moer` decode@16384 -0.07 to -0.36 and read50@16384 -1.0% (docs/BENCHMARKS.md "gpu-next37",
// call 8). AMD builds: off (the bulk prefetch is sm_90's) until a gfx1151 form is measured.
// Prefetching a warp's later items' rows during the level itself (ARBOR_MK_NEXT_PREFETCH,
// gpu-next38: a dot ahead, commit 4ca993f; or in one shot at the loop's start, by line or bulk
// prefetches, branch commit 563bed8) lost in every form: `moer` decode@229 +0.3 ms (its expert
// gated FFN level +2.3 us a layer), qwen3-4b +0.5, decode@16384 +0.7. Asked while the grid's
// first items load their own rows, they slow those loads more than they speed the later ones.
// =0 against =2 (gpu-next46, `p0`): `moer` decode@229 +0.14 to +0.23 ms, the attention item's V
// stage as long (4.6 us a mark; one profiled pass, where main's ranges 4.6-5.3). =3, none at the
// barrier that ends an attention chunk level (gpu-next46; cb7cd33 has it): the item as long, the
// o projection's level 1 us slower. So the chunk items' copies do not wait on the prefetches. Out.
#ifndef ARBOR_MK_L2_PREFETCH
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
#define ARBOR_MK_L2_PREFETCH 2
#else
#define ARBOR_MK_L2_PREFETCH 0
#endif
#endif
#if ARBOR_MK_L2_PREFETCH != 0 && ARBOR_MK_L2_PREFETCH != 1 && ARBOR_MK_L2_PREFETCH != 2
#error "ARBOR_MK_L2_PREFETCH is 0, 1 or 2"
#endif

// ARBOR_MK_LEAN_INDEX32=1 (gpu-next39, on by default; 0 is the 64-bit form): the lean loops'
// per-item index arithmetic in 32 bits: the expert gated FFN's TwinRows (`i / nfe`, `i % nfe`) and
// rows_loop's first item, where 64-bit division and remainder are library calls (gpu-next38's PC
// sampling: `__cuda_sm20_rem_s64`, 0.4% of `moer`'s samples, inside the hot loops). The same rows.
// Exact (356/0, 25/0; call 2); H100 against main in one call, three rounds (call 1): `moer`
// decode@229 -0.00 to -0.12 ms (its Q/K/V dots level 437 to 393 us summed over the layers),
// qwen3-4b -0.04 to -0.05, `moer` decode@16384 -0.00 to -0.04 (docs/BENCHMARKS.md "gpu-next39").
// Only the lean loops take it, which by default only NVIDIA builds have.
#ifndef ARBOR_MK_LEAN_INDEX32
#define ARBOR_MK_LEAN_INDEX32 1
#endif

// ARBOR_MK_FOLD_FINISH=1: in a one-token pass of a dense-attention model the Q/K/V finish (q/k
// norm, RoPE, the token's K/V cell) gets no level: each attention chunk item finishes its own q
// heads from the raw projection, and the items of the chunk holding the token's cell also finish
// its K and V head and write the cell, each the same bytes, before they stage K
// (mk_attn_fold_finish, mk_block_ops.hpp). ARBOR_GPU_FOLD_FINISH=0 gives the level back.
// Off: +0.26 ms on qwen3-4b on the H200 (gpu-next15; the chunk items grew more than the level).
#ifndef ARBOR_MK_FOLD_FINISH
#define ARBOR_MK_FOLD_FINISH 0
#endif

// ARBOR_MK_EXPERT_MAJOR=1: in a pass of at least ARBOR_GPU_EXPERT_MAJOR_MIN tokens (environment,
// default 16), the routed experts' gated FFN and down projection take one item per (expert, row)
// (or row pair), which runs that row's dots for every (token, slot) pair routed to the expert,
// in pair order (kOpExpertGatedFfnMajor, kOpExpertDownMajor, kOpExpertDownCombine;
// mk_model_ops.hpp). flashnext's down projection is an op of its own (kOpFnMoeDownHcPost) and
// keeps its per-token items; its gated FFN takes these. An item of the (token, slot, row) form
// read its expert's rows for one pair, so a pass of T tokens read each routed expert's rows
// once per pair (the MoE's read50@229 profile: expert gated FFN 29 ms and expert down 32 ms of
// 89), and the expert down ran a row pair's T x k slots in one item on half the grid's warps.
// The dots are the same calls on the same rows and activations, the down's slot-order combine
// the same fmaf chain (from the dots kept in YE), so the bits do not change. Measured on the
// H200 (gpu-next17): exact, the MoE's read50@229 86.3 to 79.0 ms and prefill256@229 406.6 to
// 348.8, decode unchanged; on by default on NVIDIA. AMD builds keep it off until a gfx1151 run
// measures it (they compile it with -DARBOR_MK_EXPERT_MAJOR=1).
#ifndef ARBOR_MK_EXPERT_MAJOR
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
#define ARBOR_MK_EXPERT_MAJOR 1
#else
#define ARBOR_MK_EXPERT_MAJOR 0
#endif
#endif

// ARBOR_MK_MAJOR_NOINLINE=1 (with ARBOR_MK_EXPERT_MAJOR): the expert-major items are functions of
// their own, so that the entry (a decode step's code above all) compiles without them. Measured
// on the H200 (gpu-next18 call 3): exact; decode@229 7.85 to 7.74 ms on the MoE, 5.72 to 5.70 on
// qwen3-4b, but the MoE's read50@229 59.7 to 60.8 and read50@16384 198.4 to 199.7. Off: no clear
// gain.
#ifndef ARBOR_MK_MAJOR_NOINLINE
#define ARBOR_MK_MAJOR_NOINLINE 0
#endif

// ARBOR_MK_LEAN_DOTS=1: a one-token pass's Q/K/V projection, X-adding matmuls, LM head and
// quantized router, dense and expert gated FFN and expert down run as lean loops: the stage's descriptors read
// once, one loop of its own per (row format, op) (mk_lean.hpp). Prepared on gpu-next15 from
// arbor-gpu-probe's measurement and left off after gpu-next16 (-0.1 ms on qwen3-4b, -0.1 to -0.4
// on the MoE, but +0.17 to +0.28 on flashnext, whose stages do not even take it). On by default on
// NVIDIA since gpu-next33 (H100, docs/BENCHMARKS.md): exact, decode@229 -1 to -5% on qwen3-4b and
// the routed MoE, decode@16384 -2 to -5%, read50@16384 within 0.4%; flashnext decode@229 +0.24 ms
// with it alone, +0.04 with ARBOR_PACKED_GRIDS too (one round each), most of it taken back in
// gpu-next34 by mk_lean_ok testing the op first. AMD builds keep it off until a
// gfx1151 run measures it (they compile it with -DARBOR_MK_LEAN_DOTS=1: 256 VGPRs, 1488 bytes of
// scratch, occupancy 5, spills 376 to 387).
#ifndef ARBOR_MK_LEAN_DOTS
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
#define ARBOR_MK_LEAN_DOTS 1
#else
#define ARBOR_MK_LEAN_DOTS 0
#endif
#endif
// ARBOR_MK_LEAN_ROWS (gpu-next35; on by default where ARBOR_MK_LEAN_DOTS is): a lean stage of
// the Q/K/V projection, the matmuls or the expert down takes items of single rows instead of row
// pairs when that leaves the grid's busiest warp fewer rows to dot (mkl::lean_rows): `moer`'s o
// projection is 1024 pairs on 2112 warps (two rows for the busiest) or 2048 rows (one); its
// expert down likewise; Q/K/V 2560 pairs (four) or 5120 rows (three); qwen3-4b's Q/K/V likewise,
// its o projection, dense down and LM head tie and keep pairs. A warp's item takes about as much
// longer as it has rows: three-row items (gpu-next35's `lw`) were slower where they cut a round
// of items but gave the busiest warp more rows. Each row's dot is warp_dot_quant_rows's sequence
// for that row whatever the rows beside it, so the bits do not change. Measured on an H100
// (docs/BENCHMARKS.md "gpu-next35", call 9, against the pairs in the same binary): exact (356/0,
// 25/0, and with single rows everywhere); `moer` decode@229 -0.17 to -0.29 ms, decode@16384
// -0.21 to -0.23; qwen3-4b decode@229 -0.03 to -0.09. ARBOR_GPU_LEAN_ROWS=2 takes the pairs
// always and =1 single rows always (the A/B bits kMkAbLeanPairs and kMkAbLeanSingle, read from
// shared memory; the exactness suite's small models take single rows unless =2, since every
// matrix of theirs fits one round of the grid's warps). -DARBOR_MK_LEAN_ROWS=0: pairs, as before.
// AMD builds (where the lean dots are off): off until a gfx1151 run measures it.
#ifndef ARBOR_MK_LEAN_ROWS
#if ARBOR_MK_LEAN_DOTS && defined(ARBOR_GPU_VENDOR_NVIDIA)
#define ARBOR_MK_LEAN_ROWS 1
#else
#define ARBOR_MK_LEAN_ROWS 0
#endif
#endif

// ARBOR_MK_WG_SELECT (gpu-next36; on by default on NVIDIA): the router select's item runs on the
// whole workgroup (mk_router_select_wg, mk_model_ops.hpp): the top-k by each expert's rank, one
// thread an expert, in place of K dependent rounds of warp reductions in warp 0; the same bits.
// A decode step runs it in every workgroup before the expert gated FFN (ARBOR_MK_PROLOGUES), so
// it is on every MoE layer's path. ARBOR_GPU_WG_SELECT=0
// takes the warp form (the A/B bit kMkAbWarpSelect). AMD builds keep the warp form until
// measured there (-DARBOR_MK_WG_SELECT=1 compiles it in).
#ifndef ARBOR_MK_WG_SELECT
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
#define ARBOR_MK_WG_SELECT 1
#else
#define ARBOR_MK_WG_SELECT 0
#endif
#endif

// Stage s's layer weights.
__device__ inline const MkLayerW& mk_layer(const MkPass& P, const MkModelStage& s) {
#if ARBOR_MK_SMEM_DESC
    (void)P;
    return *s.lw;
#else
    return P.layers[s.layer];
#endif
}

}  // namespace arbor::gpu
