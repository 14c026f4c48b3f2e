// Device work items run by a whole workgroup (256 threads, 8 warps) instead of one warp: the
// stages whose items are few and each long (a token's RMSNorm, a 256-cell attention chunk, the
// chunk combine). A warp alone walks such an item serially, one memory
// latency after another (profiled at 10-40 us per item on the H200); the whole workgroup puts
// all its loads in flight at once and keeps only the contract's sequential chains serial.
//
// The bits are the CPU's for the same reasons as in mk_model_ops.hpp: every element goes
// through numerics.hpp's functions, each lanes32 dot is one warp's 32 lanes plus the
// combine_lanes tree (by shuffles, for one dot or 32 at once: combine_lanes_multi),
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

#if ARBOR_MK_STAGE_CLOCKS
#include <cstdio>
#endif

namespace arbor::gpu {

constexpr int kMkBlockWarps = kMkBlockThreads / 32;

namespace mkb {

// The n / 32 Q8A blocks of y (n a multiple of 32), spread over the workgroup's warps. Call
// after the writes of y are visible to the block (__syncthreads). A warp's blocks one after
// another: eight at a time interleaved measured slower on the H200 (decode@229 +0.25 ms on
// qwen3-4b and the MoE, 2026-11-30, docs/BENCHMARKS.md). Not inlined (as measured).
__device__ __noinline__ inline void block_quantize(const float* y, long long n, quant::BlockQ8A* q) {
    const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) & 31;
    for (long long b = warp; b < n / 32; b += kMkBlockWarps) mkm::warp_quantize_block(y + 32 * b, q + b, lane);
}

// Eight halves h[0..8) as floats, fp16_to_f32's bits. ARBOR_MK_F16_GROUPS builds convert by
// the hardware alone and redo the eight by fp16_to_f32 only when their sum is a NaN (a NaN among
// them, whose bits are fp16_to_f32's to choose; or two infinities of opposite signs, for which
// the redo gives the same bits): the sum's adds are only that test.
template <class H>
__device__ inline void f16x8_to_f32(const H* h, float* v) {
#if ARBOR_MK_F16_GROUPS
#pragma unroll
    for (int u = 0; u < 8; ++u) v[u] = quant::blocks::fp16_to_f32_hw(h[u]);
    const float sum = ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
    if (__builtin_expect(sum != sum, 0)) {
#pragma unroll
        for (int u = 0; u < 8; ++u) v[u] = quant::blocks::fp16_to_f32(h[u]);
    }
#else
#pragma unroll
    for (int u = 0; u < 8; ++u) v[u] = quant::blocks::fp16_to_f32(h[u]);
#endif
}

// ARBOR_MK_O_FIXED's round (attn_o_write): 16 raw halves, row bytes apart from p (a literal
// row: every load an immediate offset from one address), and 16 floats from 16-byte aligned e.
template <int Row>
__device__ inline void f16_rows16(const uint8_t* p, uint16_t* r) {
#pragma unroll
    for (int u = 0; u < 16; ++u) r[u] = *reinterpret_cast<const uint16_t*>(p + u * Row);
}
__device__ inline void floats16(const float* e, float* f) {
#pragma unroll
    for (int q = 0; q < 4; ++q) {
        const float4 w = reinterpret_cast<const float4*>(e)[q];
        f[4 * q] = w.x, f[4 * q + 1] = w.y, f[4 * q + 2] = w.z, f[4 * q + 3] = w.w;
    }
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
            if (base + u * kMkBlockThreads < n) r[u] = mk_ld(&src[base + u * kMkBlockThreads]);
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

#if ARBOR_MK_BULK_ON
// ARBOR_MK_BULK_STAGE (sm_90): block_stage_async's spans marked `bulk` go by the copy engine
// (cp.async.bulk) and complete on one shared-memory mbarrier a workgroup (mk_bulk, initialized
// by mk_bulk_init at the megakernel's entry). Thread 0 counts the copies issued; a workgroup
// issues again only after waiting, so the phase to wait for is the parity of the last issue
// (with none pending, a completed phase's parity: the wait returns at once).
struct MkBulk {
    unsigned long long bar;
    unsigned issued;
};
__device__ __forceinline__ MkBulk* mk_bulk() {
    __shared__ __align__(8) MkBulk b;
    return &b;
}
__device__ inline void mk_bulk_init() {
    if (threadIdx.x == 0) {
        MkBulk* b = mk_bulk();
        b->issued = 0;
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(&b->bar)))
                     : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
}
// Called by every thread: `bytes` (a multiple of 16) from src into shared address d, one copy
// issued by thread 0. (One copy a lane of warp 0, the span cut in 32 parts, was slower: gpu-next26.)
__device__ inline void mk_bulk_issue(unsigned d, const void* src, unsigned bytes) {
    if (threadIdx.x != 0) return;
    MkBulk* b = mk_bulk();
    const unsigned bar = static_cast<unsigned>(__cvta_generic_to_shared(&b->bar));
    b->issued += 1;
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}\n" ::"r"(bar), "r"(bytes)
                 : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(d), "l"(src),
                 "r"(bytes), "r"(bar)
                 : "memory");
}
// Every thread: waits until the last issued span has landed (a __syncthreads first, so the count
// thread 0 wrote is seen).
__device__ inline void mk_bulk_wait() {
    __syncthreads();
    MkBulk* b = mk_bulk();
    const unsigned bar = static_cast<unsigned>(__cvta_generic_to_shared(&b->bar)), parity = (b->issued - 1u) & 1u;
    asm volatile(
        "{\n .reg .pred p;\n"
        "mk_bulk_wait_%=:\n"
        " mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
        " @!p bra mk_bulk_wait_%=;\n}\n" ::"r"(bar),
        "r"(parity)
        : "memory");
}
#endif

#if ARBOR_MK_ASYNC_STAGE
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
// One 16-byte cp.async into shared address d (L2 only: .cg).
__device__ inline void cp_async16(unsigned d, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src) : "memory");
}
#if ARBOR_MK_KV_EVICT_FIRST
// The same with an L2 cache policy (createpolicy's 64-bit descriptor).
__device__ inline void cp_async16_hint(unsigned d, const void* src, unsigned long long policy) {
    asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "l"(policy)
                 : "memory");
}
#endif
// The bytes / 16 words of 16 bytes from s into shared address d as one commit group, by the
// workgroup's threads from `first` on (block_stage_async: all; block_stage_async_ahead: warps 1-7),
// thread first + k taking words k, k + nthr, ... (nthr = kMkBlockThreads - first), with the L2
// evict-first policy where asked (ARBOR_MK_KV_EVICT_FIRST).
__device__ inline void cp_async_words(unsigned d, const uint4* s, long long bytes, int first, bool evict_first) {
    const int nthr = kMkBlockThreads - first;
    (void)evict_first;
#if ARBOR_MK_KV_EVICT_FIRST
    if (evict_first) {
        unsigned long long policy;
        asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
        for (int i = static_cast<int>(threadIdx.x) - first; i < bytes / 16; i += nthr)
            cp_async16_hint(d + 16u * i, s + i, policy);
        asm volatile("cp.async.commit_group;\n" ::: "memory");
        return;
    }
#endif
    for (int i = static_cast<int>(threadIdx.x) - first; i < bytes / 16; i += nthr) cp_async16(d + 16u * i, s + i);
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}
#endif
// block_stage by cp.async (NVIDIA sm_80 and later, both ends 16-byte aligned and whole 16-byte
// words): every thread's copies in flight at once, none of them through registers. The block
// calls block_stage_wait, then __syncthreads, before reading dst. Otherwise block_stage itself
// (block_stage_wait then does nothing). With ARBOR_MK_BULK_STAGE, `bulk` spans go by the copy
// engine instead (mk_bulk_issue). With ARBOR_MK_KV_EVICT_FIRST, `evict_first` spans carry the L2
// evict-first policy; a span both `bulk` and `evict_first` goes by cp.async with the policy.
__device__ inline void block_stage_async(void* dst, const void* src, long long bytes, bool bulk = false,
                                         bool evict_first = false) {
    (void)bulk;
    (void)evict_first;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if (((reinterpret_cast<unsigned long long>(src) | reinterpret_cast<unsigned long long>(dst) | bytes) & 15) == 0) {
        const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
#if ARBOR_MK_BULK_ON
        if (bulk && !evict_first) {  // a streamed span keeps cp.async, which carries the policy
            mk_bulk_issue(d, src, static_cast<unsigned>(bytes));
            return;
        }
#endif
        cp_async_words(d, static_cast<const uint4*>(src), bytes, 0, evict_first);
        return;
    }
#endif
    block_stage(dst, src, bytes);
}
#if ARBOR_MK_V_AHEAD
// block_stage_async's cp.async form (src, dst and bytes 16-byte aligned: the caller checks) by
// warps 1-7 alone (warp 0 runs a one-head softmax meanwhile), evict-first where asked (both by
// cp_async_words); warp 0 issues nothing, so its wait is at once. (Warps 1-3 and 5-7 alone, off
// warp 0's sub-partition, measured no better: gpu-next47.)
__device__ inline void block_stage_async_ahead(void* dst, const void* src, long long bytes, bool evict_first) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if (static_cast<int>(threadIdx.x) >= 32)
        cp_async_words(static_cast<unsigned>(__cvta_generic_to_shared(dst)), static_cast<const uint4*>(src), bytes, 32,
                       evict_first);
#else
    (void)evict_first;
    block_stage_async(dst, src, bytes);
#endif
}
#endif
#if ARBOR_MK_COMBINE_STAGE
// `rows` rows of `row_bytes` each (16-byte words, src, dst and `stride` 16-byte aligned: the
// caller checks) from src + r * stride into dst + r * row_bytes, by every thread of the
// workgroup as one commit group (cp.async where there is one, else through registers, landed
// when this returns); the block calls block_stage_wait, then __syncthreads, before reading dst.
__device__ inline void block_stage_rows_async(void* dst, const void* src, int rows, int row_bytes, long long stride) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const int wr = row_bytes / 16, n = rows * wr;
    const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    for (int i = static_cast<int>(threadIdx.x); i < n; i += kMkBlockThreads) {
        const int r = i / wr, w = i - r * wr;
        cp_async16(d + 16u * i, static_cast<const char*>(src) + r * stride + 16 * w);
    }
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#else
    for (int r = 0; r < rows; ++r)
        block_stage(static_cast<char*>(dst) + r * row_bytes, static_cast<const char*>(src) + r * stride, row_bytes);
#endif
}
#endif
__device__ inline void block_stage_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
#if ARBOR_MK_BULK_ON
    mk_bulk_wait();
#endif
}
#endif

