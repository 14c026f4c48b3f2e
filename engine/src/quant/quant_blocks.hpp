// Element and combine functions of the quantized formats, shared by the CPU code and (later)
// the HIP/CUDA kernels, so that both compute the same bits by construction.
//
// Plain C++ only: no std containers, no exceptions, no globals. Every function is `inline` and
// ARBOR_HD (host+device under nvcc/hipcc). Fields are read byte by byte (little-endian), so a
// block may sit at any address. Float arithmetic goes through mul_rn/add_rn/sub_rn/div_rn so
// that a device compiler cannot contract it into FMAs; the only FMAs are the explicit fmaf()s
// of the dot contract (see arbor/quant.hpp for the contract itself).
//
// Each format is a struct with:
//   kElems / kBytes / kSubs   elements, bytes and 32-element sub-blocks per block
//   kHasMin                   whether the dot has the second (min/offset) term
//   codes(b, sb, q)           the 32 integer codes of sub-block sb, offsets applied
//                             (Q4_0: q-8, Q3_K: -4..3, Q6_K: q-32, IQ4_*: kv[q] ...)
//   decode(b, sb, y)          the 32 floats of sub-block sb, in ggml's reference order
//   terms(b, sb, a, asum)     the dot's per-sub-block integer sums and weight factors
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define ARBOR_HD __host__ __device__
#define ARBOR_DEVICE_PASS 1
#else
#define ARBOR_HD
#endif

// Fixed-trip loops over a block's lanes or words: unrolled on the device, so that the arrays
// they index stay in registers (a loop there indexes a local array, which lives in memory).
#if defined(__CUDACC__) || defined(__HIPCC__)
#define ARBOR_UNROLL _Pragma("unroll")
#else
#define ARBOR_UNROLL
#endif

namespace arbor::quant::blocks {

// ---- scalar helpers -----------------------------------------------------------------------

ARBOR_HD inline uint32_t ld16(const uint8_t* p) { return uint32_t(p[0]) | (uint32_t(p[1]) << 8); }
ARBOR_HD inline uint32_t ld32(const uint8_t* p) { return ld16(p) | (ld16(p + 2) << 16); }

ARBOR_HD inline float bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}
ARBOR_HD inline uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

// Correctly rounded single operations that a device compiler may not fuse.
#if defined(ARBOR_DEVICE_PASS) && (defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__))
ARBOR_HD inline float mul_rn(float a, float b) { return __fmul_rn(a, b); }
ARBOR_HD inline float add_rn(float a, float b) { return __fadd_rn(a, b); }
ARBOR_HD inline float sub_rn(float a, float b) { return __fsub_rn(a, b); }
ARBOR_HD inline float div_rn(float a, float b) { return __fdiv_rn(a, b); }
#else
ARBOR_HD inline float mul_rn(float a, float b) { return a * b; }
ARBOR_HD inline float add_rn(float a, float b) { return a + b; }
ARBOR_HD inline float sub_rn(float a, float b) { return a - b; }
ARBOR_HD inline float div_rn(float a, float b) { return a / b; }
#endif

ARBOR_HD inline float fp16_to_f32(uint32_t h);

// The GPU's half -> float conversion alone: fp16_to_f32's bits for every half that is not a NaN
// (a NaN's bits are the hardware's). Callers that convert several halves at once take this and
// fp16_to_f32 only when one of them turns out to be a NaN. (Elsewhere: fp16_to_f32 itself.)
ARBOR_HD inline float fp16_to_f32_hw(uint32_t h) {
#if defined(ARBOR_DEVICE_PASS) && (defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__))
    float f;
#if defined(__CUDA_ARCH__)
    const unsigned short hs = static_cast<unsigned short>(h);
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(hs));
#else
    f = static_cast<float>(__builtin_bit_cast(_Float16, static_cast<uint16_t>(h)));
#endif
    return f;
#else
    return fp16_to_f32(h);
#endif
}

