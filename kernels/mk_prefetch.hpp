// ARBOR_MK_L2_PREFETCH (mk_model.hpp): while a workgroup waits at a grid barrier, each warp asks
// the L2 for the weight rows of its first items in the next level's row-dot stages. The rows do
// not depend on the level being finished, only the activations do, so their first loads can
// come from L2 instead of device memory when the level starts. Every row is prefetched by the
// warp that will read it, once, so no byte is read from memory that the level would not read
// anyway; a warp prefetches at most kMkPrefetchItems items a stage, which bounds what the L2 must
// hold (an LM head's rows would not fit).
#pragma once

#include "arbor_hip.hpp"
#include "mk_async.hpp"
#include "mk_block_ops.hpp"
#include "mk_model.hpp"
#include "mk_model_ops.hpp"
#include "mk_program.hpp"

namespace arbor::gpu {

constexpr long long kMkPrefetchItems = 2;

// The weight rows of item `item` of a row-dot stage into the L2: the Q/K/V projection, the
// matmuls (o, dense down, router logits, LM head) and the dense gated FFN in lane `sub` 0; for
// the expert down, lane `sub` takes (token, slot) pair `sub` (up to 32), whose route was written
// two levels before the stage. Other ops, items past the stage and other lanes ask for nothing.
// The expert gated FFN is left out: its routes are written by the level just before it.
__device__ inline void mk_prefetch_item(const MkStage& st, long long item, int sub) {
    const int op = st.op;
    if (item >= st.items) return;
    const MkModelStage& s = st.model;
    const MkPass& P = *s.pass;
    if (op == kOpExpertDownAdd) {
        const long long r = 2 * item, pair = sub;
        if (r >= P.d.n_embd || pair >= P.n_tokens * P.d.n_used) return;
        const int e = P.route_idx[pair];
        if (e < 0 || e >= P.d.n_expert) return;  // (a hint only: never an address outside the tensor)
        const MkW& dw = mk_layer(P, s).down_exps;
        mk_l2_prefetch(mkm::wrow(dw, r, e), (r + 1 < P.d.n_embd ? 2ull : 1ull) * dw.row_bytes);
        return;
    }
    if (sub != 0) return;
    if (op == kOpMatMulAdd || op == kOpMatMulStore) {
        const long long r = 2 * item;
        mk_l2_prefetch(mkm::wrow(s.w, r), (r + 1 < s.w.rows ? 2ull : 1ull) * s.w.row_bytes);
        return;
    }
    if (op != kOpQkvDots && op != kOpGatedFfn) return;
    const MkLayerW& L = mk_layer(P, s);
    if (op == kOpGatedFfn) {
        mk_l2_prefetch(mkm::wrow(L.gate, item), L.gate.row_bytes);
        mk_l2_prefetch(mkm::wrow(L.up, item), L.up.row_bytes);
        return;
    }
    const mkm::QkvRow q = mkm::qkv_row(P.d, L, 2 * item);  // kOpQkvDots: rows 2 item, 2 item + 1, one matrix
    mk_l2_prefetch(mkm::wrow(q.w, q.rr), 2ull * q.w.row_bytes);
}

// What a warp asks the L2 for while it waits at the barrier before stage st: its first
// kMkPrefetchItems row-dot items (lane k item k; the expert down: its first item, lane k pair k),
// and with ARBOR_MK_ATTN_PREFETCH the K and V rows of its workgroup's first attention chunk item
// (warp 0, lane 0).
__device__ inline void mk_prefetch_rows(const MkStage& st, long long gwarp, long long warps, int lane) {
#if ARBOR_MK_ATTN_PREFETCH
    if (st.op == kOpAttnChunk) {
        if (threadIdx.x == 0) mk_attn_prefetch(st.model, gridDim.x - 1 - static_cast<long long>(blockIdx.x), st.items);
        return;
    }
#endif
    if (st.op == kOpExpertDownAdd) {
        mk_prefetch_item(st, gwarp, lane);
        return;
    }
    if (lane < kMkPrefetchItems) mk_prefetch_item(st, gwarp + lane * warps, 0);
}

}  // namespace arbor::gpu
