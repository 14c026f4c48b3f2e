// Building blocks of the AVX2 row dots: the target attribute, loads, the exact 8-way integer
// reductions, and the driver that walks a row in groups of eight sub-blocks.
//
// Bits: a group of eight consecutive sub-blocks b..b+7 (b a multiple of 8) lands in lanes
// b%32 .. b%32+7, which is one of four __m256 accumulators. Each sub-block's integer sums are
// exact (any summation order gives the same int32), A = ws*xd is one rounded product and the
// update is one fused multiply-add: the same operations as the scalar contract, eight at a
// time. The leftover sub-blocks (fewer than eight) and the final tree use the scalar code.
// Included only by the AVX2 translation units; everything here carries the target attribute.
// On other architectures those units compile to nothing (dot_avx2.cpp forwards to scalar).
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#define ARBOR_X86 1

#include "quant_blocks.hpp"

#include <arbor/quant.hpp>

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#define ARBOR_AVX2 __attribute__((target("avx2,fma,f16c")))

namespace arbor::quant::avx2 {

ARBOR_AVX2 inline __m256i load32(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// Eight fp16 values at p, p+stride, ... as floats (exact; F16C). Packed through general
// registers: inserting halves one by one would queue on the shuffle port.
ARBOR_AVX2 inline __m256 load_fp16_strided(const uint8_t* p, int stride) {
    using blocks::ld16;
    const uint64_t lo = uint64_t(ld16(p)) | uint64_t(ld16(p + stride)) << 16 | uint64_t(ld16(p + 2 * stride)) << 32 |
                        uint64_t(ld16(p + 3 * stride)) << 48;
    const uint64_t hi = uint64_t(ld16(p + 4 * stride)) | uint64_t(ld16(p + 5 * stride)) << 16 |
                        uint64_t(ld16(p + 6 * stride)) << 32 | uint64_t(ld16(p + 7 * stride)) << 48;
    return _mm256_cvtph_ps(_mm_set_epi64x(int64_t(hi), int64_t(lo)));
}

// 16 bytes of nibbles -> 32 bytes: low nibbles (elements 0..15), then high nibbles (16..31).
// The broadcast is a plain load; the high lane is shifted by 4 per dword (bits that cross into
// a byte from its neighbour land above bit 3 and are masked off).
ARBOR_AVX2 inline __m256i nibbles32(const uint8_t* p) {
    const __m256i v = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_and_si256(_mm256_srlv_epi32(v, _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4)), _mm256_set1_epi8(0x0f));
}

// Bit i of the 32-bit word -> byte i is 0xff, else 0.
ARBOR_AVX2 inline __m256i bits_to_bytes(uint32_t bits) {
    const __m256i spread = _mm256_shuffle_epi8(
        _mm256_set1_epi32(int(bits)),
        _mm256_setr_epi64x(0x0000000000000000, 0x0101010101010101, 0x0202020202020202, 0x0303030303030303));
    const __m256i probe = _mm256_set1_epi64x(int64_t(0x7fbfdfeff7fbfdfeULL));
    return _mm256_cmpeq_epi8(_mm256_or_si256(spread, probe), _mm256_set1_epi8(-1));
}

// Σ over pairs of u8 w times s8 a, as 8 int32 (each the sum of 4 products).
ARBOR_AVX2 inline __m256i dot_u8s8(__m256i w, __m256i a) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(w, a), _mm256_set1_epi16(1));
}
// The same for signed weights (|w| <= 128): sign moved onto the activations.
ARBOR_AVX2 inline __m256i dot_s8s8(__m256i w, __m256i a) {
    return dot_u8s8(_mm256_abs_epi8(w), _mm256_sign_epi8(a, w));
}

// ---- reductions of eight sub-blocks ----------------------------------------------------------
// A sub-block's products come as one vector; its 128-bit lanes are its two 16-element groups.
// Every reduction below is exact integer arithmetic (the int16 ones are used only where the
// format's bounds keep every partial sum inside int16, noted at each use).

// Eight vectors of 8 int32 -> [total of p0, ..., total of p7].
ARBOR_AVX2 inline __m256i hsum8(__m256i p0, __m256i p1, __m256i p2, __m256i p3, __m256i p4, __m256i p5, __m256i p6,
                                __m256i p7) {
    const __m256i h01 = _mm256_hadd_epi32(p0, p1), h23 = _mm256_hadd_epi32(p2, p3);
    const __m256i h45 = _mm256_hadd_epi32(p4, p5), h67 = _mm256_hadd_epi32(p6, p7);
    const __m256i lo = _mm256_hadd_epi32(h01, h23);  // [0 1 2 3 | 0 1 2 3], per 128-bit lane
    const __m256i hi = _mm256_hadd_epi32(h45, h67);
    return _mm256_add_epi32(_mm256_blend_epi32(lo, hi, 0xf0), _mm256_permute2x128_si256(lo, hi, 0x21));
}

