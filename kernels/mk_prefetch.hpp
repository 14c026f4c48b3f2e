// ARBOR_MK_L2_PREFETCH (mk_model.hpp): while a workgroup waits at a grid barrier, each warp asks
// the L2 for the weight rows of its first items in the next level's row-dot stages. The rows do
// not depend on the level being finished, only the activations do, so their first loads can
// come from L2 instead of device memory when the level starts. Every row is prefetched by the
// warp that will read it, once, so no byte is read from memory that the level would not read
// anyway; a warp prefetches at most kMkPrefetchItems items a stage, which bounds what the L2 must
// hold (an LM head's rows would not fit).
#pragma once

#include "arbor_hip.hpp"
#include "mk_model.hpp"
#include "mk_model_ops.hpp"
#include "mk_program.hpp"

namespace arbor::gpu {

constexpr long long kMkPrefetchItems = 2;

// Asks the L2 for bytes [p, p + bytes) (widened to 16-byte bounds); no register waits on it.
// sm_90's bulk prefetch is one instruction for a whole row; other targets do nothing (and AMD
// builds compile the prefetch loop out: megakernel.hip).
__device__ inline void mk_l2_prefetch(const uint8_t* p, unsigned long long bytes) {
#if defined(ARBOR_GPU_VENDOR_NVIDIA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const unsigned long long a = reinterpret_cast<unsigned long long>(p) & ~15ull;
    const unsigned long long e = (reinterpret_cast<unsigned long long>(p) + bytes + 15ull) & ~15ull;
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(a), "r"(static_cast<unsigned>(e - a)) : "memory");
#else
    (void)p;
    (void)bytes;
#endif
}

// The weight rows of this warp's first kMkPrefetchItems items of stage st (lane k item k):
// the Q/K/V projection, the matmuls (o, dense down, router logits, LM head) and the dense gated
// FFN; for the expert down, the first item's rows of every (token, slot) pair (lane k pair k, up
// to 32), whose routes were written two levels earlier. The expert gated FFN is left out: its
// routes are written by the level the barrier closes.
__device__ inline void mk_prefetch_rows(const MkStage& st, long long gwarp, long long warps, int lane) {
    const int op = st.op;
    if (op == kOpExpertDownAdd) {
        const MkModelStage& s = st.model;
        const MkPass& P = *s.pass;
        const long long r = 2 * gwarp, pair = lane;
        if (r >= P.d.n_embd || pair >= P.n_tokens * P.d.n_used) return;
        const int e = P.route_idx[pair];
        if (e < 0 || e >= P.d.n_expert) return;  // (a hint only: never an address outside the tensor)
        const MkW& dw = mk_layer(P, s).down_exps;
        mk_l2_prefetch(mkm::wrow(dw, r, e), (r + 1 < P.d.n_embd ? 2ull : 1ull) * dw.row_bytes);
        return;
    }
    if (op != kOpQkvDots && op != kOpMatMulAdd && op != kOpMatMulStore && op != kOpGatedFfn) return;
    if (lane >= kMkPrefetchItems) return;
    const long long item = gwarp + lane * warps;
    if (item >= st.items) return;
    const MkModelStage& s = st.model;
    const MkPass& P = *s.pass;
    if (op == kOpMatMulAdd || op == kOpMatMulStore) {
        const long long r = 2 * item;
        mk_l2_prefetch(mkm::wrow(s.w, r), (r + 1 < s.w.rows ? 2ull : 1ull) * s.w.row_bytes);
        return;
    }
    const MkLayerW& L = mk_layer(P, s);
    if (op == kOpGatedFfn) {
        mk_l2_prefetch(mkm::wrow(L.gate, item), L.gate.row_bytes);
        mk_l2_prefetch(mkm::wrow(L.up, item), L.up.row_bytes);
        return;
    }
    const mkm::QkvRow q = mkm::qkv_row(P.d, L, 2 * item);  // kOpQkvDots: rows 2 item, 2 item + 1, one matrix
    mk_l2_prefetch(mkm::wrow(q.w, q.rr), 2ull * q.w.row_bytes);
}

}  // namespace arbor::gpu