// Item: one row (token, or output token when outputs_only), or with s.norm_parts = p > 1 one
// p-th of a row (item = row * p + part: elements and Q8A blocks [part n / p, (part + 1) n / p)).
// x is staged in shared memory by the whole block at once; warp 0 runs the contract's 32 lane
// chains from there (every part of a row the same chain, so the same scale); every thread then
// writes its share of y (weights loaded eight at a time), into shared memory too, from where
// the warps quantize it.
__device__ inline void mk_rms_norm_block(const MkPass& P, const MkModelStage& s, long long item_part, float* smem) {
    const long long n = P.d.n_embd;
    const int parts = s.norm_parts > 1 ? s.norm_parts : 1;
    const long long item = item_part / parts, lo = item_part % parts * (n / parts), hi = lo + n / parts;
    const long long t = s.outputs_only ? P.out_token[item] : item;
    const float* x = P.x + t * n;
    float* y = P.xn + item * n;
    const int tid = static_cast<int>(threadIdx.x);
    const bool staged = n <= kMkSmemFloats - 1;
    float* xs = staged ? smem : const_cast<float*>(x);
    PhaseClock clk(ARBOR_MK_SUBPHASES != 0);
    // Each round's weights are loaded a round ahead, the first with x (they do not wait for the
    // scale): a row of up to 2048 elements takes one memory round trip before its sum, not two.
    constexpr int kU = 8;
    float wn[kU];
    auto load_w = [&](long long base) {
#pragma unroll
        for (int u = 0; u < kU; ++u) {
            const long long i = base + u * kMkBlockThreads;
            wn[u] = i < hi ? s.norm[i] : 0.0f;
        }
    };
    load_w(lo + tid);
    if (staged) block_stage(xs, x, n * 4);
    __syncthreads();
    if (clk.on) {  // a volatile store of a weight: the weights' loads land before the mark
        volatile float sink = wn[0];
        (void)sink;
    }
    clk.mark(kPhRmsIn);
    if (tid < 32) {
        const float ss = mkm::warp_dot_lanes(xs, xs, n, tid);
        if (tid == 0) smem[kMkSmemFloats - 1] = num::rms_scale(ss, static_cast<int>(n), P.d.rms_eps);
    }
    __syncthreads();
    clk.mark(kPhRmsSum);
    const float scale = smem[kMkSmemFloats - 1];
    for (long long base = lo + tid; base < hi; base += kMkBlockThreads * kU) {
        float w[kU], xv[kU];
#pragma unroll
        for (int u = 0; u < kU; ++u) {
            const long long i = base + u * kMkBlockThreads;
            w[u] = wn[u];
            xv[u] = i < hi ? xs[i] : 0.0f;
        }
        if (base + kMkBlockThreads * kU < hi) load_w(base + kMkBlockThreads * kU);
#pragma unroll
        for (int u = 0; u < kU; ++u) {
            const long long i = base + u * kMkBlockThreads;
            if (i >= hi) continue;
            const float v = num::mul_rn(num::mul_rn(xv[u], scale), w[u]);
            y[i] = v;
            if (staged) xs[i] = v;  // this thread's own element
        }
    }
    clk.mark(kPhRmsWrite);
    if (s.quantize_out) {
        __syncthreads();
        mkb::block_quantize((staged ? xs : y) + lo, hi - lo, P.xq + item * (n / 32) + lo / 32);
        clk.mark(kPhRmsQuant);
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
                r[u] = mk_ld(&reinterpret_cast<const W*>(base + (cells.cell(c0 + j) - first) * row_bytes)[i - j * wpr]);
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

namespace mkb {

// A staged K element as a float: the stage's floats as they are; raw f16 (attn_scores_raw) by
// fp16_to_f32, as block_stage_k_f32 converts it (by fp16_to_f32_hw with ARBOR_MK_SCORE_HW).
__device__ inline float k_f32(float k) { return k; }
__device__ inline float k_f32(uint16_t k) {
#if ARBOR_MK_SCORE_HW
    return quant::blocks::fp16_to_f32_hw(k);  // every caller's value goes into an fmaf (mk_model.hpp)
#else
    return quant::blocks::fp16_to_f32(k);
#endif
}

// The scores of heads hb .. hb + Ht - 1 and cells cb .. cb + Ct - 1 of a staged K piece (floats,
// or raw f16: KT), by one warp: lane j runs accumulator j (elements j, j + 32, ... in order, as
// dot_lanes) of all D = Ht * Ct dots (16 or 32), each query and key element loaded once for all
// of them, then combine_lanes_multi<D>. Returns dot x = (head hb + x / Ct, cell cb + x % Ct) in
// lane x (D = 32) or in lanes 2x and 2x + 1 (D = 16). Heads past gh read the last one; cells past
// the piece read rows of the stage that the piece does not use (the caller sizes pieces in whole
// tiles), and those dots are not written.
template <int Ht, int Ct, class KT = float>
__device__ inline float score_tile(const float* qs, int hdk, const KT* kst, int krow_f, int gh, int hb, int cb,
                                   int lane) {
    constexpr int D = Ht * Ct;
    int qo[Ht];
#pragma unroll
    for (int h = 0; h < Ht; ++h) qo[h] = (hb + h < gh ? hb + h : gh - 1) * hdk;
    const KT* kb = kst + cb * krow_f;
    float v[D];
#pragma unroll
    for (int x = 0; x < D; ++x) v[x] = 0.0f;
#if ARBOR_MK_SCORE_UNROLL
    // ARBOR_MK_SCORE_UNROLL (mk_model.hpp): the 128-dim form.
    if (hdk == 128) {
        auto rounds = [&](int stride) {  // a literal where the stride is 128 or 129
            const float* q0 = qs + lane;
            const KT* k1 = kb + lane;
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                float qv[Ht], kv[Ct];
#pragma unroll
                for (int h = 0; h < Ht; ++h) qv[h] = q0[qo[h] + 32 * i];
#if ARBOR_MK_F16_GROUPS
                if constexpr (std::is_same_v<KT, uint16_t> && Ct % 8 == 0) {
                    // the hardware's conversion, fp16_to_f32 only for a group of eight holding
                    // a NaN (f16x8_to_f32, as the V rows take them)
                    uint16_t r[Ct];
#pragma unroll
                    for (int c = 0; c < Ct; ++c) r[c] = k1[c * stride + 32 * i];
#pragma unroll
                    for (int c = 0; c < Ct; c += 8) f16x8_to_f32(r + c, kv + c);
                } else
#endif
                {
#pragma unroll
                    for (int c = 0; c < Ct; ++c) kv[c] = k_f32(k1[c * stride + 32 * i]);
                }
#pragma unroll
                for (int h = 0; h < Ht; ++h)
#pragma unroll
                    for (int c = 0; c < Ct; ++c) v[h * Ct + c] = fmaf(qv[h], kv[c], v[h * Ct + c]);
            }
        };
        if (krow_f == 128) rounds(128);
        else if (krow_f == 129) rounds(129);
        else rounds(krow_f);
        combine_lanes_multi<D>(v, lane);
        return v[0];
    }
#endif
    bool exact_loop = true;  // (ARBOR_MK_SCORE_PIPE: only when the hardware's conversion met a NaN)
#if ARBOR_MK_SCORE_PIPE
    // ARBOR_MK_SCORE_PIPE (mk_model.hpp): raw f16 rows, an element's Ct halves loaded together and
    // converted by the hardware alone; a NaN dot in any lane (a NaN half or query element, an
    // infinity times a zero, or opposite infinities) sends the warp through the loop below from
    // +0 again.
    if constexpr (std::is_same_v<KT, uint16_t>) {
        for (int e = lane; e < hdk; e += 32) {
            uint16_t r[Ct];
#pragma unroll
            for (int c = 0; c < Ct; ++c) r[c] = kb[c * krow_f + e];
            float qv[Ht];
#pragma unroll
            for (int h = 0; h < Ht; ++h) qv[h] = qs[qo[h] + e];
#pragma unroll
            for (int h = 0; h < Ht; ++h)
#pragma unroll
                for (int c = 0; c < Ct; ++c)
                    v[h * Ct + c] = fmaf(qv[h], quant::blocks::fp16_to_f32_hw(r[c]), v[h * Ct + c]);
        }
        bool nan = false;
#pragma unroll
        for (int x = 0; x < D; ++x) nan |= v[x] != v[x];
        exact_loop = arbor_ballot(nan) != 0u;
        if (exact_loop)
#pragma unroll
            for (int x = 0; x < D; ++x) v[x] = 0.0f;
    }
#endif
    for (int e = lane; exact_loop && e < hdk; e += 32) {
        float qv[Ht], kv[Ct];
#pragma unroll
        for (int h = 0; h < Ht; ++h) qv[h] = qs[qo[h] + e];
#pragma unroll
        for (int c = 0; c < Ct; ++c) kv[c] = k_f32(kb[c * krow_f + e]);
#pragma unroll
        for (int h = 0; h < Ht; ++h)
#pragma unroll
            for (int c = 0; c < Ct; ++c) v[h * Ct + c] = fmaf(qv[h], kv[c], v[h * Ct + c]);
    }
    combine_lanes_multi<D>(v, lane);
    return v[0];
}

}  // namespace mkb

// The K rows of cells c0 .. c0 + np - 1 of a cell map as floats into shared dst, row j at
// dst + j * stride (stride = hd + 1 floats: consecutive rows start in consecutive banks), every
// thread's loads issued before its stores. Rows of whole 16-byte words (head dims of 128 in
// halves: 16 words) are read as such, thread (row j0, word w) taking rows j0, j0 + 256 / wpr, ...,
// so that a 64-cell piece is 4 loads a thread, all in flight at once; other rows in 4-byte words.
template <class Cells>
__device__ inline void block_stage_k_f32(float* dst, int stride, const uint8_t* base, long long first, const Cells& cells,
                                         int c0, int np, int hd, int eb) {
    constexpr int kU = 8;
    const int tid = static_cast<int>(threadIdx.x);
    const int row_bytes = hd * eb;
    auto row = [&](int j) { return base + (cells.cell(c0 + j) - first) * row_bytes; };
    auto put = [&](float* o, unsigned word) {  // one 4-byte word: a float or two halves
        if (eb == 4) {
            o[0] = __uint_as_float(word);
        } else {
            o[0] = quant::blocks::fp16_to_f32(word & 0xffffu);
            o[1] = quant::blocks::fp16_to_f32(word >> 16);
        }
    };
    const int per = 4 / eb;  // elements per 4-byte word
    if (((reinterpret_cast<unsigned long long>(base) | static_cast<unsigned>(row_bytes)) & 15) == 0 && row_bytes <= 16 * kMkBlockThreads) {
        const int wpr = row_bytes / 16, rows = kMkBlockThreads / wpr;  // 16-byte words a row, rows a round
        const int j0 = tid / wpr, w = tid - j0 * wpr;
        if (j0 >= rows) return;
        constexpr int kU4 = 4;  // a 64-cell piece of 16-word rows in one round
        for (int jb = j0; jb < np; jb += rows * kU4) {
            uint4 r[kU4];
#pragma unroll
            for (int u = 0; u < kU4; ++u)
                if (const int j = jb + u * rows; j < np) r[u] = mk_ld(&reinterpret_cast<const uint4*>(row(j))[w]);
#pragma unroll
            for (int u = 0; u < kU4; ++u)
                if (const int j = jb + u * rows; j < np) {
                    float* o = dst + j * stride + 4 * w * per;
#if ARBOR_MK_F16_GROUPS
                    // the word's eight halves at once (only with the hardware conversion: taken
                    // with fp16_to_f32 alone, on gfx1151, it raised the scratch from 1488 to 1548 B)
                    if (eb == 2) {
                        const unsigned q[4] = {r[u].x, r[u].y, r[u].z, r[u].w};
                        const unsigned h8[8] = {q[0] & 0xffffu, q[0] >> 16, q[1] & 0xffffu, q[1] >> 16,
                                                q[2] & 0xffffu, q[2] >> 16, q[3] & 0xffffu, q[3] >> 16};
                        float v8[8];
                        mkb::f16x8_to_f32(h8, v8);
#pragma unroll
                        for (int e = 0; e < 8; ++e) o[e] = v8[e];
                        continue;
                    }
#endif
                    put(o, r[u].x);
                    put(o + per, r[u].y);
                    put(o + 2 * per, r[u].z);
                    put(o + 3 * per, r[u].w);
                }
        }
        return;
    }
    const int wpr = row_bytes / 4;  // words per row
    const int n = np * wpr;         // at most 256 cells x 256 words
    for (int b = tid; b < n; b += kMkBlockThreads * kU) {
        unsigned r[kU];
#pragma unroll
        for (int u = 0; u < kU; ++u) {
            const int i = b + u * kMkBlockThreads;
            if (i < n) {
                const int j = i / wpr;
                r[u] = mk_ld(&reinterpret_cast<const unsigned*>(row(j))[i - j * wpr]);
            }
        }
#pragma unroll
        for (int u = 0; u < kU; ++u) {
            const int i = b + u * kMkBlockThreads;
            if (i >= n) continue;
            const int j = i / wpr, w = i - j * wpr;
            put(dst + j * stride + w * per, r[u]);
        }
    }
}

#if ARBOR_MK_STAGE_CLOCKS
// Measurement builds (ARBOR_MK_STAGE_CLOCKS, mk_model.hpp): a one-head decode item's pieces by the
// SM's cycle counter, slot k's cycles and count summed over the items (kStc* below); the attention
// probe and the megakernel's profile (mk_phases_read) print them. The named slots: threads 0 and
// 224 (lane 0 of warps 0 and 7). The warp slots (kStcWarp, 8 a phase): each warp's lane 0, from
// the phase's start to its own end of the phase's work, and from there to its leaving the
// barrier that ends the phase, for the score tiles, the softmax and the o loop: the warp whose
// barrier wait is shortest is the one the barrier waits for. (gpu-next50: a clock read right
// after bar.sync need not wait for the barrier, so a barrier span ending in one, as those of the
// score tiles and the o loop and the t0 barrier slots, reads a few cycles whatever the wait; the
// softmax's ends after more work.)
// The warp phases: (phase, warp) at slot kStcWarp + 8 * phase + warp.
enum : int { kStcWScores, kStcWScoresBar, kStcWSoftmax, kStcWSoftmaxBar, kStcWO, kStcWOBar, kStcWarpPhases };
static_assert(kMkBlockThreads == 8 * 32, "the warp slots count 8 warps a workgroup");
enum : int {
    kStcKIssue, kStcKWait, kStcKSync, kStcScores, kStcScoresSync, kStcSoftmax, kStcVIssue, kStcVWait, kStcVSync,
    kStcVIssue7, kStcLSum7, kStcVWait7, kStcVSync7, kStcO, kStcOSync, kStcWrite, kStcWarp,
    kStcSlots = kStcWarp + 8 * kStcWarpPhases
};
constexpr const char* kStcNames[kStcWarp] = {
    "K issue (t0)", "K wait (t0)", "K barrier (t0)", "score tiles (t0)", "scores barrier (t0)", "softmax (t0)",
    "V issue (t0)", "V wait (t0)", "V barrier (t0)", "V issue (t224)", "l sum (t224)", "V wait after the sum (t224)",
    "V barrier (t224)", "o loop (t0)", "o barrier (t0)", "write (t0)"};
constexpr const char* kStcWarpNames[kStcWarpPhases] = {"score tiles", "scores barrier", "softmax",
                                                       "softmax barrier", "o loop", "o barrier"};
// A slot's name: "score tiles (t0)", or "o loop (w3)" for a warp slot.
inline void mk_stc_name(int k, char* out, size_t n) {
    if (k < kStcWarp) std::snprintf(out, n, "%s", kStcNames[k]);
    else std::snprintf(out, n, "%s (w%d)", kStcWarpNames[(k - kStcWarp) / 8], (k - kStcWarp) % 8);
}
__device__ unsigned long long mk_stc_cycles[kStcSlots];
__device__ unsigned long long mk_stc_n[kStcSlots];
__device__ inline void mk_stc(int slot, unsigned long long c0, unsigned long long c1) {
    atomicAdd(&mk_stc_cycles[slot], c1 - c0);
    atomicAdd(&mk_stc_n[slot], 1ull);
}
// A warp slot's two spans, by the warp's lane 0: start to end (the warp's work), end to left (its
// wait at the barrier).
__device__ inline void mk_stc_warp(int phase, unsigned long long start, unsigned long long end, unsigned long long left) {
    if ((threadIdx.x & 31) != 0) return;
    const int w = static_cast<int>(threadIdx.x / 32);
    mk_stc(kStcWarp + 8 * phase + w, start, end);
    mk_stc(kStcWarp + 8 * (phase + 1) + w, end, left);
}
// Host: the clocks zeroed (mk_stc_reset), or read into c and n (kStcSlots each; mk_stc_read);
// the first failing runtime call's error, else hipSuccess.
inline hipError_t mk_stc_symbols(void** c, void** n) {
    const hipError_t e = hipGetSymbolAddress(c, HIP_SYMBOL(mk_stc_cycles));
    return e == hipSuccess ? hipGetSymbolAddress(n, HIP_SYMBOL(mk_stc_n)) : e;
}
inline hipError_t mk_stc_reset() {
    void *c = nullptr, *n = nullptr;
    hipError_t e = mk_stc_symbols(&c, &n);
    if (e == hipSuccess) e = hipMemset(c, 0, sizeof mk_stc_cycles);
    return e == hipSuccess ? hipMemset(n, 0, sizeof mk_stc_n) : e;
}
inline hipError_t mk_stc_read(unsigned long long* c, unsigned long long* n) {
    void *pc = nullptr, *pn = nullptr;
    hipError_t e = mk_stc_symbols(&pc, &pn);
    if (e == hipSuccess) e = hipMemcpy(c, pc, sizeof mk_stc_cycles, hipMemcpyDeviceToHost);
    return e == hipSuccess ? hipMemcpy(n, pn, sizeof mk_stc_n, hipMemcpyDeviceToHost) : e;
}
#define ARBOR_STC(...) __VA_ARGS__
#else
#define ARBOR_STC(...)
#endif

// l of one head's chunk: the contract's sequential sum of its n exponentials e[0 .. n - 1], cells
// in order (one thread). V4 (by default with ARBOR_MK_LSUM_V4=1; =2 asks for it in attn_o_write's
// two-dim forms): 16 cells a round as four 16-byte loads (e 16-byte aligned), the next round's
// loads issued before this round's adds, so the loads' latency hides under the chain of adds; the
// adds are the same, in the same order.
// No ARBOR_MK_SMEM(e) here: it is inlined into callers that already assume their arena shared.
// With it, nvcc 13 deleted attn_softmax_spread's whole `r == 0` block (the sums and maxima) as if
// the assume were false (gpu-next30: 370 of 371 cases wrong); why it folds there and not in
// attn_chunk_cells, which nests the same assumes, is not known. Without it the default's PTX is
// byte-identical and the spread's loads are still ld.shared. scripts/ptx-assume-check.sh
// compares the PTX with and without the assumes and catches such deletions.
template <bool V4 = ARBOR_MK_LSUM_V4 == 1>
__device__ inline float attn_chunk_l(const float* e, int n) {
    float l = 0.0f;
    int j = 0;
    if constexpr (V4) {
        if ((reinterpret_cast<unsigned long long>(e) & 15) == 0 && n >= 16) {
            const float4* e4 = reinterpret_cast<const float4*>(e);
            float4 a0 = e4[0], a1 = e4[1], a2 = e4[2], a3 = e4[3];
            for (; j + 16 <= n; j += 16) {
                const float4 c[4] = {a0, a1, a2, a3};
                if (j + 32 <= n) {
                    const int w = (j + 16) / 4;
                    a0 = e4[w], a1 = e4[w + 1], a2 = e4[w + 2], a3 = e4[w + 3];
                }
#pragma unroll
                for (int k = 0; k < 4; ++k) {
                    l = num::add_rn(l, c[k].x);
                    l = num::add_rn(l, c[k].y);
                    l = num::add_rn(l, c[k].z);
                    l = num::add_rn(l, c[k].w);
                }
            }
        }
    }
    for (; j + 8 <= n; j += 8) {
        float e8[8];
#pragma unroll
        for (int u = 0; u < 8; ++u) e8[u] = e[j + u];
#pragma unroll
        for (int u = 0; u < 8; ++u) l = num::add_rn(l, e8[u]);
    }
    for (; j < n; ++j) l = num::add_rn(l, e[j]);
    return l;
}

#if ARBOR_MK_L_UNDER_V
// Every head's l (attn_chunk_l) into ls, head h by lane h / 8 of warp 7 - h % 8: the heads of a
// warp run in its lanes side by side, and a one-head item's sum runs in warp 7, which its o loop
// leaves idle. Called by the whole workgroup while the first V piece is in flight (attn_o_write);
// the exponentials are complete (the barrier before the copy) and the piece's barrier publishes ls.
// V4: attn_chunk_l's 16-cell rounds (attn_o_write's kV4 decides where).
template <bool V4>
__device__ inline void attn_chunk_ls(const float* sc, float* ls, int n, int gh) {
    const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid & 31;
    for (int h = lane * kMkBlockWarps + (kMkBlockWarps - 1 - warp); h < gh; h += kMkBlockThreads)
        ls[h] = attn_chunk_l<V4>(sc + h * mkm::kChunk, n);
}
#endif

// A head's scores e[0 .. n): their max by one warp (exact: the scan and warp_max_keep), and
// e_j = exp_f(e_j - m) in place for j = first, first + step, ... (any thread's share: each
// exponential is a function of its score and m alone).
__device__ inline float attn_row_max(const float* e, int n, int lane) {
    float m = e[0];
    for (int j = lane; j < n; j += 32)
        if (e[j] > m) m = e[j];
    return warp_max_keep(m);
}
__device__ inline void attn_row_exps(float* e, int n, float m, int first, int step) {
    for (int j = first; j < n; j += step) e[j] = num::exp_f(num::sub_rn(e[j], m));
}

// Step 3 of attn_chunk_cells (below) a warp a head (heads warp, warp + 8, ...): the max (exact),
// then e_j = exp_f(s_j - m) in place, then lane 0's m (and l, without ARBOR_MK_L_UNDER_V). Also
// attn_o_write's for a one-head item with ARBOR_MK_V_AHEAD.
__device__ inline void attn_softmax_warps(float* sc, float* ms, float* ls, int n, int gh, int warp, int lane) {
    for (int h = warp; h < gh; h += kMkBlockWarps) {
        float* e = sc + h * mkm::kChunk;
        const float m = attn_row_max(e, n, lane);
        arbor_syncwarp();
        attn_row_exps(e, n, m, lane, 32);
        arbor_syncwarp();
        if (lane == 0) {
            ms[h] = m;
#if !ARBOR_MK_L_UNDER_V
            ls[h] = attn_chunk_l(e, n);
#endif
        }
    }
    (void)ls;
}

// Step 4 and the write of attn_chunk_cells (below): what it hands over, and the o loop with HM
// o registers a thread (HM at least its heads, ceil(gh / slices)).
template <class Cells>
struct AttnOut {
    const MkPass& P;
    const MkModelStage& s;
    long long g, t, ch;
    const Cells& cells;
    long long first;
    int n, h0, gh;  // gh: the item's rows (nt tokens' ghq heads each with ARBOR_MK_ATTN_TOKENS)
    float *sc, *ms;  // (written only by a one-head item's softmax with ARBOR_MK_V_AHEAD; read-only otherwise)
    float* ls;  // l a head: attn_o_write writes it with ARBOR_MK_L_UNDER_V (not read with ARBOR_MK_L_IN_O's
                // one-head form, whose threads hold their l)
    uint8_t* stage;
    long long stage_bytes;
    const uint8_t* v0;
#if ARBOR_MK_ATTN_TOKENS
    int ghq;  // heads a token (row h: token t + h / ghq, head h0 + h % ghq)
#endif
#if ARBOR_MK_V_HALVES
    bool v_early = false;  // the V rows, one piece, asked for by attn_scores_raw (ARBOR_MK_V_HALVES)
#endif
};

// Cells of a V piece: as many rows as the stage holds, a multiple of 8 above 8 (every 8-cell
// group's weights then 32-byte aligned in sc when the queries before it are whole 16-byte words,
// read as two 16-byte words).
__device__ inline int attn_vpiece(long long stage_bytes, int vrow) {
    int vpiece = static_cast<int>(stage_bytes / vrow);
    if (vpiece > 8) vpiece -= vpiece % 8;
    return vpiece;
}

// Not inlined: each HM its own register allocation (and ptxas's spill report of it). A thread
// takes DP adjacent dims (DP = 2: ARBOR_MK_O_PAIRS; f16 V rows only) of HM heads.
template <int HM, int DP = 1, class Cells, bool kSoftmax = false>
__device__ __noinline__ void attn_o_write(const AttnOut<Cells>& a, PhaseClock& pc) {
    static_assert(DP == 1 || DP == 2, "one or two dims a thread");
    const MkPass& P = a.P;
    const MkModelStage& s = a.s;
    const MkDims& d = P.d;
    const long long MC = P.max_chunks, t = a.t, g = a.g, ch = a.ch, first = a.first;
    const int group = static_cast<int>(d.n_head / d.n_head_kv);
    const int hdk = static_cast<int>(d.hd_k), hdv = static_cast<int>(d.hd_v);
    const int eb = static_cast<int>(d.kv_elem_bytes), vrow = hdv * eb;
    const int n = a.n, gh = a.gh, h0 = a.h0;
    float* sc = a.sc;  // (the softmax's with kSoftmax; read-only otherwise)
    float* ms = a.ms;
    float* ls = a.ls;  // written here with ARBOR_MK_L_UNDER_V (attn_chunk_ls), and by the softmax
                       // of a one-head item with ARBOR_MK_V_AHEAD (kSoftmax)
    uint8_t* stage = a.stage;
    const long long stage_bytes = a.stage_bytes;
    const uint8_t* v0 = a.v0;
    ARBOR_MK_SMEM(sc);
    ARBOR_MK_SMEM(ms);
    ARBOR_MK_SMEM(ls);
    ARBOR_MK_SMEM(stage);
    const Cells& cells = a.cells;
    const int tid = static_cast<int>(threadIdx.x);
    const int tpr = hdv / DP;  // threads a head's row (hdv even when DP = 2)
    const int slices = kMkBlockThreads / tpr;
    const int dd = tid % tpr * DP, slice = tid / tpr;  // the thread's first dim, and its heads' slice
    constexpr int kMaxHeads = HM;  // at least ceil(gh / slices), the heads a thread has
    float o[kMaxHeads][DP];
#pragma unroll
    for (int k = 0; k < kMaxHeads; ++k)
#pragma unroll
        for (int p = 0; p < DP; ++p) o[k][p] = 0.0f;
#if ARBOR_MK_L_IN_O
    // ARBOR_MK_L_IN_O (mk_model.hpp): a thread of one head and one dim sums its head's l itself,
    // in its o loop, from the weights that loop loads anyway (cells in order, from +0: the
    // contract's chain, as attn_chunk_l's), so no thread sums it beside the V copy.
    constexpr bool kLinO = HM == 1 && DP == 1;
#else
    constexpr bool kLinO = false;
#endif
    float l_own = 0.0f;  // the head's l, with kLinO
    const int vpiece = attn_vpiece(stage_bytes, vrow);
    const bool e16 = ((gh * hdk) & 3) == 0;
#if ARBOR_MK_ASYNC_STAGE
    // A decode item's V pieces (up to 8 rows): by the copy engine (ARBOR_MK_BULK_STAGE), and
    // evict-first in a pass that streams its cells (ARBOR_MK_KV_EVICT_FIRST); decided once, not
    // a piece (P.kv_stream is a load from the pass block).
    const bool v_bulk = (ARBOR_MK_BULK_STAGE || ARBOR_MK_V_BULK) && gh <= 8;
    const bool v_evict = ARBOR_MK_KV_EVICT_FIRST && gh <= 8 && P.kv_stream != 0;
#endif
#if ARBOR_MK_L_UNDER_V
    // The sums' 16-cell rounds (ARBOR_MK_LSUM_V4: =1 every sum, =2 those of ARBOR_MK_O_PAIRS's
    // two-dim forms alone)
    constexpr bool kV4 = ARBOR_MK_LSUM_V4 == 1 || (ARBOR_MK_LSUM_V4 == 2 && DP == 2);
#endif
    [[maybe_unused]] bool v_ahead = false;  // the first V piece asked for before the softmax (kSoftmax)
    ARBOR_STC(unsigned long long xc[2] = {0, 0});  // (the softmax's start and a warp's end of it, here)
#if ARBOR_MK_V_AHEAD
    if constexpr (kSoftmax) {
        ARBOR_STC(xc[0] = arbor_cycles());  // (the phase: the V copy's issue, warp 0 the softmax)
        // ARBOR_MK_V_AHEAD: a one-head item's step 3 runs here (attn_chunk_cells skipped it). Its
        // V rows, one piece, are asked for first (the score tiles' barrier has freed the stage;
        // the softmax touches only sc, ms and ls), by warps 1-7, while warp 0 runs the softmax.
        // (ARBOR_MK_V_AHEAD needs ARBOR_MK_ASYNC_STAGE: mk_model.hpp)
        static_assert(HM == 1 && DP == 1 && std::is_same_v<Cells, DenseCells>, "the dense one-head form");
        const long long vbytes = static_cast<long long>(n) * vrow;
        const unsigned long long at =
            reinterpret_cast<unsigned long long>(v0) | reinterpret_cast<unsigned long long>(stage);
        const bool whole = n <= vpiece && ((at | static_cast<unsigned long long>(vbytes)) & 15) == 0;
        // ARBOR_MK_V_BULK: thread 0's bulk copy, the other threads straight on; a streamed pass's
        // copy (evict-first) by warps 1-7 as without it. (ARBOR_MK_BULK_STAGE alone: the V goes
        // after the softmax, by the loop below.)
        v_ahead = whole && (!v_bulk || ARBOR_MK_V_BULK);
        if (v_ahead && v_bulk && !v_evict) block_stage_async(stage, v0, vbytes, true, false);
        else if (v_ahead) block_stage_async_ahead(stage, v0, vbytes, v_evict);
        ARBOR_STC(const unsigned long long xs = arbor_cycles());
#if ARBOR_MK_SOFTMAX_WIDE
        // ARBOR_MK_SOFTMAX_WIDE (mk_model.hpp): warp 0 takes the max as attn_softmax_warps does,
        // then every thread takes exponentials.
        if (tid < 32) {
            const float m = attn_row_max(sc, n, tid);
            if (tid == 0) ms[0] = m;
        }
        __syncthreads();
        attn_row_exps(sc, n, ms[0], tid, kMkBlockThreads);
#else
        attn_softmax_warps(sc, ms, ls, n, gh, tid / 32, tid & 31);
#endif
        ARBOR_STC(xc[1] = arbor_cycles());
        ARBOR_STC(if (threadIdx.x == 0) mk_stc(kStcSoftmax, xs, xc[1]));
        pc.mark(kPhAttnSoftmax);
    }
#endif
    for (int c0 = 0; c0 < n; c0 += vpiece) {
        const int np = n - c0 < vpiece ? n - c0 : vpiece;
        __syncthreads();  // (first piece: the exponentials of step 3 are complete, and the spread
                          // softmax's reads of the maxima in ls are done before attn_chunk_ls)
#if ARBOR_MK_ASYNC_STAGE
        ARBOR_STC(const unsigned long long vc0 = arbor_cycles());
        ARBOR_STC(unsigned long long vc[5] = {vc0, vc0, vc0, 0, 0});  // (vc[1], vc[2]: dense cells)
        if constexpr (std::is_same_v<Cells, DenseCells>) {
            // (else in flight since before the softmax, or since the scores with ARBOR_MK_V_HALVES)
            if (!(kSoftmax && c0 == 0 && v_ahead) ARBOR_MK_VH(&&!(!kSoftmax && c0 == 0 && a.v_early)))
                block_stage_async(stage, v0 + static_cast<long long>(c0) * vrow, static_cast<long long>(np) * vrow,
                                  v_bulk, v_evict);
            ARBOR_STC(vc[1] = arbor_cycles());
#if ARBOR_MK_L_UNDER_V
            if (c0 == 0 && !kLinO) attn_chunk_ls<kV4>(sc, ls, n, gh);  // while the piece is in flight
#endif
            ARBOR_STC(vc[2] = arbor_cycles());
            block_stage_wait();
        } else
#endif
        {
            block_stage_rows(stage, v0, first, cells, c0, np, vrow);
#if ARBOR_MK_L_UNDER_V
            if (c0 == 0 && !kLinO) attn_chunk_ls<kV4>(sc, ls, n, gh);
#endif
        }
        ARBOR_STC(vc[3] = arbor_cycles());
        __syncthreads();
#if ARBOR_MK_STAGE_CLOCKS
        vc[4] = arbor_cycles();
        if (c0 == 0 && gh == 1 && (threadIdx.x == 0 || threadIdx.x == 224)) {
            const bool w7 = threadIdx.x != 0;  // thread 224, warp 7's lane 0: its own slots, and its sum
            mk_stc(w7 ? kStcVIssue7 : kStcVIssue, vc[0], vc[1]);
            if (w7) mk_stc(kStcLSum7, vc[1], vc[2]);
            mk_stc(w7 ? kStcVWait7 : kStcVWait, w7 ? vc[2] : vc[1], vc[3]);
            mk_stc(w7 ? kStcVSync7 : kStcVSync, vc[3], vc[4]);
        }
#endif
        pc.mark(kPhAttnVStage);
        // (ARBOR_MK_O_SKIP_IDLE: a thread whose slice has no head, slice >= gh, skips the loop)
        if (slice < slices && (!ARBOR_MK_O_SKIP_IDLE || slice < gh)) {
            const uint8_t* vcol = stage + dd * eb;
            int j = 0;
#if ARBOR_MK_O_FIXED
            // ARBOR_MK_O_FIXED (mk_model.hpp): 128-dim f16 rows, rounds of 16 cells at fixed
            // offsets (one address a round); the rounds of 8 below take the rest. (`slice < gh`
            // in the tests: for ARBOR_MK_O_SKIP_IDLE=0.)
            constexpr int kRow = 128 * 2;  // vrow where the forms run (eb == 2, hdv == 128)
            if constexpr (HM == 1 && DP == 1) {
                // A round's 16 multiply-adds, cells in order (and its l with kLinO)
                auto take16 = [&](const float* ec, const float* v) {
#pragma unroll
                    for (int u = 0; u < 16; ++u) o[0][0] = fmaf(ec[u], v[u], o[0][0]);
                    if constexpr (kLinO)
#pragma unroll
                        for (int u = 0; u < 16; ++u) l_own = num::add_rn(l_own, ec[u]);
                };
#if ARBOR_MK_O_PIPE
                // ARBOR_MK_O_PIPE (mk_model.hpp): the same rounds, the halves converted by the
                // hardware alone, the next round's asked for (in the source) as soon as this
                // round's are converted, before its multiply-adds. A NaN among them or among the
                // weights leaves o a NaN (every multiply-add after a NaN operand gives one): then
                // o and l go back and the rounds below run the cells again, NaN tests and all.
                if (eb == 2 && hdv == 128 && e16 && slice < gh && np >= 16) {
                    const float o_in = o[0][0], l_in = l_own;
                    const uint8_t* vp = vcol;
                    const float* ep = sc + slice * mkm::kChunk + c0;
                    const int rounds = np / 16;
                    uint16_t rc[16];
                    mkb::f16_rows16<kRow>(vp, rc);
                    for (int r = 0; r < rounds; ++r) {
                        float v[16], ec[16];
#pragma unroll
                        for (int u = 0; u < 16; ++u) v[u] = quant::blocks::fp16_to_f32_hw(rc[u]);
                        mkb::floats16(ep + r * 16, ec);
                        if (r + 1 < rounds) mkb::f16_rows16<kRow>(vp + (r + 1) * 16 * kRow, rc);
                        take16(ec, v);
                    }
                    if (o[0][0] == o[0][0]) {
                        j = rounds * 16;  // (the rounds below are done)
                    } else {
                        o[0][0] = o_in;
                        l_own = l_in;
                    }
                }
#endif
                if (eb == 2 && hdv == 128 && e16 && slice < gh) {
                    const uint8_t* vp = vcol;
                    const float* ep = sc + slice * mkm::kChunk + c0;  // 16-byte aligned (e16, c0 % 8 == 0)
                    for (; j + 16 <= np; j += 16, vp += 16 * kRow, ep += 16) {
                        uint16_t rc[16];
                        float ec[16];
                        mkb::f16_rows16<kRow>(vp, rc);
                        mkb::floats16(ep, ec);
                        float v[16];
                        mkb::f16x8_to_f32(rc, v);
                        mkb::f16x8_to_f32(rc + 8, v + 8);
                        take16(ec, v);
                    }
                }
            }
#endif
            // Eight cells at a time: their V elements (raw, all eight loads before any
            // conversion) and weights are loaded together, then each head's o takes the eight
            // cells in order. (ARBOR_MK_O_UNROLL2, a thread's one head of one dim: two rounds
            // unrolled, so the next round's loads can go ahead of this round's chain; the other
            // forms are then marked not to unroll, which the default leaves to ptxas.)
#if ARBOR_MK_O_UNROLL2
            constexpr int kJUnroll = HM == 1 && DP == 1 ? 2 : 1;
#pragma unroll kJUnroll
#endif
            for (; j + 8 <= np; j += 8) {
                float v8[DP][8];
                if constexpr (DP == 2) {  // f16 rows: a 4-byte word holds the thread's two halves
                    unsigned w8[8];
                    uint16_t lo8[8], hi8[8];
#pragma unroll
                    for (int u = 0; u < 8; ++u) w8[u] = *reinterpret_cast<const unsigned*>(vcol + (j + u) * vrow);
#pragma unroll
                    for (int u = 0; u < 8; ++u) {
                        lo8[u] = static_cast<uint16_t>(w8[u] & 0xffffu);
                        hi8[u] = static_cast<uint16_t>(w8[u] >> 16);
                    }
                    mkb::f16x8_to_f32(lo8, v8[0]);
                    mkb::f16x8_to_f32(hi8, v8[1]);
                } else if (eb == 4) {
#pragma unroll
                    for (int u = 0; u < 8; ++u) v8[0][u] = *reinterpret_cast<const float*>(vcol + (j + u) * vrow);
                } else {
                    uint16_t r8[8];
#pragma unroll
                    for (int u = 0; u < 8; ++u) r8[u] = *reinterpret_cast<const uint16_t*>(vcol + (j + u) * vrow);
                    mkb::f16x8_to_f32(r8, v8[0]);
                }
#if ARBOR_MK_ATTN_O_GROUPS
                // Heads in groups of up to 8: every head's eight weights loaded before any FMA,
                // then the cells in order, the group's heads interleaved (independent chains).
                // A thread's heads past gh repeat the last one (no branch); their o are not written.
                // (two dims a thread: ARBOR_MK_O_PAIR_GROUP heads a group)
                constexpr int kGmax = DP == 2 ? ARBOR_MK_O_PAIR_GROUP : 8;
                constexpr int kG = kMaxHeads < kGmax ? kMaxHeads : kGmax;
                static_assert(kMaxHeads % kG == 0, "whole groups of heads");
#pragma unroll
                for (int k0 = 0; k0 < kMaxHeads; k0 += kG) {
                    float e8[kG][8];
                    const float* ek[kG];
#pragma unroll
                    for (int k = 0; k < kG; ++k) {
                        const int hk = slice + (k0 + k) * slices;
                        ek[k] = sc + (hk < gh ? hk : gh - 1) * mkm::kChunk + c0 + j;
                    }
                    if (e16) {  // one branch for the group, not one a head
#pragma unroll
                        for (int k = 0; k < kG; ++k) {
                            const float4 lo = reinterpret_cast<const float4*>(ek[k])[0];
                            const float4 hi = reinterpret_cast<const float4*>(ek[k])[1];
                            e8[k][0] = lo.x, e8[k][1] = lo.y, e8[k][2] = lo.z, e8[k][3] = lo.w;
                            e8[k][4] = hi.x, e8[k][5] = hi.y, e8[k][6] = hi.z, e8[k][7] = hi.w;
                        }
                    } else {
#pragma unroll
                        for (int k = 0; k < kG; ++k)
#pragma unroll
                            for (int u = 0; u < 8; ++u) e8[k][u] = ek[k][u];
                    }
#pragma unroll
                    for (int u = 0; u < 8; ++u)
#pragma unroll
                        for (int k = 0; k < kG; ++k)
#pragma unroll
                            for (int p = 0; p < DP; ++p) o[k0 + k][p] = fmaf(e8[k][u], v8[p][u], o[k0 + k][p]);
                    if constexpr (kLinO)
#pragma unroll
                        for (int u = 0; u < 8; ++u) l_own = num::add_rn(l_own, e8[0][u]);
                }
#else
#pragma unroll
                for (int k = 0; k < kMaxHeads; ++k) {
                    const int h = slice + k * slices;
                    if (h >= gh) continue;
                    const float* e = sc + h * mkm::kChunk + c0 + j;
                    float e8[8];
                    if (e16) {
                        const float4 lo = reinterpret_cast<const float4*>(e)[0], hi = reinterpret_cast<const float4*>(e)[1];
                        e8[0] = lo.x, e8[1] = lo.y, e8[2] = lo.z, e8[3] = lo.w;
                        e8[4] = hi.x, e8[5] = hi.y, e8[6] = hi.z, e8[7] = hi.w;
                    } else {
#pragma unroll
                        for (int u = 0; u < 8; ++u) e8[u] = e[u];
                    }
#pragma unroll
                    for (int u = 0; u < 8; ++u)
#pragma unroll
                        for (int p = 0; p < DP; ++p) o[k][p] = fmaf(e8[u], v8[p][u], o[k][p]);
                    if constexpr (kLinO)
#pragma unroll
                        for (int u = 0; u < 8; ++u) l_own = num::add_rn(l_own, e8[u]);
                }
#endif
            }
            for (; j < np; ++j) {
                float vj[DP];
#pragma unroll
                for (int p = 0; p < DP; ++p)
                    vj[p] = mkm::kv_at(vcol + static_cast<long long>(j) * vrow, eb, p);
#pragma unroll
                for (int k = 0; k < kMaxHeads; ++k) {
                    const int h = slice + k * slices;
                    if (h < gh) {
#pragma unroll
                        for (int p = 0; p < DP; ++p) o[k][p] = fmaf(sc[h * mkm::kChunk + c0 + j], vj[p], o[k][p]);
                        if constexpr (kLinO) l_own = num::add_rn(l_own, sc[h * mkm::kChunk + c0 + j]);
                    }
                }
            }
        }
#if ARBOR_MK_STAGE_CLOCKS
        const unsigned long long oc1 = arbor_cycles();
        __syncthreads();
        const unsigned long long oc2 = arbor_cycles();
        if (c0 == 0 && gh == 1 && threadIdx.x == 0) {
            mk_stc(kStcO, vc[4], oc1);
            mk_stc(kStcOSync, oc1, oc2);
        }
        if (c0 == 0 && gh == 1) {
            mk_stc_warp(kStcWO, vc[4], oc1, oc2);
            if (xc[1] != 0) mk_stc_warp(kStcWSoftmax, xc[0], xc[1], vc[0]);  // (vc[0]: after its barrier)
        }
#endif
        pc.mark(kPhAttnO);
    }
    ARBOR_STC(const unsigned long long wc0 = arbor_cycles());
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
#pragma unroll
                for (int p = 0; p < DP; ++p)
                    out[h * hdv + dd + p] = num::div_rn(fmaf(o[k][p], w, 0.0f), fmaf(kLinO ? l_own : ls[h], w, 0.0f));
            }
        } else {
#if !ARBOR_MK_ATTN_TOKENS
            float* part = P.attn_part + (((t * d.n_head_kv + g) * MC + ch) * group + h0) * (hdv + 2);
#endif
#pragma unroll
            for (int k = 0; k < kMaxHeads; ++k) {
                const int h = slice + k * slices;
                if (h >= gh) continue;
#if ARBOR_MK_ATTN_TOKENS
                const long long th = t + h / a.ghq;  // row h's token and head
                float* r = P.attn_part + (((th * d.n_head_kv + g) * MC + ch) * group + h0 + h % a.ghq) * (hdv + 2);
#else
                float* r = part + h * (hdv + 2);
#endif
#pragma unroll
                for (int p = 0; p < DP; ++p) r[dd + p] = o[k][p];
                if (dd == 0) {
                    r[hdv] = ms[h];
                    r[hdv + 1] = kLinO ? l_own : ls[h];
                }
            }
        }
    }
    if (s.direct && s.quantize_out) {  // the span is whole Q8A blocks (attn_head_parts)
        __syncthreads();
        const long long at = t * d.n_head * hdv + (g * group + h0) * hdv, span = static_cast<long long>(gh) * hdv;
        mkb::block_quantize(P.att + at, span, P.attq + at / 32);
    }
