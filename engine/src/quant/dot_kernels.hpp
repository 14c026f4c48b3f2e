// The per-ISA implementations behind arbor/quant.hpp's dot_row, dot_rows and quantize_q8a.
// Each gives the same bits; dot_row.cpp picks one at run time.
#pragma once

#include <arbor/quant.hpp>

#include <cstddef>
#include <cstdint>

namespace arbor::quant::detail {

// Scalar reference (any CPU). Preconditions as in quant.hpp; a non-decodable type gives NaN.
void dot_rows_scalar(TensorType t, const uint8_t* w, size_t row_stride, int64_t rows, const float* x,
                     const BlockQ8A* xq, int64_t n, float* out);
void quantize_q8a_scalar(const float* x, BlockQ8A* out, int64_t n);

// AVX2 + FMA + F16C. Call only where the CPU has them (cpu_has_avx2()).
void dot_rows_avx2(TensorType t, const uint8_t* w, size_t row_stride, int64_t rows, const float* x, const BlockQ8A* xq,
                   int64_t n, float* out);
void quantize_q8a_avx2(const float* x, BlockQ8A* out, int64_t n);

bool cpu_has_avx2();

}  // namespace arbor::quant::detail
