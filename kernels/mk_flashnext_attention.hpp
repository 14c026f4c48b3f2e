// Device work items of flashnext's attention (docs/MODEL-flashnext.md; CPU:
// engine/src/model/cpu_stage_flashnext_attention.cpp). A token that sees at most budget + 3
// cells attends densely, exactly as qwen3; any other token attends to the cells of its
// selected blocks plus its own block, in increasing position, cut at the absolute 256-cell
// chunk boundaries: chunk c is the chunk contract of numerics.hpp over the attended cells in
// [256c, 256c + 256) only, a chunk without one is skipped (marked l = -1 in attn_part, which
// no real chunk has: l >= 1), and the combine runs over the remaining chunks in chunk order.
// The per-chunk arithmetic is the megakernel's dense chunk item (mk_block_ops.hpp) with the
// chunk's j-th attended cell in place of cell first + j, so selecting every block gives the
// dense bits.
#pragma once

#include "arbor_hip.hpp"
#include "mk_flashnext.hpp"
#include "mk_flashnext_index.hpp"
#include "mk_block_ops.hpp"
#include "mk_model.hpp"
#include "mk_model_ops.hpp"

namespace arbor::gpu {

namespace mkf {

// The attended cells of one chunk: j < n_sel4 is cell 4 sel[j/4] + j%4, then cells from
// `run` on (the token's own block, or for a dense token the whole chunk).
struct ChunkCells {
    const int* sel;  // the chunk's first selected block
    long long n_sel4;
    long long run;
    long long n;
    __device__ long long cell(long long j) const {  // j < n
        return j < n_sel4 ? 4 * static_cast<long long>(sel[j >> 2]) + (j & 3) : run + (j - n_sel4);
    }
};

// The first index i in sorted a[0..n) with a[i] >= v.
__device__ inline long long lower_bound(const int* a, long long n, long long v) {
    long long lo = 0, hi = n;
    while (lo < hi) {
        const long long mid = (lo + hi) / 2;
        if (a[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

// The attended cells of chunk ch of token t (n = 0: none).
__device__ inline ChunkCells chunk_cells(const MkPass& P, long long t, long long ch) {
    const MkFnPass& F = *P.fn;
    const long long pos = P.pos[t], first = ch * mkm::kChunk;
    ChunkCells c{nullptr, 0, first, 0};
    if (!index_sparse(F, pos)) {
        c.n = attn_cells_n(pos, first);
        return c;
    }
    const long long K = F.budget / 4, own = (pos / 4) * 4;
    const int* sel = F.sel + t * K;
    const long long lo = lower_bound(sel, K, ch * 64), hi = lower_bound(sel, K, ch * 64 + 64);
    c.sel = sel + lo;
    c.n_sel4 = 4 * (hi - lo);
    c.run = own;
    c.n = c.n_sel4 + (own / mkm::kChunk == ch ? pos + 1 - own : 0);
    return c;
}

}  // namespace mkf

// Item (((g * T) + t) * max_chunks + ch) * head_parts + part, run by a whole workgroup: chunk
// ch of the attention of (a part of) the q heads of kv head g for token t over its attended
// cells (mk_block_ops.hpp's chunk with this cell map). Writes o[hd_v], m, l per head into
// attn_part; a chunk without attended cells writes l = -1.
__device__ inline void mk_fn_attn_chunk_block(const MkPass& P, const MkModelStage& s, long long item, float* smem) {
    const MkDims& d = P.d;
    const ChunkItem it = chunk_item(P, s, item);
    if (it.ch > P.pos[it.t] / mkm::kChunk) return;
    const mkf::ChunkCells cells = mkf::chunk_cells(P, it.t, it.ch);
    if (cells.n == 0) {
        const long long group = d.n_head / d.n_head_kv, hdv = d.hd_v;
        float* part = P.attn_part + (((it.t * d.n_head_kv + it.g) * P.max_chunks + it.ch) * group + it.h0) * (hdv + 2);
        if (threadIdx.x == 0)
            for (int h = 0; h < it.gh; ++h) part[h * (hdv + 2) + hdv + 1] = -1.0f;
        return;
    }
    attn_chunk_cells(P, s, it.g, it.t, it.ch, cells, static_cast<int>(cells.n), it.h0, it.gh, smem);
}

}  // namespace arbor::gpu
