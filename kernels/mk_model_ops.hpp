// Device work items of the model stages (mk_model.hpp's ops) that one warp runs (the router
// select: warp 0 of a workgroup item); the workgroup-wide ones (RMSNorm, attention) are in
// mk_block_ops.hpp. Every output
// element goes through the element and combine functions of numerics.hpp and quant_blocks.hpp
// in the CPU's order (engine/src/model/cpu_stage_*.cpp), so it has the CPU's bits. Sequential
// reductions of the contract (softmax sums) run in lane 0; lane-parallel parts are those whose
// elements are independent.
#pragma once

#include "arbor_hip.hpp"
#include "mk_dot.hpp"
#include "mk_model.hpp"
#include "mk_phase.hpp"
#include "model/numerics.hpp"

// ARBOR_MK_SMEM_ASSUME builds: p points into the workgroup's arena (mk_model.hpp).
#if ARBOR_MK_SMEM_ASSUME
#define ARBOR_MK_SMEM(p) arbor_assume_shared(p)
#else
#define ARBOR_MK_SMEM(p) ((void)0)
#endif

namespace arbor::gpu {

namespace mkm {

using quant::BlockQ8A;
namespace qb = quant::blocks;

constexpr int kChunk = num::kAttnChunk;

__device__ inline float bcast(float v) { return __shfl(v, 0); }

// dot_lanes(a, b, n) with lane j holding elements j, j+32, ...: the contract's 32 lanes.
__device__ inline float warp_dot_lanes(const float* a, const float* b, long long n, int lane) {
    float acc = 0.0f;
    long long i = lane;
    for (; i + 32 * 7 < n; i += 32 * 8) {  // eight loads in flight, then the FMAs in order
        float x[8], y[8];
#pragma unroll
        for (int k = 0; k < 8; ++k) x[k] = a[i + 32 * k], y[k] = b[i + 32 * k];
#pragma unroll
        for (int k = 0; k < 8; ++k) acc = fmaf(x[k], y[k], acc);
    }
    for (; i < n; i += 32) acc = fmaf(a[i], b[i], acc);
    return bcast(warp_combine(acc));
}

// Q8A block b of a row, lane-parallel: lane i holds element i. amax is exact in any order
// (NaN never compares greater, as in q8a_quantize32), each q is the same element formula, and
// the integer sum is exact. (Eight blocks interleaved in one warp measured slower on the H200:
// block_quantize.) warp_quantize_lanes takes the values from the lanes' registers: xi in lane i.
__device__ inline void warp_quantize_lanes(const float xi, BlockQ8A* q, int lane) {
    float amax = fabsf(xi);
    if (!(amax == amax)) amax = 0.0f;
    for (int o = 16; o >= 1; o >>= 1) {
        const float y = __shfl_xor(amax, o);
        if (y > amax) amax = y;
    }
    const float d = qb::div_rn(amax, 127.0f);
    int v = 0;
    if (d != 0.0f) {
        const float r = rintf(qb::div_rn(xi, d));
        v = r != r ? 0 : r > 127.0f ? 127 : r < -127.0f ? -127 : static_cast<int>(r);
    }
    q->q[lane] = static_cast<int8_t>(v);
    int s = v;
    for (int o = 16; o >= 1; o >>= 1) s += __shfl_xor(s, o);
    if (lane == 0) {
        q->d = d;
        q->sum = s;
    }
}
__device__ inline void warp_quantize_block(const float* x, BlockQ8A* q, int lane) { warp_quantize_lanes(x[lane], q, lane); }

// Q8A blocks of y[0..n) (n a multiple of 32) into q, one block after another, each
// lane-parallel (interleaving them measured slower: block_quantize). Call after a syncwarp.
__device__ inline void warp_quantize(const float* y, long long n, BlockQ8A* q, int lane) {
    for (long long b = 0; b < n / 32; ++b) warp_quantize_block(y + 32 * b, q + b, lane);
}

template <class Fmt>
__device__ inline void decode_row(const uint8_t* row, long long n, float* y, int lane) {
    for (long long sb = lane; sb < n / 32; sb += 32)
        Fmt::decode(row + (sb / Fmt::kSubs) * Fmt::kBytes, static_cast<int>(sb % Fmt::kSubs), y + 32 * sb);
}

__device__ inline void warp_decode_row(int type, const uint8_t* row, long long n, float* y, int lane) {
    using namespace qb;
    switch (static_cast<TensorType>(type)) {
    case TensorType::F32:
        for (long long i = lane; i < n; i += 32) y[i] = bits_f32(ld32(row + 4 * i));
        break;
    case TensorType::F16:
        for (long long i = lane; i < n; i += 32) y[i] = fp16_to_f32(ld16(row + 2 * i));
        break;
    case TensorType::BF16:
        for (long long i = lane; i < n; i += 32) y[i] = bf16_to_f32(ld16(row + 2 * i));
        break;
    case TensorType::Q4_0: decode_row<Q4_0>(row, n, y, lane); break;
    case TensorType::Q4_1: decode_row<Q4_1>(row, n, y, lane); break;
    case TensorType::Q5_0: decode_row<Q5_0>(row, n, y, lane); break;
    case TensorType::Q5_1: decode_row<Q5_1>(row, n, y, lane); break;
    case TensorType::Q8_0: decode_row<Q8_0>(row, n, y, lane); break;
    case TensorType::Q2_K: decode_row<Q2_K>(row, n, y, lane); break;
    case TensorType::Q3_K: decode_row<Q3_K>(row, n, y, lane); break;
    case TensorType::Q4_K: decode_row<Q4_K>(row, n, y, lane); break;
    case TensorType::Q5_K: decode_row<Q5_K>(row, n, y, lane); break;
    case TensorType::Q6_K: decode_row<Q6_K>(row, n, y, lane); break;
    case TensorType::IQ4_NL: decode_row<IQ4_NL>(row, n, y, lane); break;
    case TensorType::IQ4_XS: decode_row<IQ4_XS>(row, n, y, lane); break;
    case TensorType::MXFP4: decode_row<MXFP4>(row, n, y, lane); break;
    default:
        for (long long i = lane; i < n; i += 32) y[i] = __int_as_float(0x7fc00000);
        break;
    }
}

__device__ inline const uint8_t* wrow(const MkW& w, long long r, long long m = 0) {
    return w.data + static_cast<unsigned long long>(m) * w.mat_bytes + static_cast<unsigned long long>(r) * w.row_bytes;
}

// Row r of [Q | K | V]: its matrix, its bias (null without biases) and its row in that matrix.
struct QkvRow {
    const MkW& w;
    const float* bias;
    long long rr;
};
__device__ inline QkvRow qkv_row(const MkDims& d, const MkLayerW& L, long long r) {
    const long long nq = d.n_head * d.hd_k, nk = d.n_head_kv * d.hd_k;
    if (r < nq) return {L.wq, L.bq, r};
    if (r < nq + nk) return {L.wk, L.bk, r - nq};
    return {L.wv, L.bv, r - nq - nk};
}

// Row dot of W row `row` with activation row t of the stage's input (lane 0 holds it).
__device__ inline float dot_in(const MkW& w, const uint8_t* row, const float* x, const BlockQ8A* xq, long long t,
                               long long width, int lane) {
    return warp_dot_row(w.type, row, x + t * width, xq ? xq + t * (width / 32) : nullptr, width, lane);
}

// A gated FFN's gate and up dots of rows gr and ur against activation row t: one pass over both
// rows where they share a format (warp_dot_row2), else one dot_in each; the same bits either way.
__device__ inline void gate_up_dots(const MkW& gw, const MkW& uw, const uint8_t* gr, const uint8_t* ur, const float* x,
                                    const BlockQ8A* xq, long long t, long long width, int lane, float* g, float* u) {
    if (gw.type == uw.type) {
        warp_dot_row2(gw.type, gr, ur, x + t * width, xq + t * (width / 32), width, lane, g, u);
    } else {
        *g = dot_in(gw, gr, x, xq, t, width, lane);
        *u = dot_in(uw, ur, x, xq, t, width, lane);
    }
}

struct In {
    const float* x;
    const BlockQ8A* xq;
    long long width;
};

__device__ inline In stage_in(const MkPass& P, int buf) {
    const MkDims& d = P.d;
    switch (buf) {
    case kBufAtt: return {P.att, P.attq, d.n_head * d.hd_v};
    case kBufH: return {P.h, P.hq, d.n_ff};
    case kBufHE: return {P.he, P.heq, d.n_ff_exp};
    default: return {P.xn, P.xq, d.n_embd};
    }
}

__device__ inline uint8_t* kv_cell(const MkPass& P, long long t, int layer, long long head, long long cell, bool v) {
    const MkDims& d = P.d;
    uint8_t* page = P.pages[static_cast<long long>(P.seq[t]) * P.pages_stride + cell / kChunk];
    const long long eb = d.kv_elem_bytes;
    unsigned long long off = static_cast<unsigned long long>(layer) * d.kv_layer_bytes;
    if (v) off += static_cast<unsigned long long>(d.n_head_kv * kChunk * d.hd_k * eb + head * kChunk * d.hd_v * eb);
    else off += static_cast<unsigned long long>(head * kChunk * d.hd_k * eb);
    return page + off + static_cast<unsigned long long>((cell % kChunk) * (v ? d.hd_v : d.hd_k) * eb);
}

// Element i of a K/V row (rows are 4-byte aligned in a page: whole-element loads).
__device__ inline float kv_at(const uint8_t* row, long long eb, long long i) {
    return eb == 4 ? reinterpret_cast<const float*>(row)[i]
                   : qb::fp16_to_f32(reinterpret_cast<const uint16_t*>(row)[i]);
}

}  // namespace mkm

__device__ inline void mk_embed(const MkPass& P, long long t, int lane) {
    const MkW& e = P.tok_embd;
    mkm::warp_decode_row(e.type, mkm::wrow(e, P.token[t]), P.d.n_embd, P.x + t * P.d.n_embd, lane);
}

__device__ inline void mk_rope_table(const MkPass& P, long long t, int lane) {
    const long long half = P.d.n_rot / 2;
    float* out = P.rope + t * half * 2;
    for (long long i = lane; i < half; i += 32)
        num::rope_cs(P.pos[t], P.rope_freq[i], P.d.rope_mscale, &out[2 * i], &out[2 * i + 1]);
}

// Item row * (width / 32) + b: Q8A block b of a row of the stage's buffer, one block per warp
// (lane-parallel), so the whole grid shares the row.
__device__ inline void mk_quantize(const MkPass& P, const MkModelStage& s, long long item, int lane) {
    const mkm::In in = mkm::stage_in(P, s.buf);
    const long long nb = in.width / 32, row = item / nb, b = item % nb;
    mkm::warp_quantize_block(in.x + row * in.width + 32 * b, const_cast<quant::BlockQ8A*>(in.xq) + row * nb + b, lane);
}

// Item i: rows 2i and 2i+1 of [Q | K | V] (head widths are even, so both rows are in one
// matrix), their dots computed together.
__device__ inline void mk_qkv_dots(const MkPass& P, const MkModelStage& s, long long item, int lane) {
    const MkDims& d = P.d;
    const MkLayerW& L = mk_layer(P, s);
    const long long R = d.n_head * d.hd_k + d.n_head_kv * (d.hd_k + d.hd_v);
    const long long r = 2 * item;
    const mkm::QkvRow q = mkm::qkv_row(d, L, r);
    const MkW& w = q.w;
    const float* bias = q.bias;
    const long long rr = q.rr;
    const uint8_t* row0 = mkm::wrow(w, rr);
    const uint8_t* row1 = mkm::wrow(w, rr + 1);
    for (long long t = 0; t < P.n_tokens; ++t) {
        float v0, v1;
        warp_dot_row2(w.type, row0, row1, P.xn + t * d.n_embd, P.xq + t * (d.n_embd / 32), d.n_embd, lane, &v0, &v1);
        if (lane == 0) {
            if (bias) v0 = num::add_rn(v0, bias[rr]), v1 = num::add_rn(v1, bias[rr + 1]);
            P.qkv[t * R + r] = v0;
            P.qkv[t * R + r + 1] = v1;
        }
    }
}

namespace mkm {

// The q/k norm (when the model has one) and RoPE of a Q (kind 0) or K (kind 1) head of token t,
// in place on its hd_k values v (global or shared memory), with the warp.
__device__ inline void head_finish(const MkPass& P, const MkLayerW& L, int kind, long long t, float* v, int lane) {
    const MkDims& d = P.d;
    const long long hd = d.hd_k;
    if (d.qk_norm) {
        const float* nw = kind == 0 ? L.q_norm : L.k_norm;
        const float scale = num::rms_scale(warp_dot_lanes(v, v, hd, lane), static_cast<int>(hd), d.rms_eps);
        arbor_syncwarp();
        for (long long i = lane; i < hd; i += 32) v[i] = num::mul_rn(num::mul_rn(v[i], scale), nw[i]);
        arbor_syncwarp();
    }
    const long long half = d.n_rot / 2;
    const float* cs = P.rope + t * half * 2;
    for (long long i = lane; i < half; i += 32) {
        float* a = d.rope_neox ? &v[i] : &v[2 * i];
        float* b = d.rope_neox ? &v[i + half] : &v[2 * i + 1];
        num::rope_pair(a, b, cs[2 * i], cs[2 * i + 1]);
    }
    arbor_syncwarp();
}

// A finished K (kind 1) or V (kind 2) head's values v into token t's KV cell, with the warp.
__device__ inline void head_store_cell(const MkPass& P, int layer, int kind, long long head, long long t, const float* v,
                                       int lane) {
    const MkDims& d = P.d;
    const long long hd = kind == 2 ? d.hd_v : d.hd_k;
    uint8_t* cell = kv_cell(P, t, layer, head, P.pos[t], kind == 2);
    if (d.kv_elem_bytes == 4) {
        for (long long i = lane; i < hd; i += 32) reinterpret_cast<float*>(cell)[i] = v[i];
    } else {
        for (long long i = lane; i < hd; i += 32) {
            const uint16_t h = quant::blocks::f32_to_fp16(v[i]);
            cell[2 * i] = static_cast<uint8_t>(h & 0xff);
            cell[2 * i + 1] = static_cast<uint8_t>(h >> 8);
        }
    }
}

}  // namespace mkm

// Item hi * T + t: head hi of [Q heads | K heads | V heads] for token t.
__device__ inline void mk_qkv_finish(const MkPass& P, const MkModelStage& s, long long item, int lane) {
    const MkDims& d = P.d;
    const MkLayerW& L = mk_layer(P, s);
    const long long T = P.n_tokens, hi = item / T, t = item % T;
    const long long nq = d.n_head * d.hd_k, nk = d.n_head_kv * d.hd_k;
    const long long R = nq + nk + d.n_head_kv * d.hd_v;
    const int kind = hi < d.n_head ? 0 : hi < d.n_head + d.n_head_kv ? 1 : 2;
    const long long head = kind == 0 ? hi : kind == 1 ? hi - d.n_head : hi - d.n_head - d.n_head_kv;
    float* v = P.qkv + t * R + (kind == 0 ? head * d.hd_k : kind == 1 ? nq + head * d.hd_k : nq + nk + head * d.hd_v);
    if (kind != 2) mkm::head_finish(P, L, kind, t, v, lane);
    if (kind == 0) {
        float* q = P.q + t * nq + head * d.hd_k;
        for (long long i = lane; i < d.hd_k; i += 32) q[i] = v[i];
        return;
    }
    mkm::head_store_cell(P, s.layer, kind, head, t, v, lane);
}

// Item i: rows 2i and 2i+1 (the last item may have one).
__device__ inline void mk_matmul_add(const MkPass& P, const MkModelStage& s, long long item, int lane) {
    const mkm::In in = mkm::stage_in(P, s.buf);
    const long long r = 2 * item;
    const bool two = r + 1 < s.w.rows;
    const uint8_t* row0 = mkm::wrow(s.w, r);
    const uint8_t* row1 = mkm::wrow(s.w, two ? r + 1 : r);
    for (long long t = 0; t < P.n_tokens; ++t) {
        float v0, v1;
        warp_dot_row2(s.w.type, row0, row1, in.x + t * in.width, in.xq ? in.xq + t * (in.width / 32) : nullptr, in.width,
                      lane, &v0, &v1);
        if (lane == 0) {
            float* x = P.x + t * P.d.n_embd + r;
            x[0] = num::add_rn(x[0], v0);
            if (two) x[1] = num::add_rn(x[1], v1);
        }
    }
}

__device__ inline void mk_gated_ffn(const MkPass& P, const MkModelStage& s, long long r, int lane) {
    const MkLayerW& L = mk_layer(P, s);
    const long long n_embd = P.d.n_embd;
    const uint8_t* gr = mkm::wrow(L.gate, r);
    const uint8_t* ur = mkm::wrow(L.up, r);
    for (long long t = 0; t < P.n_tokens; ++t) {
        float g, u;
        mkm::gate_up_dots(L.gate, L.up, gr, ur, P.xn, P.xq, t, n_embd, lane, &g, &u);
        if (lane == 0) P.h[t * P.d.n_ff + r] = num::mul_rn(num::silu(g), u);
    }
}

// Router logits (out_buf kBufRouter, every token) or the LM head (kBufLogits, the n_out rows).
// Item i: rows 2i and 2i+1 (the last item may have one), for every token in turn. With
// token_items (the router), item t * units + i takes token t's alone: the same dots, but a pass of
// T tokens has T times the items instead of every item walking the T tokens.
__device__ inline void mk_matmul_store(const MkPass& P, const MkModelStage& s, long long item, int lane) {
    long long t0 = 0, n_in = s.out_buf == kBufLogits ? P.n_out : P.n_tokens;
    if (s.token_items) {
        const long long units = s.row_items ? s.w.rows : (s.w.rows + 1) / 2;
        t0 = item / units;
        item %= units;
        if (t0 >= n_in) return;
        n_in = t0 + 1;
    }
    float* out = s.out_buf == kBufLogits ? P.logits : P.router;
    if (s.row_items) {  // item r: row r alone, a float type (the router logits: gpu_backend.hip)
        const long long n = P.d.n_embd;
        const uint8_t* row = mkm::wrow(s.w, item);
        for (long long t = t0; t < n_in; ++t) {
            const float* x = P.xn + t * n;
            const float v = s.w.type == static_cast<int>(TensorType::F32)   ? warp_dot_float_deep<0>(row, x, n, lane)
                            : s.w.type == static_cast<int>(TensorType::F16) ? warp_dot_float_deep<1>(row, x, n, lane)
                                                                            : warp_dot_float_deep<2>(row, x, n, lane);
            if (lane == 0) out[t * s.w.rows + item] = v;
        }
        return;
    }
    const long long r = 2 * item, n = P.d.n_embd;
    const bool two = r + 1 < s.w.rows;
    const uint8_t* row0 = mkm::wrow(s.w, r);
    const uint8_t* row1 = mkm::wrow(s.w, two ? r + 1 : r);
    for (long long t = t0; t < n_in; ++t) {
        float v0, v1;
        warp_dot_row2(s.w.type, row0, row1, P.xn + t * n, P.xq + t * (n / 32), n, lane, &v0, &v1);
        if (lane == 0) {
            out[t * s.w.rows + r] = v0;
            if (two) out[t * s.w.rows + r + 1] = v1;
        }
    }
}

// The router softmax's sum of E exponentials ex[0 .. E - 1] in expert order (one thread; ex in
// shared memory, 16-byte aligned): 16-byte loads that issue ahead of the add chain (one shuffle
// an expert took about 80 cycles an add).
__device__ inline float router_exp_sum(const float* ex, int E) {
    const float4* e4 = reinterpret_cast<const float4*>(ex);
    float sum = 0.0f;
    int i = 0;
#pragma unroll 8
    for (; i + 4 <= E; i += 4) {
        const float4 q = e4[i / 4];
        sum = num::add_rn(num::add_rn(num::add_rn(num::add_rn(sum, q.x), q.y), q.z), q.w);
    }
    for (; i < E; ++i) sum = num::add_rn(sum, ex[i]);
    return sum;
}

// Softmax and top-k of one token's router logits: numerics.hpp's contract with lane j holding
// experts j, j+32, ... The max is exact (a tree gives the sequential value, and a zero max's
// sign cannot change exp_f(l - m)); the sum of the exponentials runs in lane 0 in expert
// order; each top-k round takes the largest remaining probability, ties to the lower expert
// id, exactly as the sequential scan does; the renormalising sum runs in slot order.
// Run by warp 0 of a workgroup item (megakernel.hip's mk_workgroup_item): ex is E floats of its
// shared memory, 16-byte aligned, for the exponentials of lane 0's sum. Not inlined: its
// registers are allocated on their own, and the megakernel entry's stay as they were.
__device__ __noinline__ inline void mk_router_select(const MkPass& P, long long t, int lane, float* ex) {
    ARBOR_MK_SMEM(ex);
    WarpPhaseClock clk(lane);
    const MkDims& d = P.d;
    const int E = static_cast<int>(d.n_expert), K = static_cast<int>(d.n_used);
    const float* l = P.router + t * d.n_expert;
    constexpr int kPer = 8;  // experts per lane: up to 256 (the host checks)
    float v[kPer];
    float m = l[0];
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
        const int i = lane + 32 * k;
        v[k] = i < E ? l[i] : 0.0f;
        if (i < E && v[k] > m) m = v[k];
    }
    m = warp_max_keep(m);
    clk.mark(kPhSelIn);
#pragma unroll
    for (int k = 0; k < kPer; ++k)
        if (lane + 32 * k < E) v[k] = num::exp_f(num::sub_rn(v[k], m));
    // The sum in expert order, by lane 0 from shared memory (router_exp_sum).
#pragma unroll
    for (int k = 0; k < kPer; ++k)
        if (lane + 32 * k < E) ex[lane + 32 * k] = v[k];
    arbor_syncwarp();
    float sum = 0.0f;
    if (lane == 0) sum = router_exp_sum(ex, E);
    sum = mkm::bcast(sum);
#pragma unroll
    for (int k = 0; k < kPer; ++k)
        if (lane + 32 * k < E) v[k] = num::div_rn(v[k], sum);
    clk.mark(kPhSelSoftmax);
    unsigned taken = 0;  // bit k: expert lane + 32k is chosen
    int* idx = P.route_idx + t * K;
    float* w = P.route_w + t * K;
    // Up to 32 slots stay in registers, slot j's choice in lane j, so the renormalising sum
    // reads no memory back and every slot is written once; more slots go through memory.
    const bool in_lanes = K <= 32;
    float wk = 0.0f;
    int ik = -1;
    for (int slot = 0; slot < K; ++slot) {
        // This lane's first untaken expert (fi, fv) and its largest non-NaN untaken one (bp, bi,
        // the lowest id on ties).
        float bp = 0.0f, fv = 0.0f;
        int bi = -1, fi = -1;
#pragma unroll
        for (int k = 0; k < kPer; ++k) {
            const int i = lane + 32 * k;
            if (i >= E || (taken & (1u << k))) continue;
            if (fi < 0) fi = i, fv = v[k];
            if (v[k] == v[k] && (bi < 0 || v[k] > bp)) bp = v[k], bi = i;
        }
        // (tests/gpu/topk_lanes_model.py models these rounds lane by lane: keep the two in step.)
        // num::top_k's scan keeps the first untaken expert when its probability is NaN (nothing
        // compares greater than a NaN) and otherwise ends on the largest non-NaN one, the lowest
        // id on ties. A round with a NaN candidate therefore finds the warp's first untaken
        // expert: when its probability is NaN it wins. (Non-finite router logits make every
        // probability NaN; each lane's tree kept its own candidate then, and a slot could get
        // no expert at all.) Rounds without a NaN take the path below alone.
        bool decided = false;
        if (arbor_ballot(fi >= 0 && fv != fv) != 0u) {
            int f = fi >= 0 ? fi : 0x7fffffff;
            for (int o = 16; o >= 1; o >>= 1) {
                const int of = __shfl_xor(f, o);
                if (of < f) f = of;
            }
            const float pf = __shfl(fv, f % 32);
            if (pf != pf) decided = true, bi = f, bp = pf;
        }
        bool tree = !decided;
#if defined(ARBOR_GPU_VENDOR_NVIDIA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        // The warp's best by two reductions: the candidates are +0 or positive and not NaN
        // (exp_f >= +0 over a positive sum), so their bits order as their values, and the tree's
        // winner is the largest bits, then the lowest id holding them; a lane without a
        // candidate offers bits 0 and no id.
        if (tree) {
            tree = false;
            const unsigned key = bi >= 0 ? __float_as_uint(bp) : 0u;
            const unsigned top = __reduce_max_sync(0xffffffffu, key);
            const unsigned id = __reduce_min_sync(0xffffffffu, bi >= 0 && key == top ? static_cast<unsigned>(bi) : 0xffffffffu);
            bi = id == 0xffffffffu ? -1 : static_cast<int>(id);
            bp = bi >= 0 ? __uint_as_float(top) : 0.0f;
        }
#endif
        if (tree) {
            for (int o = 16; o >= 1; o >>= 1) {
                const float op = __shfl_xor(bp, o);
                const int oi = __shfl_xor(bi, o);
                if (oi >= 0 && (bi < 0 || op > bp || (op == bp && oi < bi))) bp = op, bi = oi;
            }
        }
        if (bi >= 0 && bi % 32 == lane) taken |= 1u << (bi / 32);
        if (in_lanes) {
            if (lane == slot) wk = bp, ik = bi;
        } else if (lane == 0) {
            idx[slot] = bi, w[slot] = bp;
        }
    }
    clk.mark(kPhSelTopk);
    if (in_lanes) {
        if (d.norm_topk) {
            float tot = 0.0f;  // slot order
#pragma unroll 8
            for (int slot = 0; slot < K; ++slot) tot = num::add_rn(tot, __shfl(wk, slot));
            wk = num::div_rn(wk, tot);
        }
        if (lane < K) idx[lane] = ik, w[lane] = wk;
        clk.mark(kPhSelWrite);
        return;
    }
    if (!d.norm_topk || lane != 0) return;
    float tot = 0.0f;
    for (int slot = 0; slot < K; ++slot) tot = num::add_rn(tot, w[slot]);
    for (int slot = 0; slot < K; ++slot) w[slot] = num::div_rn(w[slot], tot);
}

