// Device work items run by a whole workgroup (256 threads, 8 warps) instead of one warp: the
// stages whose items are few and each long (a token's RMSNorm, a 256-cell attention chunk, the
// chunk combine). A warp alone walks such an item serially, one memory
// latency after another (profiled at 10-40 us per item on the H200); the whole workgroup puts
// all its loads in flight at once and keeps only the contract's sequential chains serial.
//
// The bits are the CPU's for the same reasons as in mk_model_ops.hpp: every element goes
// through numerics.hpp's functions, each lanes32 dot is either one warp's 32 lanes plus the
// combine_lanes shuffle tree or one thread's 32 chains plus the same tree (mkm::lane_dot),
// maxima are exact whatever the order, and every sequential sum of
// the contract (l over cells, o[d] over cells, L and O over chunks) runs in one thread in the
// contract's order. Shared memory is one arena of kMkSmemFloats floats owned by the item.
#pragma once

#include "arbor_hip.hpp"
#include "mk_dot.hpp"
#include "mk_model.hpp"
#include "mk_model_ops.hpp"
#include "mk_phase.hpp"
#include "model/numerics.hpp"

namespace arbor::gpu {

constexpr int kMkBlockThreads = 256;
constexpr int kMkBlockWarps = kMkBlockThreads / 32;

namespace mkb {

// The n / 32 Q8A blocks of y (n a multiple of 32), spread over the workgroup's warps. Call
// after the writes of y are visible to the block (__syncthreads).
__device__ inline void block_quantize(const float* y, long long n, quant::BlockQ8A* q) {
    const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) & 31;
    for (long long b = warp; b < n / 32; b += kMkBlockWarps) mkm::warp_quantize_block(y + 32 * b, q + b, lane);
}

}  // namespace mkb

// dst[i] = f(src[i]) for n elements, global src to shared dst, with the whole block, every
// thread's loads issued before its stores (one memory latency per 8 x 256 elements, not one per
// element). f defaults to a plain copy.
struct CopyAs {
    template <class W>
    __device__ W operator()(W w) const { return w; }
};
template <class D, class S, class F = CopyAs>
__device__ inline void block_copy(D* dst, const S* src, long long n, F f = {}) {
    constexpr int kU = 8;
    for (long long base = threadIdx.x; base < n; base += kMkBlockThreads * kU) {
        S r[kU];
#pragma unroll
        for (int u = 0; u < kU; ++u)
            if (base + u * kMkBlockThreads < n) r[u] = src[base + u * kMkBlockThreads];
#pragma unroll
        for (int u = 0; u < kU; ++u)
            if (base + u * kMkBlockThreads < n) dst[base + u * kMkBlockThreads] = f(r[u]);
    }
}

// Copies `bytes` (a multiple of 4) from global src to shared dst: 16-byte vectors when both ends
// allow, else 4-byte words.
__device__ inline void block_stage(void* dst, const void* src, long long bytes) {
    if (((reinterpret_cast<unsigned long long>(src) | reinterpret_cast<unsigned long long>(dst) | bytes) & 15) == 0)
        block_copy(static_cast<uint4*>(dst), static_cast<const uint4*>(src), bytes / 16);
    else
        block_copy(static_cast<unsigned*>(dst), static_cast<const unsigned*>(src), bytes / 4);
}

// Item: one row (token, or output token when outputs_only). x is staged in shared memory by
// the whole block at once; warp 0 runs the contract's 32 lane chains from there; every thread
// then writes its share of y (weights loaded eight at a time), into shared memory too, from
// where the warps quantize it.
__device__ inline void mk_rms_norm_block(const MkPass& P, const MkModelStage& s, long long item, float* smem) {
    const long long n = P.d.n_embd;
    const long long t = s.outputs_only ? P.out_token[item] : item;
    const float* x = P.x + t * n;
    float* y = P.xn + item * n;
    const int tid = static_cast<int>(threadIdx.x);
    const bool staged = n <= kMkSmemFloats - 1;
    float* xs = staged ? smem : const_cast<float*>(x);
    if (staged) block_stage(xs, x, n * 4);
    __syncthreads();
    if (tid < 32) {
        const float ss = mkm::warp_dot_lanes(xs, xs, n, tid);
        if (tid == 0) smem[kMkSmemFloats - 1] = num::rms_scale(ss, static_cast<int>(n), P.d.rms_eps);
    }
    __syncthreads();
    const float scale = smem[kMkSmemFloats - 1];
    constexpr int kU = 8;
    for (long long base = tid; base < n; base += kMkBlockThreads * kU) {
        float w[kU], xv[kU];
#pragma unroll
        for (int u = 0; u < kU; ++u) {
            const long long i = base + u * kMkBlockThreads;
            w[u] = i < n ? s.norm[i] : 0.0f;
            xv[u] = i < n ? xs[i] : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < kU; ++u) {
            const long long i = base + u * kMkBlockThreads;
            if (i >= n) continue;
            const float v = num::mul_rn(num::mul_rn(xv[u], scale), w[u]);
            y[i] = v;
            if (staged) xs[i] = v;  // this thread's own element
        }
    }
    if (s.quantize_out) {
        __syncthreads();
        mkb::block_quantize(staged ? xs : y, n, P.xq + item * (n / 32));
    }
}

