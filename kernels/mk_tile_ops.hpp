// Tiled row dots for passes of many tokens (prefill, batched reads): a workgroup item owns a
// tile of kTileRows weight rows x kTileTokens tokens and streams the row's sub-blocks through
// shared memory 32 at a time, so each weight byte is read from memory once per tile instead of
// once per token, and every operand of the inner loop is in shared memory.
//
// The bits are warp_dot_row's: warp w owns rows 2w and 2w+1 of the tile for all its tokens (16
// outputs); lane j owns sub-block j of every 32-sub-block range, so over the ranges it sees
// sub-blocks j, j+32, j+64, ... in increasing order, exactly the contract's lane chain
// (lane_accumulate of Fmt::terms, computed as quant_blocks_packed.hpp's apply of unpack), and
// the shuffle tree then combines the 32 lanes as combine_lanes does. Ranges start at multiples of 32 sub-blocks, which every format's block
// (1 or 8 sub-blocks) divides, so a range is whole blocks.
#pragma once

#include "arbor_hip.hpp"
#include "mk_block_ops.hpp"
#include "mk_dot.hpp"
#include "mk_model.hpp"
#include "mk_model_ops.hpp"
#include "mk_phase.hpp"

namespace arbor::gpu {

constexpr int kTileOut = 2 * kTileTokens;  // outputs per warp (kTileRows = 2 per warp)

namespace mkt {

// One range of a tile into shared memory in a single batched pass (every thread's loads before
// its stores): for each of nm matrices its rows r0 .. r0 + nr (range_bytes from byte off; row i
// of matrix m in slot i * nm + m, at wsm + slot * row_cap), then the tokens' Q8A blocks s0 .. s0 + ns
// (token k at xsm + 32 k), in words of W. 32-bit index arithmetic: a tile range is at most
// 2 x 16 rows x 1088 bytes plus 8 x 32 blocks, and a 64-bit division per word cost more than the
// copy itself.
template <class W>
__device__ inline void stage_tile_words(const MkW* const* mats, int nm, long long r0, int nr, long long off,
                                        long long range_bytes, int row_cap, const quant::BlockQ8A* xq,
                                        long long t0, int nt, long long subs, long long s0, int ns, uint8_t* wsm,
                                        quant::BlockQ8A* xsm) {
    constexpr int U = sizeof(W);
    const int uw = static_cast<int>(range_bytes) / U, ux = ns * static_cast<int>(sizeof(quant::BlockQ8A)) / U;
    const int wtotal = nm * nr * uw, total = wtotal + nt * ux;
    // Unit idx's source (load) or shared destination (store): the index math is redone for the
    // stores rather than keeping kU pointers live across the loads (registers the tile's
    // accumulators need).
    auto at = [&](int idx, bool dst) -> uint8_t* {
        if (idx < wtotal) {
            const int row = idx / uw, k = idx - row * uw;
            const int m = row / nr, i = row - m * nr;
            return dst ? wsm + (i * nm + m) * row_cap + k * U
                       : const_cast<uint8_t*>(mkm::wrow(*mats[m], r0 + i)) + off + static_cast<long long>(k) * U;
        }
        const int j = idx - wtotal, k = j / ux, e = j - k * ux;
        return dst ? reinterpret_cast<uint8_t*>(xsm + k * 32) + e * U
                   : const_cast<uint8_t*>(reinterpret_cast<const uint8_t*>(xq + (t0 + k) * subs + s0)) + e * U;
    };
    constexpr int kU = U == 16 ? 4 : 8;  // 16-byte words: four in flight per thread
    const int tid = static_cast<int>(threadIdx.x);
    for (int b = tid; b < total; b += kMkBlockThreads * kU) {
        W r[kU];
#pragma unroll
        for (int u = 0; u < kU; ++u) {
            const int idx = b + u * kMkBlockThreads;
            if (idx < total) r[u] = *reinterpret_cast<const W*>(at(idx, false));
        }
#pragma unroll
        for (int u = 0; u < kU; ++u) {
            const int idx = b + u * kMkBlockThreads;
            if (idx < total) *reinterpret_cast<W*>(at(idx, true)) = r[u];
        }
    }
}

// stage_tile_words with the widest word (16, 4 or 1 bytes) that every source and destination
// offset allows: the weight rows' data, row and range offsets, the staged row stride, and the
// Q8A rows (40-byte blocks; the shared arena is 16-byte aligned).
__device__ inline void stage_tile(const MkW* const* mats, int nm, long long r0, int nr, long long off, long long range_bytes,
                                  int row_cap, const quant::BlockQ8A* xq, long long t0, int nt, long long subs,
                                  long long s0, int ns, uint8_t* wsm, quant::BlockQ8A* xsm) {
    constexpr long long kQ = sizeof(quant::BlockQ8A);
    unsigned long long bits = static_cast<unsigned long long>(off | range_bytes | row_cap);
    bits |= reinterpret_cast<unsigned long long>(xq) | static_cast<unsigned long long>(subs * kQ) |
            static_cast<unsigned long long>(s0 * kQ) | static_cast<unsigned long long>(ns * kQ);
    for (int m = 0; m < nm; ++m)
        bits |= reinterpret_cast<unsigned long long>(mats[m]->data) | static_cast<unsigned long long>(mats[m]->row_bytes);
    if ((bits & 15) == 0)
        stage_tile_words<uint4>(mats, nm, r0, nr, off, range_bytes, row_cap, xq, t0, nt, subs, s0, ns, wsm, xsm);
    else if ((bits & 3) == 0)
        stage_tile_words<unsigned>(mats, nm, r0, nr, off, range_bytes, row_cap, xq, t0, nt, subs, s0, ns, wsm, xsm);
    else
        stage_tile_words<uint8_t>(mats, nm, r0, nr, off, range_bytes, row_cap, xq, t0, nt, subs, s0, ns, wsm, xsm);
}

// The tile's 2 x kTileTokens lane-chain accumulators of this lane over all ranges of the rows.
// The tile stages rows r0 .. r0 + nr of each of nm matrices (one, or the FFN's gate and up of one
// format) interleaved: slot i * nm + m. Warp w owns slots 2w and 2w + 1, so acc[k] is slot 2w's
// chain for token k and acc[kTileTokens + k] slot 2w + 1's (two rows of one matrix, or row w of
// gate and of up).
template <class Fmt>
__device__ inline void tile_chains(const MkW* const* mats, int nm, long long r0, int nr, const quant::BlockQ8A* xq,
                                   long long t0, int nt, long long n, float* smem, float* acc) {
    const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) & 31;
    static_assert(quant::blocks::Packed<Fmt>::kHas, "the tiles take the packed formats");
    using Pk = quant::blocks::Packed<Fmt>;
    const long long subs = n / 32;
    const int slots = nr * nm;  // at most kTileRows
    constexpr int kRangeBytes = (32 / Fmt::kSubs) * Fmt::kBytes;
    uint8_t* wsm = reinterpret_cast<uint8_t*>(smem);  // [kTileRows][kRangeBytes]
    quant::BlockQ8A* xsm = reinterpret_cast<quant::BlockQ8A*>(wsm + ((kTileRows * kRangeBytes + 15) & ~15));  // [kTileTokens][32]
    PhaseClock pc;
    for (long long s0 = 0; s0 < subs; s0 += 32) {
        const int ns = static_cast<int>(subs - s0 < 32 ? subs - s0 : 32);
        const long long range_bytes = static_cast<long long>(ns / Fmt::kSubs) * Fmt::kBytes;
        const long long off = (s0 / Fmt::kSubs) * Fmt::kBytes;
        stage_tile(mats, nm, r0, nr, off, range_bytes, kRangeBytes, xq, t0, nt, subs, s0, ns, wsm, xsm);
        __syncthreads();
        pc.mark(kPhTileStage);
        if (lane < ns && 2 * warp < slots) {
            const int sb = lane % Fmt::kSubs;
            const long long blk = (lane / Fmt::kSubs) * Fmt::kBytes;
            // The warp's two slots' sub-blocks are unpacked once; each token's activation block is
            // then read once and applied to both (staged rows start at multiples of kRangeBytes
            // in the 16-byte aligned arena, which keeps every format's packed alignment).
            const bool two = 2 * warp + 1 < slots;
            const quant::blocks::PackedSub p0 = Pk::unpack(wsm + (2 * warp) * kRangeBytes + blk, sb);
            const quant::blocks::PackedSub p1 = Pk::unpack(wsm + (2 * warp + (two ? 1 : 0)) * kRangeBytes + blk, sb);
#pragma unroll
            for (int k = 0; k < kTileTokens; ++k) {
                if (k >= nt) continue;
                const quant::BlockQ8A& x = xsm[k * 32 + lane];
                acc[k] = quant::blocks::lane_accumulate<Fmt::kHasMin>(acc[k], Pk::apply(p0, x.q, x.sum), x.d);
                if (two)
                    acc[kTileTokens + k] =
                        quant::blocks::lane_accumulate<Fmt::kHasMin>(acc[kTileTokens + k], Pk::apply(p1, x.q, x.sum), x.d);
            }
        }
        __syncthreads();  // the tile is restaged next
        pc.mark(kPhTileDots);
    }
}

// tile_chains for the tiled formats (the host builds tiles only for these); false for any other.
__device__ inline bool run_tile_chains(int type, const MkW* const* mats, int nm, long long r0, int nr,
                                       const quant::BlockQ8A* xq, long long t0, int nt, long long n, float* smem,
                                       float* acc) {
    using namespace quant::blocks;
    switch (static_cast<TensorType>(type)) {
    case TensorType::Q4_0: tile_chains<Q4_0>(mats, nm, r0, nr, xq, t0, nt, n, smem, acc); return true;
    case TensorType::Q8_0: tile_chains<Q8_0>(mats, nm, r0, nr, xq, t0, nt, n, smem, acc); return true;
    case TensorType::Q4_K: tile_chains<Q4_K>(mats, nm, r0, nr, xq, t0, nt, n, smem, acc); return true;
    case TensorType::Q5_K: tile_chains<Q5_K>(mats, nm, r0, nr, xq, t0, nt, n, smem, acc); return true;
    case TensorType::Q6_K: tile_chains<Q6_K>(mats, nm, r0, nr, xq, t0, nt, n, smem, acc); return true;
    case TensorType::IQ4_XS: tile_chains<IQ4_XS>(mats, nm, r0, nr, xq, t0, nt, n, smem, acc); return true;
    default: return false;
    }
}

}  // namespace mkt