#if ARBOR_MK_WG_SELECT
// mk_router_select's results by the whole workgroup (ARBOR_MK_WG_SELECT): thread i holds expert i
// (E <= 256, the host checks). The max as there (every thread starts from l[0], then a tree: the
// same value, a zero's sign aside, which no exponential sees); the exponentials, lane 0's sum in
// expert order (router_exp_sum) and the divisions are the same operations. Every exponential is
// at most 1 and the max's is 1, so the sum is finite and at least 1 unless some exponential is
// NaN, and then every probability is NaN (the sum is). Without a NaN, every probability is +0 or
// positive (no -0, at most 1.0f), so their bits order as their values, and the K rounds of the
// largest remaining probability, ties to the lower id, choose the experts in the order of
// (probability down, id up): expert i's slot is its rank in that order, the experts before it
// with a probability at least its own and those after it with a greater one ((j < i) + bits(p_j)
// > bits(p_i); the +1 cannot carry past 0x3f800001). With every probability NaN, each round takes
// the first untaken expert (nothing compares greater than a NaN), so expert i's slot is i. One
// pass of E compares a thread replaces K dependent rounds of warp reductions (3.6 us of the warp
// form's 7.3 on `moer`, gpu-next36). The renormalising sum runs in slot order in one thread.
// The arena holds the probabilities [256], the warps' maxima and two sums [16], and the slots'
// experts and probabilities [256] each.
__device__ __noinline__ inline void mk_router_select_wg(const MkPass& P, long long t, float* smem) {
    ARBOR_MK_SMEM(smem);
    PhaseClock clk(ARBOR_MK_SUBPHASES != 0);
    const MkDims& d = P.d;
    const int E = static_cast<int>(d.n_expert), K = static_cast<int>(d.n_used);
    const int i = static_cast<int>(threadIdx.x), lane = i & 31, warp = i / 32;
    constexpr int kWarps = kMkBlockThreads / 32;
    float* pr = smem;                                             // [256]
    float* red = smem + kMkBlockThreads;                          // [16]: maxima, then sum and tot
    int* sidx = reinterpret_cast<int*>(red + 16);                 // [256]
    float* sw = red + 16 + kMkBlockThreads;                       // [256]
    const float* l = P.router + t * d.n_expert;
    const float l0 = l[0];
    const float x = i < E ? l[i] : l0;
    float m = l0;
    if (x > m) m = x;
    m = warp_max_keep(m);
    if (lane == 0) red[warp] = m;
    __syncthreads();
    m = red[0];
#pragma unroll
    for (int w = 1; w < kWarps; ++w)
        if (red[w] > m) m = red[w];
    clk.mark(kPhSelIn);
    const float e = i < E ? num::exp_f(num::sub_rn(x, m)) : 0.0f;
    if (i < E) pr[i] = e;
    __syncthreads();  // (every thread has read the maxima too)
    if (i == 0) red[kWarps] = router_exp_sum(pr, E);
    __syncthreads();
    const float p = num::div_rn(e, red[kWarps]);
    if (i < E) pr[i] = p;  // (thread 0 read the exponentials before the barrier above)
    __syncthreads();
    clk.mark(kPhSelSoftmax);
    if (i < E) {
        int r = i;  // every probability NaN
        if (p == p) {
            const unsigned bp = num::f32_bits(p);
            const auto beats = [&](unsigned bj, int j) { return static_cast<int>(bj + (j < i ? 1u : 0u) > bp); };
            const uint4* b4 = reinterpret_cast<const uint4*>(pr);
            int j = 0;
            r = 0;
            for (; j + 4 <= E; j += 4) {  // 16-byte loads
                const uint4 q = b4[j / 4];
                r += beats(q.x, j) + beats(q.y, j + 1) + beats(q.z, j + 2) + beats(q.w, j + 3);
            }
            for (; j < E; ++j) r += beats(num::f32_bits(pr[j]), j);
        }
        if (r < K) sidx[r] = i, sw[r] = p;
    }
    __syncthreads();
    clk.mark(kPhSelTopk);
    if (d.norm_topk && i == 0) {
        float tot = 0.0f;  // slot order
        for (int slot = 0; slot < K; ++slot) tot = num::add_rn(tot, sw[slot]);
        red[kWarps + 1] = tot;
    }
    if (d.norm_topk) __syncthreads();
    if (i < K) {  // K <= E <= 256
        P.route_idx[t * K + i] = sidx[i];
        P.route_w[t * K + i] = d.norm_topk ? num::div_rn(sw[i], red[kWarps + 1]) : sw[i];
    }
    clk.mark(kPhSelWrite);
}
#endif