// Copies the rows of cells c0 .. c0 + np - 1 of a cell map (cells.cell(j): the j-th attended
// cell, in increasing order) into shared dst, row after row, in words of W (every thread's loads
// issued before its stores); base is the row of cell `first`, a row is wpr words.
template <class W, class Cells>
__device__ inline void block_copy_rows(W* dst, const uint8_t* base, long long first, const Cells& cells, int c0, int np,
                                       int wpr, int row_bytes) {
    constexpr int kU = 8;
    const int n = np * wpr;  // at most 256 cells x 64 words
    for (int b = static_cast<int>(threadIdx.x); b < n; b += kMkBlockThreads * kU) {
        W r[kU];
#pragma unroll
        for (int u = 0; u < kU; ++u) {
            const int i = b + u * kMkBlockThreads;
            if (i < n) {
                const int j = i / wpr;  // 32-bit: a 64-bit division per word cost more than the copy
                r[u] = reinterpret_cast<const W*>(base + (cells.cell(c0 + j) - first) * row_bytes)[i - j * wpr];
            }
        }
#pragma unroll
        for (int u = 0; u < kU; ++u) {
            const int i = b + u * kMkBlockThreads;
            if (i < n) dst[i] = r[u];
        }
    }
}

// The rows of cells c0 .. c0 + np - 1 of a cell map into shared dst: 16-byte words when the
// rows allow, else 4-byte words.
template <class Cells>
__device__ inline void block_stage_rows(uint8_t* dst, const uint8_t* base, long long first, const Cells& cells, int c0,
                                        int np, int row_bytes) {
    if (((reinterpret_cast<unsigned long long>(base) | reinterpret_cast<unsigned long long>(dst) | row_bytes) & 15) == 0)
        block_copy_rows(reinterpret_cast<uint4*>(dst), base, first, cells, c0, np, row_bytes / 16, row_bytes);
    else
        block_copy_rows(reinterpret_cast<unsigned*>(dst), base, first, cells, c0, np, row_bytes / 4, row_bytes);
}

// The cells of a dense chunk: first, first + 1, ...
struct DenseCells {
    long long first;
    __device__ long long cell(int j) const { return first + j; }
};

// A dense chunk's rows are contiguous: one flat copy, no per-word cell lookup.
__device__ inline void block_stage_rows(uint8_t* dst, const uint8_t* base, long long, const DenseCells&, int c0, int np,
                                        int row_bytes) {
    block_stage(dst, base + static_cast<long long>(c0) * row_bytes, static_cast<long long>(np) * row_bytes);
}

