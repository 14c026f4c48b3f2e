// Run-time choice of the instruction set behind dot_row, dot_rows and quantize_q8a. Every ISA
// computes the same bits, so the choice only changes speed.
#include "dot_kernels.hpp"
#include "format_dispatch.hpp"

#include <limits>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace arbor::quant {
namespace detail {

// AVX2, FMA and F16C in the CPU, and YMM state enabled by the OS (XGETBV), read with CPUID.
bool cpu_has_avx2() {
#if defined(__x86_64__) || defined(__i386__)
    static const bool has = [] {
        unsigned a = 0, b = 0, c = 0, d = 0;
        if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
        const bool fma = c & (1u << 12), osxsave = c & (1u << 27), avx = c & (1u << 28), f16c = c & (1u << 29);
        if (!(fma && osxsave && avx && f16c)) return false;
        unsigned xlo = 0, xhi = 0;
        __asm__ volatile("xgetbv" : "=a"(xlo), "=d"(xhi) : "c"(0));
        if ((xlo & 6u) != 6u) return false;  // XMM and YMM state saved by the OS
        if (__get_cpuid_max(0, nullptr) < 7) return false;
        __cpuid_count(7, 0, a, b, c, d);
        return (b & (1u << 5)) != 0;  // AVX2
    }();
    return has;
#else
    return false;
#endif
}

}  // namespace detail

Isa best_isa() { return detail::cpu_has_avx2() ? Isa::Avx2 : Isa::Scalar; }

bool isa_supported(Isa isa) { return isa == Isa::Scalar || (isa == Isa::Avx2 && detail::cpu_has_avx2()); }

const char* isa_name(Isa isa) { return isa == Isa::Avx2 ? "avx2" : "scalar"; }

void dot_rows_isa(Isa isa, TensorType t, const void* w, size_t row_stride, int64_t rows, const float* x,
                  const BlockQ8A* xq, int64_t n, float* out) {
    const auto* wb = static_cast<const uint8_t*>(w);
    int64_t block = is_float_type(t) ? 1 : 0;
    visit_block_format(t, [&](auto fmt) { block = decltype(fmt)::kElems; });
    if (block == 0 || n < 0 || n % block != 0) {  // not decodable, or a row that is not whole blocks
        for (int64_t r = 0; r < rows; ++r) out[r] = std::numeric_limits<float>::quiet_NaN();
        return;
    }
    if (isa == Isa::Avx2 && detail::cpu_has_avx2())
        detail::dot_rows_avx2(t, wb, row_stride, rows, x, xq, n, out);
    else
        detail::dot_rows_scalar(t, wb, row_stride, rows, x, xq, n, out);
}

void dot_rows(TensorType t, const void* w, size_t row_stride, int64_t rows, const float* x, const BlockQ8A* xq,
              int64_t n, float* out) {
    dot_rows_isa(best_isa(), t, w, row_stride, rows, x, xq, n, out);
}

float dot_row_isa(Isa isa, TensorType t, const void* w_row, const float* x, const BlockQ8A* xq, int64_t n) {
    float out;
    dot_rows_isa(isa, t, w_row, 0, 1, x, xq, n, &out);
    return out;
}

float dot_row(TensorType t, const void* w_row, const float* x, const BlockQ8A* xq, int64_t n) {
    return dot_row_isa(best_isa(), t, w_row, x, xq, n);
}

void quantize_q8a_isa(Isa isa, const float* x, BlockQ8A* out, int64_t n) {
    if (isa == Isa::Avx2 && detail::cpu_has_avx2())
        detail::quantize_q8a_avx2(x, out, n);
    else
        detail::quantize_q8a_scalar(x, out, n);
}

void quantize_q8a(const float* x, BlockQ8A* out, int64_t n) { quantize_q8a_isa(best_isa(), x, out, n); }

}  // namespace arbor::quant
