// Warp-level row dots: the numerics contract's 32 lanes are the 32 lanes of a warp/wave.
// Lane j accumulates element i = j, j+32, ... (float weights) or sub-block b = j, j+32, ...
// (quantized weights) with the same element functions as the CPU (quant_blocks.hpp); the
// shuffle tree then adds acc[j] + acc[j+s] for s = 16..1 exactly as combine_lanes does.
// So a row dot here has the CPU's bits, whichever warp computes it.
#pragma once

#include "arbor_hip.hpp"
#include "mk_control.hpp"
#include "mk_model.hpp"  // ARBOR_MK_LEAN_ROWS (mk_ab_s)
#include "quant/quant_blocks.hpp"
#include "quant/quant_blocks_k.hpp"
#include "quant/quant_blocks_packed.hpp"

#include <arbor/quant.hpp>
#include <arbor/tensor_types.hpp>

#include <type_traits>

namespace arbor::gpu {

// *p from global memory: arbor_ldg in ARBOR_MK_GLOBAL_LOADS builds, a plain load otherwise.
template <class T>
__device__ inline T mk_ld(const T* p) {
#if ARBOR_MK_GLOBAL_LOADS
    return arbor_ldg(p);
#else
    return *p;
#endif
}

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

// A warp's maximum of its lanes' m by `x > m` over a xor tree: every lane ends with the largest
// value; a NaN is never taken, so a lane whose m starts as a NaN keeps it (when every lane starts
// from the same first element, as the sequential `if (v > m) m = v` scan from element 0 does,
// that gives the scan's value, a zero's sign aside).
__device__ inline float warp_max_keep(float m) {
    for (int o = 16; o >= 1; o >>= 1) {
        const float x = __shfl_xor(m, o);
        if (x > m) m = x;
    }
    return m;
}

// The A/B switch bits of mk_control.hpp (MkAbSwitch), set by the host (mk_set_ab_switches).
// megakernel.hip's module owns the variable (the probes' translation units include this header
// too, and their copies go unused).
__device__ unsigned mk_ab_switches;
#if ARBOR_MK_STREAM_W == 2 || ARBOR_MK_LEAN_ROWS || ARBOR_MK_WG_SELECT
__shared__ unsigned mk_ab_s;  // mk_ab_switches, copied at the megakernel's entry (mk_ab_load)
#endif
// At the megakernel's entry, before its first __syncthreads.
__device__ inline void mk_ab_load() {
#if ARBOR_MK_STREAM_W == 2 || ARBOR_MK_LEAN_ROWS || ARBOR_MK_WG_SELECT
    if (threadIdx.x == 0) mk_ab_s = mk_ab_switches;
#endif
}

// Fmt::terms of one sub-block, from words where the format has a packed form
// (quant_blocks_packed.hpp: the same SubTerms, four products per dot instruction). Every device
// tensor starts 256-byte aligned (GpuBackend::upload_weights, hipMalloc for the row-dot tests)
// and every packed format's block size keeps its alignment, so every block qualifies.
// The byte-wise path is compiled in only with ARBOR_MK_PACKED_SWITCH=1 on NVIDIA (mk_control.hpp);
// AMD builds always take the packed terms (on gfx1151 the second path raised the megakernel's
// scratch from 1264 to 2032 bytes).
template <class Fmt>
__device__ inline quant::blocks::SubTerms sub_terms(const uint8_t* blk, int sb, const quant::BlockQ8A& x) {
#if defined(ARBOR_GPU_VENDOR_NVIDIA) && ARBOR_MK_PACKED_SWITCH
    if (!quant::blocks::Packed<Fmt>::kHas || (mk_ab_switches & kMkAbPackedOff)) return Fmt::terms(blk, sb, x.q, x.sum);
#endif
    return quant::blocks::packed_terms<Fmt>(blk, sb, x.q, x.sum);
}

// Wide loads (ARBOR_MK_WIDE_LOADS, on by default): a lane's step of a row dot reads its Q8A
// activation block as five 8-byte words, and the sub-block of the formats below in the widest
// aligned words its block allows, where the packed terms read 4-, 2- and 1-byte fields one by
// one (a Q4_K row's step took about 15 loads, a Q6_K row's 35, each a separate pass through the
// L1 for the warp's 32 scattered lanes). arbor-gpu-probe found the megakernel's Q4_K row-dot
// code about as slow with its weights in the L2 (13.1 us for qwen3-4b's gated-FFN level) as from
// memory (14.4): the step was bound by its load instructions, not by the memory; with 16-byte
// words 9.9 and 12.9. The words hold the same bytes, and Packed<Fmt>::apply computes the terms
// from the same PackedSub that Packed<Fmt>::unpack gives, so the bits do not change.
// On by default on NVIDIA, where it was measured (docs/GPU.md, gpu-next16), except in
// ARBOR_MK_PACKED_SWITCH builds, whose ARBOR_GPU_PACKED=0 must reach sub_terms' byte-wise path.
// AMD builds compile it with -DARBOR_MK_WIDE_LOADS=1 (gfx1151: the megakernel's scratch rises from
// 1532 to 1772 bytes); it stays off there until a gfx1151 run measures it.
#ifndef ARBOR_MK_WIDE_LOADS
#if defined(ARBOR_GPU_VENDOR_NVIDIA) && !ARBOR_MK_PACKED_SWITCH
#define ARBOR_MK_WIDE_LOADS 1
#else
#define ARBOR_MK_WIDE_LOADS 0
#endif
#endif

// ARBOR_MK_LUT_NIBBLES=1 (gpu-next38, on by default; other targets than NVIDIA's take two lut16
// calls inside lut16_nibbles, as before): the IQ4_XS wide form's codes by lut16_nibbles, both
// nibbles of a word in one pass (16 operations for eight codes, where two lut16 calls take about
// 25; the same table values, checked on all 2^32 words). gpu-next38's PC sampling put `moer`'s
// IQ4_XS row dots at 60% issue-bound stalls (wait, selected, not selected, math), 25-32% memory.
// Exact (356/0, 25/0); H100 against main in one call, three rounds: `moer` decode@229 -0.08 to
// -0.10 ms alone, with ARBOR_MK_LEAN_DOWN_SLOTS=4 -0.12 to -0.20 and decode@16384 -0.10 to -0.13
// (docs/BENCHMARKS.md "gpu-next38", call 6).
#ifndef ARBOR_MK_LUT_NIBBLES
#define ARBOR_MK_LUT_NIBBLES 1
#endif

// A Q8A block's fields from five 8-byte loads: every Q8A array starts 256-byte aligned (device
// allocations) and its blocks are 40 bytes, so every block is 8-byte aligned.
struct Q8AWords {
    uint32_t q[8];
    float d;
    int32_t sum;
};
__device__ inline Q8AWords load_q8a(const quant::BlockQ8A* p) {
    const uint2* v = reinterpret_cast<const uint2*>(p);
    uint2 u[5];
#pragma unroll
    for (int k = 0; k < 5; ++k) u[k] = mk_ld(&v[k]);
    Q8AWords x;
    x.d = __uint_as_float(u[0].x);
    x.sum = static_cast<int32_t>(u[0].y);
#pragma unroll
    for (int k = 0; k < 4; ++k) x.q[2 * k] = u[k + 1].x, x.q[2 * k + 1] = u[k + 1].y;
    return x;
}

namespace mkw {

// A quantized weight word (ARBOR_MK_STREAM_W, mk_control.hpp: cache-streaming where on).
template <class T>
__device__ inline T wload(const T* p) {
#if defined(ARBOR_GPU_VENDOR_NVIDIA) && ARBOR_MK_STREAM_W == 1
    return __ldcs(p);
#elif defined(ARBOR_GPU_VENDOR_NVIDIA) && ARBOR_MK_STREAM_W == 2
    return (mk_ab_s & kMkAbStreamW) ? __ldcs(p) : *p;
#else
    return mk_ld(p);
#endif
}

// The 32 bits at bit s (0..31) of the 64-bit hi:lo (a funnel shift on both vendors).
__device__ inline uint32_t funnel(uint32_t lo, uint32_t hi, unsigned s) {
    return static_cast<uint32_t>(((static_cast<unsigned long long>(hi) << 32) | lo) >> s);
}

// The 32 bytes at a 2-byte aligned p as 8 little-endian words, from the 9 aligned words that
// cover them: when p is 4-byte aligned the ninth is the 4 bytes after p + 32, else they span
// p - 2 .. p + 33 (2 bytes before, 2 after). The funnel shift drops those bytes; the caller keeps
// them inside the tensor's allocation.
__device__ inline void words32_a2(const uint8_t* p, uint32_t* q) {
    const unsigned long long a = reinterpret_cast<unsigned long long>(p);
    const uint32_t* base = reinterpret_cast<const uint32_t*>(a & ~3ull);
    const unsigned s = static_cast<unsigned>(a & 3ull) * 8u;
    uint32_t u[9];
#pragma unroll
    for (int k = 0; k < 9; ++k) u[k] = wload(base + k);
#pragma unroll
    for (int j = 0; j < 8; ++j) q[j] = funnel(u[j], u[j + 1], s);
}

template <class Fmt>
struct Wide {
    static constexpr bool kHas = false;
};

// Q4_K (144-byte blocks) and Q5_K (176): 16-byte aligned in every device tensor (256-byte aligned
// starts, rows of whole blocks). The 16-byte header holds d | dmin and the 12 scale bytes.
template <int Qs, bool K5>
__device__ inline quant::blocks::PackedSub k4_wide(const uint8_t* b, int sb) {
    using namespace quant::blocks;
    const uint4 h = wload(reinterpret_cast<const uint4*>(b));
    const uint4* qs = reinterpret_cast<const uint4*>(b + Qs + 32 * (sb / 2));
    const uint4 q0 = wload(qs), q1 = wload(qs + 1);
    uint4 h0{}, h1{};
    if constexpr (K5) {  // the fifth bits: bit sb of the 32 bytes at 16
        h0 = wload(reinterpret_cast<const uint4*>(b + 16));
        h1 = wload(reinterpret_cast<const uint4*>(b + 16) + 1);
    }
    PackedSub p;
    k4_scale_min_w(h.y, h.z, h.w, sb, &p.k1, &p.k2);
    const uint32_t w[8] = {q0.x, q0.y, q0.z, q0.w, q1.x, q1.y, q1.z, q1.w};
    const int shift = 4 * (sb % 2);
#pragma unroll
    for (int j = 0; j < 8; ++j) p.q[j] = (w[j] >> shift) & 0x0f0f0f0fu;
    if constexpr (K5) {
        const uint32_t hw[8] = {h0.x, h0.y, h0.z, h0.w, h1.x, h1.y, h1.z, h1.w};
#pragma unroll
        for (int j = 0; j < 8; ++j) p.q[j] |= ((hw[j] >> sb) & 0x01010101u) << 4;
    }
    p.ws = quant::blocks::fp16_to_f32(h.x & 0xffffu);
    p.wm = -quant::blocks::fp16_to_f32(h.x >> 16);
    return p;
}
template <>
struct Wide<quant::blocks::Q4_K> {
    static constexpr bool kHas = true;
    __device__ static quant::blocks::PackedSub unpack(const uint8_t* b, int sb) { return k4_wide<16, false>(b, sb); }
};
template <>
struct Wide<quant::blocks::Q5_K> {
    static constexpr bool kHas = true;
    __device__ static quant::blocks::PackedSub unpack(const uint8_t* b, int sb) { return k4_wide<48, true>(b, sb); }
};

// Q6_K (210-byte blocks, 2-byte aligned): ql and qh as 9 aligned words each, the two sub-scales as
// one 2-byte load. The extra bytes words32_a2 reads lie inside the tensor: after ql and qh, at
// most up to byte 195 of the block (its scales start at 192); before a block that starts 2 bytes
// past a 4-byte boundary, the end of the block before it (tensors start 256-byte aligned, so the
// first block never does).
template <>
struct Wide<quant::blocks::Q6_K> {
    static constexpr bool kHas = true;
    __device__ static quant::blocks::PackedSub unpack(const uint8_t* b, int sb) {
        using namespace quant::blocks;
        PackedSub p;
        const int h = sb / 4, k = sb % 4;
        uint32_t ql[8], qh[8];
        words32_a2(b + 64 * h + 32 * (k & 1), ql);
        words32_a2(b + 128 + 32 * h, qh);
        const int lshift = 4 * (k >> 1), hshift = 2 * k;
#pragma unroll
        for (int j = 0; j < 8; ++j) p.q[j] = ((ql[j] >> lshift) & 0x0f0f0f0fu) | (((qh[j] >> hshift) & 0x03030303u) << 4);
        const uint32_t sc = wload(reinterpret_cast<const uint16_t*>(b + 192 + 2 * sb));
        p.k1 = int8_t(uint8_t(sc & 0xffu));
        p.k2 = int8_t(uint8_t(sc >> 8));
        p.ws = fp16_to_f32(wload(reinterpret_cast<const uint16_t*>(b + 208)));
        return p;
    }
};

#if defined(ARBOR_GPU_VENDOR_NVIDIA)
// PTX prmt.b32 in its default mode, sign replication included (quant::blocks::iq4nl_two_dots).
__device__ inline uint32_t prmt_b32(uint32_t x, uint32_t y, uint32_t s) {
    uint32_t r;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y), "r"(s));
    return r;
}
#endif

