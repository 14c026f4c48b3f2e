// The scalar reference implementation of the row-dot contract (arbor/quant.hpp): straight
// calls of the shared element functions, lane by lane, in the contract's order.
#include "dot_kernels.hpp"
#include "format_dispatch.hpp"

#include <limits>

namespace arbor::quant::detail {
namespace {

using namespace blocks;

template <class Load>
float dot_float_row(const uint8_t* w, const float* x, int64_t n, Load load) {
    float acc[32] = {};
    for (int64_t i = 0; i < n; ++i) acc[i % 32] = fmaf(load(w, i), x[i], acc[i % 32]);
    return combine_lanes(acc);
}

float dot_f32(const uint8_t* w, int64_t i) {
    float v;
    memcpy(&v, w + 4 * i, 4);
    return v;
}
float dot_f16(const uint8_t* w, int64_t i) { return fp16_to_f32(ld16(w + 2 * i)); }
float dot_bf16(const uint8_t* w, int64_t i) { return bf16_to_f32(ld16(w + 2 * i)); }

template <class Fmt>
float dot_quant_row(const uint8_t* w, const BlockQ8A* xq, int64_t n) {
    float acc[32] = {};
    const int64_t subs = n / 32;
    for (int64_t b = 0; b < subs; ++b) {
        const uint8_t* blk = w + (b / Fmt::kSubs) * Fmt::kBytes;
        const SubTerms t = Fmt::terms(blk, int(b % Fmt::kSubs), xq[b].q, xq[b].sum);
        acc[b % 32] = lane_accumulate<Fmt::kHasMin>(acc[b % 32], t, xq[b].d);
    }
    return combine_lanes(acc);
}

}  // namespace

void dot_rows_scalar(TensorType t, const uint8_t* w, size_t row_stride, int64_t rows, const float* x,
                     const BlockQ8A* xq, int64_t n, float* out) {
    for (int64_t r = 0; r < rows; ++r) {
        const uint8_t* row = w + size_t(r) * row_stride;
        switch (t) {
            case TensorType::F32: out[r] = dot_float_row(row, x, n, dot_f32); continue;
            case TensorType::F16: out[r] = dot_float_row(row, x, n, dot_f16); continue;
            case TensorType::BF16: out[r] = dot_float_row(row, x, n, dot_bf16); continue;
            default: break;
        }
        float v = std::numeric_limits<float>::quiet_NaN();
        visit_block_format(t, [&](auto fmt) { v = dot_quant_row<decltype(fmt)>(row, xq, n); });
        out[r] = v;
    }
}

void quantize_q8a_scalar(const float* x, BlockQ8A* out, int64_t n) {
    for (int64_t b = 0; b < n / 32; ++b) out[b].d = q8a_quantize32(x + 32 * b, out[b].q, &out[b].sum);
}

}  // namespace arbor::quant::detail
