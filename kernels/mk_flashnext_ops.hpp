// Device work items of flashnext's hyper-connections, shared expert and the matmuls with the
// stream update in their epilogue (mk_flashnext.hpp's ops), and the one dispatcher of every
// flashnext op. Each item is run by one warp; every output element goes through the element
// and combine functions of numerics.hpp / numerics_flashnext.hpp in the order of the CPU items
// (engine/src/model/cpu_stage_flashnext_*.cpp), so it has the CPU's bits:
//  * a row dot is the contract's warp dot (mk_dot.hpp), the sum of squares of an RMSNorm is
//    warp_dot_lanes (dot_lanes);
//  * the 24 mixes of a wrap and their Sinkhorn normalisation run over one warp, output i in
//    lane i, each value in hc_mix's operation order (hc_mix_warp);
//  * the stream combine, the norms and the stream updates are element-wise, over the lanes.
// The indexer's items are in mk_flashnext_index.hpp, sparse attention in
// mk_flashnext_attention.hpp.
#pragma once

#include "arbor_hip.hpp"
#include "mk_dot.hpp"
#include "mk_flashnext.hpp"
#include "mk_flashnext_attention.hpp"
#include "mk_flashnext_index.hpp"
#include "mk_model.hpp"
#include "mk_model_ops.hpp"
#include "mk_phase.hpp"
#include "mk_program.hpp"
#include "model/numerics_flashnext.hpp"