// ARBOR_MK_IQ4_TWO_DOTS=1 (gpu-next39, on by default on NVIDIA; elsewhere prmt's sign mode is not
// there): Wide<IQ4_XS>::terms and Wide<IQ4_NL>::terms, which wide_terms (the decode row dots)
// takes: a sub-block's integer sum by quant::blocks::iq4nl_two_dots from the code words, where the
// wide form wrote out the table values (lut16_nibbles) and dotted them (dot32): per code word one
// xor, two shifts, four permutations and four dp4a, where that took about 16 operations and two
// dp4a; the activations' eight permutations a step are shared by the rows of a pass. (IQ4_XS rows
// against several activations, warp_dot_quant_rows_acts, still unpack once by lut16_nibbles.)
// gpu-next38's PC sampling put `moer`'s IQ4_XS row dots at 60% issue-bound stalls. The same k1, ws
// and integer sum, so the same terms: exact (356/0, 25/0, also with ARBOR_GPU_KV_STREAM=1 and
// ARBOR_GPU_LEAN_ROWS=2; call 8). H100 against main in one call, three rounds (call 7): `moer`
// decode@229 -0.09 to -0.14 ms (expert gated FFN level 548 to 491 us summed over the layers, Q/K/V
// dots 401 to 360, expert down 397 to 376, o projection 281 to 266), decode@16384 -0.02 to -0.10;
// qwen3-4b with every matrix IQ4_NL -0.14 to -0.23 against a build with `grid_nibble_words`
// (docs/BENCHMARKS.md "gpu-next39").
#ifndef ARBOR_MK_IQ4_TWO_DOTS
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
#define ARBOR_MK_IQ4_TWO_DOTS 1
#else
#define ARBOR_MK_IQ4_TWO_DOTS 0
#endif
#endif
// (ARBOR_MK_IQ4_ACT_BYTE_PERM, gpu-next39-40, taken out: the activations' permutations by
// __byte_perm, so that nvcc merges them between a pass's rows. ptxas already merges the inline-asm
// ones: the SASS of a two-row step has 40 PRMT where the PTX has 48; no change in time.)

