// AVX2 quantization of activations to Q8A, bit-identical to blocks::q8a_quantize32:
// the max is exact in any order (NaNs ignored as in the scalar loop: vmaxps returns its second
// operand when the first is NaN), d = amax / 127.0f is the same scalar division, and each q is
// an IEEE division rounded to nearest-even (vroundps), clamped, NaN -> 0.
#include "avx2_common.hpp"
#include "dot_kernels.hpp"

namespace arbor::quant::detail {

#ifndef ARBOR_X86
void quantize_q8a_avx2(const float* x, BlockQ8A* out, int64_t n) { quantize_q8a_scalar(x, out, n); }
#else
ARBOR_AVX2 void quantize_q8a_avx2(const float* x, BlockQ8A* out, int64_t n) {
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const __m256 lo = _mm256_set1_ps(-127.0f), hi = _mm256_set1_ps(127.0f);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (int64_t b = 0; b < n / 32; ++b) {
        const float* p = x + 32 * b;
        __m256 v[4];
        __m256 m = _mm256_setzero_ps();
        for (int k = 0; k < 4; ++k) {
            v[k] = _mm256_loadu_ps(p + 8 * k);
            m = _mm256_max_ps(_mm256_and_ps(v[k], abs_mask), m);
        }
        __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
        m4 = _mm_max_ss(m4, _mm_shuffle_ps(m4, m4, 1));
        const float d = _mm_cvtss_f32(m4) / 127.0f;
        BlockQ8A& o = out[b];
        o.d = d;
        if (d == 0.0f) {
            memset(o.q, 0, 32);
            o.sum = 0;
            continue;
        }
        const __m256 dv = _mm256_set1_ps(d);
        __m256i q[4];
        for (int k = 0; k < 4; ++k) {
            const __m256 r = _mm256_round_ps(_mm256_div_ps(v[k], dv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            const __m256 ordered = _mm256_cmp_ps(r, r, _CMP_ORD_Q);
            const __m256 c = _mm256_and_ps(_mm256_min_ps(_mm256_max_ps(r, lo), hi), ordered);
            q[k] = _mm256_cvtps_epi32(c);
        }
        const __m256i s = _mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3]));
        __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
        s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, _MM_SHUFFLE(1, 0, 3, 2)));
        s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, _MM_SHUFFLE(2, 3, 0, 1)));
        o.sum = _mm_cvtsi128_si32(s4);
        const __m256i b16 = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(o.q), _mm256_permutevar8x32_epi32(b16, order));
    }
}

#endif  // ARBOR_X86

}  // namespace arbor::quant::detail