// Item pair * n_ff_exp + r: row r of the gated FFN of the expert routed to (token, slot) pair.
__device__ inline void mk_expert_gated_ffn(const MkPass& P, const MkModelStage& s, long long item, int lane) {
    WarpPhaseClock clk(lane, (item & 15) == 0);
    const MkDims& d = P.d;
    const MkLayerW& L = mk_layer(P, s);
    const long long pair = item / d.n_ff_exp, r = item % d.n_ff_exp, t = pair / d.n_used;
    const int e = P.route_idx[pair];
    const uint8_t* gr = mkm::wrow(L.gate_exps, r, e);
    const uint8_t* ur = mkm::wrow(L.up_exps, r, e);
    // With the clock on, a volatile store of the expert id and the row addresses makes their
    // loads land before the mark (the dots wait for them anyway).
    if (clk.on) {
        volatile long long sink = e + static_cast<long long>(reinterpret_cast<uintptr_t>(gr) ^ reinterpret_cast<uintptr_t>(ur));
        (void)sink;
    }
    clk.mark(kPhExpRoute);
    float g, u;
    mkm::gate_up_dots(L.gate_exps, L.up_exps, gr, ur, P.xn, P.xq, t, d.n_embd, lane, &g, &u);
    clk.mark(kPhExpDots);
    if (lane == 0) P.he[pair * d.n_ff_exp + r] = num::mul_rn(num::silu(g), u);
    clk.mark(kPhExpStore);
}