// IQ4_XS (136-byte blocks, 8-byte aligned): the 8-byte header (d, scales_h, scales_l) and the
// sub-block's 16 code bytes as three 8-byte loads.
template <>
struct Wide<quant::blocks::IQ4_XS> {
    static constexpr bool kHas = true;
    __device__ static void load(const uint8_t* b, int sb, uint2* hd, uint32_t* w) {
        *hd = wload(reinterpret_cast<const uint2*>(b));
        const uint2* qs = reinterpret_cast<const uint2*>(b + 8 + 16 * sb);
        const uint2 c0 = wload(qs), c1 = wload(qs + 1);
        w[0] = c0.x, w[1] = c0.y, w[2] = c1.x, w[3] = c1.y;
    }
    __device__ static quant::blocks::PackedSub unpack(const uint8_t* b, int sb) {
        using namespace quant::blocks;
        uint2 hd;
        uint32_t w[4];
        load(b, sb, &hd, w);
        PackedSub p;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
#if ARBOR_MK_LUT_NIBBLES
            lut16_nibbles(w[j], kIq4nlW0, kIq4nlW1, kIq4nlW2, kIq4nlW3, &p.q[j], &p.q[4 + j]);
#else
            p.q[j] = lut16(w[j] & 0x0f0f0f0fu, kIq4nlW0, kIq4nlW1, kIq4nlW2, kIq4nlW3);
            p.q[4 + j] = lut16((w[j] >> 4) & 0x0f0f0f0fu, kIq4nlW0, kIq4nlW1, kIq4nlW2, kIq4nlW3);
#endif
        }
        p.k1 = k1(hd, sb);
        p.ws = fp16_to_f32(hd.x & 0xffffu);
        return p;
    }