// Item rt * ceil(T / kTileTokens) + tt: X[t][r] += W[r] . in[t] for the tile's rows and tokens
// (MatMulAdd over a pass of many tokens; the host builds tiles only for the formats below).
// Not inlined: its 16 accumulators and tile loop get their own register allocation instead of
// raising the whole megakernel's spills.
__device__ __noinline__ void mk_matmul_add_tile(const MkPass& P, const MkModelStage& s, long long item, float* smem) {
    ARBOR_MK_SMEM(smem);
    const mkm::In in = mkm::stage_in(P, s.buf);
    const long long T = P.n_tokens, n_tt = (T + kTileTokens - 1) / kTileTokens;
    const long long r0 = (item / n_tt) * kTileRows, t0 = (item % n_tt) * kTileTokens;
    const int nr = static_cast<int>(s.w.rows - r0 < kTileRows ? s.w.rows - r0 : kTileRows);
    const int nt = static_cast<int>(T - t0 < kTileTokens ? T - t0 : kTileTokens);
    float acc[kTileOut];
#pragma unroll
    for (int o = 0; o < kTileOut; ++o) acc[o] = 0.0f;
    const MkW* one[1] = {&s.w};
    if (!mkt::run_tile_chains(s.w.type, one, 1, r0, nr, in.xq, t0, nt, in.width, smem, acc)) return;
    const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) & 31;