// Rows r and r1 of token t's routed experts' down projections, summed over its slots in slot
// order: acc = fmaf(w_k, Wd_e(k)[r] . HE[t][k], acc) from +0, valid in lane 0.
// The slots' expert ids and weights are read at once (lane k slot k, up to 32 slots; more read
// theirs as they go), where each slot's dots waited on its own id first.
__device__ inline void expert_down_slots(const MkPass& P, const MkW& dw, long long t, long long r, long long r1, int lane,
                                         float* acc0, float* acc1, WarpPhaseClock& clk) {
    const long long K = P.d.n_used, p0 = t * K, nf = P.d.n_ff_exp;
    const bool in_lanes = K <= 32;
    int my_e = 0;
    float my_w = 0.0f;
    if (in_lanes && lane < K) my_e = P.route_idx[p0 + lane], my_w = P.route_w[p0 + lane];
    float a0 = 0.0f, a1 = 0.0f;
    long long k = 0;
#if ARBOR_MK_DOWN_SLOT_PAIRS
    // Two slots a step (their experts' four rows and two activations in one pass), each slot's
    // two dots the same bits as alone, and the same fmaf chain in slot order; an odd last slot,
    // and other formats, as below. Only IQ4_XS and Q4_0, whose slot-pair dot takes 94 and 90
    // registers alone (scripts/dot-regs.sh): with the K-quants' and Q8_0's (117-128) as well, ptxas
    // spilled 264/156 bytes in mk_expert_down_add, not 76/92.
    if (in_lanes && slot_rows_type(dw.type))
        for (; k + 2 <= K; k += 2) {
            const int e0 = __shfl(my_e, static_cast<int>(k)), e1 = __shfl(my_e, static_cast<int>(k + 1));
            const float w0 = __shfl(my_w, static_cast<int>(k)), w1 = __shfl(my_w, static_cast<int>(k + 1));
            const uint8_t* w[4] = {mkm::wrow(dw, r, e0), mkm::wrow(dw, r1, e0), mkm::wrow(dw, r, e1), mkm::wrow(dw, r1, e1)};
            const quant::BlockQ8A* xq[2] = {P.heq + (p0 + k) * (nf / 32), P.heq + (p0 + k + 1) * (nf / 32)};
            const float nan = __int_as_float(0x7fc00000);  // (slot_rows_type gates the types)
            float y[4] = {nan, nan, nan, nan};
            warp_dot_slot_rows_q8<2>(dw.type, w, xq, nf, lane, y);
            if (lane == 0) {
                a0 = fmaf(w0, y[0], a0), a1 = fmaf(w0, y[1], a1);
                a0 = fmaf(w1, y[2], a0), a1 = fmaf(w1, y[3], a1);
            }
            clk.mark(kPhDownSlot);
        }
#endif
    for (; k < K; ++k) {
        const long long pair = p0 + k;
        const int e = in_lanes ? __shfl(my_e, static_cast<int>(k)) : P.route_idx[pair];
        const float wk = in_lanes ? __shfl(my_w, static_cast<int>(k)) : P.route_w[pair];
        float y0, y1;
        warp_dot_row2(dw.type, mkm::wrow(dw, r, e), mkm::wrow(dw, r1, e), P.he + pair * nf, P.heq + pair * (nf / 32), nf,
                      lane, &y0, &y1);
        if (lane == 0) a0 = fmaf(wk, y0, a0), a1 = fmaf(wk, y1, a1);
        clk.mark(kPhDownSlot);
    }
    *acc0 = a0;
    *acc1 = a1;
}