namespace arbor::gpu {

namespace mkf {

constexpr int kN = num::kHcStreams;

// One lane's chain of a float-type row dotted with f = rn(X * r), continued from acc (the
// contract's float row dot of the normalised streams is these 32 chains, then warp_combine).
__device__ inline float hc_chain(int type, const uint8_t* w, const float* X, float r, int n, int lane, float acc) {
    auto f = [r](float x) { return num::mul_rn(x, r); };
    switch (static_cast<TensorType>(type)) {
    case TensorType::F32: float_chains<0, 1>(&w, X, n, lane, &acc, f); return acc;
    case TensorType::F16: float_chains<1, 1>(&w, X, n, lane, &acc, f); return acc;
    case TensorType::BF16: float_chains<2, 1>(&w, X, n, lane, &acc, f); return acc;
    default: return __int_as_float(0x7fc00000);  // the host refuses other types
    }
}

// numerics_flashnext.hpp's hc_mix over the lanes of one warp: lane i < 24 computes output i of
// [pre 4 | post 4 | comb 16] (comb row-major, j = (i - 8) / 4, k = (i - 8) % 4), writes it to
// out[i] and returns it. Every value takes the sequential code's operations in its order: a comb lane gathers
// its row (softmax, row rounds) or its column (column rounds) by shuffles and forms the same
// sums in the same order as the lanes that share them, so each division sees the sequential
// code's denominator. The mix's 20 Sinkhorn rounds then cost 2 x 20 short steps instead of one
// thread's 640 divisions in turn.
__device__ inline float hc_mix_warp(const float* m, const float* scale, const float* base, float eps, int iters,
                                   float* out, int lane) {
    const int i = lane < num::kHcMix ? lane : num::kHcMix - 1;  // lanes 24..31 shadow lane 23
    const int j = i < 2 * kN ? 0 : (i - 2 * kN) / kN, k = i < 2 * kN ? 0 : (i - 2 * kN) % kN;
    const float z = fmaf(scale[i < kN ? 0 : i < 2 * kN ? 1 : 2], m[i], base[i]);
    float v;
    if (i < kN) v = num::add_rn(num::sigmoid(z), eps);
    else if (i < 2 * kN) v = num::mul_rn(2.0f, num::sigmoid(z));
    else v = z;
    const int row0 = 2 * kN + j * kN, col0 = 2 * kN + k;  // the lanes of this lane's row: row0 + kk; column: col0 + kN jj
    // softmax of the row (numerics' softmax), then + eps
    float c[kN];
#pragma unroll
    for (int kk = 0; kk < kN; ++kk) c[kk] = __shfl(v, row0 + kk);
    float mx = c[0];
#pragma unroll
    for (int kk = 1; kk < kN; ++kk)
        if (c[kk] > mx) mx = c[kk];
    const float mine = num::exp_f(num::sub_rn(v, mx));  // this lane's p; the row's from its lanes
    float sum = 0.0f;
#pragma unroll
    for (int kk = 0; kk < kN; ++kk) sum = num::add_rn(sum, __shfl(mine, row0 + kk));
    float comb = num::add_rn(num::div_rn(mine, sum), eps);
    // comb / (sequential sum of its row (step 1) or column (step kN) + eps)
    auto divide_by = [&](int first, int step) {
        float s = 0.0f;
#pragma unroll
        for (int a = 0; a < kN; ++a) s = num::add_rn(s, __shfl(comb, first + a * step));
        comb = num::div_rn(comb, num::add_rn(s, eps));
    };
    divide_by(col0, kN);
    for (int it = 1; it < iters; ++it) {
        divide_by(row0, 1);
        divide_by(col0, kN);
    }
    const float mine_out = i < 2 * kN ? v : comb;
    if (lane < num::kHcMix) out[lane] = mine_out;
    return mine_out;
}

// The token whose streams a wrap stage reads: row itself, or for the head the output row's.
__device__ inline long long wrap_token(const MkPass& P, const MkModelStage& s, long long row) {
    return s.out_buf == kFnWrapHead ? P.out_token[row] : row;
}

}  // namespace mkf

__device__ inline void mk_fn_embed_hc(const MkPass& P, long long t, int lane) {
    const long long d = P.d.n_embd;
    float* x = P.fn->x4 + t * mkf::kN * d;
    const MkW& e = P.tok_embd;
    mkm::warp_decode_row(e.type, mkm::wrow(e, P.token[t]), d, x, lane);
    arbor_syncwarp();
    for (long long i = lane; i < d; i += 32)
        for (int k = 1; k < mkf::kN; ++k) x[k * d + i] = x[i];
}

// Item row * outs + o (outs = 24, the head's 4), run by a whole workgroup: dot o of the wrap's fn
// with f = rms(X4[t]) (flattened, no weight), into HcM[row][o]. The workgroup stages X4[t] in
// shared memory (when it leaves room for a piece of 256 elements), then the weight row piece by
// piece, every thread's loads in flight together (one warp walking 8192 elements from global memory
// paid 32 memory latencies per pass over them: about 80 us a stage). Warp 0 forms the stream
// norm's scale and runs the row's lane chains piece after piece: each lane's elements in the same
// order as in one pass. One row an item (two before) halves the pieces: 5 of 1984 elements for
// a 2048-wide model's F32 rows, each costing a staging latency.
__device__ __noinline__ inline void mk_fn_hc_dots_block(const MkPass& P, const MkModelStage& s, long long item,
                                                        float* smem) {
    ARBOR_MK_SMEM(smem);
    const MkFnPass& F = *P.fn;
    const bool head = s.out_buf == kFnWrapHead;
    const long long outs = head ? mkf::kN : num::kHcMix;
    const long long row = item / outs, o = item % outs;
    const int nd = static_cast<int>(mkf::kN * P.d.n_embd);
    const float* X = F.x4 + mkf::wrap_token(P, s, row) * nd;
    const MkW& w = head ? F.out_hc_fn : F.layers[s.layer].hc_fn[s.out_buf];
    const int eb = static_cast<TensorType>(w.type) == TensorType::F32 ? 4 : 2;
    const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) & 31;
    const bool x_in = nd + 256 <= kMkSmemFloats;  // a F32 piece of at least 256 elements beside it
    if (x_in) block_stage(smem, X, static_cast<long long>(nd) * 4);
    const float* Xa = x_in ? smem : X;
    uint8_t* ws = reinterpret_cast<uint8_t*>(smem + (x_in ? nd : 0));
    const int piece = ((kMkSmemFloats - (x_in ? nd : 0)) * 4 / eb) / 32 * 32;  // elements a piece
    __syncthreads();
    const float r = warp == 0 ? num::rms_scale(mkm::warp_dot_lanes(Xa, Xa, nd, lane), nd, P.d.rms_eps) : 0.0f;
    float acc = 0.0f;
    for (int p0 = 0; p0 < nd; p0 += piece) {
        const int np = nd - p0 < piece ? nd - p0 : piece;
        if (p0 > 0) __syncthreads();  // the last piece is used up
        block_stage(ws, mkm::wrow(w, o) + static_cast<long long>(p0) * eb, static_cast<long long>(np) * eb);
        __syncthreads();
        if (warp == 0) acc = mkf::hc_chain(w.type, ws, Xa + p0, r, np, lane, acc);
    }
    if (warp == 0) {
        const float v = warp_combine(acc);
        if (lane == 0) F.hcm[row * num::kHcMix + o] = v;
    }
}