#if ARBOR_MK_IQ4_TWO_DOTS && defined(ARBOR_GPU_VENDOR_NVIDIA)
    // Packed's terms against the activation words a, by the two dots.
    __device__ static quant::blocks::SubTerms terms(const uint8_t* b, int sb, const uint32_t* a) {
        uint2 hd;
        uint32_t w[4];
        load(b, sb, &hd, w);
        const int32_t s = quant::blocks::iq4nl_two_dots(w, a, prmt_b32);
        return {quant::blocks::fp16_to_f32(hd.x & 0xffffu), k1(hd, sb) * s, 0.0f, 0};
    }
#endif
    // iq4xs_scale - 32: byte 4 + sb / 2's nibble sb % 2 (bits 4 sb of scales_l), bits 2 sb of scales_h
    __device__ static int k1(uint2 hd, int sb) {
        return static_cast<int>(((hd.y >> (4 * sb)) & 0xfu) | (((hd.x >> (16 + 2 * sb)) & 3u) << 4)) - 32;
    }
};

// IQ4_NL (18-byte blocks, 2-byte aligned): no wide unpack (Packed<IQ4_NL> unpacks it); with the
// two dots, its terms from the four code words at b + 2 (nibble_word<2>) and the scale at b.
template <>
struct Wide<quant::blocks::IQ4_NL> {
    static constexpr bool kHas = false;
#if ARBOR_MK_IQ4_TWO_DOTS && defined(ARBOR_GPU_VENDOR_NVIDIA)
    __device__ static quant::blocks::SubTerms terms(const uint8_t* b, int, const uint32_t* a) {
        using namespace quant::blocks;
        uint32_t w[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) w[j] = nibble_word<2>(b + 2, j);
        const int32_t s = quant::blocks::iq4nl_two_dots(w, a, prmt_b32);
        return {fp16_to_f32(ld16(b)), s, 0.0f, 0};
    }
#endif
};

}  // namespace mkw