#if ARBOR_MK_STAGE_CLOCKS
    __syncthreads();
    if (gh == 1 && threadIdx.x == 0) mk_stc(kStcWrite, wc0, arbor_cycles());
#endif
    pc.mark(kPhAttnWrite);
}

#if ARBOR_MK_FOLD_FINISH
// The Q/K/V finish of a one-token pass, in its attention chunk items (s.fold_finish): warp w < gh
// copies q head h0 + w of KV head g's group from the raw projection into qs and finishes it
// there (mkm::head_finish, as mk_qkv_finish does in place); in the chunk that holds the token's
// cell, warp 7 finishes K head g in kn (the arena's stage, free until K is staged) and writes the
// cell, and warp 6 writes V head g's cell. Every item of that chunk for KV head g writes the same
// bytes, its own before its K and V are staged (the workgroup barrier at the end), so no item
// reads the cell before it holds the token's K and V. Nothing writes the raw projection, which
// the items share.
__device__ __noinline__ void mk_attn_fold_finish(const MkPass& P, const MkModelStage& s, long long g, long long t,
                                                 long long ch, int h0, int gh, float* qs, float* kn) {
    ARBOR_MK_SMEM(qs);
    ARBOR_MK_SMEM(kn);
    const MkDims& d = P.d;
    const MkLayerW& L = mk_layer(P, s);
    const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) & 31;
    const long long group = d.n_head / d.n_head_kv, hdk = d.hd_k;
    const long long nq = d.n_head * hdk, nk = d.n_head_kv * hdk, R = nq + nk + d.n_head_kv * d.hd_v;
    const float* row = P.qkv + t * R;
    for (int hh = warp; hh < gh; hh += kMkBlockWarps) {
        float* o = qs + hh * hdk;
        const float* v = row + (g * group + h0 + hh) * hdk;
        for (long long i = lane; i < hdk; i += 32) o[i] = v[i];
        arbor_syncwarp();
        mkm::head_finish(P, L, 0, t, o, lane);
    }
    if (ch == P.pos[t] / mkm::kChunk) {
        if (warp == kMkBlockWarps - 1) {
            const float* v = row + nq + g * hdk;
            for (long long i = lane; i < hdk; i += 32) kn[i] = v[i];
            arbor_syncwarp();
            mkm::head_finish(P, L, 1, t, kn, lane);
            mkm::head_store_cell(P, s.layer, 1, g, t, kn, lane);
        } else if (warp == kMkBlockWarps - 2) {
            mkm::head_store_cell(P, s.layer, 2, g, t, row + nq + nk + g * d.hd_v, lane);
        }
    }
    __syncthreads();  // q in qs, and this workgroup's cell writes before its K and V loads
}
#endif