// Item row, run by a whole workgroup: the wrap's mix from HcM[row] (warp 0, hc_mix_warp: pre,
// post, comb into Hc[t]; the head: thread 0, pre into HcM[row][8..11]), then XN[row] = rmsnorm(sum_i pre_i X4[t][i])
// * w (+ XQ). X4[t] is staged in shared memory while warp 0 forms the mix; every thread then
// takes elements e, e + 256, ... (each element's arithmetic is hc_combine's and the norm's), and
// warp 0 runs the norm's sum of squares over y in shared memory.
__device__ __noinline__ inline void mk_fn_hc_finish_block(const MkPass& P, const MkModelStage& s, long long row,
                                                          float* smem) {
    ARBOR_MK_SMEM(smem);
    const MkFnPass& F = *P.fn;
    const int d = static_cast<int>(P.d.n_embd);
    const long long t = mkf::wrap_token(P, s, row);
    const float* X = F.x4 + t * mkf::kN * d;
    const int tid = static_cast<int>(threadIdx.x);
    float* pre_s = smem;  // [kN] pre, [kN] the norm's scale
    float* xs = smem + 8;
    const bool x_in = 8 + mkf::kN * d <= kMkSmemFloats;
    if (tid < 32) {  // warp 0: the mix
        const float* m = F.hcm + row * num::kHcMix;
        if (s.out_buf == kFnWrapHead) {
            if (tid == 0) {
                float* pre_at = F.hcm + row * num::kHcMix + 8;
                num::hc_head_pre(m, F.out_hc_scale, F.out_hc_base, F.hc_eps, pre_at);
                for (int i = 0; i < mkf::kN; ++i) pre_s[i] = pre_at[i];
            }
        } else {
            const MkFnLayerW& L = F.layers[s.layer];
            const float v = mkf::hc_mix_warp(m, L.hc_scale[s.out_buf], L.hc_base[s.out_buf], F.hc_eps, F.sinkhorn,
                                             F.hc + t * num::kHcMix, tid);
            if (tid < mkf::kN) pre_s[tid] = v;
        }
    }
    if (x_in) block_stage(xs, X, static_cast<long long>(mkf::kN) * d * 4);
    __syncthreads();
    const float* Xa = x_in ? xs : X;
    float pre[mkf::kN];
#pragma unroll
    for (int i = 0; i < mkf::kN; ++i) pre[i] = pre_s[i];
    float* y = P.xn + row * d;
    float* ys = x_in ? xs : y;  // y over stream 0 in the arena: each thread rewrites only elements it read
    for (int e = tid; e < d; e += kMkBlockThreads) {
        float xv[mkf::kN];
#pragma unroll
        for (int i = 0; i < mkf::kN; ++i) xv[i] = Xa[i * d + e];
        ys[e] = num::hc_combine(pre, xv, 1);
    }
    __syncthreads();
    if (tid < 32) {
        const float scale = num::rms_scale(mkm::warp_dot_lanes(ys, ys, d, tid), d, P.d.rms_eps);
        if (tid == 0) pre_s[mkf::kN] = scale;
    }
    __syncthreads();
    const float scale = pre_s[mkf::kN];
    for (int e = tid; e < d; e += kMkBlockThreads) y[e] = num::mul_rn(num::mul_rn(ys[e], scale), s.norm[e]);
    if (s.quantize_out) {
        __syncthreads();
        mkb::block_quantize(y, d, P.xq + row * (d / 32));
    }
}

