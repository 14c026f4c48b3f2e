// AVX2 row dots for the 256-element super-block formats: Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and
// IQ4_XS. One block is one group of eight sub-blocks (see avx2_common.hpp for the bit argument).
// The integer sums are rearranged, never approximated: offsets (Q3_K's -4, Q6_K's -32) come
// off through the activations' 16-element group sums, sub-scales multiply exact sums.
#include "avx2_common.hpp"
#include "format_dispatch.hpp"

#ifdef ARBOR_X86

namespace arbor::quant::avx2 {
namespace {

// Two fp16 at p as [f(p), f(p+2), ...] floats.
ARBOR_AVX2 inline __m128 halves2(const uint8_t* p) { return _mm_cvtph_ps(_mm_cvtsi32_si128(int(blocks::ld32(p)))); }
ARBOR_AVX2 inline __m256 bcast0(__m128 v) { return _mm256_broadcastss_ps(v); }
ARBOR_AVX2 inline __m256 bcast1(__m128 v) { return _mm256_broadcastss_ps(_mm_movehdup_ps(v)); }

// Bit `bit` of every byte of v moved to bit `to` (other bits cleared). 16-bit shifts are
// safe: the bit that lands at `to` always comes from the same byte.
template <int bit, int to>
ARBOR_AVX2 inline __m256i move_bit(__m256i v) {
    const __m256i mask = _mm256_set1_epi8(char(1 << to));
    if constexpr (bit > to)
        return _mm256_and_si256(_mm256_srli_epi16(v, bit - to), mask);
    else if constexpr (bit < to)
        return _mm256_and_si256(_mm256_slli_epi16(v, to - bit), mask);
    else
        return _mm256_and_si256(v, mask);
}

ARBOR_AVX2 inline __m256i sixteen_bytes_u16(const uint8_t* p) {
    return _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// Q4_K / Q5_K header (d, dmin, 12 scale bytes) -> the eight 6-bit scales and mins as int32.
ARBOR_AVX2 inline void k4_scales(const uint8_t* w, __m256i* sc, __m256i* mn) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w));  // s[j] = byte 4 + j
    // A = [s0..s3, s8..s11, s4..s7, s8..s11]; B = top-bit sources [0, s0..s3, 0, s4..s7].
    const __m128i a = _mm_shuffle_epi8(h, _mm_setr_epi8(4, 5, 6, 7, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15));
    const __m128i b = _mm_shuffle_epi8(h, _mm_setr_epi8(-1, -1, -1, -1, 4, 5, 6, 7, -1, -1, -1, -1, 8, 9, 10, 11));
    const __m128i low = _mm_and_si128(a, _mm_setr_epi8(63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 0, 0, 0, 0));
    const __m128i mid =
        _mm_and_si128(_mm_srli_epi16(a, 4), _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 15, 15, 15, 15));
    const __m128i top = _mm_and_si128(_mm_srli_epi16(b, 2), _mm_set1_epi8(0x30));
    const __m128i r = _mm_or_si128(_mm_or_si128(low, mid), top);  // [sc0..sc7, mn0..mn7]
    *sc = _mm256_cvtepu8_epi32(r);
    *mn = _mm256_cvtepu8_epi32(_mm_unpackhi_epi64(r, r));
}

// Q4_K: codes 0..15, so a group's 16 products fit int16 (<= 30480).
struct KQ4_K {
    using Fmt = blocks::Q4_K;
    static constexpr int64_t kGroupBytes = Fmt::kBytes;
    static constexpr bool kGroupSums = false;
    ARBOR_AVX2 static void group(const uint8_t* w, const GroupInput& in, __m256& acc) {
        const __m256i m4 = _mm256_set1_epi8(0x0f);
        __m256i p[8];
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) {
            const __m256i v = load32(w + 16 + 32 * j);
            p[2 * j] = _mm256_maddubs_epi16(_mm256_and_si256(v, m4), load32(in.x[2 * j].q));
            p[2 * j + 1] =
                _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(v, 4), m4), load32(in.x[2 * j + 1].q));
        }
        const __m256i sums = group_totals(tree16(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]));
        __m256i sc, mn;
        k4_scales(w, &sc, &mn);
        const __m128 dd = halves2(w);
        acc = lane_fma(acc, bcast0(dd), in.xd, _mm256_mullo_epi32(sums, sc));
        acc = lane_fnma(acc, bcast1(dd), in.xd, _mm256_mullo_epi32(in.xs, mn));
    }
};

