// The AVX2+FMA kernels: the same IEEE operations as the scalar ones, eight lanes at a time.
//
// dot: lanes 0..31 of the contract are four __m256 accumulators (lanes 0-7, 8-15, 16-23,
// 24-31), each fed one fused multiply-add per 32 elements in increasing order; elements past
// the last whole 32 go to their lanes afterwards (they are the last terms of those lanes). The
// tree is combined in registers in the contract's order: s=16 adds accumulator 2 into 0 and 3
// into 1, s=8 adds 1 into 0, then the halves, pairs and neighbours of one register.
// exp: numerics' exp_f step for step (round-to-nearest-even, fnmadd = fmaf(-n, c, x),
// Horner fmadd, exact 2^n scaling, then the NaN, overflow and flush cases blended in).
#include "model/cpu_kernels.hpp"

#include "model/numerics.hpp"

#include <immintrin.h>

#include <cstring>

#define ARBOR_AVX2 __attribute__((target("avx2,fma,f16c")))

namespace arbor::cpu {
namespace {

using num::kAttnChunk;

ARBOR_AVX2 inline __m256 load8(const uint8_t* p, KvType t) {
    if (t == KvType::F32) return _mm256_loadu_ps(reinterpret_cast<const float*>(p));
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

ARBOR_AVX2 inline float kv_at(const uint8_t* row, KvType t, int d) {
    if (t == KvType::F32) {
        float f;
        std::memcpy(&f, row + 4 * d, 4);
        return f;
    }
    return quant::blocks::fp16_to_f32(quant::blocks::ld16(row + 2 * d));
}

// The contract's tree over lanes 0..31 held in a0..a3.
ARBOR_AVX2 inline float tree(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
    a0 = _mm256_add_ps(a0, a2);  // s = 16
    a1 = _mm256_add_ps(a1, a3);
    a0 = _mm256_add_ps(a0, a1);  // s = 8
    __m128 v = _mm_add_ps(_mm256_castps256_ps128(a0), _mm256_extractf128_ps(a0, 1));  // s = 4
    v = _mm_add_ps(v, _mm_movehl_ps(v, v));                                           // s = 2
    v = _mm_add_ss(v, _mm_shuffle_ps(v, v, 1));                                       // s = 1
    return _mm_cvtss_f32(v);
}

ARBOR_AVX2 float dot_avx2(const float* a, const float* b, int n) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    const int n32 = n & ~31;
    for (int i = 0; i < n32; i += 32) {
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), a0);
        a1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), a1);
        a2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), a2);
        a3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), a3);
    }
    if (n32 == n) return tree(a0, a1, a2, a3);
    alignas(32) float lanes[32];
    _mm256_store_ps(lanes, a0);
    _mm256_store_ps(lanes + 8, a1);
    _mm256_store_ps(lanes + 16, a2);
    _mm256_store_ps(lanes + 24, a3);
    for (int i = n32; i < n; ++i) lanes[i & 31] = fmaf(a[i], b[i], lanes[i & 31]);
    return num::combine_lanes(lanes);
}

// Scores for NQ query heads at once (each K row is loaded once); hd a multiple of 32 (the caller checks).
template <int NQ>
ARBOR_AVX2 void scores_group(const float* q, int q_stride, const uint8_t* k, size_t k_stride, KvType t, int n, int hd,
                             float scale, float* s) {
    const size_t eb = t == KvType::F32 ? 4 : 2;
    for (int j = 0; j < n; ++j) {
        const uint8_t* row = k + size_t(j) * k_stride;
        __m256 acc[NQ][4];
        for (int h = 0; h < NQ; ++h)
            for (int l = 0; l < 4; ++l) acc[h][l] = _mm256_setzero_ps();
        for (int i = 0; i < hd; i += 32) {
            for (int l = 0; l < 4; ++l) {
                const __m256 kv = load8(row + size_t(i + 8 * l) * eb, t);
                for (int h = 0; h < NQ; ++h)
                    acc[h][l] = _mm256_fmadd_ps(_mm256_loadu_ps(q + h * q_stride + i + 8 * l), kv, acc[h][l]);
            }
        }
        for (int h = 0; h < NQ; ++h)
            s[h * kAttnChunk + j] = num::mul_rn(tree(acc[h][0], acc[h][1], acc[h][2], acc[h][3]), scale);
    }
}

ARBOR_AVX2 void scores_avx2(const float* q, int nq, int q_stride, const uint8_t* k, size_t k_stride, KvType t, int n,
                            int hd, float scale, float* s) {
    if (hd % 32 != 0) {
        scalar_kernels().scores(q, nq, q_stride, k, k_stride, t, n, hd, scale, s);
        return;
    }
    int h = 0;
    for (; h + 2 <= nq; h += 2) scores_group<2>(q + h * q_stride, q_stride, k, k_stride, t, n, hd, scale, s + h * kAttnChunk);
    for (; h < nq; ++h) scores_group<1>(q + h * q_stride, q_stride, k, k_stride, t, n, hd, scale, s + h * kAttnChunk);
}

