// What the expert-major row dots need in registers, outside the megakernel: one small kernel per
// format and shape that runs warp_dot_quant_rows_acts<Fmt, R, A> (R rows against A activation
// rows, the dots of mk_expert_gated_ffn_major_pairs<NR>: R = 2 NR, A = 2), warp_dot_quant_rows<Fmt, 4>
// (kernel rows_regs, the four-row dot of gpu-next24's two-row gated item, since taken out) or warp_dot_quant_row_groups<Fmt, 2 S, S> (kernel slot_regs) under the megakernel's
// launch bounds (256 threads, two blocks an SM: 128 registers). ptxas -v reports each kernel's
// registers and spills; scripts/dot-regs.sh compiles it and prints the table. Not built by CMake,
// not part of the engine: a measurement of the compiler, which needs no GPU.
#include "mk_dot.hpp"

namespace arbor::gpu {

template <class Fmt, int R, int A>
__global__ void __launch_bounds__(256, 2)
    dot_regs(const uint8_t* const* w, const quant::BlockQ8A* const* xq, long long n, float* out) {
    const uint8_t* wr[R];
#pragma unroll
    for (int k = 0; k < R; ++k) wr[k] = w[k];
    const quant::BlockQ8A* x[A];
#pragma unroll
    for (int k = 0; k < A; ++k) x[k] = xq[k];
    float v[R * A];
    warp_dot_quant_rows_acts<Fmt, R, A>(wr, x, n, static_cast<int>(threadIdx.x) & 31, v);
#pragma unroll
    for (int k = 0; k < R * A; ++k) out[threadIdx.x * R * A + k] = v[k];
}

// The decode expert down's slot pairs (ARBOR_MK_DOWN_SLOT_PAIRS): R = 2S rows, row 2s and 2s + 1
// against activation s (warp_dot_quant_row_groups<Fmt, 2 S, S>; A = S in the table).
template <class Fmt, int R, int A>
__global__ void __launch_bounds__(256, 2)
    slot_regs(const uint8_t* const* w, const quant::BlockQ8A* const* xq, long long n, float* out) {
    static_assert(R == 2 * A, "two rows a slot");
    const uint8_t* wr[R];
#pragma unroll
    for (int k = 0; k < R; ++k) wr[k] = w[k];
    const quant::BlockQ8A* x[A];
#pragma unroll
    for (int k = 0; k < A; ++k) x[k] = xq[k];
    float v[R];
    warp_dot_quant_row_groups<Fmt, R, A>(wr, x, n, static_cast<int>(threadIdx.x) & 31, v);
#pragma unroll
    for (int k = 0; k < R; ++k) out[threadIdx.x * R + k] = v[k];
}

// A four-row dot against one activation (gpu-next24's two-row gated item, since taken out) (warp_dot_quant_rows<Fmt, R>; A = 1
// in the table).
template <class Fmt, int R, int A>
__global__ void __launch_bounds__(256, 2)
    rows_regs(const uint8_t* const* w, const quant::BlockQ8A* const* xq, long long n, float* out) {
    static_assert(A == 1, "one activation");
    const uint8_t* wr[R];
#pragma unroll
    for (int k = 0; k < R; ++k) wr[k] = w[k];
    float v[R];
    warp_dot_quant_rows<Fmt, R>(wr, xq[0], n, static_cast<int>(threadIdx.x) & 31, v);
#pragma unroll
    for (int k = 0; k < R; ++k) out[threadIdx.x * R + k] = v[k];
}

#define ARBOR_DOT_REGS(F)                                                                                       \
    template __global__ void dot_regs<quant::blocks::F, 2, 2>(const uint8_t* const*, const quant::BlockQ8A* const*, \
                                                              long long, float*);                               \
    template __global__ void dot_regs<quant::blocks::F, 4, 2>(const uint8_t* const*, const quant::BlockQ8A* const*, \
                                                              long long, float*);                               \
    template __global__ void dot_regs<quant::blocks::F, 4, 1>(const uint8_t* const*, const quant::BlockQ8A* const*, \
                                                              long long, float*);                               \
    template __global__ void slot_regs<quant::blocks::F, 4, 2>(const uint8_t* const*, const quant::BlockQ8A* const*, \
                                                               long long, float*);                              \
    template __global__ void rows_regs<quant::blocks::F, 4, 1>(const uint8_t* const*, const quant::BlockQ8A* const*, \
                                                               long long, float*);
ARBOR_DOT_REGS(Q4_0)
ARBOR_DOT_REGS(Q8_0)
ARBOR_DOT_REGS(Q4_K)
ARBOR_DOT_REGS(Q5_K)
ARBOR_DOT_REGS(Q6_K)
ARBOR_DOT_REGS(IQ4_XS)

}  // namespace arbor::gpu