// Q5_K: codes 0..31: two int16 levels, then int32.
struct KQ5_K {
    using Fmt = blocks::Q5_K;
    static constexpr int64_t kGroupBytes = Fmt::kBytes;
    static constexpr bool kGroupSums = false;
    template <int sb>
    ARBOR_AVX2 static __m256i product(__m256i nib, __m256i qh, const BlockQ8A* x) {
        return _mm256_maddubs_epi16(_mm256_or_si256(nib, move_bit<sb, 4>(qh)), load32(x[sb].q));
    }
    ARBOR_AVX2 static void group(const uint8_t* w, const GroupInput& in, __m256& acc) {
        const __m256i m4 = _mm256_set1_epi8(0x0f);
        const __m256i qh = load32(w + 16);
        const uint8_t* qs = w + 48;
        const __m256i v0 = load32(qs), v1 = load32(qs + 32), v2 = load32(qs + 64), v3 = load32(qs + 96);
        const BlockQ8A* x = in.x;
        const __m256i sums = totals_16x2(product<0>(_mm256_and_si256(v0, m4), qh, x),
                                         product<1>(_mm256_and_si256(_mm256_srli_epi16(v0, 4), m4), qh, x),
                                         product<2>(_mm256_and_si256(v1, m4), qh, x),
                                         product<3>(_mm256_and_si256(_mm256_srli_epi16(v1, 4), m4), qh, x),
                                         product<4>(_mm256_and_si256(v2, m4), qh, x),
                                         product<5>(_mm256_and_si256(_mm256_srli_epi16(v2, 4), m4), qh, x),
                                         product<6>(_mm256_and_si256(v3, m4), qh, x),
                                         product<7>(_mm256_and_si256(_mm256_srli_epi16(v3, 4), m4), qh, x));
        __m256i sc, mn;
        k4_scales(w, &sc, &mn);
        const __m128 dd = halves2(w);
        acc = lane_fma(acc, bcast0(dd), in.xd, _mm256_mullo_epi32(sums, sc));
        acc = lane_fnma(acc, bcast1(dd), in.xd, _mm256_mullo_epi32(in.xs, mn));
    }
};

// Q6_K: unsigned codes q = 0..63 and I1 = Σ_g sc_g·Σ_g q·a - 32·Σ_g sc_g·S_g, S_g the group
// sums of the activations. One int16 level (sums of 4 products <= 32004), the group scales
// enter through madd, the rest is int32.
struct KQ6_K {
    using Fmt = blocks::Q6_K;
    static constexpr int64_t kGroupBytes = Fmt::kBytes;
    static constexpr bool kGroupSums = true;
    ARBOR_AVX2 static void group(const uint8_t* w, const GroupInput& in, __m256& acc) {
        const __m256i m4 = _mm256_set1_epi8(0x0f), m30 = _mm256_set1_epi8(0x30);
        const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 192)));
        // Scale patterns for a pair of sub-blocks (k, k+1), k even, in lane g:
        // [sc(2k+g) x4, sc(2k+2+g) x4] as int16.
        const __m256i ctrl_a = _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 4, 5, 4, 5, 4, 5, 4, 5,  //
                                                2, 3, 2, 3, 2, 3, 2, 3, 6, 7, 6, 7, 6, 7, 6, 7);
        const __m256i ctrl_b = _mm256_setr_epi8(8, 9, 8, 9, 8, 9, 8, 9, 12, 13, 12, 13, 12, 13, 12, 13,  //
                                                10, 11, 10, 11, 10, 11, 10, 11, 14, 15, 14, 15, 14, 15, 14, 15);
        __m256i m[4];
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
            const __m256i ql0 = load32(w + 64 * h), ql1 = load32(w + 64 * h + 32), qh = load32(w + 128 + 32 * h);
            const __m256i q0 =
                _mm256_or_si256(_mm256_and_si256(ql0, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), m30));
            const __m256i q1 =
                _mm256_or_si256(_mm256_and_si256(ql1, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 2), m30));
            const __m256i q2 =
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), m4), _mm256_and_si256(qh, m30));
            const __m256i q3 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), m4),
                                               _mm256_and_si256(_mm256_srli_epi16(qh, 2), m30));
            const BlockQ8A* x = in.x + 4 * h;
            const __m256i y01 =
                _mm256_hadd_epi16(_mm256_maddubs_epi16(q0, load32(x[0].q)), _mm256_maddubs_epi16(q1, load32(x[1].q)));
            const __m256i y23 =
                _mm256_hadd_epi16(_mm256_maddubs_epi16(q2, load32(x[2].q)), _mm256_maddubs_epi16(q3, load32(x[3].q)));
            const __m256i half_sc =
                h == 0 ? _mm256_permute4x64_epi64(sc16, 0x44) : _mm256_permute4x64_epi64(sc16, 0xee);
            m[2 * h] = _mm256_madd_epi16(y01, _mm256_shuffle_epi8(half_sc, ctrl_a));
            m[2 * h + 1] = _mm256_madd_epi16(y23, _mm256_shuffle_epi8(half_sc, ctrl_b));
        }
        const __m256i v0 = _mm256_hadd_epi32(m[0], m[1]), v1 = _mm256_hadd_epi32(m[2], m[3]);  // [k g0 | k g1]
        const __m256i main =
            _mm256_add_epi32(_mm256_blend_epi32(v0, v1, 0xf0), _mm256_permute2x128_si256(v0, v1, 0x21));
        const __m256i offset = _mm256_madd_epi16(load32(in.g16), sc16);  // Σ_g sc_g·S_g
        const __m256i i1 = _mm256_sub_epi32(main, _mm256_slli_epi32(offset, 5));
        acc = lane_fma(acc, _mm256_set1_ps(_cvtsh_ss(uint16_t(blocks::ld16(w + 208)))), in.xd, i1);
    }
};