// Item i: rows 2i and 2i+1 of every token's combine over its slots (slot order).
__device__ inline void mk_expert_down_add(const MkPass& P, const MkModelStage& s, long long item, int lane) {
    const MkDims& d = P.d;
    const MkLayerW& L = mk_layer(P, s);
    const long long r = 2 * item;
    const bool two = r + 1 < d.n_embd;
    WarpPhaseClock clk(lane, (item & 15) == 0);
    for (long long t = 0; t < P.n_tokens; ++t) {
        float acc0, acc1;
        expert_down_slots(P, L.down_exps, t, r, two ? r + 1 : r, lane, &acc0, &acc1, clk);
        if (lane == 0) {
            float* x = P.x + t * d.n_embd + r;
            x[0] = num::add_rn(x[0], acc0);
            if (two) x[1] = num::add_rn(x[1], acc1);
        }
        clk.mark(kPhDownAdd);
    }
}

#if ARBOR_MK_DOWN_SPLIT
// Item i * T k + pair: rows 2i and 2i+1 of the down projection of the
// expert routed to (token, slot) pair, unweighted, into YE: the dots expert_down_slots takes for
// that slot, which the item's tail (mk_dep_tail) combines in slot order.
__device__ inline void mk_expert_down_dots(const MkPass& P, const MkModelStage& s, long long item, int lane) {
    const MkDims& d = P.d;
    const MkLayerW& L = mk_layer(P, s);
    const long long TK = P.n_tokens * d.n_used, pair = item % TK, r = 2 * (item / TK), nf = d.n_ff_exp;
    const bool two = r + 1 < d.n_embd;
    const MkW& dw = L.down_exps;
    const int e = P.route_idx[pair];
    float y0, y1;
    warp_dot_row2(dw.type, mkm::wrow(dw, r, e), mkm::wrow(dw, two ? r + 1 : r, e), P.he + pair * nf, P.heq + pair * (nf / 32),
                  nf, lane, &y0, &y1);
    if (lane == 0) {
        float* y = P.ye + pair * d.n_embd + r;
        y[0] = y0;
        if (two) y[1] = y1;
    }
}