// Packed<Fmt>'s terms of sub-block sb: by mkw::Wide<Fmt>::terms where the format has it (the
// same terms straight from its words: IQ4_XS and IQ4_NL with ARBOR_MK_IQ4_TWO_DOTS), else from
// wide words where mkw::Wide<Fmt> has a form, else Packed<Fmt> on the activation's words.
template <class Fmt>
__device__ inline quant::blocks::SubTerms wide_terms(const uint8_t* blk, int sb, const Q8AWords& x) {
    using namespace quant::blocks;
    const int8_t* a = reinterpret_cast<const int8_t*>(x.q);
    if constexpr (requires { mkw::Wide<Fmt>::terms(blk, sb, x.q); }) return mkw::Wide<Fmt>::terms(blk, sb, x.q);
    else if constexpr (mkw::Wide<Fmt>::kHas) return Packed<Fmt>::apply(mkw::Wide<Fmt>::unpack(blk, sb), a, x.sum);
    else return packed_terms<Fmt>(blk, sb, a, x.sum);
}

// R rows of one format in one pass over the sub-blocks, in S groups of R / S consecutive rows,
// group g against its own activations xq[g] (S = 1: every row against xq[0]): each row's lane
// accumulator sees exactly the single-row sequence for its row and activation, but all R rows'
// loads (and the S activations') are in flight together (the row dots are latency-bound).
// Results valid in lane 0. Wide: the step's loads as wide words (above; formats with a packed
// form). S slots' rows, G = R / S a slot, are a decode step's expert down, whose slots' experts and
// activations differ: S = 2 slots' row pairs (R = 4) in the entry's (ARBOR_MK_DOWN_SLOT_PAIRS),
// S = ARBOR_MK_LEAN_DOWN_SLOTS slots of one row or a pair (R up to 16) in mkl::down_loop's.
template <class Fmt, int R, int S = 1, bool Wide = (ARBOR_MK_WIDE_LOADS != 0)>
__device__ inline void warp_dot_quant_row_groups(const uint8_t* const* w, const quant::BlockQ8A* const* xq, long long n,
                                                 int lane, float* v) {
    static_assert(R % S == 0, "whole groups of rows");
    constexpr int G = R / S;  // rows a group
    float a[R];
#pragma unroll
    for (int i = 0; i < R; ++i) a[i] = 0.0f;
    const long long subs = n / 32;
    for (long long b = lane; b < subs; b += 32) {
        const long long off = (b / Fmt::kSubs) * Fmt::kBytes;
        const int sb = int(b % Fmt::kSubs);
        if constexpr (Wide && quant::blocks::Packed<Fmt>::kHas) {
            Q8AWords x[S];
#pragma unroll
            for (int g = 0; g < S; ++g) x[g] = load_q8a(xq[g] + b);
            quant::blocks::SubTerms t[R];
#pragma unroll
            for (int i = 0; i < R; ++i) t[i] = wide_terms<Fmt>(w[i] + off, sb, x[i / G]);
#pragma unroll
            for (int i = 0; i < R; ++i) a[i] = quant::blocks::lane_accumulate<Fmt::kHasMin>(a[i], t[i], x[i / G].d);
        } else {
            quant::blocks::SubTerms t[R];
#pragma unroll
            for (int i = 0; i < R; ++i) t[i] = sub_terms<Fmt>(w[i] + off, sb, xq[i / G][b]);
#pragma unroll
            for (int i = 0; i < R; ++i) a[i] = quant::blocks::lane_accumulate<Fmt::kHasMin>(a[i], t[i], xq[i / G][b].d);
        }
    }
#pragma unroll
    for (int i = 0; i < R; ++i) v[i] = warp_combine(a[i]);
}

// R rows against the same activations xq (warp_dot_quant_row_groups with one group).
template <class Fmt, int R, bool Wide = (ARBOR_MK_WIDE_LOADS != 0)>
__device__ inline void warp_dot_quant_rows(const uint8_t* const* w, const quant::BlockQ8A* xq, long long n, int lane,
                                           float* v) {
    warp_dot_quant_row_groups<Fmt, R, 1, Wide>(w, &xq, n, lane, v);
}