// The K rows of cells c0 .. c0 + np - 1 of a cell map as floats into shared dst, row j at
// dst + j * stride (stride = hd + 1 floats: consecutive rows start in consecutive banks). An
// F16 row is read in 4-byte words (two elements each), every thread's loads before its stores.
template <class Cells>
__device__ inline void block_stage_k_f32(float* dst, int stride, const uint8_t* base, long long first, const Cells& cells,
                                         int c0, int np, int hd, int eb) {
    constexpr int kU = 8;
    const int tid = static_cast<int>(threadIdx.x);
    const int row_bytes = hd * eb;
    const int wpr = row_bytes / 4;  // words per row
    const int n = np * wpr;         // at most 256 cells x 256 words
    for (int b = tid; b < n; b += kMkBlockThreads * kU) {
        unsigned r[kU];
#pragma unroll
        for (int u = 0; u < kU; ++u) {
            const int i = b + u * kMkBlockThreads;
            if (i < n) {
                const int j = i / wpr;
                r[u] = reinterpret_cast<const unsigned*>(base + (cells.cell(c0 + j) - first) * row_bytes)[i - j * wpr];
            }
        }
#pragma unroll
        for (int u = 0; u < kU; ++u) {
            const int i = b + u * kMkBlockThreads;
            if (i >= n) continue;
            const int j = i / wpr, w = i - j * wpr;
            float* o = dst + j * stride;
            if (eb == 4) {
                o[w] = __uint_as_float(r[u]);
            } else {
                o[2 * w] = quant::blocks::fp16_to_f32(r[u] & 0xffffu);
                o[2 * w + 1] = quant::blocks::fp16_to_f32(r[u] >> 16);
            }
        }
    }
}

