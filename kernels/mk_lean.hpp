// ARBOR_MK_LEAN_DOTS (mk_model.hpp): a one-token pass's row-dot stages run as lean loops.
//
// arbor-gpu-probe (kernels/probe/row_probe.hip) measured the megakernel's own Q4_K row-dot code
// in a kernel of its own at 14 us for qwen3-4b's gated-FFN level, against 25-30 us for the same
// level inside the megakernel (docs/BENCHMARKS.md, gpu-next15, call 4). Inside, every item goes
// through mk_model_item (one function for every op, whose 128 registers spill), reads the stage's
// descriptors again and switches on the op and the row type. Here a stage's descriptors are read
// once, the type is switched on once, and each (format, op) pair is a loop of its own
// (rows_loop, not inlined: its own registers) over the warp's items, calling the same
// warp_dot_quant_rows<Fmt, 2> that warp_dot_row2 calls, with the same rows and outputs as
// mk_qkv_dots, mk_matmul_add, mk_matmul_store, mk_gated_ffn, mk_expert_gated_ffn and
// mk_expert_down_add for token 0.
// So the bits do not change. A lean stage records no item clocks and no expert-FFN phase marks
// (a profile shows its stage times only).
#pragma once

#include "arbor_hip.hpp"
#include "mk_dot.hpp"
#include "mk_model.hpp"
#include "mk_model_ops.hpp"