#pragma unroll
    for (int o = 0; o < kTileOut; ++o) {
        const float v = warp_combine(acc[o]);  // every lane takes part in the shuffles
        const int i = 2 * warp + o / kTileTokens, k = o % kTileTokens;
        if (lane == 0 && i < nr && k < nt) {
            float* x = P.x + (t0 + k) * P.d.n_embd + r0 + i;
            *x = num::add_rn(*x, v);
        }
    }
}

// Item rt * ceil(T / kTileTokens) + tt: H[t][r] = silu(Wg[r] . XN[t]) * (Wu[r] . XN[t]) for
// kTileRows / 2 rows and kTileTokens tokens (gate and up of one format the host accepts).
__device__ __noinline__ void mk_gated_ffn_tile(const MkPass& P, const MkModelStage& s, long long item, float* smem) {
    ARBOR_MK_SMEM(smem);
    const MkLayerW& L = mk_layer(P, s);
    const long long T = P.n_tokens, n_tt = (T + kTileTokens - 1) / kTileTokens, n = P.d.n_embd;
    constexpr int kRows = kTileRows / 2;
    const long long r0 = (item / n_tt) * kRows, t0 = (item % n_tt) * kTileTokens;
    const int nr = static_cast<int>(P.d.n_ff - r0 < kRows ? P.d.n_ff - r0 : kRows);
    const int nt = static_cast<int>(T - t0 < kTileTokens ? T - t0 : kTileTokens);
    float acc[2 * kTileTokens];
#pragma unroll
    for (int o = 0; o < 2 * kTileTokens; ++o) acc[o] = 0.0f;
    const MkW* gu[2] = {&L.gate, &L.up};  // slots 2w, 2w + 1: gate and up row w
    if (!mkt::run_tile_chains(L.gate.type, gu, 2, r0, nr, P.xq, t0, nt, n, smem, acc)) return;
    const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) & 31;