// Token t's row pair i of the expert down projection from YE: acc = fmaf(w_k, YE[t][k][r], acc)
// over the slots in slot order from +0, then X[t][r] += acc, as mk_expert_down_add does.
__device__ inline void expert_down_combine(const MkPass& P, long long t, long long i, int lane) {
    const MkDims& d = P.d;
    const long long K = d.n_used, p0 = t * K, r = 2 * i;
    const bool two = r + 1 < d.n_embd;
    float a0 = 0.0f, a1 = 0.0f;
    if (K <= 32) {  // every slot's weight and dots loaded at once, lane k slot k
        float wk = 0.0f, y0 = 0.0f, y1 = 0.0f;
        if (lane < K) {
            const float* y = P.ye + (p0 + lane) * d.n_embd + r;
            wk = P.route_w[p0 + lane];
            y0 = y[0];
            y1 = two ? y[1] : 0.0f;
        }
        for (int k = 0; k < static_cast<int>(K); ++k) {
            const float w = __shfl(wk, k);
            a0 = fmaf(w, __shfl(y0, k), a0);
            a1 = fmaf(w, __shfl(y1, k), a1);
        }
    } else {
        for (long long k = 0; k < K; ++k) {
            const float* y = P.ye + (p0 + k) * d.n_embd + r;
            const float w = P.route_w[p0 + k];
            a0 = fmaf(w, y[0], a0);
            if (two) a1 = fmaf(w, y[1], a1);
        }
    }
    if (lane == 0) {
        float* x = P.x + t * d.n_embd + r;
        x[0] = num::add_rn(x[0], a0);
        if (two) x[1] = num::add_rn(x[1], a1);
    }
}
#endif

#if ARBOR_MK_EXPERT_MAJOR
namespace mkm {

// f(pair) for every (token, slot) pair routed to expert e, in pair order, in every lane of the
// warp. The routes are read kScan x 32 at a time, all of a round's loads issued before any is
// used (lane j holds pairs c0 + 32 i + j), and a ballot per group gives its matches; lane i keeps
// group i's mask, which the walk takes by shuffle. (One load per 32 pairs in turn, each waiting
// for the L2, cost an item about 1.5 us at 400 pairs: 8.1 to 6.6 us.) T x k routes are a few KiB.
template <class F>
__device__ inline void for_pairs_of(const MkPass& P, long long e, int lane, F f) {
    constexpr int kScan = 16;
    const long long TK = P.n_tokens * P.d.n_used;
    for (long long c0 = 0; c0 < TK; c0 += 32 * kScan) {
        int id[kScan];
#pragma unroll
        for (int i = 0; i < kScan; ++i) {
            const long long p = c0 + 32 * i + lane;
            id[i] = p < TK ? P.route_idx[p] : -1;
        }
        unsigned mine = 0u;  // lane i: group i's mask
#pragma unroll
        for (int i = 0; i < kScan; ++i) {
            const unsigned m = arbor_ballot(id[i] == e);
            if (lane == i) mine = m;
        }
        const unsigned any = arbor_ballot(mine != 0u);  // the groups with a match
        for (unsigned g = any; g != 0u; g &= g - 1u) {
            const int i = __ffs(static_cast<int>(g)) - 1;
            unsigned m = static_cast<unsigned>(__shfl(static_cast<int>(mine), i));
            while (m != 0u) {
                const int b = __ffs(static_cast<int>(m)) - 1;
                m &= m - 1u;
                f(c0 + 32 * i + b);
            }
        }
    }
}

#if ARBOR_MK_EXPERT_PAIRS
// for_pairs_of in twos: f2(p, q) for consecutive matches, f1(p) for an odd last one.
template <class F2, class F1>
__device__ inline void for_pair_twos_of(const MkPass& P, long long e, int lane, F2 f2, F1 f1) {
    long long pend = -1;
    for_pairs_of(P, e, lane, [&](long long pair) {
        if (pend < 0) {
            pend = pair;
        } else {
            f2(pend, pair);
            pend = -1;
        }
    });
    if (pend >= 0) f1(pend);
}
#endif

}  // namespace mkm

#if ARBOR_MK_EXPERT_PAIRS
// The gated FFN's item with its expert's pairs two at a time, for rows r .. r + NR - 1 (NR 1, or 2
// in ARBOR_MK_MAJOR_ROWS=2 builds): the 2 NR rows (gate r .., then up r ..) against both pairs'
// activations in one pass (warp_dot_rows_q8_acts<2 NR, 2>: row i against pair j in v[2 i + j]),
// an odd last pair alone (one row: warp_dot_row2; two: <4, 1>); each output is the single dot's
// bits. For the formats warp_dot_acts_type names. A function of its own, so that the rest of the
// entry compiles as without it.
template <int NR>
__device__ __noinline__ void mk_expert_gated_ffn_major_pairs(const MkPass& P, const MkLayerW& L, long long e, long long r,
                                                             int lane) {
    const MkDims& d = P.d;
    const long long nfe = d.n_ff_exp, xb = d.n_embd / 32;
    const uint8_t* w[2 * NR];
#pragma unroll
    for (int k = 0; k < NR; ++k) {
        w[k] = mkm::wrow(L.gate_exps, r + k, e);
        w[NR + k] = mkm::wrow(L.up_exps, r + k, e);
    }
    mkm::for_pair_twos_of(
        P, e, lane,
        [&](long long p, long long q) {
            const quant::BlockQ8A* xq[2] = {P.xq + (p / d.n_used) * xb, P.xq + (q / d.n_used) * xb};
            float v[4 * NR];
            warp_dot_rows_q8_acts<2 * NR, 2>(L.gate_exps.type, w, xq, d.n_embd, lane, v);
            if (lane == 0) {
#pragma unroll
                for (int k = 0; k < NR; ++k) {
                    P.he[p * nfe + r + k] = num::mul_rn(num::silu(v[2 * k]), v[2 * (NR + k)]);
                    P.he[q * nfe + r + k] = num::mul_rn(num::silu(v[2 * k + 1]), v[2 * (NR + k) + 1]);
                }
            }
        },
        [&](long long p) {
            float v[2 * NR];  // gate r .., up r ..
            if constexpr (NR == 1) {
                const long long t = p / d.n_used;
                warp_dot_row2(L.gate_exps.type, w[0], w[1], P.xn + t * d.n_embd, P.xq + t * xb, d.n_embd, lane, &v[0], &v[1]);
            } else {
                const quant::BlockQ8A* xq[1] = {P.xq + (p / d.n_used) * xb};
                warp_dot_rows_q8_acts<2 * NR, 1>(L.gate_exps.type, w, xq, d.n_embd, lane, v);
            }
            if (lane == 0) {
#pragma unroll
                for (int k = 0; k < NR; ++k) P.he[p * nfe + r + k] = num::mul_rn(num::silu(v[k]), v[NR + k]);
            }
        });
}
#endif

// ARBOR_MK_MAJOR_NOINLINE builds (mk_model.hpp): the expert-major items not inlined.
#if ARBOR_MK_MAJOR_NOINLINE
#define ARBOR_MK_MAJOR_FN __device__ __noinline__
#else
#define ARBOR_MK_MAJOR_FN __device__ inline
#endif

