// ARBOR_MK_STAGED_DOTS (mk_model.hpp): a decode step's row-dot stages (the Q/K/V projection, the
// matmuls that add into X, the dense gated FFN, the LM head and quantized router logits, the
// routed experts' gated FFN and down projection) with their weights staged through shared memory.
//
// A row-dot item is latency-bound: lane j walks its sub-blocks j, j + 32, ... in the contract's
// order, and each step waits on its loads before the next step's are issued (hoisting them into
// registers spilled: gpu-next12). Here the bytes travel by cp.async, which takes no registers:
// each warp streams its items through two halves of its own part of the arena, as units of a
// few steps of an item's two rows, the next unit in flight while it computes the current one
// from shared memory; the workgroup first copies the token's Q8A activation row into the arena
// once. Each lane then runs exactly warp_dot_quant_rows's sequence: the same sub_terms of the
// same bytes, accumulated in the same order, then warp_combine; so the bits do not change.
//
// Only NVIDIA sm_80+ builds with the dynamic arena compile it in (cp.async), and only passes of
// one token whose stage types have a staged form (mk_staged_ok) take it.
#pragma once

#include "arbor_hip.hpp"
#include "mk_async.hpp"
#include "mk_dot.hpp"
#include "mk_model.hpp"
#include "mk_model_ops.hpp"

#if ARBOR_MK_STAGED_DOTS && ARBOR_CP_ASYNC && ARBOR_MK_SMEM_FLOATS > 10176
#define ARBOR_MK_STAGED_ON 1
#else
#define ARBOR_MK_STAGED_ON 0
#endif