namespace mkf {

// Lane 0: the four streams of row r of token t become post_k * y + sum_j comb[j][k] X_j.
__device__ inline void stream_update(const MkPass& P, long long t, long long r, float y) {
    const long long d = P.d.n_embd;
    const float* hc = P.fn->hc + t * num::kHcMix;
    float* X = P.fn->x4 + t * kN * d + r;
    float xj[kN];
#pragma unroll
    for (int j = 0; j < kN; ++j) xj[j] = X[j * d];
#pragma unroll
    for (int k = 0; k < kN; ++k) X[k * d] = num::hc_update(hc[kN + k], y, hc + 2 * kN, k, xj);
}

}  // namespace mkf

// Item j: rows 2j and 2j+1 (the last item may have one) of y = W . Att[t], for every token,
// then the streams' update of those rows.
__device__ inline void mk_fn_matmul_hc_post(const MkPass& P, const MkModelStage& s, long long item, int lane) {
    const long long aw = P.d.n_head * P.d.hd_v;
    const long long r = 2 * item;
    const bool two = r + 1 < s.w.rows;
    const uint8_t* row0 = mkm::wrow(s.w, r);
    const uint8_t* row1 = mkm::wrow(s.w, two ? r + 1 : r);
    for (long long t = 0; t < P.n_tokens; ++t) {
        float v0, v1;
        warp_dot_row2(s.w.type, row0, row1, P.att + t * aw, P.attq + t * (aw / 32), aw, lane, &v0, &v1);
        if (lane == 0) {
            mkf::stream_update(P, t, r, v0);
            if (two) mkf::stream_update(P, t, r + 1, v1);
        }
    }
}

__device__ inline void mk_fn_shared_gate(const MkPass& P, const MkModelStage& s, long long t, int lane) {
    const long long d = P.d.n_embd;
    const float g = mkm::warp_dot_lanes(P.fn->layers[s.layer].gate_inp_shexp, P.xn + t * d, d, lane);
    if (lane == 0) P.fn->gs[t] = num::sigmoid(g);
}

// Item r: row r of the shared expert's gated activations, for every token.
__device__ inline void mk_fn_shared_ffn(const MkPass& P, const MkModelStage& s, long long r, int lane) {
    const MkFnPass& F = *P.fn;
    const MkFnLayerW& L = F.layers[s.layer];
    const long long n = P.d.n_embd;
    const uint8_t* gr = mkm::wrow(L.gate_shexp, r);
    const uint8_t* ur = mkm::wrow(L.up_shexp, r);
    for (long long t = 0; t < P.n_tokens; ++t) {
        const float* x = P.xn + t * n;
        const quant::BlockQ8A* xq = P.xq + t * (n / 32);
        float g, u;
        if (L.gate_shexp.type == L.up_shexp.type) {
            warp_dot_row2(L.gate_shexp.type, gr, ur, x, xq, n, lane, &g, &u);
        } else {
            g = warp_dot_row(L.gate_shexp.type, gr, x, xq, n, lane);
            u = warp_dot_row(L.up_shexp.type, ur, x, xq, n, lane);
        }
        if (lane == 0) F.hs[t * F.n_ff_shexp + r] = num::mul_rn(num::silu(g), u);
    }
}

