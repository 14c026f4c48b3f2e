// Device work items of flashnext's indexer (docs/MODEL-flashnext.md; CPU:
// engine/src/model/cpu_stage_flashnext_index.cpp): the projections (query heads, head weights,
// keys stored into the cells), the query RoPE and scales and the pooled key of each block a
// token completes, the block scores, and the per-token top budget/4 selection.
//  * Projections: the contract's warp row dots, two rows per item, as the Q/K/V dots.
//  * A pooled key and a query head: element-wise over the lanes; the key's RMSNorm sum of
//    squares is warp_dot_lanes (dot_lanes), RoPE is rope_cs / rope_pair per pair.
//  * A score is one warp's fixed chain: lane j the contract's accumulator j of each head over
//    d_I in order, the combine_lanes tree (16 heads at once, combine_lanes_multi), relu, and
//    acc = fmaf(w_h, relu, acc) in head order (index_score).
//  * Selection is exact set arithmetic: the blocks ranked first by (score descending, NaN as
//    -inf, block ascending), found by a radix select on an order-preserving key, and written
//    in increasing block order. Any correct method gives the CPU's set.
#pragma once

#include "arbor_hip.hpp"
#include "mk_block_ops.hpp"
#include "mk_dot.hpp"
#include "mk_flashnext.hpp"
#include "mk_model.hpp"
#include "mk_model_ops.hpp"
#include "model/numerics_flashnext.hpp"