namespace arbor::gpu {

#if ARBOR_MK_STAGED_ON

namespace mks {

constexpr int kXqBytes = 12288;  // the activation row: up to 307 Q8A blocks (a 9824-wide input)
constexpr int kWarpBytes = (kMkSmemFloats * 4 - kXqBytes) / kMkBlockWarps / 32 * 32;
constexpr int kHalf = kWarpBytes / 2;  // one unit's bytes (a multiple of 16)
constexpr int kRowSlack = 32;          // a row's piece widened to 16-byte bounds at both ends

// Bytes a block and sub-blocks a block of the types with a staged form; false for the others.
__device__ inline bool geom(int type, int& bytes, int& subs) {
    using namespace quant::blocks;
    switch (static_cast<TensorType>(type)) {
    case TensorType::Q4_0: bytes = Q4_0::kBytes, subs = Q4_0::kSubs; return true;
    case TensorType::Q8_0: bytes = Q8_0::kBytes, subs = Q8_0::kSubs; return true;
    case TensorType::Q4_K: bytes = Q4_K::kBytes, subs = Q4_K::kSubs; return true;
    case TensorType::Q5_K: bytes = Q5_K::kBytes, subs = Q5_K::kSubs; return true;
    case TensorType::Q6_K: bytes = Q6_K::kBytes, subs = Q6_K::kSubs; return true;
    case TensorType::IQ4_NL: bytes = IQ4_NL::kBytes, subs = IQ4_NL::kSubs; return true;
    case TensorType::IQ4_XS: bytes = IQ4_XS::kBytes, subs = IQ4_XS::kSubs; return true;
    default: return false;
    }
}

// An item's two rows (mkm::item_rows; w1 may be w0: one row computed twice, as warp_dot_row2 is
// called for the last row of an odd matrix) and how they are cut into units of `spp` steps (a
// step: the 32 sub-blocks the lanes take together, `step_bytes` of a row). mk_staged_ok admits
// only stages whose two rows have one type and one length.
struct Item : mkm::ItemRows {
    int step_bytes, steps, spp, units;
    __device__ unsigned long long row_len() const { return row_bytes[0]; }
};

// A row's part of a unit buffer: its spp steps rounded up to 16 bytes, and the slack.
__host__ __device__ constexpr int region(int spp, int step_bytes) { return (spp * step_bytes + 15) / 16 * 16 + kRowSlack; }

// Units of at most spp steps whose two rows (each widened to 16-byte bounds) fit in kHalf bytes.
__device__ inline bool cut(Item& it, long long n) {
    int bytes = 0, subs = 1;
    if (!geom(it.type, bytes, subs) || 32 % subs != 0) return false;
    it.step_bytes = 32 / subs * bytes;
    it.steps = static_cast<int>((n / 32 + 31) / 32);
    it.spp = (kHalf / 2 - kRowSlack) / it.step_bytes;
    if (it.spp > 1 && region(it.spp, it.step_bytes) * 2 > kHalf) --it.spp;  // (the 16-byte rounding)
    if (it.spp < 1 || region(it.spp, it.step_bytes) * 2 > kHalf) return false;
    it.units = (it.steps + it.spp - 1) / it.spp;
    return true;
}

// Bytes [b0, b1) of row i of unit u, and the 16-byte-aligned global range that holds them.
__device__ inline void unit_range(const Item& it, int u, int i, unsigned long long& a0, unsigned long long& a1) {
    const unsigned long long b0 = static_cast<unsigned long long>(u) * it.spp * it.step_bytes;
    unsigned long long b1 = b0 + static_cast<unsigned long long>(it.spp) * it.step_bytes;
    if (b1 > it.row_len()) b1 = it.row_len();
    const unsigned long long base = reinterpret_cast<unsigned long long>(it.w[i]);
    a0 = (base + b0) & ~15ull;
    a1 = (base + b1 + 15ull) & ~15ull;  // (at most 15 bytes past the row: device tensors are padded to 256)
}

__device__ inline uint8_t* row_buf(uint8_t* half, const Item& it, int i) {
    return half + i * region(it.spp, it.step_bytes);
}

// Starts unit u's copy into `half` (this warp's lanes) and commits it as one group.
__device__ inline void issue(const Item& it, int u, uint8_t* half, int lane) {
    const unsigned d = shared_address(half);
    for (int i = 0; i < 2; ++i) {
        if (i == 1 && it.w[1] == it.w[0]) break;
        unsigned long long a0, a1;
        unit_range(it, u, i, a0, a1);
        const unsigned di = d + static_cast<unsigned>(row_buf(half, it, i) - half);
        for (unsigned long long o = 16ull * lane; a0 + o < a1; o += 16ull * 32)
            cp_async16(di + static_cast<unsigned>(o), reinterpret_cast<const void*>(a0 + o));
    }
    cp_async_commit();
}

// Lane `lane`'s accumulators over unit u's steps, from shared memory: warp_dot_quant_rows's
// loop body for sub-blocks b = lane + 32 k, k in the unit's steps, in order.
template <class Fmt>
__device__ inline void unit_dots(const Item& it, int u, const uint8_t* half, const quant::BlockQ8A* xs, long long n,
                                 int lane, float* a) {
    const long long subs = n / 32;
    const uint8_t* r[2];
    for (int i = 0; i < 2; ++i) {
        const int ii = it.w[1] == it.w[0] ? 0 : i;
        unsigned long long a0, a1;
        unit_range(it, u, ii, a0, a1);
        // row_buf holds the global bytes from a0 on; r[i] stands where the row's byte 0 would be
        r[i] = row_buf(const_cast<uint8_t*>(half), it, ii) - (a0 - reinterpret_cast<unsigned long long>(it.w[ii]));
    }
    const int k1 = (u + 1) * it.spp < it.steps ? (u + 1) * it.spp : it.steps;
    for (int k = u * it.spp; k < k1; ++k) {
        const long long b = lane + 32ll * k;
        if (b >= subs) break;
        const long long off = (b / Fmt::kSubs) * Fmt::kBytes;
        const int sb = int(b % Fmt::kSubs);
        const quant::BlockQ8A& x = xs[b];
        quant::blocks::SubTerms t[2];
#pragma unroll
        for (int i = 0; i < 2; ++i) t[i] = sub_terms<Fmt>(r[i] + off, sb, x);
#pragma unroll
        for (int i = 0; i < 2; ++i) a[i] = quant::blocks::lane_accumulate<Fmt::kHasMin>(a[i], t[i], x.d);
    }
}

__device__ inline void unit_dots_any(const Item& it, int u, const uint8_t* half, const quant::BlockQ8A* xs, long long n,
                                     int lane, float* a) {
    using namespace quant::blocks;
    switch (static_cast<TensorType>(it.type)) {
    case TensorType::Q4_0: unit_dots<Q4_0>(it, u, half, xs, n, lane, a); break;
    case TensorType::Q8_0: unit_dots<Q8_0>(it, u, half, xs, n, lane, a); break;
    case TensorType::Q4_K: unit_dots<Q4_K>(it, u, half, xs, n, lane, a); break;
    case TensorType::Q5_K: unit_dots<Q5_K>(it, u, half, xs, n, lane, a); break;
    case TensorType::Q6_K: unit_dots<Q6_K>(it, u, half, xs, n, lane, a); break;
    case TensorType::IQ4_NL: unit_dots<IQ4_NL>(it, u, half, xs, n, lane, a); break;
    case TensorType::IQ4_XS: unit_dots<IQ4_XS>(it, u, half, xs, n, lane, a); break;
    default: break;
    }
}

// (Token 0's) slots an item runs one after another: the expert down's routed experts; 1 otherwise.
__device__ inline int n_slots(int op, const MkPass& P) { return op == kOpExpertDownAdd ? static_cast<int>(P.d.n_used) : 1; }

// Slot `slot` of item `item` of a staged stage: its rows, and their units.
__device__ inline Item item_rows(int op, const MkPass& P, const MkModelStage& s, long long item, int slot, long long n) {
    Item it{};
    static_cast<mkm::ItemRows&>(it) = mkm::item_rows(op, P, s, item, slot);
    cut(it, n);
    return it;
}

// The outputs of slot `slot` of an item from its two dots (lane 0), as the unstaged ops write
// them for token 0. The expert down sums its slots' dots in slot order into acc (from +0, as
// expert_down_slots does) and adds the sums into X after the last one.
__device__ inline void finish(int op, const MkPass& P, const MkModelStage& s, long long item, int slot, float v0, float v1,
                              float* acc) {
    const MkDims& d = P.d;
    if (op == kOpQkvDots) {
        const long long r = 2 * item;
        const mkm::QkvRow q = mkm::qkv_row(d, mk_layer(P, s), r);
        if (q.bias) v0 = num::add_rn(v0, q.bias[q.rr]), v1 = num::add_rn(v1, q.bias[q.rr + 1]);
        P.qkv[r] = v0;
        P.qkv[r + 1] = v1;
    } else if (op == kOpMatMulAdd) {
        const long long r = 2 * item;
        float* x = P.x + r;
        x[0] = num::add_rn(x[0], v0);
        if (r + 1 < s.w.rows) x[1] = num::add_rn(x[1], v1);
    } else if (op == kOpMatMulStore) {  // the LM head or the router logits, of the one row
        const long long r = 2 * item;
        float* out = s.out_buf == kBufLogits ? P.logits : P.router;
        out[r] = v0;
        if (r + 1 < s.w.rows) out[r + 1] = v1;
    } else if (op == kOpGatedFfn) {
        P.h[item] = num::mul_rn(num::silu(v0), v1);
    } else if (op == kOpExpertGatedFfn) {
        P.he[item] = num::mul_rn(num::silu(v0), v1);  // he[pair * n_ff_exp + r]
    } else {
        const float wk = P.route_w[slot];
        acc[0] = fmaf(wk, v0, acc[0]);
        acc[1] = fmaf(wk, v1, acc[1]);
        if (slot + 1 == d.n_used) {
            const long long r = 2 * item;
            float* x = P.x + r;
            x[0] = num::add_rn(x[0], acc[0]);
            if (r + 1 < d.n_embd) x[1] = num::add_rn(x[1], acc[1]);
            acc[0] = acc[1] = 0.0f;
        }
    }
}

// The stage's activation rows (Q8A: one, or the expert down's n_used slots' rows one after
// another), their width and their bytes.
__device__ inline const quant::BlockQ8A* stage_xq(int op, const MkPass& P, const MkModelStage& s, long long& n,
                                                 long long& bytes) {
    const quant::BlockQ8A* xq = P.xq;
    long long rows = 1;
    n = P.d.n_embd;
    if (op == kOpMatMulAdd) {
        const mkm::In in = mkm::stage_in(P, s.buf);
        n = in.width;
        xq = in.xq;
    } else if (op == kOpExpertDownAdd) {
        n = P.d.n_ff_exp;
        xq = P.heq;
        rows = P.d.n_used;
    }
    bytes = rows * (n / 32) * static_cast<long long>(sizeof(quant::BlockQ8A));
    return xq;
}

}  // namespace mks

// Whether stage (op, s) runs staged: one token, an op and types with a staged form, a Q8A
// activation row that fits. The same answer in every thread (it reads only the stage and pass).
__device__ inline bool mk_staged_ok(int op, const MkModelStage& s) {
    const MkPass& P = *s.pass;
    if (P.n_tokens != 1 || (op != kOpQkvDots && op != kOpMatMulAdd && op != kOpGatedFfn && op != kOpMatMulStore &&
                            op != kOpExpertGatedFfn && op != kOpExpertDownAdd))
        return false;
    if (op == kOpMatMulStore && (s.row_items || (s.out_buf == kBufLogits && P.n_out != 1))) return false;
    long long n = 0, xbytes = 0;
    const quant::BlockQ8A* xq = mks::stage_xq(op, P, s, n, xbytes);
    if (xq == nullptr || n % 32 != 0 || xbytes > mks::kXqBytes) return false;
    int types[3] = {-1, -1, -1};
    unsigned long long rb[3] = {0, 0, 0};
    const MkLayerW* L = s.layer >= 0 ? &mk_layer(P, s) : nullptr;
    if (op == kOpQkvDots) {
        types[0] = L->wq.type, types[1] = L->wk.type, types[2] = L->wv.type;
        rb[0] = L->wq.row_bytes, rb[1] = L->wk.row_bytes, rb[2] = L->wv.row_bytes;
    } else if (op == kOpMatMulAdd || op == kOpMatMulStore) {
        types[0] = s.w.type, rb[0] = s.w.row_bytes;
    } else if (op == kOpGatedFfn) {
        if (L->gate.type != L->up.type || L->gate.row_bytes != L->up.row_bytes) return false;
        types[0] = L->gate.type, rb[0] = L->gate.row_bytes;
    } else if (op == kOpExpertGatedFfn) {
        if (L->gate_exps.type != L->up_exps.type || L->gate_exps.row_bytes != L->up_exps.row_bytes) return false;
        types[0] = L->gate_exps.type, rb[0] = L->gate_exps.row_bytes;
    } else {
        types[0] = L->down_exps.type, rb[0] = L->down_exps.row_bytes;
    }
    for (int k = 0; k < 3; ++k) {
        if (types[k] < 0) continue;
        mks::Item it{};
        it.type = types[k];
        it.row_bytes[0] = it.row_bytes[1] = rb[k];
        if (!mks::cut(it, n)) return false;
    }
    return true;
}

// The stage's items of this warp (gwarp, gwarp + warps, ...), streamed through the arena:
// the workgroup stages the activation row, then each warp runs its units two at a time (one in
// flight while the other is computed). Every warp of the workgroup calls it (it has two
// workgroup barriers); no warp leaves before all are done with the arena.
__device__ __noinline__ void mk_staged_stage(int op, const MkModelStage& s, long long items, long long gwarp,
                                             long long warps, int lane, float* smem) {
    const MkPass& P = *s.pass;
    long long n = 0, xbytes = 0;
    const quant::BlockQ8A* xq = mks::stage_xq(op, P, s, n, xbytes);
    uint8_t* arena = reinterpret_cast<uint8_t*>(smem);
    const quant::BlockQ8A* xs = reinterpret_cast<const quant::BlockQ8A*>(arena);
    const int warp = static_cast<int>(threadIdx.x) / 32;
    uint8_t* mine = arena + mks::kXqBytes + warp * mks::kWarpBytes;
    uint8_t* half[2] = {mine, mine + mks::kHalf};
    // The activation rows (multiples of 40 bytes; block_stage_async copies them from a 16-byte
    // aligned buffer when their length is a multiple of 16, or reports that it cannot).
    const bool xasync = block_stage_async(arena, xq, xbytes);
    const int nsl = mks::n_slots(op, P);
    long long item = gwarp;
    int slot = 0, u = 0;
    mks::Item cur{};
    if (item < items) {
        cur = mks::item_rows(op, P, s, item, 0, n);
        mks::issue(cur, 0, half[0], lane);
    }
    if (!xasync) block_copy(reinterpret_cast<unsigned*>(arena), reinterpret_cast<const unsigned*>(xq), xbytes / 4);
    // This thread's activation copies have landed (its unit-0 group may still be in flight).
    if (item < items) cp_async_wait_all_but_newest();
    else block_async_wait();
    __syncthreads();
    float a[2] = {0.0f, 0.0f}, acc[2] = {0.0f, 0.0f};
    int h = 0;
    while (item < items) {
        // The next unit: this slot's next piece, this item's next slot, or the warp's next item.
        long long nitem = item;
        int nslot = slot, nu = u + 1;
        mks::Item nxt = cur;
        if (nu >= cur.units) {
            nu = 0;
            if (++nslot >= nsl) nslot = 0, nitem = item + warps;
            if (nitem < items) nxt = mks::item_rows(op, P, s, nitem, nslot, n);
        }
        const bool more = nitem < items;
        if (more) mks::issue(nxt, nu, half[h ^ 1], lane);
        if (more) cp_async_wait_all_but_newest();
        else block_async_wait();
        arbor_syncwarp();  // every lane's copies of this unit are visible to the warp
        mks::unit_dots_any(cur, u, half[h], xs + cur.xoff, n, lane, a);
        if (u + 1 == cur.units) {
            const float v0 = warp_combine(a[0]), v1 = warp_combine(a[1]);
            if (lane == 0) mks::finish(op, P, s, item, slot, v0, v1, acc);
            a[0] = a[1] = 0.0f;
        }
        arbor_syncwarp();  // this half is free for the unit after next
        item = nitem;
        slot = nslot;
        u = nu;
        cur = nxt;
        h ^= 1;
    }
    __syncthreads();  // the arena is free for the level's next stage
}

#endif  // ARBOR_MK_STAGED_ON

}  // namespace arbor::gpu