__device__ inline void mk_fn_shared_quantize(const MkPass& P, long long t, int lane) {
    const MkFnPass& F = *P.fn;
    mkm::warp_quantize(F.hs + t * F.n_ff_shexp, F.n_ff_shexp, F.hsq + t * (F.n_ff_shexp / 32), lane);
}

// Item j: rows 2j and 2j+1 of y = sum over slots k of w_k (Wd_e(k)[r] . HE[t][k]) (slot order)
// + GS[t] (Wds[r] . HS[t]), for every token, then the streams' update of those rows.
__device__ inline void mk_fn_moe_down_hc_post(const MkPass& P, const MkModelStage& s, long long item, int lane) {
    const MkDims& d = P.d;
    const MkFnPass& F = *P.fn;
    const MkLayerW& L = mk_layer(P, s);
    const MkW& ds = F.layers[s.layer].down_shexp;
    const long long Fs = F.n_ff_shexp, r = 2 * item;
    const bool two = r + 1 < d.n_embd;
    const long long r1 = two ? r + 1 : r;
    WarpPhaseClock clk(lane, false);  // the sub-phases are clocked in mk_expert_down_add only
    for (long long t = 0; t < P.n_tokens; ++t) {
        float acc0, acc1;
        expert_down_slots(P, L.down_exps, t, r, r1, lane, &acc0, &acc1, clk);
        float s0, s1;
        warp_dot_row2(ds.type, mkm::wrow(ds, r), mkm::wrow(ds, r1), F.hs + t * Fs, F.hsq + t * (Fs / 32), Fs, lane, &s0,
                      &s1);
        if (lane == 0) {
            acc0 = fmaf(F.gs[t], s0, acc0);
            acc1 = fmaf(F.gs[t], s1, acc1);
            mkf::stream_update(P, t, r, acc0);
            if (two) mkf::stream_update(P, t, r + 1, acc1);
        }
    }
}

// One work item of a flashnext stage, run by the whole warp. Not inlined into the stage loop, so
// that its register allocation does not move with the inliner's choices (ptxas spills measured
// both ways: 184/560 bytes of spill stores/loads out of line, 212/976 inlined).
__device__ __noinline__ void mk_flashnext_item(int op, const MkModelStage& s, long long item, int lane) {
    const MkPass& P = *s.pass;
    switch (op) {
    case kOpFnEmbedHc: mk_fn_embed_hc(P, item, lane); break;
    case kOpFnIdxDots: mk_fn_idx_dots(P, s, item, lane); break;
    case kOpFnIdxFinish: mk_fn_idx_finish(P, s, item, lane); break;
    case kOpFnIdxScore: mk_fn_idx_score(P, s, item, lane); break;
    case kOpFnMatMulHcPost: mk_fn_matmul_hc_post(P, s, item, lane); break;
    case kOpFnSharedGate: mk_fn_shared_gate(P, s, item, lane); break;
    case kOpFnSharedFfn: mk_fn_shared_ffn(P, s, item, lane); break;
    case kOpFnSharedQuantize: mk_fn_shared_quantize(P, item, lane); break;
    case kOpFnMoeDownHcPost: mk_fn_moe_down_hc_post(P, s, item, lane); break;
    default: break;
    }
}

// A flashnext stage: its items over all warps, round-robin. Not inlined into the megakernel,
// so its registers are allocated on their own and the other stages keep theirs.
__device__ __noinline__ void mk_flashnext_stage(const MkStage& st, long long gwarp, long long warps, int lane) {
    const bool timed = mk_phase_flag();
    for (long long item = gwarp; item < st.items; item += warps) {
        const unsigned long long t0 = timed ? arbor_wall_ns() : 0;
        mk_flashnext_item(st.op, st.model, item, lane);
        if (timed) {
            arbor_syncwarp();
            if (lane == 0) mk_item_time(st.op, item != gwarp, t0);
        }
    }
}

}  // namespace arbor::gpu