// Q2_K: codes 0..3 (group sums tiny); per-group scales through madd on the natural-order group
// sums; the min term straight from the activations' group sums.
struct KQ2_K {
    using Fmt = blocks::Q2_K;
    static constexpr int64_t kGroupBytes = Fmt::kBytes;
    static constexpr bool kGroupSums = true;
    ARBOR_AVX2 static void group(const uint8_t* w, const GroupInput& in, __m256& acc) {
        const __m256i m3 = _mm256_set1_epi8(3);
        __m256i p[8];
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
            const __m256i qs = load32(w + 16 + 32 * h);
#pragma GCC unroll 4
            for (int j = 0; j < 4; ++j)
                p[4 * h + j] =
                    _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(qs, 2 * j), m3), load32(in.x[4 * h + j].q));
        }
        const __m256i raw = sixteen_bytes_u16(w);  // scale bytes as int16, natural order
        const __m256i sc = _mm256_and_si256(raw, _mm256_set1_epi16(0x0f));
        const __m256i mn = _mm256_srli_epi16(raw, 4);
        const __m256i i1 = _mm256_madd_epi16(group_pairs(tree16(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7])), sc);
        const __m256i i2 = _mm256_madd_epi16(load32(in.g16), mn);
        const __m128 dd = halves2(w + 80);
        acc = lane_fma(acc, bcast0(dd), in.xd, i1);
        acc = lane_fnma(acc, bcast1(dd), in.xd, i2);
    }
};