// IEEE half -> float, exact. Subnormals are normalized; a signalling NaN is made quiet with
// its payload kept, as the F16C conversion does.
ARBOR_HD inline float fp16_to_f32(uint32_t h) {
#if defined(ARBOR_DEVICE_PASS) && (defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__))
    // On the GPU the hardware's half -> float conversion: widening is exact for every finite
    // half and the infinities (subnormal halves are normal floats, and neither vendor flushes
    // f16 inputs by default), so it gives the bits below in one instruction instead of a dozen
    // and a loop. A NaN is the written path's (its payload and quiet bit are specified here,
    // not by the hardware), chosen by a select: no branch, so loads before it stay in flight.
    const float f = fp16_to_f32_hw(h);
    const uint32_t nan = ((h & 0x8000u) << 16) | 0x7fc00000u | ((h & 0x3ffu) << 13);
    return (h & 0x7fffu) > 0x7c00u ? bits_f32(nan) : f;
#else
    const uint32_t sign = (h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0x1f) return bits_f32(sign | 0x7f800000u | (mant << 13) | (mant ? 0x00400000u : 0u));
    if (exp != 0) return bits_f32(sign | ((exp + 112u) << 23) | (mant << 13));
    if (mant == 0) return bits_f32(sign);
    uint32_t e = 113;
    while (!(mant & 0x400u)) {
        mant <<= 1;
        --e;
    }
    return bits_f32(sign | (e << 23) | ((mant & 0x3ffu) << 13));
#endif
}

