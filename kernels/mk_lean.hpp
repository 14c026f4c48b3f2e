// ARBOR_MK_LEAN_DOTS (mk_model.hpp): a one-token pass's row-dot stages run as lean loops.
//
// arbor-gpu-probe (kernels/probe/row_probe.hip) measured the megakernel's own Q4_K row-dot code
// in a kernel of its own at 14 us for qwen3-4b's gated-FFN level, against 25-30 us for the same
// level inside the megakernel (docs/BENCHMARKS.md, gpu-next15, call 4). Inside, every item goes
// through mk_model_item (one function for every op, whose 128 registers spill), reads the stage's
// descriptors again and switches on the op and the row type. Here a stage's descriptors are read
// once, the type is switched on once, and each (format, op) pair is a loop of its own
// (rows_loop, not inlined: its own registers) over the warp's items, calling the same
// warp_dot_quant_rows<Fmt, 2> that warp_dot_row2 calls (or <Fmt, 1>, warp_dot_row's, for the
// single-row items of ARBOR_MK_LEAN_ROWS), with the same rows and outputs as
// mk_qkv_dots, mk_matmul_add, mk_matmul_store, mk_gated_ffn, mk_expert_gated_ffn and
// mk_expert_down_add for token 0 (the expert down's slots S at a time through
// warp_dot_quant_row_groups with ARBOR_MK_LEAN_DOWN_SLOTS, each row the single dot's sequence).
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

// Rows G (i - base) .. G (i - base) + G - 1 of a matrix (base: its first item): G = 2, or 1 with
// ARBOR_MK_LEAN_ROWS (mkl::lean_rows). An item past the matrix's last row takes that row again
// and writes nothing for it.
template <int G>
struct RunRows {
    static constexpr int kRows = G;
    const uint8_t* data;
    unsigned long long rb;
    long long rows, base;
    __device__ void operator()(long long i, const uint8_t** w) const {
        const long long r = G * (i - base);
#pragma unroll
        for (int k = 0; k < G; ++k)
            w[k] = data + static_cast<unsigned long long>(G == 1 || r + k < rows ? r + k : rows - 1) * rb;
    }
};
// Row i of two matrices (gate: w[0], up: w[1]), or of expert e's (the expert FFN: i = pair n_ff_exp + r).
struct TwinRows {
    static constexpr int kRows = 2;
    const uint8_t* a;
    const uint8_t* b;
    unsigned long long rb, mat;
    const int* route;  // null, or the routes (the expert FFN)
    long long nfe;
    __device__ void operator()(long long i, const uint8_t** w) const {
        unsigned long long off = static_cast<unsigned long long>(i) * rb;
#if ARBOR_MK_LEAN_INDEX32
        if (route) {  // (a one-token pass: i < n_used n_ff_exp, far below 2^32)
            const unsigned u = static_cast<unsigned>(i), f = static_cast<unsigned>(nfe), pair = u / f;
            off = static_cast<unsigned long long>(route[pair]) * mat + static_cast<unsigned long long>(u - pair * f) * rb;
        }
#else
        if (route) off = static_cast<unsigned long long>(route[i / nfe]) * mat + static_cast<unsigned long long>(i % nfe) * rb;
#endif
        w[0] = a + off;
        w[1] = b + off;
    }
};

template <int G>
struct QkvOut {  // P.qkv[off + r] (+ the bias): off, the matrix's first row in Q/K/V
    float* qkv;
    const float* bias;
    long long base, off, rows;
    __device__ void operator()(long long i, const float* v) const {
        const long long r = G * (i - base);
#pragma unroll
        for (int k = 0; k < G; ++k)
            if (r + k < rows) qkv[off + r + k] = bias ? num::add_rn(v[k], bias[r + k]) : v[k];
    }
};
template <int G>
struct AddOut {  // X[r] += v
    float* x;
    long long rows;
    __device__ void operator()(long long i, const float* v) const {
#pragma unroll
        for (int k = 0; k < G; ++k)
            if (const long long r = G * i + k; r < rows) x[r] = num::add_rn(x[r], v[k]);
    }
};
template <int G>
struct StoreOut {  // out[r]
    float* out;
    long long rows;
    __device__ void operator()(long long i, const float* v) const {
#pragma unroll
        for (int k = 0; k < G; ++k)
            if (const long long r = G * i + k; r < rows) out[r] = v[k];
    }
};
struct GatedOut {  // silu(g) * u
    float* h;
    __device__ void operator()(long long i, const float* v) const { h[i] = num::mul_rn(num::silu(v[0]), v[1]); }
};