// Q3_K: u = q + 4 in 0..7 (group sums <= 14224 fit int16); I1 = Σ_g s_g·Σ_g u·a - 4·Σ_g s_g·S_g
// with s_g = scale - 32.
struct KQ3_K {
    using Fmt = blocks::Q3_K;
    static constexpr int64_t kGroupBytes = Fmt::kBytes;
    static constexpr bool kGroupSums = true;
    template <int sb>
    ARBOR_AVX2 static __m256i product(__m256i qs, __m256i hm, const BlockQ8A* x) {
        const __m256i q2 = _mm256_and_si256(_mm256_srli_epi16(qs, 2 * (sb % 4)), _mm256_set1_epi8(3));
        return _mm256_maddubs_epi16(_mm256_or_si256(q2, move_bit<sb, 2>(hm)), load32(x[sb].q));
    }
    ARBOR_AVX2 static void group(const uint8_t* w, const GroupInput& in, __m256& acc) {
        // Sixteen 6-bit scales: low 4 bits from bytes 0..7 (nibbles), high 2 bits from 8..11.
        uint32_t u[3];
        memcpy(u, w + 96, 12);
        const uint32_t k15 = 0x0f0f0f0f, k3 = 0x03030303;
        uint32_t s[4];
        s[0] = (u[0] & k15) | ((u[2] & k3) << 4);
        s[1] = (u[1] & k15) | (((u[2] >> 2) & k3) << 4);
        s[2] = ((u[0] >> 4) & k15) | (((u[2] >> 4) & k3) << 4);
        s[3] = ((u[1] >> 4) & k15) | (((u[2] >> 6) & k3) << 4);
        const __m256i sc =
            _mm256_sub_epi16(sixteen_bytes_u16(reinterpret_cast<const uint8_t*>(s)), _mm256_set1_epi16(32));
        const __m256i hm = load32(w), qs0 = load32(w + 32), qs1 = load32(w + 64);
        const BlockQ8A* x = in.x;
        const __m256i t =
            tree16(product<0>(qs0, hm, x), product<1>(qs0, hm, x), product<2>(qs0, hm, x), product<3>(qs0, hm, x),
                   product<4>(qs1, hm, x), product<5>(qs1, hm, x), product<6>(qs1, hm, x), product<7>(qs1, hm, x));
        const __m256i main = _mm256_madd_epi16(group_pairs(t), sc);
        const __m256i offset = _mm256_madd_epi16(load32(in.g16), sc);
        const __m256i i1 = _mm256_sub_epi32(main, _mm256_slli_epi32(offset, 2));
        acc = lane_fma(acc, _mm256_set1_ps(_cvtsh_ss(uint16_t(blocks::ld16(w + 108)))), in.xd, i1);
    }
};

constexpr int8_t kIq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// IQ4_XS: values up to 127 in magnitude, so the sums go to int32 straight after maddubs.
struct KIQ4_XS {
    using Fmt = blocks::IQ4_XS;
    static constexpr int64_t kGroupBytes = Fmt::kBytes;
    static constexpr bool kGroupSums = false;
    ARBOR_AVX2 static void group(const uint8_t* w, const GroupInput& in, __m256& acc) {
        const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4nl)));
        __m256i p[8];
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k)
            p[k] = dot_s8s8(_mm256_shuffle_epi8(table, nibbles32(w + 8 + 16 * k)), load32(in.x[k].q));
        const __m256i sums = hsum8(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
        // ls = 4 bits at 4*sb of scales_l | 2 bits at 2*sb of scales_h << 4.
        const __m256i lo = _mm256_srlv_epi32(_mm256_set1_epi32(int(blocks::ld32(w + 4))),
                                             _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28));
        const __m256i hi = _mm256_srlv_epi32(_mm256_set1_epi32(int(blocks::ld16(w + 2))),
                                             _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14));
        const __m256i ls = _mm256_or_si256(_mm256_and_si256(lo, _mm256_set1_epi32(15)),
                                           _mm256_slli_epi32(_mm256_and_si256(hi, _mm256_set1_epi32(3)), 4));
        const __m256i i1 = _mm256_mullo_epi32(sums, _mm256_sub_epi32(ls, _mm256_set1_epi32(32)));
        acc = lane_fma(acc, _mm256_set1_ps(_cvtsh_ss(uint16_t(blocks::ld16(w)))), in.xd, i1);
    }
};

}  // namespace

// Returns false when t is not one of this file's formats.
bool dot_rows_kquant(TensorType t, const uint8_t* w, size_t stride, int64_t rows, const BlockQ8A* xq, int64_t n,
                     float* out) {
    switch (t) {
        case TensorType::Q2_K: dot_rows_grouped<KQ2_K>(w, stride, rows, xq, n, out); return true;
        case TensorType::Q3_K: dot_rows_grouped<KQ3_K>(w, stride, rows, xq, n, out); return true;
        case TensorType::Q4_K: dot_rows_grouped<KQ4_K>(w, stride, rows, xq, n, out); return true;
        case TensorType::Q5_K: dot_rows_grouped<KQ5_K>(w, stride, rows, xq, n, out); return true;
        case TensorType::Q6_K: dot_rows_grouped<KQ6_K>(w, stride, rows, xq, n, out); return true;
        case TensorType::IQ4_XS: dot_rows_grouped<KIQ4_XS>(w, stride, rows, xq, n, out); return true;
        default: return false;
    }
}

}  // namespace arbor::quant::avx2

#endif  // ARBOR_X86