namespace arbor::gpu {

namespace mkf {

constexpr long long kPoolCells = 4;      // cells per index block
constexpr long long kBlocksPerPage = kMkFnBlocksPerPage;

// Whether the token at pos attends to selected blocks (pass_plan.cpp's index_sparse).
__device__ inline bool index_sparse(const MkFnPass& F, long long pos) { return F.budget > 0 && pos + 1 > F.budget + 3; }

// The layer's indexer keys (cell type) and pooled keys (float32) inside a page
// (arbor/kv_cache.hpp: after the layer's V block).
__device__ inline unsigned long long index_offset(const MkPass& P, int layer) {
    const MkDims& d = P.d;
    return static_cast<unsigned long long>(layer) * d.kv_layer_bytes +
           static_cast<unsigned long long>(d.n_head_kv * mkm::kChunk * (d.hd_k + d.hd_v) * d.kv_elem_bytes);
}
__device__ inline unsigned long long pool_offset(const MkPass& P, int layer) {
    return index_offset(P, layer) + static_cast<unsigned long long>(mkm::kChunk * P.fn->idx_dim * P.d.kv_elem_bytes);
}

__device__ inline uint8_t* seq_page(const MkPass& P, long long t, long long cell) {
    return P.pages[static_cast<long long>(P.seq[t]) * P.pages_stride + cell / mkm::kChunk];
}

// Element e of a cell row stored as the KV element type (round to nearest even for half).
__device__ inline void kv_put(uint8_t* row, long long eb, long long e, float v) {
    if (eb == 4) reinterpret_cast<float*>(row)[e] = v;
    else reinterpret_cast<uint16_t*>(row)[e] = quant::blocks::f32_to_fp16(v);
}

// The pooled key K_b of token t's sequence (float32, d_I values).
__device__ inline float* pool_key(const MkPass& P, long long t, int layer, long long b) {
    const long long cell = b * kPoolCells;
    return reinterpret_cast<float*>(seq_page(P, t, cell) + pool_offset(P, layer) +
                                    static_cast<unsigned long long>((cell % mkm::kChunk) / kPoolCells * P.fn->idx_dim * 4));
}

// A score as an unsigned key with the selection's order: NaN counts as -inf, -0 as +0, and
// larger scores give larger keys (integer operations only, so no compiler can fold them).
__device__ inline unsigned score_key(float s) {
    const unsigned raw = quant::blocks::f32_bits(s), mag = raw & 0x7fffffffu;
    const unsigned u = mag > 0x7f800000u ? 0xff800000u : mag == 0 ? 0u : raw;
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

}  // namespace mkf

// Item j: rows 2j and 2j+1 of the indexer's matrices in the order [attn_q_b (H_I d_I rows) |
// proj (H_I rows, the last item of an odd count has one) | attn_k (d_I rows)], for every
// token: query and weight dots into idx_raw, keys stored into the token's cell.
__device__ inline void mk_fn_idx_dots(const MkPass& P, const MkModelStage& s, long long item, int lane) {
    const MkFnPass& F = *P.fn;
    const MkFnLayerW& L = F.layers[s.layer];
    const long long HI = F.n_idx_head, dI = F.idx_dim, n = P.d.n_embd;
    const long long nq = HI * dI / 2, nw = (HI + 1) / 2;
    const long long raw_w = HI * dI + HI;
    int kind;  // 0 query, 1 weights, 2 keys
    long long r, rows;
    if (item < nq) kind = 0, r = 2 * item, rows = HI * dI;
    else if (item < nq + nw) kind = 1, r = 2 * (item - nq), rows = HI;
    else kind = 2, r = 2 * (item - nq - nw), rows = dI;
    const MkW& w = kind == 0 ? L.idx_q : kind == 1 ? L.idx_proj : L.idx_k;
    const bool two = r + 1 < rows;
    const uint8_t* row0 = mkm::wrow(w, r);
    const uint8_t* row1 = mkm::wrow(w, two ? r + 1 : r);
    const long long eb = P.d.kv_elem_bytes;
    for (long long t = 0; t < P.n_tokens; ++t) {
        float v0, v1;
        warp_dot_row2(w.type, row0, row1, P.xn + t * n, P.xq + t * (n / 32), n, lane, &v0, &v1);
        if (lane == 0 && kind == 2) {
            const long long pos = P.pos[t];
            uint8_t* cell = mkf::seq_page(P, t, pos) + mkf::index_offset(P, s.layer) +
                            static_cast<unsigned long long>((pos % mkm::kChunk) * dI * eb);
            mkf::kv_put(cell, eb, r, v0);
            if (two) mkf::kv_put(cell, eb, r + 1, v1);
        } else if (lane == 0) {
            float* out = F.idx_raw + t * raw_w + (kind == 0 ? r : HI * dI + r);
            out[0] = v0;
            if (two) out[1] = v1;
        }
    }
}

namespace mkf {

// NEOX RoPE over all n dims at pos with the indexer table, pairs over the lanes; writes
// out[i] = a', out[i + n/2] = b', each times scale when `scaled`. in may be out.
__device__ inline void rope_all(const float* in, float* out, long long n, long long pos, const float* freq, bool scaled,
                                float scale, int lane) {
    const long long half = n / 2;
    for (long long i = lane; i < half; i += 32) {
        float c, sn;
        num::rope_cs(static_cast<int>(pos), freq[i], 1.0f, &c, &sn);
        float a = in[i], b = in[i + half];
        num::rope_pair(&a, &b, c, sn);
        out[i] = scaled ? num::mul_rn(a, scale) : a;
        out[i + half] = scaled ? num::mul_rn(b, scale) : b;
    }
}

// The pooled key of block b of token t's sequence from the stored keys of its four cells:
// mean, RMSNorm with k_norm, RoPE at the block's first cell; the key's own slot is the scratch.
__device__ inline void pool_block(const MkPass& P, int layer, long long t, long long b, int lane) {
    const MkFnPass& F = *P.fn;
    const long long dI = F.idx_dim, eb = P.d.kv_elem_bytes, first = b * kPoolCells;
    const uint8_t* k0 = seq_page(P, t, first) + index_offset(P, layer) +
                        static_cast<unsigned long long>((first % mkm::kChunk) * dI * eb);
    const long long row = dI * eb;
    float* v = pool_key(P, t, layer, b);
    for (long long e = lane; e < dI; e += 32)
        v[e] = num::pool_mean4(mkm::kv_at(k0, eb, e), mkm::kv_at(k0 + row, eb, e), mkm::kv_at(k0 + 2 * row, eb, e),
                               mkm::kv_at(k0 + 3 * row, eb, e));
    arbor_syncwarp();
    const float scale = num::rms_scale(mkm::warp_dot_lanes(v, v, dI, lane), static_cast<int>(dI), P.d.rms_eps);
    const float* kn = F.layers[layer].idx_k_norm;
    for (long long e = lane; e < dI; e += 32) v[e] = num::mul_rn(num::mul_rn(v[e], scale), kn[e]);
    arbor_syncwarp();
    rope_all(v, v, dI, first, F.index_freq, false, 1.0f, lane);
}

}  // namespace mkf

// Item t * (H_I + 2) + j: j < H_I, query head j of token t rotated at its position and
// scaled; j = H_I, the head weights scaled; j = H_I + 1, the pooled key of the block t
// completes (position % 4 == 3), from the keys the dots stage stored.
__device__ inline void mk_fn_idx_finish(const MkPass& P, const MkModelStage& s, long long item, int lane) {
    const MkFnPass& F = *P.fn;
    const long long HI = F.n_idx_head, dI = F.idx_dim;
    const long long t = item / (HI + 2), j = item % (HI + 2);
    const float* raw = F.idx_raw + t * (HI * dI + HI);
    if (j < HI) {
        mkf::rope_all(raw + j * dI, F.iq + t * HI * dI + j * dI, dI, P.pos[t], F.index_freq, true, F.idx_q_scale, lane);
    } else if (j == HI) {
        for (long long h = lane; h < HI; h += 32) F.iw[t * HI + h] = num::mul_rn(raw[HI * dI + h], F.idx_w_scale);
    } else if (P.pos[t] % mkf::kPoolCells == mkf::kPoolCells - 1) {
        mkf::pool_block(P, s.layer, t, P.pos[t] / mkf::kPoolCells, lane);
    }
}

namespace mkf {

// The score of block b of token t by the whole warp, with the bits of the contract's lane chain
// (dot_lanes per head: lane j holds accumulator j, elements j, j + 32, ... in order, then
// combine_lanes; then acc = fmaf(w_h, relu(dot), acc) in head order). Lane j reads elements
// j + 32i of the key and the queries, so each load is one coalesced 128-byte line. Valid in
// every lane.
__device__ inline float score_block(const MkPass& P, long long t, int layer, long long b, int lane) {
    const MkFnPass& F = *P.fn;
    const long long HI = F.n_idx_head, dI = F.idx_dim;
    const float* q = F.iq + t * HI * dI;
    const float* w = F.iw + t * HI;
    const float* key = pool_key(P, t, layer, b);
    constexpr int kRegs = 4;  // key elements held in registers (d_I up to 128); the rest are loaded per head
    float kr[kRegs];
#pragma unroll
    for (int i = 0; i < kRegs; ++i) kr[i] = 32 * i + lane < dI ? key[32 * i + lane] : 0.0f;
    float score = 0.0f;
    for (long long h0 = 0; h0 < HI; h0 += 16) {
        float v[16];
#pragma unroll
        for (int hh = 0; hh < 16; ++hh) {
            float acc = 0.0f;
            if (h0 + hh < HI) {
                const float* qh = q + (h0 + hh) * dI;
#pragma unroll
                for (int i = 0; i < kRegs; ++i)
                    if (32 * i + lane < dI) acc = fmaf(qh[32 * i + lane], kr[i], acc);
                for (long long e = 32 * kRegs + lane; e < dI; e += 32) acc = fmaf(qh[e], key[e], acc);
            }
            v[hh] = acc;
        }
        combine_lanes_multi<16>(v, lane);  // lanes 2h and 2h + 1: head h0 + h
        for (long long hh = 0; hh < 16 && h0 + hh < HI; ++hh)
            score = fmaf(w[h0 + hh], num::relu(__shfl(v[0], static_cast<int>(2 * hh))), score);
    }
    return score;
}

}  // namespace mkf

// Item t * (64 / kMkFnScoreBlocks) max_chunks + g: the scores of blocks [8g, 8g + 8) before token
// t's own block (sparse tokens only), one after another by the whole warp (mkf::score_block).
__device__ inline void mk_fn_idx_score(const MkPass& P, const MkModelStage& s, long long item, int lane) {
    const MkFnPass& F = *P.fn;
    const long long G = mkf::kBlocksPerPage / kMkFnScoreBlocks * P.max_chunks;
    const long long stride = mkf::kBlocksPerPage * P.max_chunks;
    const long long t = item / G, b0 = (item % G) * kMkFnScoreBlocks;
    const long long pos = P.pos[t];
    if (!mkf::index_sparse(F, pos)) return;
    const long long end = min(b0 + kMkFnScoreBlocks, pos / mkf::kPoolCells);
    if (F.repool) {  // the no-cache measurement: the warp pools the item's blocks first
        for (long long b = b0; b < end; ++b) mkf::pool_block(P, s.layer, t, b, lane);
        arbor_syncwarp();
    }
    for (long long b = b0; b < end; ++b) {
        const float score = mkf::score_block(P, t, s.layer, b, lane);
        if (lane == 0) F.scores[t * stride + b] = score;
    }
}

// The radix select's step (warp 0 of the item): hist holds the counts of the keys matching the
// prefix so far by their digit at this round's shift; returns the digit holding the k-th
// largest key and puts in *k_in its rank among the keys with that digit. Lane j holds bins
// 255 - 8j - i, i = 0..7: the bins in descending order over the lanes.
__device__ inline int select_digit(const unsigned* hist, unsigned k, int lane, unsigned* k_in) {
    unsigned c[8], sum = 0;
#pragma unroll
    for (int i = 0; i < 8; ++i) c[i] = hist[255 - 8 * lane - i], sum += c[i];
    unsigned incl = sum;
    for (int o = 1; o < 32; o <<= 1) {
        const unsigned v = __shfl(incl, lane >= o ? lane - o : lane);
        if (lane >= o) incl += v;
    }
    const unsigned excl = incl - sum;
    const bool here = excl < k && k <= incl;
    int digit = 0;
    unsigned kin = 0;
    if (here) {
        unsigned cum = excl;
        bool found = false;
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            if (!found && cum + c[i] >= k) found = true, digit = 255 - 8 * lane - i, kin = k - cum;
            else if (!found) cum += c[i];
        }
    }
    const int owner = __ffs(static_cast<int>(arbor_ballot(here))) - 1;
    *k_in = __shfl(kin, owner);
    return __shfl(digit, owner);
}

// Item t, run by a whole workgroup: Sel[t] = the budget/4 blocks b < pos/4 ranked first by
// (score descending, block ascending), in increasing block order. Radix select over the 32-bit
// keys, 8 bits a round: the workgroup's histogram of the keys that match the prefix so far
// (shared memory, integer counts, so the order of the adds does not matter), then warp 0 finds
// the digit holding the k-th largest; at the end the prefix is the K-th largest key T and k the
// number of blocks equal to T to take (the lowest ones). The keys are read from the scores once
// into shared memory when they fit (up to about 39k cells), eight loads in flight per thread.
// The last sweep: warp w takes the w-th eighth of the blocks (whole 32-block steps), counts its
// blocks above T and equal to T, and after a barrier writes every block above T and the
// equal ones whose rank among all equal ones is below k, at the place the counts of the warps
// before it give: the same set in the same order as one sequential sweep.
__device__ __noinline__ inline void mk_fn_idx_select_block(const MkPass& P, long long t, float* smem) {
    ARBOR_MK_SMEM(smem);
    const MkFnPass& F = *P.fn;
    const long long pos = P.pos[t];
    if (!mkf::index_sparse(F, pos)) return;
    const int nb = static_cast<int>(pos / mkf::kPoolCells), K = static_cast<int>(F.budget / mkf::kPoolCells);
    const float* sc = F.scores + t * mkf::kBlocksPerPage * P.max_chunks;
    const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid & 31;
    unsigned* hist = reinterpret_cast<unsigned*>(smem);  // [256]
    unsigned* bc = hist + 256;                           // [2] the round's digit and k; [8][2] the sweep's counts
    unsigned* keys = bc + 32;
    const bool cached = nb <= kMkSmemFloats - 256 - 32;
    if (cached) block_copy(keys, sc, nb, [](float v) { return mkf::score_key(v); });
    auto key = [&](int b) { return cached ? keys[b] : mkf::score_key(sc[b]); };
    unsigned prefix = 0, mask = 0, k = static_cast<unsigned>(K);
    for (int shift = 24; shift >= 0; shift -= 8) {
        hist[tid] = 0;  // 256 threads, 256 bins
        __syncthreads();
        for (int b = tid; b < nb; b += kMkBlockThreads) {
            const unsigned u = key(b);
            if ((u & mask) == prefix) atomicAdd(&hist[(u >> shift) & 255u], 1u);
        }
        __syncthreads();
        if (warp == 0) {
            unsigned k_in;
            const int digit = select_digit(hist, k, lane, &k_in);
            if (lane == 0) bc[0] = static_cast<unsigned>(digit), bc[1] = k_in;
        }
        __syncthreads();
        prefix |= bc[0] << shift;
        k = bc[1];
        mask |= 255u << shift;
        __syncthreads();  // bc and hist are rewritten next round
    }
    const int seg = ((nb + kMkBlockWarps * 32 - 1) / (kMkBlockWarps * 32)) * 32;  // blocks per warp
    const int b_lo = warp * seg, b_hi = b_lo + seg < nb ? b_lo + seg : nb;
    unsigned gt = 0, eq = 0;
    for (int b = b_lo + lane; b < b_hi; b += 32) {
        const unsigned u = key(b);
        gt += u > prefix;
        eq += u == prefix;
    }
    for (int o = 16; o >= 1; o >>= 1) gt += __shfl_xor(gt, o), eq += __shfl_xor(eq, o);
    unsigned* counts = bc + 2;
    if (lane == 0) counts[2 * warp] = gt, counts[2 * warp + 1] = eq;
    __syncthreads();
    unsigned gt_before = 0, eq_seen = 0;
    for (int w = 0; w < warp; ++w) gt_before += counts[2 * w], eq_seen += counts[2 * w + 1];
    unsigned written = gt_before + (eq_seen < k ? eq_seen : k);
    int* out = F.sel + t * K;
    const unsigned below = (1u << lane) - 1u;
    for (int base = b_lo; base < b_hi; base += 32) {
        const int b = base + lane;
        const bool valid = b < b_hi;
        const unsigned u = valid ? key(b) : 0u;
        const bool is_eq = valid && u == prefix;
        const unsigned eqm = arbor_ballot(is_eq);
        const bool take = (valid && u > prefix) || (is_eq && eq_seen + __popc(eqm & below) < k);
        const unsigned tm = arbor_ballot(take);
        if (take) out[written + __popc(tm & below)] = b;
        written += __popc(tm);
        eq_seen += __popc(eqm);
    }
}

}  // namespace arbor::gpu