#if ARBOR_MK_SCORE_QREG
// The score tiles of one staged K piece (step 2 of attn_chunk_cells, below) with the queries in
// registers: the warps are B blocks, block b taking rows b * H .. b * H + H - 1 (H * B >= gh;
// rows past gh repeat the last), and each warp holds its block's query elements of its lanes
// (lane j: elements j, j + 32, j + 64, j + 96; hdk <= 128); its tiles are H rows x 32 / H cells,
// so a tile loads only its cells' K elements (4 a cell and lane: with H = 8, 16 loads for 128
// multiply-adds, where mkb::score_tile<8, 4> loaded 48). Used as <8, 1> (up to 8 rows) and
// <8, 2> (9 to 16 rows); <16, 1> spilled 92/116 bytes and was no faster (gpu-next20). Lane j's
// accumulator of every dot is the same chain (elements j, j + 32, ... in order, from +0),
// combined by the same combine_lanes_multi<32>: the bits do not change. Not inlined: the 4 H
// query registers get an allocation of their own (loaded again each piece: 4 H loads against the
// piece's tiles).
template <int H, int B, class KT = float>
__device__ __noinline__ void attn_score_tiles_qreg(const float* qs, int hdk, const KT* kst, int krow_f, int gh, int np,
                                                   int c0, float* sc, float scale) {
    ARBOR_MK_SMEM(qs);
    ARBOR_MK_SMEM(kst);
    ARBOR_MK_SMEM(sc);
    constexpr int Ct = 32 / H, Wb = kMkBlockWarps / B;  // a tile's cells; the warps of a block
    const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid & 31;
    const int hb = warp / Wb * H, wb = warp % Wb;  // this warp's first row, and its place in its block
    float q[H][4];
#pragma unroll
    for (int h = 0; h < H; ++h)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int e = lane + 32 * i;
            q[h][i] = e < hdk ? qs[(hb + h < gh ? hb + h : gh - 1) * hdk + e] : 0.0f;
        }
    const int ctiles = (np + Ct - 1) / Ct;  // (pieces are whole tiles of attn_tile_cells(gh) >= Ct cells)
    for (int tile = wb; tile < ctiles; tile += Wb) {
        const int cb = tile * Ct;
        const KT* kb = kst + cb * krow_f;
        float v[32];
#pragma unroll
        for (int x = 0; x < 32; ++x) v[x] = 0.0f;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int e = lane + 32 * i;
            if (e < hdk) {
                float kv[Ct];
#pragma unroll
                for (int c = 0; c < Ct; ++c) kv[c] = mkb::k_f32(kb[c * krow_f + e]);
#pragma unroll
                for (int h = 0; h < H; ++h)
#pragma unroll
                    for (int c = 0; c < Ct; ++c) v[h * Ct + c] = fmaf(q[h][i], kv[c], v[h * Ct + c]);
            }
        }
        combine_lanes_multi<32>(v, lane);  // lane x: dot x = (row hb + x / Ct, cell cb + x % Ct)
        const int h = hb + lane / Ct, j = cb + lane % Ct;
        if (h < gh && j < np) sc[h * mkm::kChunk + c0 + j] = num::mul_rn(v[0], scale);
    }
}
#endif