// Eight vectors of 16 int16 (maddubs output) -> [group-0 sums of x0..x7 | group-1 sums], int16.
// Exact when each group's 16 products sum to within int16.
ARBOR_AVX2 inline __m256i tree16(__m256i x0, __m256i x1, __m256i x2, __m256i x3, __m256i x4, __m256i x5, __m256i x6,
                                 __m256i x7) {
    const __m256i a = _mm256_hadd_epi16(x0, x1), b = _mm256_hadd_epi16(x2, x3);
    const __m256i c = _mm256_hadd_epi16(x4, x5), d = _mm256_hadd_epi16(x6, x7);
    return _mm256_hadd_epi16(_mm256_hadd_epi16(a, b), _mm256_hadd_epi16(c, d));
}
// tree16's result -> the eight sub-block totals as int32.
ARBOR_AVX2 inline __m256i group_totals(__m256i t) {
    return _mm256_add_epi32(_mm256_cvtepi16_epi32(_mm256_castsi256_si128(t)),
                            _mm256_cvtepi16_epi32(_mm256_extracti128_si256(t, 1)));
}
// tree16's result -> the sixteen group sums in natural order (sub-block k, group g at 2k+g).
ARBOR_AVX2 inline __m256i group_pairs(__m256i t) {
    const __m128i lo = _mm256_castsi256_si128(t), hi = _mm256_extracti128_si256(t, 1);
    return _mm256_set_m128i(_mm_unpackhi_epi16(lo, hi), _mm_unpacklo_epi16(lo, hi));
}
// Eight maddubs outputs -> the eight sub-block totals as int32, with two int16 levels (exact
// when every sum of 8 products fits int16) and the rest in int32.
ARBOR_AVX2 inline __m256i totals_16x2(__m256i x0, __m256i x1, __m256i x2, __m256i x3, __m256i x4, __m256i x5,
                                      __m256i x6, __m256i x7) {
    const __m256i ones = _mm256_set1_epi16(1);
    const __m256i m0 = _mm256_madd_epi16(_mm256_hadd_epi16(_mm256_hadd_epi16(x0, x1), _mm256_hadd_epi16(x2, x3)),
                                         ones);  // [0 1 2 3 | 0 1 2 3]
    const __m256i m1 = _mm256_madd_epi16(_mm256_hadd_epi16(_mm256_hadd_epi16(x4, x5), _mm256_hadd_epi16(x6, x7)), ones);
    return _mm256_add_epi32(_mm256_blend_epi32(m0, m1, 0xf0), _mm256_permute2x128_si256(m0, m1, 0x21));
}

// acc + (ws*xd) * float(i), lane-wise: the contract's update for eight sub-blocks.
ARBOR_AVX2 inline __m256 lane_fma(__m256 acc, __m256 ws, __m256 xd, __m256i i) {
    return _mm256_fmadd_ps(_mm256_mul_ps(ws, xd), _mm256_cvtepi32_ps(i), acc);
}
// acc - (wm*xd) * float(i): the K-quants' min term, fmaf(-(dmin*xd), i, acc) exactly (negating
// a product commutes with rounding to nearest).
ARBOR_AVX2 inline __m256 lane_fnma(__m256 acc, __m256 wm, __m256 xd, __m256i i) {
    return _mm256_fnmadd_ps(_mm256_mul_ps(wm, xd), _mm256_cvtepi32_ps(i), acc);
}

// ---- the row driver ----------------------------------------------------------------------------

// What a group of eight sub-blocks gets from the activations: the blocks themselves, their eight
// scales and sums, and (for formats that ask) the sixteen 16-element group sums of the codes.
struct GroupInput {
    const BlockQ8A* x;
    __m256 xd;
    __m256i xs;
    const int16_t* g16;
};

