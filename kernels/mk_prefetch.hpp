// ARBOR_MK_L2_PREFETCH (mk_model.hpp): while a workgroup waits at a grid barrier, each warp asks
// the L2 for the weight rows of its first items in the next level's row-dot stages. The rows do
// not depend on the level being finished, only the activations do, so their first loads can
// come from L2 instead of device memory when the level starts. Every row is prefetched by the
// warp that will read it, once, so no byte is read from memory that the level would not read
// anyway; a warp prefetches at most kMkPrefetchItems items a stage, which bounds what the L2 must
// hold (an LM head's rows would not fit). With ARBOR_MK_L2_PREFETCH=2 (NVIDIA's default) a pass
// that streams its KV cells (P.kv_stream) asks for nothing: its cells fill the L2.
#pragma once

#include "arbor_hip.hpp"
#include "mk_model.hpp"
#include "mk_model_ops.hpp"
#include "mk_program.hpp"

namespace arbor::gpu {

constexpr long long kMkPrefetchItems = 2;

// Asks the L2 for bytes [p, p + bytes) (widened to 16-byte bounds); no register waits on it.
// sm_90's bulk prefetch is one instruction for the whole range; other targets do nothing.
__device__ inline void mk_l2_prefetch(const void* p, unsigned long long bytes) {
#if defined(ARBOR_GPU_VENDOR_NVIDIA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const unsigned long long a = reinterpret_cast<unsigned long long>(p) & ~15ull;
    const unsigned long long e = (reinterpret_cast<unsigned long long>(p) + bytes + 15ull) & ~15ull;
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(a), "r"(static_cast<unsigned>(e - a)) : "memory");
#else
    (void)p;
    (void)bytes;
#endif
}

// The weight rows of item `item` of a row-dot stage into the L2 (mkm::item_rows): the Q/K/V
// projection, the matmuls (o, dense down, router logits, LM head) and the dense gated FFN in lane
// `sub` 0; for the expert down, lane `sub` takes (token, slot) pair `sub` (up to 32), whose route
// was written two levels before the stage, or in the level just before by this workgroup itself
// (ARBOR_MK_PROLOGUES' router select). Other ops, items past the stage and other lanes ask for
// nothing. The expert gated FFN is left out: its routes are written by the level just before, or
// in its own level by a prologue.
__device__ inline void mk_prefetch_item(const MkStage& st, long long item, int sub) {
    const int op = st.op;
    if (item >= st.items) return;
    // The op first: only a model row-dot stage's record is an MkModelStage (MkStage's union), so
    // nothing reads a pass through any other stage's bytes (the counter programs' waits).
    const bool down = op == kOpExpertDownAdd;
    if (!down && (sub != 0 || (op != kOpQkvDots && op != kOpMatMulAdd && op != kOpMatMulStore && op != kOpGatedFfn)))
        return;
    const MkModelStage& s = st.model;
    const MkPass& P = *s.pass;
#if ARBOR_MK_L2_PREFETCH == 2
    if (P.kv_stream) return;  // a pass whose KV cells outweigh the L2 keeps the L2 for them
#endif
    if (down && sub >= P.n_tokens * P.d.n_used) return;
    const mkm::ItemRows r = mkm::item_rows(op, P, s, item, sub);
    if (!r.ok) return;  // (a hint only: never an address outside the tensor)
    if (r.w[1] == r.w[0]) {
        mk_l2_prefetch(r.w[0], r.row_bytes[0]);
    } else if (r.w[1] == r.w[0] + r.row_bytes[0]) {  // adjacent rows: one request
        mk_l2_prefetch(r.w[0], r.row_bytes[0] + r.row_bytes[1]);
    } else {
        mk_l2_prefetch(r.w[0], r.row_bytes[0]);
        mk_l2_prefetch(r.w[1], r.row_bytes[1]);
    }
}

// What a warp asks the L2 for while it waits at the barrier before stage st: its first
// kMkPrefetchItems row-dot items (lane k item k; the expert down: its first item, lane k pair k).
__device__ inline void mk_prefetch_rows(const MkStage& st, long long gwarp, long long warps, int lane) {
    if (st.op == kOpExpertDownAdd) {
        mk_prefetch_item(st, gwarp, lane);
        return;
    }
    if (lane < kMkPrefetchItems) mk_prefetch_item(st, gwarp + lane * warps, 0);
}

}  // namespace arbor::gpu
