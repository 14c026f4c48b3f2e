// Warp-level row dots: the numerics contract's 32 lanes are the 32 lanes of a warp/wave.
// Lane j accumulates element i = j, j+32, ... (float weights) or sub-block b = j, j+32, ...
// (quantized weights) with the same element functions as the CPU (quant_blocks.hpp); the
// shuffle tree then adds acc[j] + acc[j+s] for s = 16..1 exactly as combine_lanes does.
// So a row dot here has the CPU's bits, whichever warp computes it.
#pragma once

#include "arbor_hip.hpp"
#include "quant/quant_blocks.hpp"
#include "quant/quant_blocks_k.hpp"
#include "quant/quant_blocks_packed.hpp"

#include <arbor/quant.hpp>
#include <arbor/tensor_types.hpp>

namespace arbor::gpu {

// Result valid in lane 0.
__device__ inline float warp_combine(float acc) {
    for (int s = 16; s >= 1; s >>= 1) {
        const float o = __shfl_down(acc, s);
        acc = quant::blocks::add_rn(acc, o);
    }
    return acc;
}

// D dots' accumulators at once (D a power of two, 16..64): v[i] in lane j is accumulator j of
// dot i. Each step of offset s = 16..1 either splits the dots a lane holds (the lane with bit s
// clear keeps the lower half, its partner lane ^ s the upper half, each adding the partner's
// value of the dots it keeps) or, once a lane holds one, adds the partner's value of it; the
// lower lane's operand comes first, so every addition is combine_lanes's acc[j] + acc[j + s].
// D - 1 shuffles where D trees take 5 D (D = 16: 16). On return lane L holds in v[i] dot
// L * D / 32 + i (i < D / 32), or for D = 16 in v[0] dot L / 2.
template <int D, int S = 16>
__device__ inline void combine_lanes_multi(float* v, int lane) {
    static_assert(S != 16 || D == 16 || D == 32 || D == 64, "16, 32 or 64 dots");
    const bool up = (lane & S) != 0;
    if constexpr (D >= 2) {  // split: this step's offset S, D / 2 dots kept
        constexpr int n = D / 2;
#pragma unroll
        for (int i = 0; i < n; ++i) {
            const float keep = up ? v[n + i] : v[i];
            const float got = __shfl_xor(up ? v[i] : v[n + i], S);
            v[i] = up ? quant::blocks::add_rn(got, keep) : quant::blocks::add_rn(keep, got);
        }
        if constexpr (S > 1) combine_lanes_multi<n, S / 2>(v, lane);
    } else {  // one dot left: the partner's value of it
        const float got = __shfl_xor(v[0], S);
        v[0] = up ? quant::blocks::add_rn(got, v[0]) : quant::blocks::add_rn(v[0], got);
        if constexpr (S > 1) combine_lanes_multi<1, S / 2>(v, lane);
    }
}

// Set (non-zero) by the host when ARBOR_GPU_PACKED=0 is in the environment (mk_set_packed_off):
// the row dots then use the byte-wise Fmt::terms, for A/B runs of the packed terms in one build.
// Only megakernel.hip's translation unit includes this header (its module owns the variable).
__device__ unsigned mk_packed_off;

// Fmt::terms of one sub-block, from words where the format has a packed form
// (quant_blocks_packed.hpp: the same SubTerms, four products per dot instruction). Every device
// tensor starts 256-byte aligned (GpuBackend::upload_weights, hipMalloc for the row-dot tests)
// and every packed format's block size keeps its alignment, so every block qualifies.
// The switch is NVIDIA-only: on gfx1151 the second path raised the megakernel's scratch from
// 1264 to 2032 bytes (344 spills), so AMD builds always take the packed terms.
template <class Fmt>
__device__ inline quant::blocks::SubTerms sub_terms(const uint8_t* blk, int sb, const quant::BlockQ8A& x) {
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
    if (!quant::blocks::Packed<Fmt>::kHas || mk_packed_off) return Fmt::terms(blk, sb, x.q, x.sum);
#endif
    return quant::blocks::packed_terms<Fmt>(blk, sb, x.q, x.sum);
}

template <class Fmt>
__device__ inline float warp_dot_quant(const uint8_t* w, const quant::BlockQ8A* xq, long long n, int lane) {
    float acc = 0.0f;
    const long long subs = n / 32;
    for (long long b = lane; b < subs; b += 32) {
        const uint8_t* blk = w + (b / Fmt::kSubs) * Fmt::kBytes;
        const quant::blocks::SubTerms t = sub_terms<Fmt>(blk, int(b % Fmt::kSubs), xq[b]);
        acc = quant::blocks::lane_accumulate<Fmt::kHasMin>(acc, t, xq[b].d);
    }
    return warp_combine(acc);
}

// Lane `lane`'s chains of R float-type rows w[0..R) (F32, F16, BF16: Kind 0, 1, 2) against
// xf(x[i]), continued from acc: over i = lane, lane + 32, ... < n in order,
// acc[r] = fmaf(w_r[i], xf(x[i]), acc[r]). Eight elements' loads are in flight before their FMAs
// (one at a time, a lane paid a memory latency per element: about 26 us for a 2048-wide F32
// router row). Rows are element-aligned (device tensors start 256-byte aligned, rows are whole
// elements), so each weight is one word load.
template <int Kind, int R, class XF>
__device__ inline void float_chains(const uint8_t* const* w, const float* x, long long n, int lane, float* acc, XF xf) {
    using namespace quant::blocks;
    // The raw word first (so that no conversion stands between the loads), its float later.
    auto raw = [&](int r, long long i) -> uint32_t {
        return Kind == 0 ? reinterpret_cast<const uint32_t*>(w[r])[i] : reinterpret_cast<const uint16_t*>(w[r])[i];
    };
    auto value = [](uint32_t u) { return Kind == 0 ? bits_f32(u) : Kind == 1 ? fp16_to_f32(u) : bf16_to_f32(u); };
    long long i = lane;
    for (; i + 32 * 7 < n; i += 32 * 8) {
        float xv[8];
        uint32_t u[R][8];
#pragma unroll
        for (int k = 0; k < 8; ++k) {
            xv[k] = x[i + 32 * k];
#pragma unroll
            for (int r = 0; r < R; ++r) u[r][k] = raw(r, i + 32 * k);
        }
#pragma unroll
        for (int k = 0; k < 8; ++k) {
            const float f = xf(xv[k]);
#pragma unroll
            for (int r = 0; r < R; ++r) acc[r] = fmaf(value(u[r][k]), f, acc[r]);
        }
    }
    for (; i < n; i += 32) {
        const float f = xf(x[i]);
#pragma unroll
        for (int r = 0; r < R; ++r) acc[r] = fmaf(value(raw(r, i)), f, acc[r]);
    }
}

struct AsIs {
    __device__ float operator()(float v) const { return v; }
};

template <int Kind>  // 0 F32, 1 F16, 2 BF16
__device__ inline float warp_dot_float(const uint8_t* w, const float* x, long long n, int lane) {
    float acc = 0.0f;
    float_chains<Kind, 1>(&w, x, n, lane, &acc, AsIs{});
    return warp_combine(acc);
}

// NaN for a type the contract does not cover (the host checks types before building a stage).
__device__ inline float warp_dot_row(int type, const uint8_t* w, const float* x, const quant::BlockQ8A* xq, long long n,
                                     int lane) {
    using namespace quant::blocks;
    switch (static_cast<TensorType>(type)) {
    case TensorType::F32: return warp_dot_float<0>(w, x, n, lane);
    case TensorType::F16: return warp_dot_float<1>(w, x, n, lane);
    case TensorType::BF16: return warp_dot_float<2>(w, x, n, lane);
    case TensorType::Q4_0: return warp_dot_quant<Q4_0>(w, xq, n, lane);
    case TensorType::Q4_1: return warp_dot_quant<Q4_1>(w, xq, n, lane);
    case TensorType::Q5_0: return warp_dot_quant<Q5_0>(w, xq, n, lane);
    case TensorType::Q5_1: return warp_dot_quant<Q5_1>(w, xq, n, lane);
    case TensorType::Q8_0: return warp_dot_quant<Q8_0>(w, xq, n, lane);
    case TensorType::Q2_K: return warp_dot_quant<Q2_K>(w, xq, n, lane);
    case TensorType::Q3_K: return warp_dot_quant<Q3_K>(w, xq, n, lane);
    case TensorType::Q4_K: return warp_dot_quant<Q4_K>(w, xq, n, lane);
    case TensorType::Q5_K: return warp_dot_quant<Q5_K>(w, xq, n, lane);
    case TensorType::Q6_K: return warp_dot_quant<Q6_K>(w, xq, n, lane);
    case TensorType::IQ4_NL: return warp_dot_quant<IQ4_NL>(w, xq, n, lane);
    case TensorType::IQ4_XS: return warp_dot_quant<IQ4_XS>(w, xq, n, lane);
    case TensorType::MXFP4: return warp_dot_quant<MXFP4>(w, xq, n, lane);
    default: return __int_as_float(0x7fc00000);
    }
}

// Two rows of one type against the same activations in one pass over the sub-blocks: each
// row's lane accumulators see exactly the single-row sequence, but the two rows' loads are in
// flight together (the row dots are latency-bound). Results valid in lane 0.
template <class Fmt>
__device__ inline void warp_dot_quant2(const uint8_t* w0, const uint8_t* w1, const quant::BlockQ8A* xq, long long n,
                                       int lane, float* v0, float* v1) {
    float a0 = 0.0f, a1 = 0.0f;
    const long long subs = n / 32;
    for (long long b = lane; b < subs; b += 32) {
        const long long off = (b / Fmt::kSubs) * Fmt::kBytes;
        const int sb = int(b % Fmt::kSubs);
        const quant::blocks::SubTerms t0 = sub_terms<Fmt>(w0 + off, sb, xq[b]);
        const quant::blocks::SubTerms t1 = sub_terms<Fmt>(w1 + off, sb, xq[b]);
        a0 = quant::blocks::lane_accumulate<Fmt::kHasMin>(a0, t0, xq[b].d);
        a1 = quant::blocks::lane_accumulate<Fmt::kHasMin>(a1, t1, xq[b].d);
    }
    *v0 = warp_combine(a0);
    *v1 = warp_combine(a1);
}

template <int Kind>
__device__ inline void warp_dot_float2(const uint8_t* w0, const uint8_t* w1, const float* x, long long n, int lane,
                                       float* v0, float* v1) {
    const uint8_t* w[2] = {w0, w1};
    float acc[2] = {0.0f, 0.0f};
    float_chains<Kind, 2>(w, x, n, lane, acc, AsIs{});
    *v0 = warp_combine(acc[0]);
    *v1 = warp_combine(acc[1]);
}

__device__ inline void warp_dot_row2(int type, const uint8_t* w0, const uint8_t* w1, const float* x,
                                     const quant::BlockQ8A* xq, long long n, int lane, float* v0, float* v1) {
    using namespace quant::blocks;
    switch (static_cast<TensorType>(type)) {
    case TensorType::F32: warp_dot_float2<0>(w0, w1, x, n, lane, v0, v1); return;
    case TensorType::F16: warp_dot_float2<1>(w0, w1, x, n, lane, v0, v1); return;
    case TensorType::BF16: warp_dot_float2<2>(w0, w1, x, n, lane, v0, v1); return;
    case TensorType::Q4_0: warp_dot_quant2<Q4_0>(w0, w1, xq, n, lane, v0, v1); return;
    case TensorType::Q4_1: warp_dot_quant2<Q4_1>(w0, w1, xq, n, lane, v0, v1); return;
    case TensorType::Q5_0: warp_dot_quant2<Q5_0>(w0, w1, xq, n, lane, v0, v1); return;
    case TensorType::Q5_1: warp_dot_quant2<Q5_1>(w0, w1, xq, n, lane, v0, v1); return;
    case TensorType::Q8_0: warp_dot_quant2<Q8_0>(w0, w1, xq, n, lane, v0, v1); return;
    case TensorType::Q2_K: warp_dot_quant2<Q2_K>(w0, w1, xq, n, lane, v0, v1); return;
    case TensorType::Q3_K: warp_dot_quant2<Q3_K>(w0, w1, xq, n, lane, v0, v1); return;
    case TensorType::Q4_K: warp_dot_quant2<Q4_K>(w0, w1, xq, n, lane, v0, v1); return;
    case TensorType::Q5_K: warp_dot_quant2<Q5_K>(w0, w1, xq, n, lane, v0, v1); return;
    case TensorType::Q6_K: warp_dot_quant2<Q6_K>(w0, w1, xq, n, lane, v0, v1); return;
    case TensorType::IQ4_NL: warp_dot_quant2<IQ4_NL>(w0, w1, xq, n, lane, v0, v1); return;
    case TensorType::IQ4_XS: warp_dot_quant2<IQ4_XS>(w0, w1, xq, n, lane, v0, v1); return;
    case TensorType::MXFP4: warp_dot_quant2<MXFP4>(w0, w1, xq, n, lane, v0, v1); return;
    default: *v0 = *v1 = __int_as_float(0x7fc00000); return;
    }
}

}  // namespace arbor::gpu