// The activations' per-call columns: d and sum of every block as flat arrays and, when asked,
// the sum of every 16-element group (int16, |sum| <= 2032). Built once per dot_rows call.
class Q8aColumns {
public:
    ARBOR_AVX2 Q8aColumns(const BlockQ8A* xq, int64_t subs, bool group_sums) {
        const size_t bytes = size_t(subs) * (4 + 4 + (group_sums ? 4 : 0)) + 64;
        uint8_t* base = stack_;
        if (bytes > sizeof(stack_)) {
            heap_.reset(new uint8_t[bytes]);
            base = heap_.get();
        }
        d_ = reinterpret_cast<float*>(base);
        s_ = reinterpret_cast<int32_t*>(base + 4 * subs);
        g_ = group_sums ? reinterpret_cast<int16_t*>(base + 8 * subs) : nullptr;
        for (int64_t b = 0; b < subs; ++b) {
            d_[b] = xq[b].d;
            s_[b] = xq[b].sum;
        }
        if (!group_sums) return;
        const __m256i ones = _mm256_set1_epi8(1);
        int64_t b = 0;
        for (; b + 8 <= subs; b += 8) {  // |group sum| <= 16 * 127: int16 is exact
            __m256i x[8];
            for (int k = 0; k < 8; ++k) x[k] = _mm256_maddubs_epi16(ones, load32(xq[b + k].q));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(g_ + 2 * b),
                                group_pairs(tree16(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7])));
        }
        for (; b < subs; ++b)
            for (int g = 0; g < 2; ++g) g_[2 * b + g] = int16_t(blocks::sum16(xq[b].q + 16 * g));
    }
    const float* d() const { return d_; }
    const int32_t* s() const { return s_; }
    const int16_t* g16() const { return g_; }

private:
    alignas(32) uint8_t stack_[8192];  // rows up to ~20000 elements stay on the stack
    std::unique_ptr<uint8_t[]> heap_;
    float* d_;
    int32_t* s_;
    int16_t* g_;
};

ARBOR_AVX2 inline GroupInput group_input(const BlockQ8A* xq, const Q8aColumns& cols, int64_t g) {
    return GroupInput{xq + 8 * g, _mm256_loadu_ps(cols.d() + 8 * g),
                      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(cols.s() + 8 * g)),
                      cols.g16() ? cols.g16() + 16 * g : nullptr};
}

// Walks rows in groups of eight sub-blocks. K provides `using Fmt`, kGroupBytes (weight bytes
// per eight sub-blocks), kGroupSums (whether it reads GroupInput::g16) and
//   static void group(const uint8_t* w, const GroupInput& in, __m256& acc).
// Weights are prefetched a few groups ahead: rows stream from memory once per call.
template <class K>
ARBOR_AVX2 void dot_rows_grouped(const uint8_t* w, size_t stride, int64_t rows, const BlockQ8A* xq, int64_t n,
                                 float* out) {
    using Fmt = typename K::Fmt;
    const int64_t subs = n / 32, groups = subs / 8;
    constexpr int64_t gb = K::kGroupBytes;
    constexpr int64_t kPrefetch = 2048;
    const Q8aColumns cols(xq, subs, K::kGroupSums);
    for (int64_t r = 0; r < rows; ++r) {
        const uint8_t* row = w + size_t(r) * stride;
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        int64_t g = 0;
        for (; g + 4 <= groups; g += 4) {
            for (int64_t off = 0; off < 4 * gb; off += 64)
                _mm_prefetch(reinterpret_cast<const char*>(row + g * gb + off + kPrefetch), _MM_HINT_T0);
            K::group(row + g * gb, group_input(xq, cols, g), a0);
            K::group(row + (g + 1) * gb, group_input(xq, cols, g + 1), a1);
            K::group(row + (g + 2) * gb, group_input(xq, cols, g + 2), a2);
            K::group(row + (g + 3) * gb, group_input(xq, cols, g + 3), a3);
        }
        if (g < groups) K::group(row + g * gb, group_input(xq, cols, g), a0), ++g;
        if (g < groups) K::group(row + g * gb, group_input(xq, cols, g), a1), ++g;
        if (g < groups) K::group(row + g * gb, group_input(xq, cols, g), a2), ++g;
        alignas(32) float lanes[32];
        _mm256_store_ps(lanes, a0);
        _mm256_store_ps(lanes + 8, a1);
        _mm256_store_ps(lanes + 16, a2);
        _mm256_store_ps(lanes + 24, a3);
        for (int64_t b = groups * 8; b < subs; ++b) {
            const uint8_t* blk = row + (b / Fmt::kSubs) * Fmt::kBytes;
            const blocks::SubTerms t = Fmt::terms(blk, int(b % Fmt::kSubs), xq[b].q, xq[b].sum);
            lanes[b % 32] = blocks::lane_accumulate<Fmt::kHasMin>(lanes[b % 32], t, xq[b].d);
        }
        out[r] = blocks::combine_lanes(lanes);
    }
}

}  // namespace arbor::quant::avx2

#endif  // ARBOR_X86