// Item (((g * T) + t) * max_chunks + ch) * head_parts + part: chunk ch of the attention of
// the q heads of kv head g for token t, heads h0 .. h0 + gh - 1 of the group (part p of
// s.head_parts takes gh = group / head_parts heads from h0 = p * gh). With s.direct (the pass has one chunk per token) the chunk is the whole
// attention: the contract's combine of one chunk is applied in place (w = exp_f(m - m),
// L = fmaf(l, w, 0), O = fmaf(o, w, 0), out = O / L) and written straight to Att (and AttQ);
// otherwise o, m, l go to attn_part for the combine stage.
//
// The K rows, then the V rows, of the chunk are staged through shared memory in pieces that
// the whole block loads at once: walking them from global memory one cell after another cost
// one memory latency per cell (about 200 us per chunk on the H200).
//  1. q of the group's heads into shared memory.
//  2. Per K piece (staged as floats, odd row stride): thread (head, cell) runs the dot's 32
//     lane chains (chain a: elements a, a+32, ...) and combine_lanes's tree in registers:
//     dot_lanes exactly, without shuffles.
//  3. Per head (warp h): the max (exact), then e_j = exp_f(s_j - m) in place, then lane 0 runs
//     l over the cells in order.
//  4. Per V piece: thread (slice, d) runs o[d] of its heads over the piece's cells in order
//     (one V element serves all of them); o stays in registers across pieces.
//
// `cells` maps j < n to the j-th attended cell of the chunk (in increasing order): every cell
// of a dense chunk, or flashnext's selected ones (mk_flashnext_attention.hpp).
//
// Not inlined: its own register allocation (inlined into the megakernel entry its loops ran
// far slower than their instruction counts).
template <class Cells>
__device__ __noinline__ void attn_chunk_cells(const MkPass& P, const MkModelStage& s, long long g, long long t, long long ch,
                                        const Cells& cells, int n, int h0, int gh, float* smem) {
    const MkDims& d = P.d;
    const long long MC = P.max_chunks;
    const int group = static_cast<int>(d.n_head / d.n_head_kv);
    const int hdk = static_cast<int>(d.hd_k), hdv = static_cast<int>(d.hd_v);
    const int eb = static_cast<int>(d.kv_elem_bytes);
    const long long first = ch * mkm::kChunk;
    const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid & 31;
    float* qs = smem;                              // [gh][hdk]
    float* sc = qs + gh * hdk;                     // [gh][256]
    float* ms = sc + gh * mkm::kChunk;             // [16] chunk maxima
    float* ls = ms + 16;                           // [16] chunk sums
    uint8_t* stage = reinterpret_cast<uint8_t*>(ls + 16);
    const long long stage_bytes = (static_cast<long long>(kMkSmemFloats) - (stage - reinterpret_cast<uint8_t*>(smem)) / 4) * 4;
    const float* qg = P.q + t * d.n_head * hdk + (g * group + h0) * hdk;
    PhaseClock pc;
    for (int i = tid; i < gh * hdk; i += kMkBlockThreads) qs[i] = qg[i];
    pc.mark(kPhAttnQ);
    const uint8_t* k0 = mkm::kv_cell(P, t, s.layer, g, first, false);
    const uint8_t* v0 = mkm::kv_cell(P, t, s.layer, g, first, true);

    // 2. scores, K piece by piece: the piece's K rows are staged as floats (converted once, not
    //    once per head) at an odd stride, so that the threads of a warp, one cell each, read
    //    different banks; then thread (head, cell) runs the contract's 32 lane chains of that
    //    dot and the combine_lanes tree in registers (no shuffles).
    const int krow_f = hdk + 1, vrow = hdv * eb;
    // A piece's (head, cell) dots are spread over the 256 threads: a piece of a multiple of
    // 256 / gh cells gives every thread the same number of them.
    int kpiece = static_cast<int>(stage_bytes / (4 * krow_f));
    if (const int per = kMkBlockThreads / gh; kpiece > per) kpiece -= kpiece % per;
    float* kst = reinterpret_cast<float*>(stage);
    for (int c0 = 0; c0 < n; c0 += kpiece) {
        const int np = n - c0 < kpiece ? n - c0 : kpiece;
        block_stage_k_f32(kst, krow_f, k0, first, cells, c0, np, hdk, eb);
        __syncthreads();
        pc.mark(kPhAttnKStage);
        for (int p = tid; p < np * gh; p += kMkBlockThreads) {
            const int h = p / np, j = p - h * np;  // a warp's threads: consecutive cells of a head
            const float* kj = kst + j * krow_f;
            sc[h * mkm::kChunk + c0 + j] =
                num::mul_rn(mkm::lane_dot(qs + h * hdk, [&](long long e) { return kj[e]; }, hdk), d.attn_scale);
        }
        __syncthreads();  // the stage is reloaded next
        pc.mark(kPhAttnScores);
    }

    // 3. max, exponentials and l per head
    for (int h = warp; h < gh; h += kMkBlockWarps) {
        float* e = sc + h * mkm::kChunk;
        float m = e[0];
        for (int j = lane; j < n; j += 32)
            if (e[j] > m) m = e[j];
        for (int o = 16; o >= 1; o >>= 1) {
            const float x = __shfl_xor(m, o);
            if (x > m) m = x;
        }
        arbor_syncwarp();
        for (int j = lane; j < n; j += 32) e[j] = num::exp_f(num::sub_rn(e[j], m));
        arbor_syncwarp();
        if (lane == 0) {
            float l = 0.0f;  // the contract's sequential sum, cells in order
            int j = 0;
            for (; j + 8 <= n; j += 8) {
                float e8[8];
#pragma unroll
                for (int u = 0; u < 8; ++u) e8[u] = e[j + u];
#pragma unroll
                for (int u = 0; u < 8; ++u) l = num::add_rn(l, e8[u]);
            }
            for (; j < n; ++j) l = num::add_rn(l, e[j]);
            ms[h] = m;
            ls[h] = l;
        }
    }

    pc.mark(kPhAttnSoftmax);

    // 4. o over the cells in order, V piece by piece
    const int slices = kMkBlockThreads / hdv;  // hdv <= 256 (host check)
    const int dd = tid % hdv, slice = tid / hdv;
    constexpr int kMaxHeads = 16;  // group <= 16 (host check): ceil(gh / slices) heads per thread
    float o[kMaxHeads];
#pragma unroll
    for (int k = 0; k < kMaxHeads; ++k) o[k] = 0.0f;
    const int vpiece = static_cast<int>(stage_bytes / vrow);
    for (int c0 = 0; c0 < n; c0 += vpiece) {
        const int np = n - c0 < vpiece ? n - c0 : vpiece;
        __syncthreads();  // (first piece: the exponentials of step 3 are complete)
        block_stage_rows(stage, v0, first, cells, c0, np, vrow);
        __syncthreads();
        pc.mark(kPhAttnVStage);
        if (slice < slices) {
            const uint8_t* vcol = stage + dd * eb;
            int j = 0;
            // Eight cells at a time: their V elements (raw, all eight loads before any
            // conversion) and weights are loaded together, then each head's o takes the eight
            // cells in order.
            for (; j + 8 <= np; j += 8) {
                float v8[8];
                if (eb == 4) {
#pragma unroll
                    for (int u = 0; u < 8; ++u) v8[u] = *reinterpret_cast<const float*>(vcol + (j + u) * vrow);
                } else {
                    uint16_t r8[8];
#pragma unroll
                    for (int u = 0; u < 8; ++u) r8[u] = *reinterpret_cast<const uint16_t*>(vcol + (j + u) * vrow);
#pragma unroll
                    for (int u = 0; u < 8; ++u) v8[u] = quant::blocks::fp16_to_f32(r8[u]);
                }
#pragma unroll
                for (int k = 0; k < kMaxHeads; ++k) {
                    const int h = slice + k * slices;
                    if (h >= gh) continue;
                    const float* e = sc + h * mkm::kChunk + c0 + j;
                    float e8[8];
#pragma unroll
                    for (int u = 0; u < 8; ++u) e8[u] = e[u];
#pragma unroll
                    for (int u = 0; u < 8; ++u) o[k] = fmaf(e8[u], v8[u], o[k]);
                }
            }
            for (; j < np; ++j) {
                const float vj = mkm::kv_at(vcol + static_cast<long long>(j) * vrow, eb, 0);
#pragma unroll
                for (int k = 0; k < kMaxHeads; ++k) {
                    const int h = slice + k * slices;
                    if (h < gh) o[k] = fmaf(sc[h * mkm::kChunk + c0 + j], vj, o[k]);
                }
            }
        }
        pc.mark(kPhAttnO);
    }
    if (slice < slices) {
        if (s.direct) {
            float* out = P.att + t * d.n_head * hdv + (g * group + h0) * hdv;
#pragma unroll
            for (int k = 0; k < kMaxHeads; ++k) {
                const int h = slice + k * slices;
                if (h >= gh) continue;
                // The combine of one chunk, literally: w = exp_f(m - m), L = fmaf(l, w, +0),
                // O = fmaf(o, w, +0) (this turns an o of -0, which an underflowing fmaf can
                // give, into +0 as the CPU's combine does).
                const float w = num::attn_chunk_weight(ms[h], ms[h]);
                out[h * hdv + dd] = num::div_rn(fmaf(o[k], w, 0.0f), fmaf(ls[h], w, 0.0f));
            }
        } else {
            float* part = P.attn_part + (((t * d.n_head_kv + g) * MC + ch) * group + h0) * (hdv + 2);
#pragma unroll
            for (int k = 0; k < kMaxHeads; ++k) {
                const int h = slice + k * slices;
                if (h >= gh) continue;
                float* r = part + h * (hdv + 2);
                r[dd] = o[k];
                if (dd == 0) {
                    r[hdv] = ms[h];
                    r[hdv + 1] = ls[h];
                }
            }
        }
    }
    if (s.direct && s.quantize_out) {  // the span is whole Q8A blocks (attn_head_parts)
        __syncthreads();
        const long long at = t * d.n_head * hdv + (g * group + h0) * hdv, span = static_cast<long long>(gh) * hdv;
        mkb::block_quantize(P.att + at, span, P.attq + at / 32);
    }
    pc.mark(kPhAttnWrite);
}