// float -> IEEE half, round to nearest even; overflow -> inf, NaN stays NaN (quiet).
ARBOR_HD inline uint16_t f32_to_fp16(float f) {
    uint32_t u = f32_bits(f);
    const uint32_t sign = (u >> 16) & 0x8000u;
    u &= 0x7fffffffu;
    if (u > 0x7f800000u) return uint16_t(sign | 0x7e00u | ((u >> 13) & 0x3ffu));
    if (u >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // >= 65520 rounds to inf
    if (u < 0x38800000u) {                                  // below 2^-14: half subnormal
        // |f| * 2^24 is exact; rounding it to an integer is the subnormal mantissa (1024
        // carries into the smallest normal, which is the right bit pattern).
        const float scaled = mul_rn(bits_f32(u), 16777216.0f);
        return uint16_t(sign | uint32_t(rintf(scaled)));
    }
    uint32_t h = (u - 0x38000000u) >> 13;
    const uint32_t rem = u & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
    return uint16_t(sign | h);
}

ARBOR_HD inline float bf16_to_f32(uint32_t h) { return bits_f32(h << 16); }

// float -> bfloat16, round to nearest even; NaN stays NaN (quiet).
ARBOR_HD inline uint16_t f32_to_bf16(float f) {
    const uint32_t u = f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);
    return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// MXFP4's shared exponent as "half" the scale, 2^(e-128), as ggml defines it.
ARBOR_HD inline float e8m0_half_to_f32(uint32_t e) { return bits_f32(e < 2 ? (0x00200000u << e) : ((e - 1u) << 23)); }

// Non-linear 4-bit grids (ggml's values), each as four little-endian words of four signed
// bytes: entry i is byte i % 4 of word i / 4 (the packed forms look four up at once, lut16).
// IQ4_NL / IQ4_XS: -127 -104 -83 -65 | -49 -35 -22 -10 | 1 13 25 38 | 53 69 89 113
constexpr uint32_t kIq4nlW0 = 0xbfad9881u, kIq4nlW1 = 0xf6eaddcfu, kIq4nlW2 = 0x26190d01u, kIq4nlW3 = 0x71594535u;
// MXFP4 (doubled e2m1): 0 1 2 3 | 4 6 8 12 | 0 -1 -2 -3 | -4 -6 -8 -12
constexpr uint32_t kMxfp4W0 = 0x03020100u, kMxfp4W1 = 0x0c080604u, kMxfp4W2 = 0xfdfeff00u, kMxfp4W3 = 0xf4f8fafcu;

// ARBOR_PACKED_GRIDS=1 (nvcc builds; prepared in gpu-next31, on by default since gpu-next33, where
// an H100 timed decode@229 of qwen3-4b shapes 2.9x faster with every matrix IQ4_NL and 2.5x with
// every matrix MXFP4, exact; the other formats' decode within the spread at 229 cells, 1-2% slower
// at 16384, their reads 0.15-0.5% slower: docs/BENCHMARKS.md "gpu-next33", docs/GPU.md):
// the grids are looked up by grid16_value's selects, and IQ4_NL's and MXFP4's row dots take
// packed forms (quant_blocks_packed.hpp). nvcc keeps an indexed array, even a constant one, in
// local memory, so each lookup is a 16-byte store of the table and a byte load: with the switch,
// the sm_90 megakernel's local-memory instructions go from 9411 to 4039
// (scripts/local-mem-map.sh). HIP builds keep the array and the byte-wise terms either way: on
// gfx1151 (clang 19 holds the array in registers) the megakernel's spill count (VGPRs and SGPRs)
// rose from 376 to 549 with the selects alone, and to 582 with the packed forms. Host compilers
// have both packed forms (tests/quant compares them with the reference terms) and the static
// tables. The choice depends on the compiler, not on the pass, so an nvcc or HIP translation unit
// sees one value in its host and device code.
#ifndef ARBOR_PACKED_GRIDS
#define ARBOR_PACKED_GRIDS 1
#endif
#if defined(__HIP__)
#define ARBOR_PACKED_GRIDS_ON 0
#define ARBOR_GRID_WORDS 0
#elif defined(__CUDACC__)
#define ARBOR_PACKED_GRIDS_ON ARBOR_PACKED_GRIDS
#define ARBOR_GRID_WORDS ARBOR_PACKED_GRIDS
#else
#define ARBOR_PACKED_GRIDS_ON 1
#define ARBOR_GRID_WORDS 0
#endif
// Entry i & 15 of such a grid, by selects and a shift.
ARBOR_HD inline int grid16_value(uint32_t i, uint32_t t0, uint32_t t1, uint32_t t2, uint32_t t3) {
    i &= 15u;
    const uint32_t w = i < 8 ? (i < 4 ? t0 : t1) : (i < 12 ? t2 : t3);
    return int(int8_t(uint8_t(w >> (8 * (i & 3u)))));
}
#if defined(ARBOR_DEVICE_PASS)
#define ARBOR_LOCAL_TABLE constexpr
#else
#define ARBOR_LOCAL_TABLE static constexpr
#endif
ARBOR_HD inline int iq4nl_value(uint32_t i) {
#if ARBOR_GRID_WORDS
    return grid16_value(i, kIq4nlW0, kIq4nlW1, kIq4nlW2, kIq4nlW3);
#else
    ARBOR_LOCAL_TABLE int8_t k[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
    return k[i & 15];
#endif
}
ARBOR_HD inline int mxfp4_value(uint32_t i) {
#if ARBOR_GRID_WORDS
    return grid16_value(i, kMxfp4W0, kMxfp4W1, kMxfp4W2, kMxfp4W3);
#else
    ARBOR_LOCAL_TABLE int8_t k[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
    return k[i & 15];
#endif
}

// ---- the dot contract's pieces --------------------------------------------------------------

// What one 32-element sub-block contributes: acc = fmaf(ws*xd, i1, acc), then for min types
// acc = fmaf(wm*xd, i2, acc). wm carries the sign (K-quants: -dmin; -(dmin*xd) == (-dmin)*xd
// exactly, rounding to nearest being symmetric).
struct SubTerms {
    float ws;
    int32_t i1;
    float wm;
    int32_t i2;
};

template <bool HasMin>
ARBOR_HD inline float lane_accumulate(float acc, SubTerms t, float xd) {
    acc = fmaf(mul_rn(t.ws, xd), float(t.i1), acc);
    if (HasMin) acc = fmaf(mul_rn(t.wm, xd), float(t.i2), acc);
    return acc;
}

// The fixed tree over 32 lanes: for s = 16..1, acc[j] += acc[j+s]. Overwrites acc.
ARBOR_HD inline float combine_lanes(float* acc) {
    ARBOR_UNROLL
    for (int s = 16; s >= 1; s >>= 1)
        ARBOR_UNROLL
        for (int j = 0; j < s; ++j) acc[j] = add_rn(acc[j], acc[j + s]);
    return acc[0];
}

// Quantizes 32 activations (the Q8A rule). Returns the scale; q and *sum are written.
ARBOR_HD inline float q8a_quantize32(const float* x, int8_t* q, int32_t* sum) {
    float amax = 0.0f;
    for (int i = 0; i < 32; ++i) {
        const float ax = fabsf(x[i]);
        if (ax > amax) amax = ax;  // NaN never compares greater: ignored
    }
    const float d = div_rn(amax, 127.0f);
    int32_t s = 0;
    for (int i = 0; i < 32; ++i) {
        int v = 0;
        if (d != 0.0f) {
            const float r = rintf(div_rn(x[i], d));
            v = r != r ? 0 : r > 127.0f ? 127 : r < -127.0f ? -127 : int(r);
        }
        q[i] = int8_t(v);
        s += v;
    }
    *sum = s;
    return d;
}

ARBOR_HD inline int32_t dot16(const int8_t* w, const int8_t* a) {
    int32_t s = 0;
    for (int i = 0; i < 16; ++i) s += int32_t(w[i]) * int32_t(a[i]);
    return s;
}
ARBOR_HD inline int32_t sum16(const int8_t* a) {
    int32_t s = 0;
    for (int i = 0; i < 16; ++i) s += a[i];
    return s;
}

// ---- formats with one 32-element block per scale -------------------------------------------

// Splits 16 packed bytes into 32 nibbles: low nibbles first, then high nibbles.
ARBOR_HD inline void nibbles32(const uint8_t* qs, int* q) {
    for (int j = 0; j < 16; ++j) {
        q[j] = qs[j] & 0xf;
        q[j + 16] = qs[j] >> 4;
    }
}

struct Q4_0 {
    static constexpr int kElems = 32, kBytes = 18, kSubs = 1;
    static constexpr bool kHasMin = false;
    ARBOR_HD static void codes(const uint8_t* b, int, int8_t* q) {
        int n[32];
        nibbles32(b + 2, n);
        for (int i = 0; i < 32; ++i) q[i] = int8_t(n[i] - 8);
    }
    ARBOR_HD static void decode(const uint8_t* b, int, float* y) {
        const float d = fp16_to_f32(ld16(b));
        int8_t q[32];
        codes(b, 0, q);
        for (int i = 0; i < 32; ++i) y[i] = mul_rn(float(q[i]), d);
    }
    ARBOR_HD static SubTerms terms(const uint8_t* b, int, const int8_t* a, int32_t) {
        int8_t q[32];
        codes(b, 0, q);
        return {fp16_to_f32(ld16(b)), dot16(q, a) + dot16(q + 16, a + 16), 0.0f, 0};
    }
};

struct Q4_1 {
    static constexpr int kElems = 32, kBytes = 20, kSubs = 1;
    static constexpr bool kHasMin = true;
    ARBOR_HD static void codes(const uint8_t* b, int, int8_t* q) {
        int n[32];
        nibbles32(b + 4, n);
        for (int i = 0; i < 32; ++i) q[i] = int8_t(n[i]);
    }
    ARBOR_HD static void decode(const uint8_t* b, int, float* y) {
        const float d = fp16_to_f32(ld16(b)), m = fp16_to_f32(ld16(b + 2));
        int8_t q[32];
        codes(b, 0, q);
        for (int i = 0; i < 32; ++i) y[i] = add_rn(mul_rn(float(q[i]), d), m);
    }
    ARBOR_HD static SubTerms terms(const uint8_t* b, int, const int8_t* a, int32_t asum) {
        int8_t q[32];
        codes(b, 0, q);
        return {fp16_to_f32(ld16(b)), dot16(q, a) + dot16(q + 16, a + 16), fp16_to_f32(ld16(b + 2)), asum};
    }
};

// 5-bit codes: a nibble plus bit j (element j) or bit j+12 shifted (element j+16) of qh.
ARBOR_HD inline void five_bits32(const uint8_t* qh_bytes, const uint8_t* qs, int* q) {
    const uint32_t qh = ld32(qh_bytes);
    for (int j = 0; j < 16; ++j) {
        q[j] = (qs[j] & 0xf) | (((qh >> j) << 4) & 0x10);
        q[j + 16] = (qs[j] >> 4) | ((qh >> (j + 12)) & 0x10);
    }
}

struct Q5_0 {
    static constexpr int kElems = 32, kBytes = 22, kSubs = 1;
    static constexpr bool kHasMin = false;
    ARBOR_HD static void codes(const uint8_t* b, int, int8_t* q) {
        int n[32];
        five_bits32(b + 2, b + 6, n);
        for (int i = 0; i < 32; ++i) q[i] = int8_t(n[i] - 16);
    }
    ARBOR_HD static void decode(const uint8_t* b, int, float* y) {
        const float d = fp16_to_f32(ld16(b));
        int8_t q[32];
        codes(b, 0, q);
        for (int i = 0; i < 32; ++i) y[i] = mul_rn(float(q[i]), d);
    }
    ARBOR_HD static SubTerms terms(const uint8_t* b, int, const int8_t* a, int32_t) {
        int8_t q[32];
        codes(b, 0, q);
        return {fp16_to_f32(ld16(b)), dot16(q, a) + dot16(q + 16, a + 16), 0.0f, 0};
    }
};

struct Q5_1 {
    static constexpr int kElems = 32, kBytes = 24, kSubs = 1;
    static constexpr bool kHasMin = true;
    ARBOR_HD static void codes(const uint8_t* b, int, int8_t* q) {
        int n[32];
        five_bits32(b + 4, b + 8, n);
        for (int i = 0; i < 32; ++i) q[i] = int8_t(n[i]);
    }
    ARBOR_HD static void decode(const uint8_t* b, int, float* y) {
        const float d = fp16_to_f32(ld16(b)), m = fp16_to_f32(ld16(b + 2));
        int8_t q[32];
        codes(b, 0, q);
        for (int i = 0; i < 32; ++i) y[i] = add_rn(mul_rn(float(q[i]), d), m);
    }
    ARBOR_HD static SubTerms terms(const uint8_t* b, int, const int8_t* a, int32_t asum) {
        int8_t q[32];
        codes(b, 0, q);
        return {fp16_to_f32(ld16(b)), dot16(q, a) + dot16(q + 16, a + 16), fp16_to_f32(ld16(b + 2)), asum};
    }
};

struct Q8_0 {
    static constexpr int kElems = 32, kBytes = 34, kSubs = 1;
    static constexpr bool kHasMin = false;
    ARBOR_HD static void codes(const uint8_t* b, int, int8_t* q) {
        for (int i = 0; i < 32; ++i) q[i] = int8_t(b[2 + i]);
    }
    ARBOR_HD static void decode(const uint8_t* b, int, float* y) {
        const float d = fp16_to_f32(ld16(b));
        for (int i = 0; i < 32; ++i) y[i] = mul_rn(float(int8_t(b[2 + i])), d);
    }
    ARBOR_HD static SubTerms terms(const uint8_t* b, int, const int8_t* a, int32_t) {
        const int8_t* q = reinterpret_cast<const int8_t*>(b + 2);
        return {fp16_to_f32(ld16(b)), dot16(q, a) + dot16(q + 16, a + 16), 0.0f, 0};
    }
};

struct IQ4_NL {
    static constexpr int kElems = 32, kBytes = 18, kSubs = 1;
    static constexpr bool kHasMin = false;
    ARBOR_HD static void codes(const uint8_t* b, int, int8_t* q) {
        int n[32];
        nibbles32(b + 2, n);
        for (int i = 0; i < 32; ++i) q[i] = int8_t(iq4nl_value(n[i]));
    }
    ARBOR_HD static void decode(const uint8_t* b, int, float* y) {
        const float d = fp16_to_f32(ld16(b));
        int8_t q[32];
        codes(b, 0, q);
        for (int i = 0; i < 32; ++i) y[i] = mul_rn(d, float(q[i]));
    }
    ARBOR_HD static SubTerms terms(const uint8_t* b, int, const int8_t* a, int32_t) {
        int8_t q[32];
        codes(b, 0, q);
        return {fp16_to_f32(ld16(b)), dot16(q, a) + dot16(q + 16, a + 16), 0.0f, 0};
    }
};

struct MXFP4 {
    static constexpr int kElems = 32, kBytes = 17, kSubs = 1;
    static constexpr bool kHasMin = false;
    ARBOR_HD static void codes(const uint8_t* b, int, int8_t* q) {
        int n[32];
        nibbles32(b + 1, n);
        for (int i = 0; i < 32; ++i) q[i] = int8_t(mxfp4_value(n[i]));
    }
    ARBOR_HD static void decode(const uint8_t* b, int, float* y) {
        const float d = e8m0_half_to_f32(b[0]);
        int8_t q[32];
        codes(b, 0, q);
        for (int i = 0; i < 32; ++i) y[i] = mul_rn(float(q[i]), d);
    }
    ARBOR_HD static SubTerms terms(const uint8_t* b, int, const int8_t* a, int32_t) {
        int8_t q[32];
        codes(b, 0, q);
        return {e8m0_half_to_f32(b[0]), dot16(q, a) + dot16(q + 16, a + 16), 0.0f, 0};
    }
};

}  // namespace arbor::quant::blocks

#include "quant_blocks_k.hpp"  // the 256-element super-block formats