// R rows against A activations (xq[0..A), each n / 32 Q8A blocks) in one pass over the
// sub-blocks: v[i * A + j] is row i against activation j, and each of the R x A lane
// accumulators sees exactly warp_dot_quant_rows's sequence for its row and activation (the same
// terms, the same lane_accumulate chain, the same warp_combine), so the bits are those of the
// single dots. A routed expert's rows against several pairs' activations: the weights' words are
// unpacked once a step and all A activations' loads are in flight together.
template <class Fmt, int R, int A, bool Wide = (ARBOR_MK_WIDE_LOADS != 0)>
__device__ inline void warp_dot_quant_rows_acts(const uint8_t* const* w, const quant::BlockQ8A* const* xq, long long n,
                                                int lane, float* v) {
    float a[R * A];
#pragma unroll
    for (int k = 0; k < R * A; ++k) a[k] = 0.0f;
    const long long subs = n / 32;
    for (long long b = lane; b < subs; b += 32) {
        const long long off = (b / Fmt::kSubs) * Fmt::kBytes;
        const int sb = int(b % Fmt::kSubs);
        if constexpr (Wide && quant::blocks::Packed<Fmt>::kHas) {  // warp_dot_quant_rows's wide path
            Q8AWords x[A];
#pragma unroll
            for (int j = 0; j < A; ++j) x[j] = load_q8a(xq[j] + b);
            if constexpr (mkw::Wide<Fmt>::kHas) {  // the rows' words unpacked once for all A
                quant::blocks::PackedSub u[R];
#pragma unroll
                for (int i = 0; i < R; ++i) u[i] = mkw::Wide<Fmt>::unpack(w[i] + off, sb);
#pragma unroll
                for (int i = 0; i < R; ++i)
#pragma unroll
                    for (int j = 0; j < A; ++j)
                        a[i * A + j] = quant::blocks::lane_accumulate<Fmt::kHasMin>(
                            a[i * A + j],
                            quant::blocks::Packed<Fmt>::apply(u[i], reinterpret_cast<const int8_t*>(x[j].q), x[j].sum), x[j].d);
            } else {
#pragma unroll
                for (int i = 0; i < R; ++i)
#pragma unroll
                    for (int j = 0; j < A; ++j)
                        a[i * A + j] = quant::blocks::lane_accumulate<Fmt::kHasMin>(a[i * A + j], wide_terms<Fmt>(w[i] + off, sb, x[j]),
                                                                                    x[j].d);
            }
        } else {
#pragma unroll
            for (int j = 0; j < A; ++j) {
                quant::blocks::SubTerms t[R];
#pragma unroll
                for (int i = 0; i < R; ++i) t[i] = sub_terms<Fmt>(w[i] + off, sb, xq[j][b]);
#pragma unroll
                for (int i = 0; i < R; ++i) a[i * A + j] = quant::blocks::lane_accumulate<Fmt::kHasMin>(a[i * A + j], t[i], xq[j][b].d);
            }
        }
    }
#pragma unroll
    for (int k = 0; k < R * A; ++k) v[k] = warp_combine(a[k]);
}

// Lane `lane`'s chains of R float-type rows w[0..R) (F32, F16, BF16: Kind 0, 1, 2) against
// xf(x[i]), continued from acc: over i = lane, lane + 32, ... < n in order,
// acc[r] = fmaf(w_r[i], xf(x[i]), acc[r]). Sixteen (then eight) elements' loads are in flight
// before their FMAs (one at a time, a lane paid a memory latency per element: about 26 us for a
// 2048-wide F32 router row). Rows are element-aligned (device tensors start 256-byte aligned, rows are whole
// elements), so each weight is one word load. G: w and x are global memory (mk_ld); the flashnext hc
// dots pass staged pieces of the arena. SW (NVIDIA): the weights are loaded cache-streaming
// (ARBOR_MK_STREAM_ROUTER).
template <int Kind, int R, class XF, int B0 = 16, bool G = false, bool SW = false>
__device__ inline void float_chains(const uint8_t* const* w, const float* x, long long n, int lane, float* acc, XF xf) {
    using namespace quant::blocks;
    // The raw word first (so that no conversion stands between the loads), its float later.
    auto raw = [&](int r, long long i) -> uint32_t {
        auto ld = [](const auto* p) {
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
            if constexpr (SW) return __ldcs(p);
#endif
            return G ? mk_ld(p) : *p;
        };
        return Kind == 0 ? ld(&reinterpret_cast<const uint32_t*>(w[r])[i]) : ld(&reinterpret_cast<const uint16_t*>(w[r])[i]);
    };
    auto value = [](uint32_t u) { return Kind == 0 ? bits_f32(u) : Kind == 1 ? fp16_to_f32(u) : bf16_to_f32(u); };
    // B elements a lane, all loads before any use, while B fit (sixteen, then eight): a row of
    // 2048 is four round trips to memory instead of eight (the router's logits at T = 1).
    auto batch = [&](auto width, long long& i) {
        constexpr int B = decltype(width)::value;
        for (; i + 32 * (B - 1) < n; i += 32 * B) {
            float xv[B];
            uint32_t u[R][B];
#pragma unroll
            for (int k = 0; k < B; ++k) {
                xv[k] = G ? mk_ld(&x[i + 32 * k]) : x[i + 32 * k];
#pragma unroll
                for (int r = 0; r < R; ++r) u[r][k] = raw(r, i + 32 * k);
            }
#pragma unroll
            for (int k = 0; k < B; ++k) {
                const float f = xf(xv[k]);
#pragma unroll
                for (int r = 0; r < R; ++r) acc[r] = fmaf(value(u[r][k]), f, acc[r]);
            }
        }
    };
    long long i = lane;
    batch(std::integral_constant<int, B0>{}, i);  // B0 = 32: a 2048-wide row in two round trips
    if constexpr (B0 > 16) batch(std::integral_constant<int, 16>{}, i);
    batch(std::integral_constant<int, 8>{}, i);
    for (; i < n; i += 32) {
        const float f = xf(G ? mk_ld(&x[i]) : x[i]);
#pragma unroll
        for (int r = 0; r < R; ++r) acc[r] = fmaf(value(raw(r, i)), f, acc[r]);
    }
}