// The scores of a staged K piece's np cells (from cell c0 of the chunk) for gh rows, as warp
// tiles of attn_tile_heads(gh) heads x attn_tile_cells(gh) cells (mkb::score_tile), into sc.
template <class KT>
__device__ __forceinline__ void attn_score_tiles(const float* qs, int hdk, const KT* kst, int krow, int gh, int np, int c0, float* sc,
                                        float scale) {
    const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) & 31;
    const int ht = attn_tile_heads(gh), ct = attn_tile_cells(gh), htiles = (gh + ht - 1) / ht;
    const int ctiles = (np + ct - 1) / ct;
    for (int tile = warp; tile < htiles * ctiles; tile += kMkBlockWarps) {
        const int hb = tile / ctiles * ht, cb = tile % ctiles * ct;
        float dot;
        switch (ht) {
        case 1: dot = mkb::score_tile<1, 16>(qs, hdk, kst, krow, gh, hb, cb, lane); break;
        case 2: dot = mkb::score_tile<2, 16>(qs, hdk, kst, krow, gh, hb, cb, lane); break;
        case 4: dot = mkb::score_tile<4, 8>(qs, hdk, kst, krow, gh, hb, cb, lane); break;
        default: dot = mkb::score_tile<8, 4>(qs, hdk, kst, krow, gh, hb, cb, lane); break;
        }
        const int x = ht == 1 ? lane / 2 : lane;  // the dot this lane holds
        const int h = hb + x / ct, j = cb + x % ct;
        if ((ht > 1 || (lane & 1) == 0) && h < gh && j < np) sc[h * mkm::kChunk + c0 + j] = num::mul_rn(dot, scale);
    }
}

#if ARBOR_MK_SOFTMAX_SPREAD
// Step 3 of attn_chunk_cells for gh heads fewer than the workgroup's warps (a decode item's one,
// two or four): each head's cells go to kMkBlockWarps / gh warps, not one, for the max and the
// exponentials; one thread per head then runs l (attn_chunk_l; with ARBOR_MK_L_UNDER_V,
// attn_o_write does). The workgroup calls it whole.
// Every thread's max starts from e[0], as every lane's does in the one-warp form, so a NaN at
// cell 0 gives a NaN max and a NaN elsewhere none, as in a sequential loop. The two forms may
// differ only in the sign of a zero maximum, and nothing computed from m sees that sign: each
// e_j - m and m_c - M is then e_j or m_c itself, or a zero whose exponential is 1. ls[0 ..
// kMkBlockWarps - 1] holds the warps' maxima until the heads' sums replace them.
__device__ __noinline__ void attn_softmax_spread(float* sc, float* ms, float* ls, int n, int gh) {
    ARBOR_MK_SMEM(sc);
    ARBOR_MK_SMEM(ms);
    ARBOR_MK_SMEM(ls);
    static_assert(kMkAttnRows >= kMkBlockWarps, "ls holds a maximum a warp");
    const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid & 31;
    const int wph = kMkBlockWarps / gh, h = warp / wph, r = (warp % wph) * 32 + lane, stride = wph * 32;
    float* e = sc + h * mkm::kChunk;
    float m = e[0];
    for (int j = r; j < n; j += stride)
        if (e[j] > m) m = e[j];
    m = warp_max_keep(m);
    if (lane == 0) ls[warp] = m;
    __syncthreads();
    m = ls[h * wph];
    for (int i = 1; i < wph; ++i)
        if (const float x = ls[h * wph + i]; x > m) m = x;
    for (int j = r; j < n; j += stride) e[j] = num::exp_f(num::sub_rn(e[j], m));
#if ARBOR_MK_L_UNDER_V
    // l comes after attn_o_write's first barrier (attn_chunk_ls), which also orders every
    // warp's read of the maxima before ls is written.
    if (r == 0) ms[h] = m;
#else
    __syncthreads();  // every exponential is in place, and every warp has read the maxima
    if (r == 0) {
        ms[h] = m;
        ls[h] = attn_chunk_l(e, n);
    }
#endif
}
#endif

// Where attn_chunk_cells's stage starts in the arena: after qs [gh][hdk], sc [gh][256], ms and ls.
__device__ inline uint8_t* attn_stage_at(float* smem, int gh, int hdk) {
    return reinterpret_cast<uint8_t*>(smem + gh * hdk + gh * mkm::kChunk + 2 * kMkAttnRows);
}
// The cells of chunk `first` (its first cell) that a token at pos attends: up to pos, at most a chunk.
__device__ inline int attn_cells_n(long long pos, long long first) {
    return static_cast<int>((pos + 1 - first) < mkm::kChunk ? pos + 1 - first : mkm::kChunk);
}