ARBOR_AVX2 inline __m256 exp8(__m256 x) {
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896340736f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693145751953125f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.42860682030941723212e-6f), r);
    __m256 p = _mm256_set1_ps(1.98412698412698412698e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.38888888888888888889e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.33333333333333333333e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.16666666666666666667e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.66666666666666666667e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    const __m256 y = _mm256_add_ps(_mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r), _mm256_set1_ps(1.0f));
    __m256i ni = _mm256_cvtps_epi32(n);
    const __m256i big = _mm256_cmpgt_epi32(ni, _mm256_set1_epi32(127));
    ni = _mm256_min_epi32(ni, _mm256_set1_epi32(127));
    const __m256 pow2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(ni, _mm256_set1_epi32(127)), 23));
    const __m256 extra = _mm256_blendv_ps(_mm256_set1_ps(1.0f), _mm256_set1_ps(2.0f), _mm256_castsi256_ps(big));
    __m256 res = _mm256_mul_ps(_mm256_mul_ps(y, pow2), extra);
    res = _mm256_blendv_ps(res, _mm256_setzero_ps(), _mm256_cmp_ps(x, _mm256_set1_ps(-87.0f), _CMP_LT_OQ));
    res = _mm256_blendv_ps(res, _mm256_castsi256_ps(_mm256_set1_epi32(0x7f800000)),
                           _mm256_cmp_ps(x, _mm256_set1_ps(88.72283935546875f), _CMP_GT_OQ));
    return _mm256_blendv_ps(res, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

ARBOR_AVX2 float exp_sum_avx2(float* s, int n, float m) {
    const __m256 mv = _mm256_set1_ps(m);
    int j = 0;
    for (; j + 8 <= n; j += 8) _mm256_storeu_ps(s + j, exp8(_mm256_sub_ps(_mm256_loadu_ps(s + j), mv)));
    for (; j < n; ++j) s[j] = num::exp_f(num::sub_rn(s[j], m));
    float l = 0.0f;
    for (j = 0; j < n; ++j) l = num::add_rn(l, s[j]);
    return l;
}

template <int NV>
ARBOR_AVX2 void wsum_block(const float* e, int n, const uint8_t* v, size_t v_stride, KvType t, float* o) {
    __m256 acc[NV];
    for (int b = 0; b < NV; ++b) acc[b] = _mm256_setzero_ps();
    const size_t eb = t == KvType::F32 ? 4 : 2;
    for (int j = 0; j < n; ++j) {
        const __m256 ej = _mm256_set1_ps(e[j]);
        const uint8_t* row = v + size_t(j) * v_stride;
        for (int b = 0; b < NV; ++b) acc[b] = _mm256_fmadd_ps(ej, load8(row + size_t(8 * b) * eb, t), acc[b]);
    }
    for (int b = 0; b < NV; ++b) _mm256_storeu_ps(o + 8 * b, acc[b]);
}

ARBOR_AVX2 void weighted_sum_avx2(const float* e, int n, const uint8_t* v, size_t v_stride, KvType t, int dv, float* o) {
    const size_t eb = t == KvType::F32 ? 4 : 2;
    int d = 0;
    for (; d + 64 <= dv; d += 64) wsum_block<8>(e, n, v + size_t(d) * eb, v_stride, t, o + d);
    for (; d + 8 <= dv; d += 8) wsum_block<1>(e, n, v + size_t(d) * eb, v_stride, t, o + d);
    for (; d < dv; ++d) {
        float a = 0.0f;
        for (int j = 0; j < n; ++j) a = fmaf(e[j], kv_at(v + size_t(j) * v_stride, t, d), a);
        o[d] = a;
    }
}

ARBOR_AVX2 void scale_mul_avx2(const float* x, float scale, const float* w, int n, float* y) {
    const __m256 sv = _mm256_set1_ps(scale);
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), sv), _mm256_loadu_ps(w + i)));
    for (; i < n; ++i) y[i] = num::mul_rn(num::mul_rn(x[i], scale), w[i]);
}

// silu(g) * u = (g / (1 + exp(-g))) * u; the negation is exact.
ARBOR_AVX2 void silu_mul_avx2(const float* g, const float* u, int n, float* h) {
    const __m256 sign = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.0f);
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 x = _mm256_loadu_ps(g + i);
        const __m256 s = _mm256_div_ps(x, _mm256_add_ps(one, exp8(_mm256_xor_ps(x, sign))));
        _mm256_storeu_ps(h + i, _mm256_mul_ps(s, _mm256_loadu_ps(u + i)));
    }
    for (; i < n; ++i) h[i] = num::mul_rn(num::silu(g[i]), u[i]);
}

}  // namespace

const Kernels& avx2_kernels() {
    static const Kernels k{"avx2", dot_avx2, scores_avx2, exp_sum_avx2, weighted_sum_avx2, scale_mul_avx2, silu_mul_avx2};
    return k;
}

}  // namespace arbor::cpu