// Item e * n_ff_exp + r (major_rows 2: e * (n_ff_exp / 2) + r / 2, rows r and r + 1): HE row r of
// every (token, slot) pair routed to expert e, each computed as
// mk_expert_gated_ffn computes it for item pair * n_ff_exp + r (the same dots, the same store).
// The expert's two rows are read from memory once and then from the L1 for the later pairs.
ARBOR_MK_MAJOR_FN void mk_expert_gated_ffn_major(const MkPass& P, const MkModelStage& s, long long item, int lane) {
    const MkDims& d = P.d;
    const MkLayerW& L = mk_layer(P, s);
    const long long nfe = d.n_ff_exp, nr = s.major_rows == 2 ? 2 : 1, e = item / (nfe / nr), r0 = item % (nfe / nr) * nr;
#if ARBOR_MK_EXPERT_PAIRS
    if (s.pair_batch == 2 && L.gate_exps.type == L.up_exps.type && warp_dot_acts_type(L.gate_exps.type)) {
#if ARBOR_MK_MAJOR_ROWS == 2
        if (nr == 2) {
            mk_expert_gated_ffn_major_pairs<2>(P, L, e, r0, lane);
            return;
        }
#endif
        mk_expert_gated_ffn_major_pairs<1>(P, L, e, r0, lane);  // nr is 1 here (the host pairs rows only in such builds)
        return;
    }
#endif
    for (long long r = r0; r < r0 + nr; ++r) {
        const uint8_t* gr = mkm::wrow(L.gate_exps, r, e);
        const uint8_t* ur = mkm::wrow(L.up_exps, r, e);
        mkm::for_pairs_of(P, e, lane, [&](long long pair) {
            float g, u;
            mkm::gate_up_dots(L.gate_exps, L.up_exps, gr, ur, P.xn, P.xq, pair / d.n_used, d.n_embd, lane, &g, &u);
            if (lane == 0) P.he[pair * nfe + r] = num::mul_rn(num::silu(g), u);
        });
    }
}

#if ARBOR_MK_EXPERT_PAIRS && ARBOR_MK_DOWN_PAIRS
// mk_expert_down_major's item with its expert's pairs two at a time: rows r and r + 1 (r alone
// twice at an odd last row) against two pairs' HE blocks in one pass (warp_dot_rows_q8_acts<2, 2>,
// each output the single dot's bits), an odd last pair alone; for the formats warp_dot_acts_type
// names. Not inlined, so the rest of the entry compiles as without it.
__device__ __noinline__ void mk_expert_down_major_pairs(const MkPass& P, const MkW& dw, long long e, long long r, int lane) {
    const MkDims& d = P.d;
    const long long nf = d.n_ff_exp;
    const bool two = r + 1 < d.n_embd;
    const uint8_t* w[2] = {mkm::wrow(dw, r, e), mkm::wrow(dw, two ? r + 1 : r, e)};
    mkm::for_pair_twos_of(
        P, e, lane,
        [&](long long p, long long q) {
            const quant::BlockQ8A* xq[2] = {P.heq + p * (nf / 32), P.heq + q * (nf / 32)};
            float v[4];  // row r against p, q; row r + 1 against p, q
            warp_dot_rows_q8_acts<2, 2>(dw.type, w, xq, nf, lane, v);
            if (lane == 0) {
                float* yp = P.ye + p * d.n_embd + r;
                float* yq = P.ye + q * d.n_embd + r;
                yp[0] = v[0];
                yq[0] = v[1];
                if (two) {
                    yp[1] = v[2];
                    yq[1] = v[3];
                }
            }
        },
        [&](long long p) {
            float y0, y1;
            warp_dot_row2(dw.type, w[0], w[1], P.he + p * nf, P.heq + p * (nf / 32), nf, lane, &y0, &y1);
            if (lane == 0) {
                float* y = P.ye + p * d.n_embd + r;
                y[0] = y0;
                if (two) y[1] = y1;
            }
        });
}
#endif

// Item e * ((n_embd + 1) / 2) + i: rows 2i and 2i+1 of expert e's down projection against every
// pair routed to it, unweighted, into YE[pair] (expert_down_slots's dots of that slot: the same
// warp_dot_row2 on the same rows and HE blocks).
ARBOR_MK_MAJOR_FN void mk_expert_down_major(const MkPass& P, const MkModelStage& s, long long item, int lane) {
    const MkDims& d = P.d;
    const MkW& dw = mk_layer(P, s).down_exps;
    const long long np = (d.n_embd + 1) / 2, e = item / np, r = 2 * (item % np), nf = d.n_ff_exp;
    const bool two = r + 1 < d.n_embd;
    const uint8_t* w0 = mkm::wrow(dw, r, e);
    const uint8_t* w1 = mkm::wrow(dw, two ? r + 1 : r, e);
#if ARBOR_MK_EXPERT_PAIRS && ARBOR_MK_DOWN_PAIRS
    if (s.pair_batch == 2 && warp_dot_acts_type(dw.type)) {
        mk_expert_down_major_pairs(P, dw, e, r, lane);
        return;
    }
#endif
    mkm::for_pairs_of(P, e, lane, [&](long long pair) {
        float y0, y1;
        warp_dot_row2(dw.type, w0, w1, P.he + pair * nf, P.heq + pair * (nf / 32), nf, lane, &y0, &y1);
        if (lane == 0) {
            float* y = P.ye + pair * d.n_embd + r;
            y[0] = y0;
            if (two) y[1] = y1;
        }
    });
}

// Item t * ceil(n_embd / 32) + b: rows 32 b + lane of token t, each X[t][r] += the slot-order
// combine of YE: acc = fmaf(w_k, YE[t][k][r], acc) from +0, as expert_down_slots and
// mk_expert_down_add do (lane 0 of a row pair's item there, one lane a row here).
ARBOR_MK_MAJOR_FN void mk_expert_down_combine_rows(const MkPass& P, long long item, int lane) {
    const MkDims& d = P.d;
    const long long nb = (d.n_embd + 31) / 32, t = item / nb, r = (item % nb) * 32 + lane, K = d.n_used, p0 = t * K;
    if (r >= d.n_embd) return;
    float a = 0.0f;
    for (long long k = 0; k < K; ++k) a = fmaf(P.route_w[p0 + k], P.ye[(p0 + k) * d.n_embd + r], a);
    float* x = P.x + t * d.n_embd + r;
    *x = num::add_rn(*x, a);
}
#endif

#if ARBOR_MK_DEP_TAILS
// The dependency an item of a stage with a tail counts into (MkModelStage::dep_tail): the Q/K/V
// head of its two rows (QkvDots; head widths are even, so both rows are in one head), or its
// row's Q8A block (GatedFfn: row r of every token; ExpertGatedFfn: row r of pair p, item
// p * n_ff_exp + r with n_ff_exp a multiple of 32, so block item / 32 of HE).
__device__ inline long long mk_dep_of(const MkPass& P, int op, long long item) {
    if (op == kOpExpertDownDots) {  // token t's row pair i: dependency t * (n_embd / 2) + i
        const long long TK = P.n_tokens * P.d.n_used;
        return (item % TK) / P.d.n_used * ((P.d.n_embd + 1) / 2) + item / TK;
    }
    if (op != kOpQkvDots) return item / 32;
    const MkDims& d = P.d;
    const long long r = 2 * item, nq = d.n_head * d.hd_k, nk = d.n_head_kv * d.hd_k;
    return r < nq ? r / d.hd_k : r < nq + nk ? d.n_head + (r - nq) / d.hd_k : d.n_head + d.n_head_kv + (r - nq - nk) / d.hd_v;
}
// Items a dependency counts.
__device__ inline unsigned mk_dep_items(const MkPass& P, int op, long long dep) {
    if (op == kOpExpertDownDots) return static_cast<unsigned>(P.d.n_used);
    if (op != kOpQkvDots) return 32u;
    return static_cast<unsigned>((dep < P.d.n_head + P.d.n_head_kv ? P.d.hd_k : P.d.hd_v) / 2);
}