#if ARBOR_MK_ASYNC_STAGE
// Whether a dense chunk item's n f16 K rows (gh rows of queries) fit its stage raw, in one piece
// (attn_scores_raw; the tiles read up to 15 rows past n).
__device__ inline bool attn_raw_fits(int eb, int gh, int n, int hdk, long long stage_bytes) {
    return eb == 2 && gh <= 8 && static_cast<long long>((n + 15) / 16 * 16) * hdk * 2 <= stage_bytes;
}
#endif
#if ARBOR_MK_K_EARLY
// The workgroup's early K copies (mk_attn_k_early): their source chunk and stage (null: none in
// flight) and their rows. The megakernel clears the record at its entry.
__shared__ const uint8_t* mk_k_early_src;
__shared__ uint8_t* mk_k_early_dst;
__shared__ int mk_k_early_n;
#endif
// At a kernel's entry, before its first __syncthreads (the megakernel's and the attention probe's).
__device__ inline void mk_k_early_init() {
#if ARBOR_MK_K_EARLY
    if (threadIdx.x == 0) mk_k_early_src = nullptr;
#endif
}

#if ARBOR_MK_ASYNC_STAGE
// Step 2 of attn_chunk_cells (below) for a dense chunk whose n f16 K rows (from k0) fit the
// stage raw, tiles' rows past n included: the rows in one piece by cp.async, then the score tiles
// converting each element as they load it (mkb::k_f32). Rows are hdk halves apart: a tile's lanes
// read consecutive elements of one row, so the stride needs no padding. Not inlined:
// attn_chunk_cells keeps its allocation.
__device__ __noinline__ void attn_scores_raw(const uint8_t* k0, int n, int hdk, const float* qs, int gh, float* sc,
                                             uint8_t* stage, float scale, PhaseClock& pc
#if ARBOR_MK_STAGE_TWICE
                                             , const uint8_t* v0, int hdv
#endif
                                             , bool evict_first
#if ARBOR_MK_K_EARLY
                                             , int k_done  // rows already asked for (mk_attn_k_early)
#endif
#if ARBOR_MK_V_HALVES
                                             , const uint8_t* v_early, int vrow  // the V rows to ask for by halves (or null)
#endif
) {
    ARBOR_MK_SMEM(qs);
    ARBOR_MK_SMEM(sc);
    ARBOR_MK_SMEM(stage);
#if ARBOR_MK_STAGE_TWICE
    // Measurement build (mk_model.hpp): the copy's instructions run twice, the first run in the q
    // phase's clock: 1, K both times; 2, first as many bytes of the chunk's V (eb = 2 here), then K.
#pragma unroll 1
    for (int r = 0; r < 2; ++r) {
        const bool v = ARBOR_MK_STAGE_TWICE == 2 && r == 0;
        block_stage_async(stage, v ? v0 : k0, static_cast<long long>(n) * (v && hdv < hdk ? hdv : hdk) * 2,
                          ARBOR_MK_BULK_STAGE != 0, evict_first);
        block_stage_wait();
        __syncthreads();
        pc.mark(r == 0 ? kPhAttnQ : kPhAttnKStage);
    }
#else
    ARBOR_STC(const unsigned long long kc0 = arbor_cycles());
#if ARBOR_MK_K_EARLY
    // The rows mk_attn_k_early has not asked for (none at depth, where a chunk's cells are all
    // old); the wait then lands every copy in flight, the early ones too.
    const long long done = static_cast<long long>(k_done) * hdk * 2;
    if (static_cast<long long>(n) * hdk * 2 > done)
        block_stage_async(stage + done, k0 + done, static_cast<long long>(n) * hdk * 2 - done, ARBOR_MK_BULK_STAGE != 0,
                          evict_first);
#else
    block_stage_async(stage, k0, static_cast<long long>(n) * hdk * 2, ARBOR_MK_BULK_STAGE != 0, evict_first);
#endif
    ARBOR_STC(const unsigned long long kc1 = arbor_cycles());
    block_stage_wait();
    ARBOR_STC(const unsigned long long kc2 = arbor_cycles());
    __syncthreads();
    ARBOR_STC(const unsigned long long kc3 = arbor_cycles());
    pc.mark(kPhAttnKStage);
#endif
    const uint16_t* kst = reinterpret_cast<const uint16_t*>(stage);
#if ARBOR_MK_V_HALVES
    // ARBOR_MK_V_HALVES (mk_model.hpp): with v_early the rows' tiles in two halves (n1 cells, then
    // the rest), each half's V rows asked for into its K rows once every warp is done with them
    // (vrow <= 2 hdk: the caller checks). One call of each tile function (three inlined copies
    // of attn_score_tiles gave this function 160/160 bytes of spills, 32/32 with one).
    const int n1 = v_early ? ((n + 1) / 2 + 15) / 16 * 16 : n;  // (whole tiles: no tile of the first half reads past it)
    for (int c0 = 0; c0 < n;) {
        const int np = c0 == 0 ? n1 : n - n1;
#if ARBOR_MK_SCORE_QREG
        if (gh > 4 && hdk <= 128) attn_score_tiles_qreg<8, 1>(qs, hdk, kst + c0 * hdk, hdk, gh, np, c0, sc, scale);
        else
#endif
            attn_score_tiles(qs, hdk, kst + c0 * hdk, hdk, gh, np, c0, sc, scale);
        if (!v_early) break;
        __syncthreads();  // every warp is done with these K rows
        block_stage_async(stage + static_cast<long long>(c0) * vrow, v_early + static_cast<long long>(c0) * vrow,
                          static_cast<long long>(np) * vrow, false, evict_first);
        c0 += np;
    }
    ARBOR_STC(const unsigned long long kc4 = arbor_cycles());
    if (!v_early) __syncthreads();
#else
#if ARBOR_MK_SCORE_QREG
    if (gh > 4 && hdk <= 128) attn_score_tiles_qreg<8, 1>(qs, hdk, kst, hdk, gh, n, 0, sc, scale);
    else
#endif
        attn_score_tiles(qs, hdk, kst, hdk, gh, n, 0, sc, scale);
    ARBOR_STC(const unsigned long long kc4 = arbor_cycles());
    __syncthreads();
#endif
#if ARBOR_MK_STAGE_CLOCKS
    const unsigned long long kc5 = arbor_cycles();
    if (threadIdx.x == 0 && gh == 1) {
        mk_stc(kStcKIssue, kc0, kc1);
        mk_stc(kStcKWait, kc1, kc2);
        mk_stc(kStcKSync, kc2, kc3);
        mk_stc(kStcScores, kc3, kc4);
        mk_stc(kStcScoresSync, kc4, kc5);
    }
    if (gh == 1) mk_stc_warp(kStcWScores, kc3, kc4, kc5);
#endif
    pc.mark(kPhAttnScores);
}
#endif

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
//  2. Per K piece (staged as floats, odd row stride): warp tiles of 32 (head, cell) dots, lane j
//     running chain j (elements j, j+32, ...) of all 32 and combine_lanes_multi reducing the 32
//     trees with 31 shuffles: dot_lanes exactly, 8 instructions a dot where a thread's 32
//     chains took about 400 (two shared-memory loads a multiply-add).
//  3. Per head (warp h): the max (exact), then e_j = exp_f(s_j - m) in place, then lane 0 runs
//     l over the cells in order (with ARBOR_MK_L_UNDER_V, NVIDIA's default: in step 4, while the
//     first V piece is in flight).
//  4. Per V piece: thread (slice, d) runs o[d] of its heads over the piece's cells in order
//     (one V element serves all of them); o stays in registers across pieces.
//
// `cells` maps j < n to the j-th attended cell of the chunk (in increasing order): every cell
// of a dense chunk, or flashnext's selected ones (mk_flashnext_attention.hpp).
//
// Not inlined: its own register allocation (inlined into the megakernel entry its loops ran
// far slower than their instruction counts).
template <class Cells, bool kOne = false>
__device__ __noinline__ void attn_chunk_cells(const MkPass& P, const MkModelStage& s, long long g, long long t, long long ch,
                                        const Cells& cells, int n, int h0, int gh, float* smem
#if ARBOR_MK_ATTN_TOKENS
                                        , int nt = 1
#endif
) {
    ARBOR_MK_SMEM(smem);
#if ARBOR_MK_ATTN_TOKENS
    // nt tokens t .. t + nt - 1 of one context, each with the chunk's n cells whole: rows
    // tt * ghq + h for token t + tt's head h0 + h (nt * ghq <= kMkAttnRows, mk_attn_chunk_tokens).
    const int ghq = gh;
    gh *= nt;
#endif
    const MkDims& d = P.d;
    const int group = static_cast<int>(d.n_head / d.n_head_kv);
    const int hdk = static_cast<int>(d.hd_k), hdv = static_cast<int>(d.hd_v);
    const int eb = static_cast<int>(d.kv_elem_bytes);
    const long long first = ch * mkm::kChunk;
    const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid & 31;
    float* qs = smem;                              // [gh][hdk]
    float* sc = qs + gh * hdk;                     // [gh][256]
    float* ms = sc + gh * mkm::kChunk;             // [kMkAttnRows] chunk maxima
    float* ls = ms + kMkAttnRows;                  // [kMkAttnRows] chunk sums
    uint8_t* stage = attn_stage_at(smem, gh, hdk);  // ls + kMkAttnRows
    const long long stage_bytes = attn_stage_floats(gh, hdk) * 4;  // the arena from `stage` on
    const float* qg = P.q + t * d.n_head * hdk + (g * group + h0) * hdk;
    PhaseClock pc;
    bool folded = false;  // q finished here (s.fold_finish) instead of read from Q
#if ARBOR_MK_FOLD_FINISH
    if constexpr (std::is_same_v<Cells, DenseCells>)
        if (s.fold_finish) {
            mk_attn_fold_finish(P, s, g, t, ch, h0, gh, qs, reinterpret_cast<float*>(stage));
            folded = true;
        }
#endif
#if ARBOR_MK_ATTN_TOKENS
    if (!folded)
        for (int i = tid; i < gh * hdk; i += kMkBlockThreads) {
            const int tt = i / (ghq * hdk);  // token t + tt's heads follow token t's
            qs[i] = qg[tt * d.n_head * hdk + i - tt * ghq * hdk];
        }
#else
    if (!folded)
        for (int i = tid; i < gh * hdk; i += kMkBlockThreads) qs[i] = qg[i];
#endif
    pc.mark(kPhAttnQ);
    const uint8_t* k0 = mkm::kv_cell(P, t, s.layer, g, first, false);
    const uint8_t* v0 = mkm::kv_cell(P, t, s.layer, g, first, true);

    // 2. scores, K piece by piece: the piece's K rows are staged as floats (converted once, not
    //    once per head) at an odd stride; then each warp takes tiles of 32 (head, cell) dots
    //    (mkb::score_tile: lane j the contract's chain j of every dot, one tree for all 32).
    const int krow_f = hdk + 1;
    // A piece's (head, cell) dots go to the warps in tiles of ht heads x ct cells (mkb::score_tile):
    // pieces are whole tiles (a tile reads all its ct rows), and a multiple of 8 ct cells gives
    // every warp the same number of tiles.
    const int ct = attn_tile_cells(gh);  // a piece holds whole tiles (attn_score_tiles)
    int kpiece = static_cast<int>(stage_bytes / (4 * krow_f));
    if (const int per = kMkBlockWarps * ct; kpiece > per) kpiece -= kpiece % per;
    kpiece -= kpiece % ct;  // at least ct rows fit: gpu_backend.hip refuses models where they do not
    float* kst = reinterpret_cast<float*>(stage);
#if ARBOR_MK_SCORE_QREG
    // The register-held queries' tiles (attn_score_tiles_qreg): 0 none; 1 up to 8 rows on all
    // eight warps; 2 more than 8 rows, as two blocks of 8 on four warps each; 3 (ARBOR_MK_ATTN_ROWS
    // = 32) more than 16 rows, as four blocks of 8 on two warps each.
    const int qreg = hdk <= 128 && gh > 4 && gh <= kMkAttnRows ? (gh <= 8 ? 1 : gh <= 16 ? 2 : 3) : 0;
#if ARBOR_MK_ATTN_ROWS > 16
    // Blocks of 8 rows on Wb = 8 / B warps take a piece's 4-cell tiles round robin: a piece of a
    // multiple of 4 Wb cells gives each warp of a block the same tiles (32 rows leave a stage of
    // about 60 cells, which the multiple of 32 below would cut to 32).
    if (qreg == 3) {
        kpiece = static_cast<int>(stage_bytes / (4 * krow_f));
        kpiece -= kpiece % 8;
    }
#endif
#endif
#if ARBOR_MK_ASYNC_STAGE
    // A decode item's whole chunk raw in one piece (its tiles read up to 15 rows past n).
    bool raw = false;
    if constexpr (std::is_same_v<Cells, DenseCells>) raw = attn_raw_fits(eb, gh, n, hdk, stage_bytes);
#if ARBOR_MK_K_EARLY
    // This workgroup's early K copies (mk_attn_k_early): this item's, or (never expected) a copy
    // no item takes, which lands before anything else writes the stage.
    int k_done = 0;
    if (mk_k_early_src) {
        if (raw && mk_k_early_src == k0 && mk_k_early_dst == stage) k_done = mk_k_early_n;
        else block_stage_wait();
        __syncthreads();  // every thread has read the record
        if (threadIdx.x == 0) mk_k_early_src = nullptr;
    }
#endif
#if ARBOR_MK_V_HALVES
    // ARBOR_MK_V_HALVES: a raw item of several heads (one head: ARBOR_MK_V_AHEAD's form) whose V
    // rows, one piece, fit below each half's K rows, in 16-byte words
    const int vrow = hdv * eb;
    const uint8_t* v_early =
        !kOne && raw && gh > 1 && n >= 32 && vrow <= 2 * hdk && n <= attn_vpiece(stage_bytes, vrow) &&
                ((reinterpret_cast<unsigned long long>(v0) | reinterpret_cast<unsigned long long>(stage) | vrow) & 15) == 0
            ? v0
            : nullptr;
#endif
#if ARBOR_MK_STAGE_TWICE
    if (raw) attn_scores_raw(k0, n, hdk, qs, gh, sc, stage, d.attn_scale, pc, v0, hdv, P.kv_stream != 0);
#elif ARBOR_MK_K_EARLY
    if (raw) attn_scores_raw(k0, n, hdk, qs, gh, sc, stage, d.attn_scale, pc, P.kv_stream != 0, k_done ARBOR_MK_VH(, v_early, vrow));
#else
    if (raw) attn_scores_raw(k0, n, hdk, qs, gh, sc, stage, d.attn_scale, pc, P.kv_stream != 0 ARBOR_MK_VH(, v_early, vrow));
#endif
    else
#endif
    for (int c0 = 0; c0 < n; c0 += kpiece) {
        const int np = n - c0 < kpiece ? n - c0 : kpiece;
        block_stage_k_f32(kst, krow_f, k0, first, cells, c0, np, hdk, eb);
        __syncthreads();
        pc.mark(kPhAttnKStage);
#if ARBOR_MK_SCORE_QREG
        if (qreg == 1) attn_score_tiles_qreg<8, 1>(qs, hdk, kst, krow_f, gh, np, c0, sc, d.attn_scale);
        else if (qreg == 2) attn_score_tiles_qreg<8, 2>(qs, hdk, kst, krow_f, gh, np, c0, sc, d.attn_scale);
#if ARBOR_MK_ATTN_ROWS > 16
        else if (qreg == 3) attn_score_tiles_qreg<8, 4>(qs, hdk, kst, krow_f, gh, np, c0, sc, d.attn_scale);
#endif
        else
#endif
            attn_score_tiles(qs, hdk, kst, krow_f, gh, np, c0, sc, d.attn_scale);
        __syncthreads();  // the stage is reloaded next
        pc.mark(kPhAttnScores);
    }

#if ARBOR_MK_V_AHEAD
    // A one-head item (kOne: mk_attn_chunk_block's instantiation for gh = 1; attn_o_write<1, 1>,
    // hpt below is 1): its softmax runs there, after its V copy is asked for (ARBOR_MK_V_AHEAD).
    // Its own instantiation, so that every other item's code and allocation stay as they were.
    // (The AttnOut is built here and again below: built once, before the softmax, it moved the
    // default path's PTX; made by one lambda for both, it moved gfx1151's allocation, gpu-next48.)
    if constexpr (kOne) {
#if ARBOR_MK_ATTN_TOKENS
        const AttnOut<Cells> out1{P, s, g, t, ch, cells, first, n, h0, gh, sc, ms, ls, stage, stage_bytes, v0, ghq};
#else
        const AttnOut<Cells> out1{P, s, g, t, ch, cells, first, n, h0, gh, sc, ms, ls, stage, stage_bytes, v0};
#endif
        attn_o_write<1, 1, Cells, true>(out1, pc);
        return;
    }
#endif
    // 3. max, exponentials and l per head (l: in attn_o_write with ARBOR_MK_L_UNDER_V)
#if ARBOR_MK_SOFTMAX_SPREAD
    if (gh < kMkBlockWarps && kMkBlockWarps % gh == 0) {
        ARBOR_STC(const unsigned long long xc0 = arbor_cycles());
        attn_softmax_spread(sc, ms, ls, n, gh);
        ARBOR_STC(if (threadIdx.x == 0 && gh == 1) mk_stc(kStcSoftmax, xc0, arbor_cycles()));
    } else
#endif
    {  // (braced: with ARBOR_MK_STAGE_CLOCKS the clock's declaration would be the else branch)
        ARBOR_STC(const unsigned long long xc1 = arbor_cycles());
        attn_softmax_warps(sc, ms, ls, n, gh, warp, lane);
        ARBOR_STC(if (threadIdx.x == 0 && gh == 1) mk_stc(kStcSoftmax, xc1, arbor_cycles()));
    }

    pc.mark(kPhAttnSoftmax);

    // 4. o over the cells in order, V piece by piece, and the write: as many o registers as a
    // thread has heads (a decode item of one head holds one, not the sixteen of the widest case).
    const int hpt = (gh + kMkBlockThreads / hdv - 1) / (kMkBlockThreads / hdv);  // hdv <= 256 (host check)
#if ARBOR_MK_O_PAIRS
    // Items of 8 or more heads a thread (reads and prefills) with f16 V rows: two dims a thread,
    // half the heads (attn_o_write<HM, 2>).
    const int slices2 = kMkBlockThreads / (hdv / 2), hpt2 = (gh + slices2 - 1) / slices2;
    const bool pairs = eb == 2 && hdv % 2 == 0 && hpt >= 8 && hpt2 <= 8;
#endif
#if ARBOR_MK_ATTN_TOKENS
    const AttnOut<Cells> out{P, s, g, t, ch, cells, first, n, h0, gh, sc, ms, ls, stage, stage_bytes, v0, ghq ARBOR_MK_VH(, v_early != nullptr)};
#else
    const AttnOut<Cells> out{P, s, g, t, ch, cells, first, n, h0, gh, sc, ms, ls, stage, stage_bytes, v0 ARBOR_MK_VH(, v_early != nullptr)};
#endif
#if ARBOR_MK_O_PAIRS
    if (pairs && hpt2 <= 4) attn_o_write<4, 2>(out, pc);
    else if (pairs) attn_o_write<8, 2>(out, pc);
    else
#endif
    if (hpt <= 1) attn_o_write<1>(out, pc);
    else if (hpt <= 2) attn_o_write<2>(out, pc);
    else if (hpt <= 4) attn_o_write<4>(out, pc);
    else if (hpt <= 8) attn_o_write<8>(out, pc);
    else attn_o_write<16>(out, pc);  // at most 16 heads a thread (host checks: group, rows a grouped item)
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

// A one-token chunk item's place and its attended cells n from cell `first` (n = 0: the chunk is
// past the token's cell, nothing to do).
struct ChunkCellsOf {
    ChunkItem it;
    long long first;
    int n;
};
__device__ inline ChunkCellsOf chunk_cells_of(const MkPass& P, const MkModelStage& s, long long item) {
    const ChunkItem it = chunk_item(P, s, item);
    const long long pos = P.pos[it.t], first = it.ch * mkm::kChunk;
    return {it, first, it.ch > pos / mkm::kChunk ? 0 : attn_cells_n(pos, first)};
}

#if ARBOR_MK_ATTN_TOKENS
// s.attn_tokens = nt > 1 (a pass of many tokens over several chunks; gpu_backend.hip): item
// ((g * TG + tg) * max_chunks + ch) * parts + p takes tokens tl = tg * nt .. tl + nt - 1 (TG =
// ceil(T / nt) groups) for chunk ch. When all nt are of one context and each sees the whole
// chunk, one attn_chunk_cells runs them as nt x gh rows, K and V staged once; otherwise each
// token that sees the chunk runs alone, in turn. Each (token, head) row's scores, softmax, o and
// write are those of the one-token item (the rows are independent, and pieces only stage), so
// the bits do not change. (Items of whole groups: an item per token with the group's work in
// its first token's would leave workgroups that only ever drew the others idle.) Not inlined:
// inlined into the entry (in a build with ARBOR_MK_EXPERT_PAIRS on as well), the entry's spills
// rose from 392/636 to 624/1636 bytes.
__device__ __noinline__ void mk_attn_chunk_tokens(const MkPass& P, const MkModelStage& s, long long item, float* smem) {
    ARBOR_MK_SMEM(smem);
    const long long T = P.n_tokens, MC = P.max_chunks, nt = s.attn_tokens, TG = (T + nt - 1) / nt;
    const int parts = s.head_parts > 1 ? s.head_parts : 1;
    const int gh = static_cast<int>(P.d.n_head / P.d.n_head_kv) / parts, h0 = static_cast<int>(item % parts) * gh;
    const long long c = item / parts, g = c / (TG * MC), tl = (c / MC) % TG * nt, ch = c % MC;
    const long long first = ch * mkm::kChunk, tn = tl + nt <= T ? nt : T - tl;
    bool whole = tn == nt;
    for (long long k = 0; whole && k < nt; ++k)
        whole = P.seq[tl + k] == P.seq[tl] && P.pos[tl + k] + 1 >= first + mkm::kChunk;
    if (whole) {
        attn_chunk_cells(P, s, g, tl, ch, DenseCells{first}, mkm::kChunk, h0, gh, smem, static_cast<int>(nt));
        return;
    }
    for (long long t = tl; t < tl + tn; ++t) {
        const long long pos = P.pos[t];
        if (ch > pos / mkm::kChunk) continue;
        attn_chunk_cells(P, s, g, t, ch, DenseCells{first}, attn_cells_n(pos, first), h0, gh, smem);
        __syncthreads();  // the arena is reused by the next token
    }
}
#endif

#if ARBOR_MK_K_EARLY
// ARBOR_MK_K_EARLY (mk_model.hpp): before a decode step's attention level, while the workgroup
// waits at the grid barrier, its first item's K cells but the token's own are asked for into the
// stage attn_chunk_cells will read them from (the same place: qs, sc, ms and ls before it), with
// the same copies attn_scores_raw makes, when that item will stage its chunk raw. Not inlined.
__device__ __noinline__ void mk_attn_k_early(const MkModelStage& s, long long items, float* smem) {
    const MkPass& P = *s.pass;
    const long long item = gridDim.x - 1 - blockIdx.x;  // the first item mk_run_stage deals this workgroup
    if (P.n_tokens != 1 || s.attn_tokens > 1 || s.fold_finish || item >= items) return;
    const ChunkCellsOf c = chunk_cells_of(P, s, item);
    const MkDims& d = P.d;
    const int n = c.n, hdk = static_cast<int>(d.hd_k), gh = c.it.gh;
    if (n == 0 || !attn_raw_fits(static_cast<int>(d.kv_elem_bytes), gh, n, hdk, attn_stage_floats(gh, hdk) * 4)) return;
    const int old = c.it.ch == P.pos[c.it.t] / mkm::kChunk ? n - 1 : n;  // the token's own cell is the level before's
    if (old <= 0) return;
    uint8_t* stage = attn_stage_at(smem, gh, hdk);
    const uint8_t* k0 = mkm::kv_cell(P, c.it.t, s.layer, c.it.g, c.first, false);
    block_stage_async(stage, k0, static_cast<long long>(old) * hdk * 2, ARBOR_MK_BULK_STAGE != 0, P.kv_stream != 0);
    if (threadIdx.x == 0) mk_k_early_src = k0, mk_k_early_dst = stage, mk_k_early_n = old;
}
#endif

__device__ inline void mk_attn_chunk_block(const MkPass& P, const MkModelStage& s, long long item, float* smem) {
#if ARBOR_MK_ATTN_TOKENS
    if (s.attn_tokens > 1) {
        mk_attn_chunk_tokens(P, s, item, smem);
        return;
    }
#endif
    const ChunkCellsOf c = chunk_cells_of(P, s, item);
#if ARBOR_MK_V_AHEAD
    if (c.n > 0 && c.it.gh == 1)
        attn_chunk_cells<DenseCells, true>(P, s, c.it.g, c.it.t, c.it.ch, DenseCells{c.first}, c.n, c.it.h0, 1, smem);
    else
#endif
    if (c.n > 0) attn_chunk_cells(P, s, c.it.g, c.it.t, c.it.ch, DenseCells{c.first}, c.n, c.it.h0, c.it.gh, smem);
}

#if ARBOR_MK_COMBINE_REGS
// The floats before a staged combine's chunk rows (ARBOR_MK_COMBINE_STAGE): M and L of each head,
// then each head's l and weight of every chunk, rounded up to a 16-byte word.
__device__ inline int combine_stage_at(int hp, int n_chunks) { return (2 * hp + 2 * hp * n_chunks + 3) & ~3; }

// mk_attn_combine_block's arithmetic, every step in the same order, with fewer round trips to L2
// (ARBOR_MK_COMBINE_REGS, mk_model.hpp). For items whose chunks' l and weights fit the arena and
// whose hp * hdv values are one a thread (thread tid: head tid / hdv, dim tid % hdv).
//  0. Each thread asks for its value of the first kU chunks (they do not depend on M); Staged
//     (ARBOR_MK_COMBINE_STAGE): the workgroup asks for every chunk's rows of the item's heads
//     into the arena instead, by cp.async, the arena holding them (the caller checks).
//  1. Warp h (head h): its lanes load the l and m of G chunks each at once (chunks c0 + 32 k +
//     lane); the first unskipped chunk f by a ballot, M from f's lane by a shuffle; each lane then
//     takes `m > M` over its chunks in chunk order, the xor tree over the lanes: the scan of
//     mk_attn_combine_block lane for lane. The l and weights into shared memory (the weights from
//     the registers when every chunk fits one round of G), lane 0 runs L over them in chunk order;
//     Staged, each chunk's l and weight side by side (one 8-byte load), and no lane runs L: every
//     thread runs its head's L in its own o loop, the same chain in the same order.
//  2. Every thread runs its O over the chunks in order, the next kU chunks' values asked for
//     before the fmafs of these (Staged: from the arena); O / L out, and each warp's 32 results
//     are its Q8A block (warp_quantize_lanes, from the registers).
// Its phase marks (bench --profile): "combine: l, m, max" (0 and 1, the weights included), "combine:
// L" (Staged: the wait for the rows), "combine: o" (2, the division and the write), "combine: q8a".
template <bool Staged>
__device__ __noinline__ void mk_attn_combine_regs(const MkPass& P, const MkModelStage& s, const float* part, float* out,
                                                 float* ml, int n_chunks, int hp, int hdv, long long cs, long long at) {
    ARBOR_MK_SMEM(ml);
    constexpr int kU = Staged ? 1 : 16, G = 4;
    const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid & 31;
    PhaseClock pc;
    const bool mine = tid < hp * hdv;
    const int h2 = tid / hdv, row = hp * (hdv + 2);  // row: the item's floats of one chunk
    const float* p2 = part + h2 * (hdv + 2) + tid % hdv;  // chunk c's value of this thread's (head, dim): p2[c * cs]
    float* rows = ml + combine_stage_at(hp, n_chunks);    // Staged: chunk c's rows at rows[c * row]
    float v[kU];
    if constexpr (Staged) {
#if ARBOR_MK_COMBINE_STAGE
        block_stage_rows_async(rows, part, n_chunks, row * 4, cs * 4);
#endif
    } else {
#pragma unroll
        for (int u = 0; u < kU; ++u) v[u] = mine && u < n_chunks ? mk_ld(&p2[u * cs]) : 0.0f;
    }
    // Head `warp` (hp <= kMkBlockWarps: the caller checks): l of chunk c at lw[li(c)], its weight
    // at lw[wi(c)]
    float* lw = ml + 2 * hp + 2 * warp * n_chunks;
    auto li = [&](int c) { return Staged ? 2 * c : c; };
    auto wi = [&](int c) { return Staged ? 2 * c + 1 : n_chunks + c; };
    float M = 0.0f;
    if (warp < hp) {
        const float* ph = part + warp * (hdv + 2);
        bool found = false;  // an unskipped chunk seen (warp-uniform)
        float mv[G];
        for (int c0 = 0; c0 < n_chunks; c0 += 32 * G) {
            float lv[G];
#pragma unroll
            for (int k = 0; k < G; ++k) {
                const int c = c0 + 32 * k + lane;
                lv[k] = c < n_chunks ? mk_ld(&ph[c * cs + hdv + 1]) : -1.0f;  // past the end: skipped
                mv[k] = c < n_chunks ? mk_ld(&ph[c * cs + hdv]) : 0.0f;
            }
#pragma unroll
            for (int k = 0; k < G; ++k) {
                const bool live = !(lv[k] < 0.0f);
                if (!found)
                    if (const unsigned b = arbor_ballot(live)) {  // the first unskipped chunk: M = its m
                        M = __shfl(mv[k], __ffs(static_cast<int>(b)) - 1);
                        found = true;
                    }
                if (live && mv[k] > M) M = mv[k];  // (no live chunk before the first)
                if (const int c = c0 + 32 * k + lane; c < n_chunks) lw[li(c)] = lv[k];
            }
        }
        for (int o = 16; o >= 1; o >>= 1) {
            const float x = __shfl_xor(M, o);
            if (x > M) M = x;
        }
        if (n_chunks <= 32 * G) {
#pragma unroll
            for (int k = 0; k < G; ++k)
                if (const int c = 32 * k + lane; c < n_chunks) lw[wi(c)] = num::attn_chunk_weight(mv[k], M);
        } else {
            for (int c = lane; c < n_chunks; c += 32) lw[wi(c)] = num::attn_chunk_weight(mk_ld(&ph[c * cs + hdv]), M);
        }
        arbor_syncwarp();
    }
    pc.mark(kPhCombScan);
    if constexpr (Staged) {
#if ARBOR_MK_COMBINE_STAGE
        block_stage_wait();
#endif
    } else if (warp < hp && lane == 0) {
        float L = 0.0f;
#pragma unroll 8
        for (int c = 0; c < n_chunks; ++c) {
            const float l = lw[c];
            L = l < 0.0f ? L : fmaf(l, lw[n_chunks + c], L);
        }
        ml[2 * warp] = M;
        ml[2 * warp + 1] = L;
    }
    __syncthreads();
    pc.mark(kPhCombL);
    float r = 0.0f;
    if constexpr (Staged) {
        if (mine) {
            const float2* lw2 = reinterpret_cast<const float2*>(ml + 2 * hp + 2 * h2 * n_chunks);  // (l, weight) of chunk c
            const float* r2 = rows + (p2 - part);
            float o = 0.0f, L = 0.0f;
#pragma unroll 8
            for (int c = 0; c < n_chunks; ++c) {
                const float2 q = lw2[c];
                const float x = r2[c * row];
                o = q.x < 0.0f ? o : fmaf(x, q.y, o);
                L = q.x < 0.0f ? L : fmaf(q.x, q.y, L);
            }
            r = num::div_rn(o, L);
            out[tid] = r;
        }
    } else if (mine) {
        const float* lw2 = ml + 2 * hp + 2 * h2 * n_chunks;
        float o = 0.0f;
        for (int c = 0; c < n_chunks; c += kU) {
            float nv[kU];
#pragma unroll
            for (int u = 0; u < kU; ++u) nv[u] = c + kU + u < n_chunks ? mk_ld(&p2[(c + kU + u) * cs]) : 0.0f;
#pragma unroll
            for (int u = 0; u < kU; ++u)
                if (c + u < n_chunks) {
                    const float l = lw2[c + u];
                    o = l < 0.0f ? o : fmaf(v[u], lw2[n_chunks + c + u], o);
                }
#pragma unroll
            for (int u = 0; u < kU; ++u) v[u] = nv[u];
        }
        r = num::div_rn(o, ml[2 * h2 + 1]);
        out[tid] = r;
    }
    pc.mark(kPhCombO);
    // hp * hdv is whole Q8A blocks (the caller checks): warp w's lanes hold block w's values
    if (mine && s.quantize_out) mkm::warp_quantize_lanes(r, P.attq + at / 32 + warp, lane);
    pc.mark(kPhCombQ8a);
}
#endif

// Item (g * T + t) * parts + p: heads h0 = p * hp .. h0 + hp - 1 of KV head g, token t, the
// chunks combined in chunk order (numerics.hpp), skipping the chunks marked empty (l < 0:
// flashnext's chunks without an attended cell; a computed chunk has l >= 1, so a dense pass skips
// none). hp = attn_combine_heads (mk_model.hpp): a thread per (head, dim).
//  1. Warp w takes heads w, w + 8, ... of the item: M, the first unskipped chunk's m, then the max
//     over the unskipped ones, lane by lane and across the lanes (a max is the same in any order,
//     and a NaN first m stays, as in a sequential loop); the lanes put each chunk's l and weight
//     w_c = exp_f(m_c - M) in shared memory (each once); lane 0 runs L over the chunks in order.
//  2. Every thread runs its (head, dim)'s O over the chunks in order, loading 16 chunks' values
//     before their fmafs (one latency per 16 chunks), and writes O / L.
// Both the dense combine and flashnext's run here. With ARBOR_MK_COMBINE_REGS (NVIDIA's default)
// every item whose l and weights fit the arena and whose hp * hdv values are one a thread in whole
// warps goes to mk_attn_combine_regs instead: the same arithmetic, fewer round trips to L2.
__device__ __noinline__ inline void mk_attn_combine_block(const MkPass& P, const MkModelStage& s, long long item, float* smem) {
    ARBOR_MK_SMEM(smem);
    const MkDims& d = P.d;
    const long long T = P.n_tokens, MC = P.max_chunks;
    const int group = static_cast<int>(d.n_head / d.n_head_kv), hdv = static_cast<int>(d.hd_v);
    const int hp = attn_combine_heads(group, hdv), parts = group / hp;
    const long long gt = item / parts, g = gt / T, t = gt % T;
    const int h0 = static_cast<int>(item % parts) * hp;
    const long long cs = static_cast<long long>(group) * (hdv + 2);  // one chunk's rows
    const int n_chunks = static_cast<int>(P.pos[t] / mkm::kChunk + 1);
    const float* part = P.attn_part + (t * d.n_head_kv + g) * MC * cs + static_cast<long long>(h0) * (hdv + 2);
    const long long at = t * d.n_head * hdv + (g * group + h0) * hdv;  // the item's span of Att (and AttQ)
    float* out = P.att + at;
    const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid & 31;
    float* ml = smem;  // [hp][2]: M and L of each head
    const bool cached = 2 * hp + 2 * hp * n_chunks <= kMkSmemFloats;  // l and w of every chunk of every head
    auto lsh = [&](int h) { return smem + 2 * hp + 2 * h * n_chunks; };
    // Chunk c's l and weight for head h (its rows at ph), from shared memory when cached.
    auto l_of = [&](int h, const float* ph, int c) { return cached ? lsh(h)[c] : mk_ld(&ph[c * cs + hdv + 1]); };
    auto w_of = [&](int h, const float* ph, float M, int c) {
        return cached ? lsh(h)[n_chunks + c] : num::attn_chunk_weight(mk_ld(&ph[c * cs + hdv]), M);
    };
#if ARBOR_MK_COMBINE_REGS
    if (cached && hp <= kMkBlockWarps && hp * hdv <= kMkBlockThreads && hp * hdv % 32 == 0) {
#if ARBOR_MK_COMBINE_STAGE
        // Every chunk's rows of the item's heads fit the arena after the l and weights, in 16-byte
        // words (cs, group / hp rows, is then too)
        const int row = hp * (hdv + 2);
        if (combine_stage_at(hp, n_chunks) + n_chunks * row <= kMkSmemFloats && row % 4 == 0 &&
            (reinterpret_cast<unsigned long long>(part) & 15) == 0) {
            mk_attn_combine_regs<true>(P, s, part, out, ml, n_chunks, hp, hdv, cs, at);
            return;
        }
#endif
        mk_attn_combine_regs<false>(P, s, part, out, ml, n_chunks, hp, hdv, cs, at);
        return;
    }
#endif
    for (int h = warp; h < hp; h += kMkBlockWarps) {
        const float* ph = part + h * (hdv + 2);  // chunk c's row of head h: ph + c * cs
        int f = n_chunks;                        // the first unskipped chunk
        for (int c0 = 0; c0 < n_chunks && f == n_chunks; c0 += 32) {
            const int c = c0 + lane;
            const unsigned b = arbor_ballot(c < n_chunks && !(mk_ld(&ph[c * cs + hdv + 1]) < 0.0f));
            if (b) f = c0 + __ffs(static_cast<int>(b)) - 1;
        }
        float M = f < n_chunks ? mk_ld(&ph[f * cs + hdv]) : 0.0f;
        for (int c = lane; c < n_chunks; c += 32) {
            const float* r = ph + c * cs;
            if (mk_ld(&r[hdv + 1]) < 0.0f) continue;
            if (mk_ld(&r[hdv]) > M) M = mk_ld(&r[hdv]);
        }
        for (int o = 16; o >= 1; o >>= 1) {
            const float x = __shfl_xor(M, o);
            if (x > M) M = x;
        }
        if (cached)
            for (int c = lane; c < n_chunks; c += 32) {
                lsh(h)[c] = mk_ld(&ph[c * cs + hdv + 1]);
                lsh(h)[n_chunks + c] = num::attn_chunk_weight(mk_ld(&ph[c * cs + hdv]), M);
            }
        arbor_syncwarp();
        if (lane == 0) {
            float L = 0.0f;
            for (int c = 0; c < n_chunks; ++c)
                if (const float l = l_of(h, ph, c); !(l < 0.0f)) L = fmaf(l, w_of(h, ph, M, c), L);
            ml[2 * h] = M;
            ml[2 * h + 1] = L;
        }
    }
    __syncthreads();
    for (int i = tid; i < hp * hdv; i += kMkBlockThreads) {
        const int h = i / hdv, dd = i % hdv;
        const float* ph = part + h * (hdv + 2);
        const float M = ml[2 * h];
        constexpr int kU = 16;
        float o = 0.0f;
        int c = 0;
        for (; c + kU <= n_chunks; c += kU) {
            float v[kU];
#pragma unroll
            for (int u = 0; u < kU; ++u) v[u] = mk_ld(&ph[(c + u) * cs + dd]);  // a skipped chunk's is unused
#pragma unroll
            for (int u = 0; u < kU; ++u)
                if (!(l_of(h, ph, c + u) < 0.0f)) o = fmaf(v[u], w_of(h, ph, M, c + u), o);
        }
        for (; c < n_chunks; ++c)
            if (!(l_of(h, ph, c) < 0.0f)) o = fmaf(mk_ld(&ph[c * cs + dd]), w_of(h, ph, M, c), o);
        out[h * hdv + dd] = num::div_rn(o, ml[2 * h + 1]);
    }
    if (s.quantize_out) {  // the span is whole Q8A blocks (attn_combine_heads)
        __syncthreads();
        const long long span = static_cast<long long>(hp) * hdv;
        mkb::block_quantize(out, span, P.attq + at / 32);
    }
}

}  // namespace arbor::gpu