struct AsIs {
    __device__ float operator()(float v) const { return v; }
};

// One float-type row (Kind 0 F32, 1 F16, 2 BF16) against x with 32 elements' loads in flight a
// lane: the same chains as warp_dot_float, for items of one row (the router's logits, whose
// few items leave most warps idle). Not inlined: its 64 loaded words get registers of their own.
// w and x are global memory (the router's rows, XN).
template <int Kind>
__device__ __noinline__ float warp_dot_float_deep(const uint8_t* w, const float* x, long long n, int lane) {
    float acc = 0.0f;
    float_chains<Kind, 1, AsIs, 32, true, ARBOR_MK_STREAM_ROUTER != 0>(&w, x, n, lane, &acc, AsIs{});
    return warp_combine(acc);
}

template <int Kind>  // 0 F32, 1 F16, 2 BF16
__device__ inline float warp_dot_float(const uint8_t* w, const float* x, long long n, int lane) {
    float acc = 0.0f;
    float_chains<Kind, 1>(&w, x, n, lane, &acc, AsIs{});
    return warp_combine(acc);
}

// warp_dot_quant_rows for a row type: false (nothing computed) for the float types, whose dots
// take float activations.
template <int R>
__device__ inline bool warp_dot_rows_q8(int type, const uint8_t* const* w, const quant::BlockQ8A* xq, long long n,
                                        int lane, float* v) {
    using namespace quant::blocks;
    switch (static_cast<TensorType>(type)) {
    case TensorType::Q4_0: warp_dot_quant_rows<Q4_0, R>(w, xq, n, lane, v); return true;
    case TensorType::Q4_1: warp_dot_quant_rows<Q4_1, R>(w, xq, n, lane, v); return true;
    case TensorType::Q5_0: warp_dot_quant_rows<Q5_0, R>(w, xq, n, lane, v); return true;
    case TensorType::Q5_1: warp_dot_quant_rows<Q5_1, R>(w, xq, n, lane, v); return true;
    case TensorType::Q8_0: warp_dot_quant_rows<Q8_0, R>(w, xq, n, lane, v); return true;
    case TensorType::Q2_K: warp_dot_quant_rows<Q2_K, R>(w, xq, n, lane, v); return true;
    case TensorType::Q3_K: warp_dot_quant_rows<Q3_K, R>(w, xq, n, lane, v); return true;
    case TensorType::Q4_K: warp_dot_quant_rows<Q4_K, R>(w, xq, n, lane, v); return true;
    case TensorType::Q5_K: warp_dot_quant_rows<Q5_K, R>(w, xq, n, lane, v); return true;
    case TensorType::Q6_K: warp_dot_quant_rows<Q6_K, R>(w, xq, n, lane, v); return true;
    case TensorType::IQ4_NL: warp_dot_quant_rows<IQ4_NL, R>(w, xq, n, lane, v); return true;
    case TensorType::IQ4_XS: warp_dot_quant_rows<IQ4_XS, R>(w, xq, n, lane, v); return true;
    case TensorType::MXFP4: warp_dot_quant_rows<MXFP4, R>(w, xq, n, lane, v); return true;
    default: return false;
    }
}

