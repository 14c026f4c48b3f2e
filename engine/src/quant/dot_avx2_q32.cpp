// AVX2 row dots for the formats with one scale per 32 elements: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
// IQ4_NL and MXFP4. Eight blocks form a group (see avx2_common.hpp for the bit argument).
#include "avx2_common.hpp"
#include "format_dispatch.hpp"

#ifdef ARBOR_X86

namespace arbor::quant::avx2 {
namespace {

constexpr int8_t kIq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
constexpr int8_t kMxfp4[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

ARBOR_AVX2 inline __m256i table16(const int8_t* t) {
    return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(t)));
}

// The 5-bit codes of Q5_0/Q5_1: nibbles plus 0x10 where the qh bit is set.
ARBOR_AVX2 inline __m256i five_bit_codes(const uint8_t* qh, const uint8_t* qs) {
    return _mm256_or_si256(nibbles32(qs), _mm256_and_si256(bits_to_bytes(blocks::ld32(qh)), _mm256_set1_epi8(0x10)));
}

// Codes: how each format turns block k of the group into a maddubs product vector (16 int16).
template <int Off>  // unsigned 4-bit codes at byte Off
struct Nibbles {
    ARBOR_AVX2 static __m256i product(const uint8_t* b, __m256i a) {
        return _mm256_maddubs_epi16(nibbles32(b + Off), a);
    }
};
template <int QhOff, int QsOff>  // unsigned 5-bit codes
struct FiveBits {
    ARBOR_AVX2 static __m256i product(const uint8_t* b, __m256i a) {
        return _mm256_maddubs_epi16(five_bit_codes(b + QhOff, b + QsOff), a);
    }
};
template <const int8_t* Table, int Off>  // signed table values indexed by nibbles
struct TableCodes {
    ARBOR_AVX2 static __m256i product(const uint8_t* b, __m256i a) {
        const __m256i w = _mm256_shuffle_epi8(table16(Table), nibbles32(b + Off));
        return _mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(a, w));
    }
};
struct Int8Codes {
    ARBOR_AVX2 static __m256i product(const uint8_t* b, __m256i a) {
        const __m256i w = load32(b + 2);
        return _mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(a, w));
    }
};

// The eight sub-block sums Σ code·a of a group, reduced in int16 as far as the bounds allow.
enum class Reduce { Int16x3, Int16x2, Int32 };

template <class Fmt, class Codes, Reduce R>
ARBOR_AVX2 inline __m256i group_sums(const uint8_t* w, const BlockQ8A* x) {
    __m256i p[8];
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) p[k] = Codes::product(w + k * Fmt::kBytes, load32(x[k].q));
    if constexpr (R == Reduce::Int16x3) return group_totals(tree16(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]));
    if constexpr (R == Reduce::Int16x2) return totals_16x2(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
    const __m256i ones = _mm256_set1_epi16(1);
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) p[k] = _mm256_madd_epi16(p[k], ones);
    return hsum8(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
}

// Q4_0: Σ(q-8)a = Σq·a - 8·Σa; |Σ over 16 of q·a| <= 16*15*127 fits int16.
struct KQ4_0 {
    using Fmt = blocks::Q4_0;
    static constexpr int64_t kGroupBytes = 8 * Fmt::kBytes;
    static constexpr bool kGroupSums = false;
    ARBOR_AVX2 static void group(const uint8_t* w, const GroupInput& in, __m256& acc) {
        const __m256i sums = group_sums<Fmt, Nibbles<2>, Reduce::Int16x3>(w, in.x);
        const __m256i i1 = _mm256_sub_epi32(sums, _mm256_slli_epi32(in.xs, 3));
        acc = lane_fma(acc, load_fp16_strided(w, Fmt::kBytes), in.xd, i1);
    }
};

struct KQ4_1 {
    using Fmt = blocks::Q4_1;
    static constexpr int64_t kGroupBytes = 8 * Fmt::kBytes;
    static constexpr bool kGroupSums = false;
    ARBOR_AVX2 static void group(const uint8_t* w, const GroupInput& in, __m256& acc) {
        const __m256i i1 = group_sums<Fmt, Nibbles<4>, Reduce::Int16x3>(w, in.x);
        acc = lane_fma(acc, load_fp16_strided(w, Fmt::kBytes), in.xd, i1);
        acc = lane_fma(acc, load_fp16_strided(w + 2, Fmt::kBytes), in.xd, in.xs);
    }
};

// Q5: codes up to 31, so only sums of 8 products (<= 31496) stay in int16.
struct KQ5_0 {
    using Fmt = blocks::Q5_0;
    static constexpr int64_t kGroupBytes = 8 * Fmt::kBytes;
    static constexpr bool kGroupSums = false;
    ARBOR_AVX2 static void group(const uint8_t* w, const GroupInput& in, __m256& acc) {
        const __m256i sums = group_sums<Fmt, FiveBits<2, 6>, Reduce::Int16x2>(w, in.x);
        const __m256i i1 = _mm256_sub_epi32(sums, _mm256_slli_epi32(in.xs, 4));
        acc = lane_fma(acc, load_fp16_strided(w, Fmt::kBytes), in.xd, i1);
    }
};

