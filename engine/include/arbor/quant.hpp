// Quantized tensor formats: decoding to float32, the Q8A activation format, row dot products
// against quantized weights, and round-to-nearest quantizers for the GGUF writer.
//
// DECODING. dequantize() reproduces ggml's reference decoder bit for bit for F32, F16, BF16,
// Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS and MXFP4: the same
// float operations in the same order (Q4_K: d1 = d*sc and m1 = dmin*m as float products, then
// y = d1*q - m1; Q6_K: y = (d*sc)*q; MXFP4: y = kv[q] * e8m0_half(e) with ggml's int8 table).
// F16 -> F32 is exact, subnormals included; a signalling NaN comes out quiet with its payload
// kept (as the F16C instruction converts). BF16 -> F32 is a 16-bit shift, NaNs untouched.
//
// ACTIVATIONS (Q8A). Quantized weights are dotted against activations quantized per 32 values:
//   amax = max |x_i| (NaNs ignored); d = amax / 127.0f;
//   d == 0: every q_i = 0; otherwise q_i = (int)rintf(x_i / d) (IEEE division, ties to even),
//   clamped to [-127, 127], NaN -> 0; sum = Σ q_i (exact int32).
//
// ROW DOT (the numerics contract; the GPU kernels reproduce these bits). The result is defined
// by 32 float lanes acc[0..31] = +0, filled in a fixed order, then combined by a fixed tree:
//   for s = 16, 8, 4, 2, 1: acc[j] = acc[j] + acc[j+s] for j < s; the result is acc[0].
//  * Float weights (F32, F16, BF16) use the float activations x. Element i goes to lane i % 32,
//    in increasing i: acc[i%32] = fmaf(w_i, x_i, acc[i%32]). Any n.
//  * Quantized weights use xq. The row is cut into 32-element sub-blocks b = 0 .. n/32-1;
//    sub-block b goes to lane b % 32, in increasing b. From the weight's integer codes and the
//    Q8A codes a_i each sub-block forms exact int32 sums I1 (and I2 for types with a min term)
//    and float factors A = (weight scale) * xq.d, B = (weight min term, sign included) * xq.d:
//        acc = fmaf(A, (float)I1, acc);   then, min types only,   acc = fmaf(B, (float)I2, acc);
//      Q4_0    I1 = Σ(q-8)·a                               A = d*xd
//      Q4_1    I1 = Σq·a,  I2 = xq.sum                      A = d*xd,  B = m*xd
//      Q5_0    I1 = Σ(q-16)·a (5-bit q)                     A = d*xd
//      Q5_1    I1 = Σq·a,  I2 = xq.sum (5-bit q)            A = d*xd,  B = m*xd
//      Q8_0    I1 = Σq·a                                    A = d*xd
//      IQ4_NL  I1 = Σkv[q]·a                                A = d*xd
//      IQ4_XS  I1 = (ls-32)·Σkv[q]·a                        A = d*xd
//      MXFP4   I1 = Σkv[q]·a (ggml's int8 table)            A = e8m0_half(e)*xd
//      Q4_K, Q5_K  I1 = sc·Σq·a,  I2 = m·Σa                 A = d*xd,  B = -(dmin*xd)
//      Q2_K    I1 = sc0·Σ_{first 16}q·a + sc1·Σ_{last 16}q·a,
//              I2 = m0·Σ_{first 16}a + m1·Σ_{last 16}a      A = d*xd,  B = -(dmin*xd)
//      Q3_K    I1 = Σ over the two 16-groups (sc-32)·Σq·a, q in -4..3     A = d*xd
//      Q6_K    I1 = sc0·Σ(q-32)·a + sc1·Σ(q-32)·a over the two 16-groups   A = d*xd
//    d and dmin are the fp16 fields converted to float. Where the reference decoder forms the
//    float product d*sc, the dot keeps the sub-scale inside the integer I1 instead: that is
//    intentional, the integer part is exact, so every implementation that follows these steps
//    (scalar, AVX2, GPU) gets the same bits whatever order it sums the integers in.
//
// The per-block element and combine functions behind all of this are the inline ARBOR_HD
// functions of engine/src/quant/quant_blocks.hpp, shared with the GPU kernels.
//
// ISAs. dot_row() and quantize_q8a() pick the best instruction set at run time (AVX2+FMA+F16C
// when the CPU has them, scalar otherwise); every ISA gives the same bits. The *_isa variants
// force one, for tests and benchmarks.
#pragma once

#include <arbor/result.hpp>
#include <arbor/tensor_types.hpp>

#include <cstddef>
#include <cstdint>

namespace arbor::quant {

// One block of 32 quantized activations (see the contract above). Codes are in [-127, 127],
// as quantize_q8a makes them; blocks built by hand with -128 give unspecified results.
struct BlockQ8A {
    float d;
    int32_t sum;
    int8_t q[32];
};
static_assert(sizeof(BlockQ8A) == 40);

enum class Isa { Scalar, Avx2 };

// The ISA the *_auto entry points use on this CPU, and whether `isa` can run here.
Isa best_isa();
bool isa_supported(Isa isa);
const char* isa_name(Isa isa);

// True for the types listed above (the ones dequantize and dot_row take).
bool decodable(TensorType t);
// True when dot_row reads the Q8A activations (quantized weights) rather than floats.
bool uses_q8a(TensorType t);
// Bytes of a row of n elements; an Error when n is not a multiple of the block size or the type
// is unknown.
Result<size_t> row_bytes(TensorType t, int64_t n);

// Decodes n elements (a multiple of the type's block size) from src into dst.
Status dequantize(TensorType t, const void* src, float* dst, int64_t n);

// Quantizes n activations (a multiple of 32) into n/32 blocks.
void quantize_q8a(const float* x, BlockQ8A* out, int64_t n);
void quantize_q8a_isa(Isa isa, const float* x, BlockQ8A* out, int64_t n);

// Dot product of one weight row (n elements in type t) with the activations. Float types read
// x, quantized types read xq (n/32 blocks); the other pointer may be null. A type that is not
// decodable, or an n that is negative or not whole blocks, gives NaN (check once per tensor
// with decodable() and row_bytes()). An Isa the CPU lacks runs scalar.
float dot_row(TensorType t, const void* w_row, const float* x, const BlockQ8A* xq, int64_t n);
float dot_row_isa(Isa isa, TensorType t, const void* w_row, const float* x, const BlockQ8A* xq, int64_t n);

// dot_row over `rows` rows, row r at w + r * row_stride: out[r] = dot_row(row r), same bits.
// This is the matrix-vector entry point: the activations' scales, sums and 16-element group
// sums are gathered once per call rather than once per row, and rows are streamed with
// prefetching. Calls may run concurrently on disjoint outputs (no shared state).
void dot_rows(TensorType t, const void* w, size_t row_stride, int64_t rows, const float* x, const BlockQ8A* xq,
              int64_t n, float* out);
void dot_rows_isa(Isa isa, TensorType t, const void* w, size_t row_stride, int64_t rows, const float* x,
                  const BlockQ8A* xq, int64_t n, float* out);

// Encodes n floats (a multiple of the block size) as type t, round-to-nearest (not ggml's
// search-based quantizer, but decodable by any GGUF reader). Supported: F32, F16, BF16 (round to
// nearest even), Q8_0, Q4_K, Q6_K, IQ4_XS. Deterministic: the same input gives the same bytes.
Status quantize(TensorType t, const float* src, void* dst, int64_t n);

}  // namespace arbor::quant