#pragma unroll
    for (int k = 0; k < kTileTokens; ++k) {
        const float g = warp_combine(acc[k]);
        const float u = warp_combine(acc[kTileTokens + k]);
        if (lane == 0 && warp < nr && k < nt) P.h[(t0 + k) * P.d.n_ff + r0 + warp] = num::mul_rn(num::silu(g), u);
    }
}

// Item rt * ceil(T / kTileTokens) + tt: rows r0 .. r0 + 16 of [Q | K | V] (each of the three
// matrices has a multiple of kTileRows rows, checked by the host, so a tile lies in one of them)
// for the tile's tokens, + bias, into qkv.
__device__ __noinline__ void mk_qkv_dots_tile(const MkPass& P, const MkModelStage& s, long long item, float* smem) {
    ARBOR_MK_SMEM(smem);
    const MkDims& d = P.d;
    const MkLayerW& L = mk_layer(P, s);
    const long long nq = d.n_head * d.hd_k, nk = d.n_head_kv * d.hd_k;
    const long long R = nq + nk + d.n_head_kv * d.hd_v;
    const long long T = P.n_tokens, n_tt = (T + kTileTokens - 1) / kTileTokens;
    const long long r = (item / n_tt) * kTileRows, t0 = (item % n_tt) * kTileTokens;
    const MkW& w = r < nq ? L.wq : r < nq + nk ? L.wk : L.wv;
    const float* bias = r < nq ? L.bq : r < nq + nk ? L.bk : L.bv;
    const long long r0 = r < nq ? r : r < nq + nk ? r - nq : r - nq - nk;
    const int nr = kTileRows;
    const int nt = static_cast<int>(T - t0 < kTileTokens ? T - t0 : kTileTokens);
    float acc[kTileOut];
#pragma unroll
    for (int o = 0; o < kTileOut; ++o) acc[o] = 0.0f;
    const MkW* one[1] = {&w};
    if (!mkt::run_tile_chains(w.type, one, 1, r0, nr, P.xq, t0, nt, d.n_embd, smem, acc)) return;
    const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) & 31;
#pragma unroll
    for (int o = 0; o < kTileOut; ++o) {
        float v = warp_combine(acc[o]);
        const int i = 2 * warp + o / kTileTokens, k = o % kTileTokens;
        if (lane == 0 && k < nt) {
            if (bias) v = num::add_rn(v, bias[r0 + i]);
            P.qkv[(t0 + k) * R + r + i] = v;
        }
    }
}

}  // namespace arbor::gpu