// This warp's items of [i0, i1) (those congruent to gwarp modulo warps, as the stage deals them).
template <class Fmt, class Rows, class Out>
__device__ __noinline__ void rows_loop(long long i0, long long i1, long long gwarp, long long warps, int lane,
                                       const quant::BlockQ8A* xq, long long n, Rows rows, Out out) {
    constexpr int R = Rows::kRows;
#if ARBOR_MK_LEAN_INDEX32
    // The warp's first item, (gwarp - i0) mod warps past i0, in 32-bit arithmetic (gwarp < warps,
    // and a one-token pass's items and the grid's warps are far below 2^31).
    const unsigned uw = static_cast<unsigned>(warps);
    const long long start = i0 + static_cast<long long>((static_cast<unsigned>(gwarp) + uw - static_cast<unsigned>(i0) % uw) % uw);
    for (long long i = start; i < i1; i += warps) {
#else
    for (long long i = i0 + ((gwarp - i0) % warps + warps) % warps; i < i1; i += warps) {
#endif
        const uint8_t* w[R];
        rows(i, w);
        float v[R];
        warp_dot_quant_rows<Fmt, R>(w, xq, n, lane, v);
        if (lane == 0) out(i, v);
    }
}

// The expert down of token 0 for this warp's items of G rows (row pairs, or single rows with
// ARBOR_MK_LEAN_ROWS): each row's K slots in slot order, as expert_down_slots runs them
// (acc = fmaf(w_k, dot_k, acc) from +0, then X += acc), the route ids and weights read once for
// every item (lane k: slot k; K <= 32, mk_lean_ok).
template <class Fmt, int G>
__device__ __noinline__ void down_loop(long long items, long long gwarp, long long warps, int lane, MkW dw,
                                       const int* route, const float* route_w, const quant::BlockQ8A* heq, long long nfe,
                                       int K, float* x, long long n_embd) {
    int my_e = 0;
    float my_w = 0.0f;
    if (lane < K) my_e = route[lane], my_w = route_w[lane];
    for (long long i = gwarp; i < items; i += warps) {
        const long long r = G * i;
        float a0 = 0.0f, a1 = 0.0f;
        int k = 0;
#if ARBOR_MK_LEAN_DOWN_SLOTS > 1
        // S slots at a time: their experts' rows and activations in one pass (S groups of G
        // rows, warp_dot_quant_row_groups), each dot the bits it has alone; the chain below then
        // takes them in slot order.
        constexpr int S = ARBOR_MK_LEAN_DOWN_SLOTS;
        for (; k + S <= K; k += S) {
            const uint8_t* w[G * S];
            const quant::BlockQ8A* xs[S];
            float wk[S];
#pragma unroll
            for (int s = 0; s < S; ++s) {
                const int e = __shfl(my_e, k + s);
                wk[s] = __shfl(my_w, k + s);
                w[s * G] = mkm::wrow(dw, r, e);
                if constexpr (G == 2) w[s * G + 1] = mkm::wrow(dw, r + 1 < n_embd ? r + 1 : r, e);
                xs[s] = heq + (k + s) * (nfe / 32);
            }
            float v[G * S];
            warp_dot_quant_row_groups<Fmt, G * S, S>(w, xs, nfe, lane, v);
            if (lane == 0) {
#pragma unroll
                for (int s = 0; s < S; ++s) {
                    a0 = fmaf(wk[s], v[s * G], a0);
                    if constexpr (G == 2) a1 = fmaf(wk[s], v[s * G + 1], a1);
                }
            }
        }
#endif
        for (; k < K; ++k) {
            const int e = __shfl(my_e, k);
            const float wk = __shfl(my_w, k);
            const uint8_t* w[G];
            w[0] = mkm::wrow(dw, r, e);
            if constexpr (G == 2) w[1] = mkm::wrow(dw, r + 1 < n_embd ? r + 1 : r, e);
            float v[G];
            warp_dot_quant_rows<Fmt, G>(w, heq + k * (nfe / 32), nfe, lane, v);
            if (lane == 0) {
                a0 = fmaf(wk, v[0], a0);
                if constexpr (G == 2) a1 = fmaf(wk, v[1], a1);
            }
        }
        if (lane == 0) {
            x[r] = num::add_rn(x[r], a0);
            if constexpr (G == 2)
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

// down_loop for a row type with a lean form, G rows an item.
template <int G>
__device__ inline void down_typed(long long gwarp, long long warps, int lane, const MkPass& P, const MkW& dw) {
    using namespace quant::blocks;
    const MkDims& d = P.d;
    const int K = static_cast<int>(d.n_used);
    const long long items = (d.n_embd + G - 1) / G;
#define ARBOR_MKL_DOWN(F) down_loop<F, G>(items, gwarp, warps, lane, dw, P.route_idx, P.route_w, P.heq, d.n_ff_exp, K, P.x, d.n_embd)
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

namespace mkl {

// The stage's items for G rows an item, as mk_lean_stage deals them.
template <int G>
__device__ inline void qkv_items(const MkPass& P, const MkModelStage& s, long long gwarp, long long warps, int lane,
                                 const quant::BlockQ8A* xq) {
    const MkLayerW& L = mk_layer(P, s);
    const MkW* m[3] = {&L.wq, &L.wk, &L.wv};
    const float* bias[3] = {L.bq, L.bk, L.bv};
    long long first = 0, off = 0;  // the matrix's first item and first row
    for (int k = 0; k < 3; ++k) {
        const MkW& w = *m[k];
        const long long end = first + (w.rows + G - 1) / G;
        typed(w.type, first, end, gwarp, warps, lane, xq, P.d.n_embd, RunRows<G>{w.data, w.row_bytes, w.rows, first},
              QkvOut<G>{P.qkv, bias[k], first, off, w.rows});
        first = end;
        off += w.rows;
    }
}
template <int G>
__device__ inline void matmul_items(const MkPass& P, const MkModelStage& s, long long gwarp, long long warps, int lane,
                                    const quant::BlockQ8A* xq, long long n, bool add) {
    const long long items = (s.w.rows + G - 1) / G;
    const RunRows<G> rows{s.w.data, s.w.row_bytes, s.w.rows, 0};
    if (add) typed(s.w.type, 0, items, gwarp, warps, lane, xq, n, rows, AddOut<G>{P.x, s.w.rows});
    else typed(s.w.type, 0, items, gwarp, warps, lane, xq, n, rows, StoreOut<G>{s.out_buf == kBufLogits ? P.logits : P.router, s.w.rows});
}
// The rows of a lean stage's items (ARBOR_MK_LEAN_ROWS): 1 when single rows (items1 of them)
// leave the grid's busiest warp fewer rows to dot than row pairs (items2), each round of items
// costing about its rows (gpu-next35); 2 otherwise, or always 2 or 1 by ARBOR_GPU_LEAN_ROWS=2 / =1.
// (32-bit: a stage's items and the grid's warps are far below 2^31.)
__device__ inline int lean_rows(long long items1, long long items2, long long warps) {
#if ARBOR_MK_LEAN_ROWS
    if (mk_ab_s & (kMkAbLeanPairs | kMkAbLeanSingle)) return (mk_ab_s & kMkAbLeanSingle) ? 1 : 2;
    const unsigned w = static_cast<unsigned>(warps);
    return (static_cast<unsigned>(items1) + w - 1) / w < 2 * ((static_cast<unsigned>(items2) + w - 1) / w) ? 1 : 2;
#else
    (void)items1, (void)items2, (void)warps;
    return 2;
#endif
}

}  // namespace mkl

// The stage's items of this warp, as lean loops (after mk_lean_ok). Not inlined. `items` is the
// host's count of row pairs; the Q/K/V, matmul and expert-down stages count their own items for
// the rows mkl::lean_rows picks, and only the gated FFNs (a row of gate and one of up an item)
// take it as it is.
__device__ __noinline__ void mk_lean_stage(int op, const MkModelStage& s, long long items, long long gwarp,
                                           long long warps, int lane) {
    const MkPass& P = *s.pass;
    const MkDims& d = P.d;
    switch (op) {
    case kOpQkvDots: {
        const MkLayerW& L = mk_layer(P, s);
        const long long q = L.wq.rows, k = L.wk.rows, v = L.wv.rows;
        if (mkl::lean_rows(q + k + v, (q + 1) / 2 + (k + 1) / 2 + (v + 1) / 2, warps) == 1)
            mkl::qkv_items<1>(P, s, gwarp, warps, lane, P.xq);
        else
            mkl::qkv_items<2>(P, s, gwarp, warps, lane, P.xq);
        break;
    }
    case kOpMatMulAdd:
    case kOpMatMulStore: {
        const bool add = op == kOpMatMulAdd;
        const mkm::In in = add ? mkm::stage_in(P, s.buf) : mkm::In{};
        const quant::BlockQ8A* x = add ? in.xq : P.xq;
        const long long n = add ? in.width : d.n_embd;
        if (mkl::lean_rows(s.w.rows, (s.w.rows + 1) / 2, warps) == 1) mkl::matmul_items<1>(P, s, gwarp, warps, lane, x, n, add);
        else mkl::matmul_items<2>(P, s, gwarp, warps, lane, x, n, add);
        break;
    }
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
    case kOpExpertDownAdd:
        if (mkl::lean_rows(d.n_embd, (d.n_embd + 1) / 2, warps) == 1) mkl::down_typed<1>(gwarp, warps, lane, P, mk_layer(P, s).down_exps);
        else mkl::down_typed<2>(gwarp, warps, lane, P, mk_layer(P, s).down_exps);
        break;
    default: break;
    }
}

#endif  // ARBOR_MK_LEAN_DOTS

}  // namespace arbor::gpu