// An attention chunk item's place: KV head g, token t, chunk ch, and heads h0 .. h0 + gh - 1.
struct ChunkItem {
    long long g, t, ch;
    int h0, gh;
};

__device__ inline ChunkItem chunk_item(const MkPass& P, const MkModelStage& s, long long item) {
    const long long T = P.n_tokens, MC = P.max_chunks;
    const int parts = s.head_parts > 1 ? s.head_parts : 1;
    const int gh = static_cast<int>(P.d.n_head / P.d.n_head_kv) / parts;
    const long long c = item / parts;
    return {c / (T * MC), (c / MC) % T, c % MC, static_cast<int>(item % parts) * gh, gh};
}

__device__ inline void mk_attn_chunk_block(const MkPass& P, const MkModelStage& s, long long item, float* smem) {
    const ChunkItem it = chunk_item(P, s, item);
    const long long pos = P.pos[it.t];
    if (it.ch > pos / mkm::kChunk) return;
    const long long first = it.ch * mkm::kChunk;
    const int n = static_cast<int>((pos + 1 - first) < mkm::kChunk ? pos + 1 - first : mkm::kChunk);
    attn_chunk_cells(P, s, it.g, it.t, it.ch, DenseCells{first}, n, it.h0, it.gh, smem);
}

// Item g * T + t: the chunks of (g, t) combined in chunk order (numerics.hpp), skipping the
// chunks marked empty (l < 0: flashnext's chunks without an attended cell; a computed chunk has
// l >= 1, so a dense pass skips none). Warp w takes heads w, w + 8, ...:
//  1. M: the first unskipped chunk's m, then the max over the unskipped ones, lane by lane and
//     across the lanes (a max is the same in any order, and a NaN first m stays, as in a
//     sequential loop);
//  2. the lanes put each chunk's l and weight w_c = exp_f(m_c - M) in shared memory (each once);
//  3. lane 0 runs L and every lane its dims' O over the chunks in order, the O loop loading eight
//     chunks' values before their fmafs (one latency per eight chunks, not one per chunk).
// Both the dense combine and flashnext's run here.
__device__ __noinline__ inline void mk_attn_combine_block(const MkPass& P, const MkModelStage& s, long long item, float* smem) {
    const MkDims& d = P.d;
    const long long T = P.n_tokens, MC = P.max_chunks;
    const long long g = item / T, t = item % T;
    const int group = static_cast<int>(d.n_head / d.n_head_kv), hdv = static_cast<int>(d.hd_v);
    const long long cs = static_cast<long long>(group) * (hdv + 2);  // one chunk's rows
    const int n_chunks = static_cast<int>(P.pos[t] / mkm::kChunk + 1);
    const float* part = P.attn_part + (t * d.n_head_kv + g) * MC * cs;
    const long long att_w = d.n_head * hdv;
    float* out = P.att + t * att_w + g * group * hdv;
    const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) & 31;
    const int per_warp = kMkSmemFloats / kMkBlockWarps;
    const bool cached = 2 * n_chunks <= per_warp;  // l and w of every chunk fit the warp's share
    float* lsh = smem + warp * per_warp;
    float* wsh = lsh + n_chunks;
    for (int h = warp; h < group; h += kMkBlockWarps) {
        const float* ph = part + h * (hdv + 2);  // chunk c's row of head h: ph + c * cs
        int f = n_chunks;                        // the first unskipped chunk
        for (int c0 = 0; c0 < n_chunks && f == n_chunks; c0 += 32) {
            const int c = c0 + lane;
            const unsigned b = arbor_ballot(c < n_chunks && !(ph[c * cs + hdv + 1] < 0.0f));
            if (b) f = c0 + __ffs(static_cast<int>(b)) - 1;
        }
        float M = f < n_chunks ? ph[f * cs + hdv] : 0.0f;
        for (int c = lane; c < n_chunks; c += 32) {
            const float* r = ph + c * cs;
            if (r[hdv + 1] < 0.0f) continue;
            if (r[hdv] > M) M = r[hdv];
        }
        for (int o = 16; o >= 1; o >>= 1) {
            const float x = __shfl_xor(M, o);
            if (x > M) M = x;
        }
        if (cached)
            for (int c = lane; c < n_chunks; c += 32) {
                lsh[c] = ph[c * cs + hdv + 1];
                wsh[c] = num::attn_chunk_weight(ph[c * cs + hdv], M);
            }
        arbor_syncwarp();
        auto l_of = [&](int c) { return cached ? lsh[c] : ph[c * cs + hdv + 1]; };
        auto w_of = [&](int c) { return cached ? wsh[c] : num::attn_chunk_weight(ph[c * cs + hdv], M); };
        float L = 0.0f;
        if (lane == 0)
            for (int c = 0; c < n_chunks; ++c)
                if (const float l = l_of(c); !(l < 0.0f)) L = fmaf(l, w_of(c), L);
        L = __shfl(L, 0);
        for (int dd = lane; dd < hdv; dd += 32) {
            float o = 0.0f;
            int c = 0;
            for (; c + 8 <= n_chunks; c += 8) {
                float v[8];
#pragma unroll
                for (int u = 0; u < 8; ++u) v[u] = ph[(c + u) * cs + dd];  // a skipped chunk's is unused
#pragma unroll
                for (int u = 0; u < 8; ++u)
                    if (!(l_of(c + u) < 0.0f)) o = fmaf(v[u], w_of(c + u), o);
            }
            for (; c < n_chunks; ++c)
                if (!(l_of(c) < 0.0f)) o = fmaf(ph[c * cs + dd], w_of(c), o);
            out[h * hdv + dd] = num::div_rn(o, L);
        }
        arbor_syncwarp();
    }
    if (s.quantize_out) {
        __syncthreads();
        const long long span = static_cast<long long>(group) * hdv;
        mkb::block_quantize(out, span, P.attq + (t * att_w + g * span) / 32);
    }
}

}  // namespace arbor::gpu