namespace arbor::gpu {

#if ARBOR_MK_LEAN_DOTS

namespace mkl {

// Rows 2i, 2i + 1 of a matrix (the last item of an odd one: its last row twice).
struct PairRows {
    const uint8_t* data;
    unsigned long long rb;
    long long rows, base;  // base: the matrix's first item (Q/K/V: its rows' offset / 2)
    __device__ void operator()(long long i, const uint8_t** w) const {
        const long long r = 2 * (i - base);
        w[0] = data + static_cast<unsigned long long>(r) * rb;
        w[1] = r + 1 < rows ? w[0] + rb : w[0];
    }
};
// Row i of two matrices (gate and up), or of expert e's (the expert FFN: i = pair n_ff_exp + r).
struct TwinRows {
    const uint8_t* a;
    const uint8_t* b;
    unsigned long long rb, mat;
    const int* route;  // null, or the routes (the expert FFN)
    long long nfe;
    __device__ void operator()(long long i, const uint8_t** w) const {
        unsigned long long off = static_cast<unsigned long long>(i) * rb;
        if (route) off = static_cast<unsigned long long>(route[i / nfe]) * mat + static_cast<unsigned long long>(i % nfe) * rb;
        w[0] = a + off;
        w[1] = b + off;
    }
};

struct QkvOut {  // P.qkv[r], [r + 1] (+ the bias)
    float* qkv;
    const float* bias;
    long long base;
    __device__ void operator()(long long i, float v0, float v1) const {
        const long long r = 2 * i, rr = 2 * (i - base);
        if (bias) v0 = num::add_rn(v0, bias[rr]), v1 = num::add_rn(v1, bias[rr + 1]);
        qkv[r] = v0;
        qkv[r + 1] = v1;
    }
};
struct AddOut {  // X[r] += v0, X[r + 1] += v1
    float* x;
    long long rows;
    __device__ void operator()(long long i, float v0, float v1) const {
        const long long r = 2 * i;
        x[r] = num::add_rn(x[r], v0);
        if (r + 1 < rows) x[r + 1] = num::add_rn(x[r + 1], v1);
    }
};
struct StoreOut {  // out[r], out[r + 1]
    float* out;
    long long rows;
    __device__ void operator()(long long i, float v0, float v1) const {
        const long long r = 2 * i;
        out[r] = v0;
        if (r + 1 < rows) out[r + 1] = v1;
    }
};
struct GatedOut {  // silu(g) * u
    float* h;
    __device__ void operator()(long long i, float g, float u) const { h[i] = num::mul_rn(num::silu(g), u); }
};

// This warp's items of [i0, i1) (those congruent to gwarp modulo warps, as the stage deals them).
template <class Fmt, class Rows, class Out>
__device__ __noinline__ void rows_loop(long long i0, long long i1, long long gwarp, long long warps, int lane,
                                       const quant::BlockQ8A* xq, long long n, Rows rows, Out out) {
    for (long long i = i0 + ((gwarp - i0) % warps + warps) % warps; i < i1; i += warps) {
        const uint8_t* w[2];
        rows(i, w);
        float v[2];
        warp_dot_quant_rows<Fmt, 2>(w, xq, n, lane, v);
        if (lane == 0) out(i, v[0], v[1]);
    }
}

// The expert down of token 0 for this warp's row pairs: each pair's K slots in slot order, as
// expert_down_slots runs them (acc = fmaf(w_k, dot_k, acc) from +0, then X += acc), the route ids
// and weights read once for every item (lane k: slot k; K <= 32, mk_lean_ok).
template <class Fmt>
__device__ __noinline__ void down_loop(long long items, long long gwarp, long long warps, int lane, MkW dw,
                                       const int* route, const float* route_w, const quant::BlockQ8A* heq, long long nfe,
                                       int K, float* x, long long n_embd) {
    int my_e = 0;
    float my_w = 0.0f;
    if (lane < K) my_e = route[lane], my_w = route_w[lane];
    for (long long i = gwarp; i < items; i += warps) {
        const long long r = 2 * i, r1 = r + 1 < n_embd ? r + 1 : r;
        float a0 = 0.0f, a1 = 0.0f;
        for (int k = 0; k < K; ++k) {
            const int e = __shfl(my_e, k);
            const float wk = __shfl(my_w, k);
            const uint8_t* w[2] = {mkm::wrow(dw, r, e), mkm::wrow(dw, r1, e)};
            float v[2];
            warp_dot_quant_rows<Fmt, 2>(w, heq + k * (nfe / 32), nfe, lane, v);
            if (lane == 0) a0 = fmaf(wk, v[0], a0), a1 = fmaf(wk, v[1], a1);
        }
        if (lane == 0) {
            x[r] = num::add_rn(x[r], a0);
            if (r + 1 < n_embd) x[r + 1] = num::add_rn(x[r + 1], a1);
        }
    }
}

// rows_loop for a row type with a lean form; false for the others (nothing run).
template <class Rows, class Out>
__device__ inline bool typed(int type, long long i0, long long i1, long long gwarp, long long warps, int lane,
                             const quant::BlockQ8A* xq, long long n, Rows rows, Out out) {
    using namespace quant::blocks;
    switch (static_cast<TensorType>(type)) {
    case TensorType::Q4_0: rows_loop<Q4_0>(i0, i1, gwarp, warps, lane, xq, n, rows, out); return true;
    case TensorType::Q8_0: rows_loop<Q8_0>(i0, i1, gwarp, warps, lane, xq, n, rows, out); return true;
    case TensorType::Q4_K: rows_loop<Q4_K>(i0, i1, gwarp, warps, lane, xq, n, rows, out); return true;
    case TensorType::Q5_K: rows_loop<Q5_K>(i0, i1, gwarp, warps, lane, xq, n, rows, out); return true;
    case TensorType::Q6_K: rows_loop<Q6_K>(i0, i1, gwarp, warps, lane, xq, n, rows, out); return true;
    case TensorType::IQ4_NL: rows_loop<IQ4_NL>(i0, i1, gwarp, warps, lane, xq, n, rows, out); return true;
    case TensorType::IQ4_XS: rows_loop<IQ4_XS>(i0, i1, gwarp, warps, lane, xq, n, rows, out); return true;
    default: return false;
    }
}

__device__ inline bool lean_type(int type) {
    switch (static_cast<TensorType>(type)) {
    case TensorType::Q4_0: case TensorType::Q8_0: case TensorType::Q4_K: case TensorType::Q5_K: case TensorType::Q6_K:
    case TensorType::IQ4_NL: case TensorType::IQ4_XS: return true;
    default: return false;
    }
}

// down_loop for a row type with a lean form.
__device__ inline void down_typed(long long items, long long gwarp, long long warps, int lane, const MkPass& P,
                                  const MkW& dw) {
    using namespace quant::blocks;
    const MkDims& d = P.d;
    const int K = static_cast<int>(d.n_used);
#define ARBOR_MKL_DOWN(F) down_loop<F>(items, gwarp, warps, lane, dw, P.route_idx, P.route_w, P.heq, d.n_ff_exp, K, P.x, d.n_embd)
    switch (static_cast<TensorType>(dw.type)) {
    case TensorType::Q4_0: ARBOR_MKL_DOWN(Q4_0); break;
    case TensorType::Q8_0: ARBOR_MKL_DOWN(Q8_0); break;
    case TensorType::Q4_K: ARBOR_MKL_DOWN(Q4_K); break;
    case TensorType::Q5_K: ARBOR_MKL_DOWN(Q5_K); break;
    case TensorType::Q6_K: ARBOR_MKL_DOWN(Q6_K); break;
    case TensorType::IQ4_NL: ARBOR_MKL_DOWN(IQ4_NL); break;
    case TensorType::IQ4_XS: ARBOR_MKL_DOWN(IQ4_XS); break;
    default: break;
    }
#undef ARBOR_MKL_DOWN
}

}  // namespace mkl

// Whether stage (op, s) runs lean: a one-token pass, an op with a lean form, row types with one.
// The same answer in every warp.
__device__ inline bool mk_lean_ok(int op, const MkModelStage& s) {
    // The op first (gpu-next34): a warp stage without a lean form (flashnext's, the quantize)
    // then loads nothing more. Loading the pass first cost flashnext 0.14-0.24 ms a decode step.
    if (op != kOpQkvDots && (op < kOpMatMulAdd || op > kOpMatMulStore) && op != kOpExpertGatedFfn &&
        op != kOpExpertDownAdd)
        return false;
    const MkPass& P = *s.pass;
    if (P.n_tokens != 1 || s.dep_tail) return false;
    switch (op) {
    case kOpQkvDots: {
        const MkLayerW& L = mk_layer(P, s);
        return mkl::lean_type(L.wq.type) && mkl::lean_type(L.wk.type) && mkl::lean_type(L.wv.type);
    }
    case kOpMatMulAdd: return mkl::lean_type(s.w.type) && mkm::stage_in(P, s.buf).xq != nullptr;
    case kOpMatMulStore: return !s.row_items && mkl::lean_type(s.w.type) && (s.out_buf != kBufLogits || P.n_out == 1);
    case kOpGatedFfn: {
        const MkLayerW& L = mk_layer(P, s);
        return L.gate.type == L.up.type && L.gate.row_bytes == L.up.row_bytes && mkl::lean_type(L.gate.type);
    }
    case kOpExpertDownAdd:  // (ARBOR_MK_DOWN_SLOT_PAIRS's two-slot dots are expert_down_slots')
        return !ARBOR_MK_DOWN_SLOT_PAIRS && P.d.n_used <= 32 && P.heq != nullptr &&
               mkl::lean_type(mk_layer(P, s).down_exps.type);
    case kOpExpertGatedFfn: {
        const MkLayerW& L = mk_layer(P, s);
        return L.gate_exps.type == L.up_exps.type && L.gate_exps.row_bytes == L.up_exps.row_bytes &&
               L.gate_exps.mat_bytes == L.up_exps.mat_bytes && mkl::lean_type(L.gate_exps.type);
    }
    default: return false;
    }
}

// The stage's items of this warp, as lean loops (after mk_lean_ok). Not inlined.
__device__ __noinline__ void mk_lean_stage(int op, const MkModelStage& s, long long items, long long gwarp,
                                           long long warps, int lane) {
    const MkPass& P = *s.pass;
    const MkDims& d = P.d;
    switch (op) {
    case kOpQkvDots: {
        const MkLayerW& L = mk_layer(P, s);
        const long long nq = d.n_head * d.hd_k, nk = d.n_head_kv * d.hd_k;
        const MkW* m[3] = {&L.wq, &L.wk, &L.wv};
        const float* bias[3] = {L.bq, L.bk, L.bv};
        const long long first[4] = {0, nq / 2, (nq + nk) / 2, items};  // each matrix's items
        for (int k = 0; k < 3; ++k) {
            const MkW& w = *m[k];
            mkl::typed(w.type, first[k], first[k + 1], gwarp, warps, lane, P.xq, d.n_embd,
                       mkl::PairRows{w.data, w.row_bytes, w.rows, first[k]}, mkl::QkvOut{P.qkv, bias[k], first[k]});
        }
        break;
    }
    case kOpMatMulAdd: {
        const mkm::In in = mkm::stage_in(P, s.buf);
        mkl::typed(s.w.type, 0, items, gwarp, warps, lane, in.xq, in.width, mkl::PairRows{s.w.data, s.w.row_bytes, s.w.rows, 0},
                   mkl::AddOut{P.x, s.w.rows});
        break;
    }
    case kOpMatMulStore:
        mkl::typed(s.w.type, 0, items, gwarp, warps, lane, P.xq, d.n_embd, mkl::PairRows{s.w.data, s.w.row_bytes, s.w.rows, 0},
                   mkl::StoreOut{s.out_buf == kBufLogits ? P.logits : P.router, s.w.rows});
        break;
    case kOpGatedFfn: {
        const MkLayerW& L = mk_layer(P, s);
        mkl::typed(L.gate.type, 0, items, gwarp, warps, lane, P.xq, d.n_embd,
                   mkl::TwinRows{L.gate.data, L.up.data, L.gate.row_bytes, 0, nullptr, 1}, mkl::GatedOut{P.h});
        break;
    }
    case kOpExpertGatedFfn: {
        const MkLayerW& L = mk_layer(P, s);
        mkl::typed(L.gate_exps.type, 0, items, gwarp, warps, lane, P.xq, d.n_embd,
                   mkl::TwinRows{L.gate_exps.data, L.up_exps.data, L.gate_exps.row_bytes, L.gate_exps.mat_bytes, P.route_idx,
                                 d.n_ff_exp},
                   mkl::GatedOut{P.he});
        break;
    }
    case kOpExpertDownAdd: mkl::down_typed(items, gwarp, warps, lane, P, mk_layer(P, s).down_exps); break;
    default: break;
    }
}

#endif  // ARBOR_MK_LEAN_DOTS

}  // namespace arbor::gpu
