// AVX2 entry points: float-weight row dots (F32, F16, BF16) and the dispatch to the quantized
// kernels (dot_avx2_q32.cpp, dot_avx2_kquant.cpp).
//
// Float rows: element i goes to lane i % 32, so a chunk of 32 elements is four __m256
// accumulators updated with one vfmadd each, the same fmaf per element as the scalar path; the
// tail (n % 32 elements) and the tree are the scalar code.
#include "avx2_common.hpp"
#include "dot_kernels.hpp"
#include "format_dispatch.hpp"

#include <limits>

#ifndef ARBOR_X86

namespace arbor::quant::detail {
void dot_rows_avx2(TensorType t, const uint8_t* w, size_t row_stride, int64_t rows, const float* x, const BlockQ8A* xq,
                   int64_t n, float* out) {
    dot_rows_scalar(t, w, row_stride, rows, x, xq, n, out);
}
}  // namespace arbor::quant::detail

#else

namespace arbor::quant::avx2 {

bool dot_rows_q32(TensorType t, const uint8_t* w, size_t stride, int64_t rows, const BlockQ8A* xq, int64_t n,
                  float* out);
bool dot_rows_kquant(TensorType t, const uint8_t* w, size_t stride, int64_t rows, const BlockQ8A* xq, int64_t n,
                     float* out);

namespace {

struct LoadF32 {
    static constexpr int kSize = 4;
    ARBOR_AVX2 static __m256 load8(const uint8_t* p) { return _mm256_loadu_ps(reinterpret_cast<const float*>(p)); }
    static float load1(const uint8_t* p) {
        float v;
        memcpy(&v, p, 4);
        return v;
    }
};
struct LoadF16 {
    static constexpr int kSize = 2;
    ARBOR_AVX2 static __m256 load8(const uint8_t* p) {
        return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    }
    static float load1(const uint8_t* p) { return blocks::fp16_to_f32(blocks::ld16(p)); }
};
struct LoadBF16 {
    static constexpr int kSize = 2;
    ARBOR_AVX2 static __m256 load8(const uint8_t* p) {
        const __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
        return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
    }
    static float load1(const uint8_t* p) { return blocks::bf16_to_f32(blocks::ld16(p)); }
};

template <class L>
ARBOR_AVX2 float dot_float_row(const uint8_t* w, const float* x, int64_t n) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    const int64_t full = n / 32 * 32;
    for (int64_t i = 0; i < full; i += 32) {
        a0 = _mm256_fmadd_ps(L::load8(w + (i + 0) * L::kSize), _mm256_loadu_ps(x + i + 0), a0);
        a1 = _mm256_fmadd_ps(L::load8(w + (i + 8) * L::kSize), _mm256_loadu_ps(x + i + 8), a1);
        a2 = _mm256_fmadd_ps(L::load8(w + (i + 16) * L::kSize), _mm256_loadu_ps(x + i + 16), a2);
        a3 = _mm256_fmadd_ps(L::load8(w + (i + 24) * L::kSize), _mm256_loadu_ps(x + i + 24), a3);
    }
    alignas(32) float lanes[32];
    _mm256_store_ps(lanes, a0);
    _mm256_store_ps(lanes + 8, a1);
    _mm256_store_ps(lanes + 16, a2);
    _mm256_store_ps(lanes + 24, a3);
    for (int64_t i = full; i < n; ++i) lanes[i - full] = fmaf(L::load1(w + i * L::kSize), x[i], lanes[i - full]);
    return blocks::combine_lanes(lanes);
}

template <class L>
ARBOR_AVX2 void dot_float_rows(const uint8_t* w, size_t stride, int64_t rows, const float* x, int64_t n, float* out) {
    for (int64_t r = 0; r < rows; ++r) out[r] = dot_float_row<L>(w + size_t(r) * stride, x, n);
}

}  // namespace
}  // namespace arbor::quant::avx2

namespace arbor::quant::detail {

void dot_rows_avx2(TensorType t, const uint8_t* w, size_t row_stride, int64_t rows, const float* x, const BlockQ8A* xq,
                   int64_t n, float* out) {
    switch (t) {
        case TensorType::F32: avx2::dot_float_rows<avx2::LoadF32>(w, row_stride, rows, x, n, out); return;
        case TensorType::F16: avx2::dot_float_rows<avx2::LoadF16>(w, row_stride, rows, x, n, out); return;
        case TensorType::BF16: avx2::dot_float_rows<avx2::LoadBF16>(w, row_stride, rows, x, n, out); return;
        default: break;
    }
    if (avx2::dot_rows_q32(t, w, row_stride, rows, xq, n, out)) return;
    if (avx2::dot_rows_kquant(t, w, row_stride, rows, xq, n, out)) return;
    for (int64_t r = 0; r < rows; ++r) out[r] = std::numeric_limits<float>::quiet_NaN();
}

}  // namespace arbor::quant::detail

#endif  // ARBOR_X86