struct KQ5_1 {
    using Fmt = blocks::Q5_1;
    static constexpr int64_t kGroupBytes = 8 * Fmt::kBytes;
    static constexpr bool kGroupSums = false;
    ARBOR_AVX2 static void group(const uint8_t* w, const GroupInput& in, __m256& acc) {
        const __m256i i1 = group_sums<Fmt, FiveBits<4, 8>, Reduce::Int16x2>(w, in.x);
        acc = lane_fma(acc, load_fp16_strided(w, Fmt::kBytes), in.xd, i1);
        acc = lane_fma(acc, load_fp16_strided(w + 2, Fmt::kBytes), in.xd, in.xs);
    }
};

struct KQ8_0 {
    using Fmt = blocks::Q8_0;
    static constexpr int64_t kGroupBytes = 8 * Fmt::kBytes;
    static constexpr bool kGroupSums = false;
    ARBOR_AVX2 static void group(const uint8_t* w, const GroupInput& in, __m256& acc) {
        const __m256i i1 = group_sums<Fmt, Int8Codes, Reduce::Int32>(w, in.x);
        acc = lane_fma(acc, load_fp16_strided(w, Fmt::kBytes), in.xd, i1);
    }
};

struct KIQ4_NL {
    using Fmt = blocks::IQ4_NL;
    static constexpr int64_t kGroupBytes = 8 * Fmt::kBytes;
    static constexpr bool kGroupSums = false;
    ARBOR_AVX2 static void group(const uint8_t* w, const GroupInput& in, __m256& acc) {
        const __m256i i1 = group_sums<Fmt, TableCodes<kIq4nl, 2>, Reduce::Int32>(w, in.x);
        acc = lane_fma(acc, load_fp16_strided(w, Fmt::kBytes), in.xd, i1);
    }
};

// MXFP4: |value| <= 12, so 16 products stay within 16*12*127 = 24384.
struct KMXFP4 {
    using Fmt = blocks::MXFP4;
    static constexpr int64_t kGroupBytes = 8 * Fmt::kBytes;
    static constexpr bool kGroupSums = false;
    ARBOR_AVX2 static void group(const uint8_t* w, const GroupInput& in, __m256& acc) {
        const __m256i i1 = group_sums<Fmt, TableCodes<kMxfp4, 1>, Reduce::Int16x3>(w, in.x);
        // e8m0 "half" scale: e < 2 -> 0x00200000 << e (subnormal), else (e - 1) << 23.
        constexpr int s = Fmt::kBytes;
        uint64_t packed = 0;  // the eight exponent bytes, gathered in a general register
        for (int k = 0; k < 8; ++k) packed |= uint64_t(w[k * s]) << (8 * k);
        const __m256i e = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(int64_t(packed)));
        const __m256i sub = _mm256_sllv_epi32(_mm256_set1_epi32(0x00200000), e);
        const __m256i norm = _mm256_slli_epi32(_mm256_sub_epi32(e, _mm256_set1_epi32(1)), 23);
        const __m256i small = _mm256_cmpgt_epi32(_mm256_set1_epi32(2), e);
        const __m256 ws = _mm256_castsi256_ps(_mm256_blendv_epi8(norm, sub, small));
        acc = lane_fma(acc, ws, in.xd, i1);
    }
};

}  // namespace

// Returns false when t is not one of this file's formats.
bool dot_rows_q32(TensorType t, const uint8_t* w, size_t stride, int64_t rows, const BlockQ8A* xq, int64_t n,
                  float* out) {
    switch (t) {
        case TensorType::Q4_0: dot_rows_grouped<KQ4_0>(w, stride, rows, xq, n, out); return true;
        case TensorType::Q4_1: dot_rows_grouped<KQ4_1>(w, stride, rows, xq, n, out); return true;
        case TensorType::Q5_0: dot_rows_grouped<KQ5_0>(w, stride, rows, xq, n, out); return true;
        case TensorType::Q5_1: dot_rows_grouped<KQ5_1>(w, stride, rows, xq, n, out); return true;
        case TensorType::Q8_0: dot_rows_grouped<KQ8_0>(w, stride, rows, xq, n, out); return true;
        case TensorType::IQ4_NL: dot_rows_grouped<KIQ4_NL>(w, stride, rows, xq, n, out); return true;
        case TensorType::MXFP4: dot_rows_grouped<KMXFP4>(w, stride, rows, xq, n, out); return true;
        default: return false;
    }
}

}  // namespace arbor::quant::avx2

#endif  // ARBOR_X86