// The formats warp_dot_rows_q8_acts covers: those routed experts ship in (IQ4_XS, Q4_K, Q5_K,
// Q6_K, Q8_0, Q4_0). Callers take the others one activation at a time (every format's code twice
// would grow the megakernel for formats experts rarely use).
__device__ inline bool warp_dot_acts_type(int type) {
    const TensorType t = static_cast<TensorType>(type);
    return t == TensorType::Q4_0 || t == TensorType::Q8_0 || t == TensorType::Q4_K || t == TensorType::Q5_K ||
           t == TensorType::Q6_K || t == TensorType::IQ4_XS;
}

// warp_dot_quant_rows_acts for a row type that warp_dot_acts_type names (others: nothing computed).
template <int R, int A>
__device__ inline void warp_dot_rows_q8_acts(int type, const uint8_t* const* w, const quant::BlockQ8A* const* xq,
                                             long long n, int lane, float* v) {
    using namespace quant::blocks;
    switch (static_cast<TensorType>(type)) {
    case TensorType::Q4_0: warp_dot_quant_rows_acts<Q4_0, R, A>(w, xq, n, lane, v); return;
    case TensorType::Q8_0: warp_dot_quant_rows_acts<Q8_0, R, A>(w, xq, n, lane, v); return;
    case TensorType::Q4_K: warp_dot_quant_rows_acts<Q4_K, R, A>(w, xq, n, lane, v); return;
    case TensorType::Q5_K: warp_dot_quant_rows_acts<Q5_K, R, A>(w, xq, n, lane, v); return;
    case TensorType::Q6_K: warp_dot_quant_rows_acts<Q6_K, R, A>(w, xq, n, lane, v); return;
    case TensorType::IQ4_XS: warp_dot_quant_rows_acts<IQ4_XS, R, A>(w, xq, n, lane, v); return;
    default: return;
    }
}

// The formats warp_dot_slot_rows_q8 takes: those whose two-slot dot leaves the caller room under
// 128 registers (scripts/dot-regs.sh: IQ4_XS 94, Q4_0 90; Q4_K 117, Q8_0 120, Q5_K and Q6_K 128).
__device__ inline bool slot_rows_type(int type) {
    const TensorType t = static_cast<TensorType>(type);
    return t == TensorType::IQ4_XS || t == TensorType::Q4_0;
}

// S slots' row pairs (warp_dot_quant_row_groups<Fmt, 2 S, S>: rows 2s and 2s + 1 against xq[s])
// for a row type that slot_rows_type names (others: false, nothing computed).
template <int S>
__device__ inline bool warp_dot_slot_rows_q8(int type, const uint8_t* const* w, const quant::BlockQ8A* const* xq,
                                             long long n, int lane, float* v) {
    using namespace quant::blocks;
    switch (static_cast<TensorType>(type)) {
    case TensorType::Q4_0: warp_dot_quant_row_groups<Q4_0, 2 * S, S>(w, xq, n, lane, v); return true;
    case TensorType::IQ4_XS: warp_dot_quant_row_groups<IQ4_XS, 2 * S, S>(w, xq, n, lane, v); return true;
    default: return false;
    }
}

// NaN for a type the contract does not cover (the host checks types before building a stage).
__device__ inline float warp_dot_row(int type, const uint8_t* w, const float* x, const quant::BlockQ8A* xq, long long n,
                                     int lane) {
    float v;
    if (warp_dot_rows_q8<1>(type, &w, xq, n, lane, &v)) return v;
    switch (static_cast<TensorType>(type)) {
    case TensorType::F32: return warp_dot_float<0>(w, x, n, lane);
    case TensorType::F16: return warp_dot_float<1>(w, x, n, lane);
    case TensorType::BF16: return warp_dot_float<2>(w, x, n, lane);
    default: return __int_as_float(0x7fc00000);
    }
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

// Two rows of one type against the same activations, their loads in flight together.
__device__ inline void warp_dot_row2(int type, const uint8_t* w0, const uint8_t* w1, const float* x,
                                     const quant::BlockQ8A* xq, long long n, int lane, float* v0, float* v1) {
    const uint8_t* w[2] = {w0, w1};
    float v[2];
    if (warp_dot_rows_q8<2>(type, w, xq, n, lane, v)) {
        *v0 = v[0];
        *v1 = v[1];
        return;
    }
    switch (static_cast<TensorType>(type)) {
    case TensorType::F32: warp_dot_float2<0>(w0, w1, x, n, lane, v0, v1); return;
    case TensorType::F16: warp_dot_float2<1>(w0, w1, x, n, lane, v0, v1); return;
    case TensorType::BF16: warp_dot_float2<2>(w0, w1, x, n, lane, v0, v1); return;
    default: *v0 = *v1 = __int_as_float(0x7fc00000); return;
    }
}

}  // namespace arbor::gpu