// After a warp's items of a stage with a tail: each lane counts one of the warp's items into
// its dependency (after a fence that publishes the items' stores), and the warp runs the tail
// of each dependency it completed (after a fence that makes the other warps' stores visible):
// the same functions, on the same values, as the level it replaces, so the bits are unchanged.
// The completing warp sets the counter back to zero; the next stage to use it is behind a grid
// barrier. (A pass that fails leaves counts behind: the host zeroes P.dep after a failed pass.)
// Not inlined: it runs once a warp a stage, and its registers stay out of the entry's.
__device__ __noinline__ void mk_dep_tail(int op, const MkModelStage& s, long long items, long long gwarp, long long warps,
                                         int lane) {
    const MkPass& P = *s.pass;
    const long long mine = gwarp < items ? (items - 1 - gwarp) / warps + 1 : 0;
    if (mine == 0) return;
    arbor_syncwarp();
    __threadfence();
    for (long long base = 0; base < mine; base += 32) {
        long long dep = -1;
        if (base + lane < mine) {
            const long long d = mk_dep_of(P, op, gwarp + (base + lane) * warps);
            if (atomicAdd(&P.dep[d], 1u) + 1u == mk_dep_items(P, op, d)) dep = d;
        }
        unsigned done = arbor_ballot(dep >= 0);
        if (done == 0u) continue;
        __threadfence();   // the completing lanes' acquire,
        arbor_syncwarp();  // which orders every lane's reads of the tail after it
        while (done != 0u) {
            const int j = __ffs(static_cast<int>(done)) - 1;
            done &= done - 1u;
            const long long d = static_cast<long long>(__shfl(static_cast<int>(dep), j));
            if (lane == 0) P.dep[d] = 0u;
            if (op == kOpQkvDots) {
                for (long long t = 0; t < P.n_tokens; ++t) mk_qkv_finish(P, s, d * P.n_tokens + t, lane);
#if ARBOR_MK_DOWN_SPLIT
            } else if (op == kOpExpertDownDots) {
                const long long np = (P.d.n_embd + 1) / 2;
                expert_down_combine(P, d / np, d % np, lane);
#endif
            } else if (op == kOpGatedFfn) {
                const long long nb = P.d.n_ff / 32;
                for (long long t = 0; t < P.n_tokens; ++t)
                    mkm::warp_quantize_block(P.h + t * P.d.n_ff + 32 * d, P.hq + t * nb + d, lane);
            } else {
                mkm::warp_quantize_block(P.he + 32 * d, P.heq + d, lane);
            }
            arbor_syncwarp();
        }
    }
}
#endif

// One work item of a warp stage (the workgroup stages are in mk_block_ops.hpp).
namespace mkm {

// The weight rows a row-dot item reads (w[1] == w[0] for an item of one row), as mk_qkv_dots,
// mk_matmul_add, mk_matmul_store, mk_gated_ffn and mk_expert_gated_ffn take them, and for the
// expert down the rows of the expert routed to (token, slot) pair `slot`. ok is false for an
// expert id outside the tensor. The off-by-default L2 prefetch reads rows through it.
struct ItemRows {
    const uint8_t* w[2];
    unsigned long long row_bytes[2];
    int type;
    bool ok;
};
__device__ inline ItemRows item_rows(int op, const MkPass& P, const MkModelStage& s, long long item, int slot) {
    ItemRows it{};
    it.ok = true;
    auto set = [&](const MkW& w0, long long r0, const MkW& w1, long long r1, long long m = 0) {
        it.w[0] = wrow(w0, r0, m);
        it.w[1] = &w1 == &w0 && r1 == r0 ? it.w[0] : wrow(w1, r1, m);
        it.row_bytes[0] = w0.row_bytes;
        it.row_bytes[1] = w1.row_bytes;
        it.type = w0.type;
    };
    if (op == kOpQkvDots) {
        const QkvRow q = qkv_row(P.d, mk_layer(P, s), 2 * item);
        set(q.w, q.rr, q.w, q.rr + 1);
    } else if (op == kOpMatMulAdd || op == kOpMatMulStore) {
        if (op == kOpMatMulStore && s.token_items) item %= s.row_items ? s.w.rows : (s.w.rows + 1) / 2;
        const long long r = op == kOpMatMulStore && s.row_items ? item : 2 * item;
        set(s.w, r, s.w, r + 1 < s.w.rows && !(op == kOpMatMulStore && s.row_items) ? r + 1 : r);
    } else if (op == kOpGatedFfn) {
        const MkLayerW& L = mk_layer(P, s);
        set(L.gate, item, L.up, item);
    } else if (op == kOpExpertGatedFfn) {
        const MkLayerW& L = mk_layer(P, s);
        const long long pair = item / P.d.n_ff_exp, r = item % P.d.n_ff_exp;
        const int e = P.route_idx[pair];
        it.ok = e >= 0 && e < P.d.n_expert;
        set(L.gate_exps, r, L.up_exps, r, it.ok ? e : 0);
    } else {  // kOpExpertDownAdd: rows 2 item, 2 item + 1 of pair `slot`'s expert
        const MkW& dw = mk_layer(P, s).down_exps;
        const long long r = 2 * item, r1 = r + 1 < P.d.n_embd ? r + 1 : r;
        const int e = P.route_idx[slot];
        it.ok = e >= 0 && e < P.d.n_expert;
        set(dw, r, dw, r1, it.ok ? e : 0);
    }
    return it;
}

}  // namespace mkm

__device__ inline void mk_model_item(int op, const MkModelStage& s, long long item, int lane) {
    const MkPass& P = *s.pass;
    switch (op) {
    case kOpEmbed: mk_embed(P, item, lane); break;
    case kOpRopeTable: mk_rope_table(P, item, lane); break;
    case kOpQkvDots: mk_qkv_dots(P, s, item, lane); break;
    case kOpQkvFinish: mk_qkv_finish(P, s, item, lane); break;
    case kOpQuantize: mk_quantize(P, s, item, lane); break;
    case kOpMatMulAdd: mk_matmul_add(P, s, item, lane); break;
    case kOpGatedFfn: mk_gated_ffn(P, s, item, lane); break;
    case kOpMatMulStore: mk_matmul_store(P, s, item, lane); break;
    case kOpExpertGatedFfn: mk_expert_gated_ffn(P, s, item, lane); break;
    case kOpExpertDownAdd: mk_expert_down_add(P, s, item, lane); break;
#if ARBOR_MK_DOWN_SPLIT
    case kOpExpertDownDots: mk_expert_down_dots(P, s, item, lane); break;
#endif
#if ARBOR_MK_EXPERT_MAJOR
    case kOpExpertGatedFfnMajor: mk_expert_gated_ffn_major(P, s, item, lane); break;
    case kOpExpertDownMajor: mk_expert_down_major(P, s, item, lane); break;
    case kOpExpertDownCombine: mk_expert_down_combine_rows(P, item, lane); break;
#endif
    default: break;
    }
}

}  // namespace arbor::gpu
