// The persistent megakernel: one launch per pass. Every workgroup is co-resident (grid from
// the occupancy API, cooperative launch where supported); the kernel walks the program level
// by level, spreading each stage's work items over all warps, with a bounded grid barrier
// between dependent levels. Warps take items in a fixed round-robin, and every item is
// self-contained, so the bits never depend on the schedule.
#include "arbor_hip.hpp"
#include "mk_block_ops.hpp"
#include "gpu_runtime.hpp"
#include "mk_dot.hpp"
#include "mk_launch.hpp"
#include "mk_lean.hpp"
#include "mk_phase.hpp"
#include "mk_prefetch.hpp"
#include "mk_desc.hpp"
#include "mk_flashnext_ops.hpp"
#include "mk_model_ops.hpp"
#include "mk_program.hpp"
#include "mk_sync.hpp"
#include "mk_tile_ops.hpp"

#include <cstdio>
#include <string>
#include <vector>

// Workgroups per SM/CU the compiler must leave registers for: on NVIDIA two 256-thread blocks
// (128 registers a thread), which the two-row dots need to run without spilling.
#ifndef ARBOR_MK_MIN_BLOCKS
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
#define ARBOR_MK_MIN_BLOCKS 2
#else
#define ARBOR_MK_MIN_BLOCKS 1
#endif
#endif

namespace arbor::gpu {

__device__ inline void mk_event(const MkProgram& p, int* n_events, int stage, unsigned long long t0, unsigned long long t1) {
    if (!p.events || *n_events >= p.max_events) return;
    MkEvent& e = p.events[static_cast<long long>(blockIdx.x) * p.max_events + *n_events];
    e.stage = stage;
    e.block = static_cast<int>(blockIdx.x);
    e.t0_ns = t0;
    e.t1_ns = t1;
    ++*n_events;
}

// The ops whose items a whole workgroup runs (mk_block_ops.hpp, mk_tile_ops.hpp, flashnext's
// sparse chunk; the router select, which uses the arena), and their dispatch.
__device__ inline bool mk_is_workgroup_op(int op) {
    return op == kOpRmsNorm || op == kOpRouterSelect || op == kOpAttnChunk || op == kOpAttnCombine || op == kOpFnAttnChunk ||
           op == kOpFnHcDots || op == kOpFnHcFinish || op == kOpFnIdxSelect || op == kOpFnAttnCombine ||
           op == kOpMatMulAddTile || op == kOpGatedFfnTile || op == kOpQkvDotsTile;
}

__device__ inline void mk_workgroup_item(int op, const MkModelStage& s, long long item, float* smem) {
    const MkPass& P = *s.pass;
    switch (op) {
    case kOpRmsNorm: mk_rms_norm_block(P, s, item, smem); break;
    case kOpRouterSelect:  // the workgroup, or warp 0; the arena holds the exponentials
#if ARBOR_MK_WG_SELECT
        if (!(mk_ab_s & kMkAbWarpSelect)) {
            mk_router_select_wg(P, item, smem);
            break;
        }
#endif
        if (threadIdx.x < 32) mk_router_select(P, item, static_cast<int>(threadIdx.x), smem);
        break;
    case kOpAttnChunk: mk_attn_chunk_block(P, s, item, smem); break;
    case kOpAttnCombine: mk_attn_combine_block(P, s, item, smem); break;
    case kOpFnAttnChunk: mk_fn_attn_chunk_block(P, s, item, smem); break;
    case kOpFnHcDots: mk_fn_hc_dots_block(P, s, item, smem); break;
    case kOpFnHcFinish: mk_fn_hc_finish_block(P, s, item, smem); break;
    case kOpFnIdxSelect: mk_fn_idx_select_block(P, item, smem); break;
    case kOpFnAttnCombine: mk_attn_combine_block(P, s, item, smem); break;  // skips the empty chunks
    case kOpMatMulAddTile: mk_matmul_add_tile(P, s, item, smem); break;
    case kOpGatedFfnTile: mk_gated_ffn_tile(P, s, item, smem); break;
    case kOpQkvDotsTile: mk_qkv_dots_tile(P, s, item, smem); break;
    default: break;
    }
}

__device__ inline void mk_run_stage(const MkStage& st, int stage_index, int level, const MkSync& sync, long long gwarp,
                                    long long warps, int lane, float* smem) {
    switch (st.op) {
    case kOpDotRows: {
        const MkDotRows& d = st.dot;
        for (long long r = gwarp; r < d.rows; r += warps) {
            const float v = warp_dot_row(d.type, d.w + r * d.row_bytes, d.x, d.xq, d.n, lane);
            if (lane == 0) d.out[r] = v;
        }
        break;
    }
    case kOpSignal:
        if (gwarp == 0 && lane == 0) {
            __threadfence();
            atomicAdd(&sync.dev->counters[st.counter.counter].value, 1u);
        }
        break;
    case kOpWaitCounter:
        if (gwarp == 0 && lane == 0)
            mk_wait_geq(sync, &sync.dev->counters[st.counter.counter].value, st.counter.target, stage_index, level,
                        kWaitCounter);
        break;
    default:
        if (mk_is_workgroup_op(st.op)) {
            // Workgroup items, dealt from the last workgroup down: warp stages of the same level
            // fill the first workgroups first. A prologue (ARBOR_MK_PROLOGUES): every workgroup
            // runs every item (one loop for both: a second inlined dispatch grew the entry's
            // spills from 432/796 to 704/1372 bytes).
#if ARBOR_MK_PROLOGUES
            const bool every = st.tail == kMkStageEvery;
            const long long first = every ? 0 : gridDim.x - 1 - blockIdx.x, step = every ? 1 : gridDim.x;
#else  // (a long long step here cost gfx1151's megakernel 4 spills)
            const long long first = gridDim.x - 1 - blockIdx.x;
            const unsigned step = gridDim.x;
#endif
            const bool timed = mk_phase_flag();
            for (long long item = first; item < st.items; item += step) {
                const unsigned long long t0 = timed ? arbor_wall_ns() : 0;
                mk_workgroup_item(st.op, st.model, item, smem);
                __syncthreads();  // the arena is reused by the next item
                if (timed && threadIdx.x == 0) mk_item_time(st.op, item != first, t0);
            }
#if ARBOR_MK_LEAN_DOTS
        } else if (mk_lean_ok(st.op, st.model)) {
            // A one-token pass's row dots as lean loops (mk_lean.hpp).
            mk_lean_stage(st.op, st.model, st.items, gwarp, warps, lane);
#endif
        } else if ((st.op >= kOpEmbed && st.op <= kOpExpertDownAdd)
#if ARBOR_MK_EXPERT_MAJOR
                   || (st.op >= kOpExpertGatedFfnMajor && st.op <= kOpExpertDownCombine)
#endif
        ) {
            // (The same loop as mk_flashnext_stage's: written out here, since a shared template
            // taking the item as a lambda was compiled as a function of its own, with spills.)
            const bool timed = mk_phase_flag();
            for (long long item = gwarp; item < st.items; item += warps) {
                const unsigned long long t0 = timed ? arbor_wall_ns() : 0;
                mk_model_item(st.op, st.model, item, lane);
                if (timed) {
                    arbor_syncwarp();
                    if (lane == 0) mk_item_time(st.op, item != gwarp, t0);
                }
            }
#if ARBOR_MK_DEP_TAILS
            if (st.model.dep_tail) mk_dep_tail(st.op, st.model, st.items, gwarp, warps, lane);
#endif
        } else if (st.op >= kOpFnEmbedHc && st.op <= kOpFnLast) {
            mk_flashnext_stage(st, gwarp, warps, lane);
        } else if (gwarp == 0 && lane == 0) {
            mk_report(sync, kMkBadOp, stage_index, level, kWaitNone, 0);
        }
        break;
    }
}

__global__ void __launch_bounds__(kMkBlockThreads, ARBOR_MK_MIN_BLOCKS) megakernel(MkProgram prog, MkSync sync) {
    __shared__ int n_events;
#if ARBOR_MK_SMEM_FLOATS > 10176
    extern __shared__ __align__(16) float smem[];  // kMkSmemFloats, dynamic (mk_launch.hip)
#else
    __shared__ __align__(16) float smem[kMkSmemFloats];
#endif
    if (threadIdx.x == 0) n_events = 0;
#if ARBOR_MK_BULK_ON
    mk_bulk_init();
#endif
    mk_phase_flag_load();
    mk_ab_load();
    mk_k_early_init();
    __syncthreads();
    const int warps_per_block = static_cast<int>(blockDim.x) / 32;
    const int lane = static_cast<int>(threadIdx.x) & 31;
    const long long gwarp = static_cast<long long>(blockIdx.x) * warps_per_block + threadIdx.x / 32;
    const long long warps = static_cast<long long>(gridDim.x) * warps_per_block;
    int si = 0;
#if ARBOR_MK_SMEM_DESC
    __shared__ MkDescCache dc;
    mk_desc_fill(prog, 0, &dc);
#define ARBOR_MK_STAGE(i) mk_desc_stage(prog, dc, (i))
#else
#define ARBOR_MK_STAGE(i) prog.stages[(i)]
#endif
    for (int level = 0; level < prog.n_levels; ++level) {
        for (; si < prog.n_stages && ARBOR_MK_STAGE(si).level == level; ++si) {
            const unsigned long long t0 = prog.events ? arbor_wall_ns() : 0;
            mk_run_stage(ARBOR_MK_STAGE(si), si, level, sync, gwarp, warps, lane, smem);
            if (prog.events) {
                __syncthreads();
                if (threadIdx.x == 0) mk_event(prog, &n_events, si, t0, arbor_wall_ns());
            }
        }
        if (level + 1 < prog.n_levels) {
            const unsigned long long t0 = prog.events ? arbor_wall_ns() : 0;
#if ARBOR_MK_BARRIER_TAILS
            // The next level is one small workgroup stage (an RMSNorm or a router select of a
            // decode step): the last workgroup to arrive runs all its items and then arrives at
            // that level's barrier for the whole grid, so the level costs no barrier of its own.
            if (si < prog.n_stages && ARBOR_MK_STAGE(si).tail == kMkStageTail && level + 2 < prog.n_levels) {
                if (mk_grid_arrive_last(sync, static_cast<unsigned>(level + 1) * gridDim.x)) {
                    const MkStage& tst = ARBOR_MK_STAGE(si);
                    const unsigned long long t1 = prog.events ? arbor_wall_ns() : 0;
                    for (long long item = 0; item < tst.items; ++item) {
                        mk_workgroup_item(tst.op, tst.model, item, smem);
                        __syncthreads();
                    }
                    if (prog.events && threadIdx.x == 0) mk_event(prog, &n_events, si, t1, arbor_wall_ns());
                    mk_grid_release(sync);
                }
                ++si;
                ++level;
            } else
#endif
            {
#if ARBOR_MK_L2_PREFETCH && defined(ARBOR_GPU_VENDOR_NVIDIA)
                // The next level's weight rows into the L2 while this workgroup waits (not in the
                // last to arrive, whose wait is over at once).
                if (!mk_grid_arrive_last(sync, static_cast<unsigned>(level + 1) * gridDim.x))
                    for (int sj = si; sj < prog.n_stages && ARBOR_MK_STAGE(sj).level == level + 1; ++sj)
                        mk_prefetch_rows(ARBOR_MK_STAGE(sj), gwarp, warps, lane);
#else
                mk_grid_arrive(sync);
#endif
#if ARBOR_MK_K_EARLY
                // The next level's attention item's K, while this workgroup waits (mk_attn_k_early).
                if (si < prog.n_stages && ARBOR_MK_STAGE(si).op == kOpAttnChunk)
                    mk_attn_k_early(ARBOR_MK_STAGE(si).model, ARBOR_MK_STAGE(si).items, smem);
#endif
            }
#if ARBOR_MK_SMEM_DESC
            mk_desc_fill(prog, si, &dc);  // the next level's descriptors, between the arrival and the wait
#endif
            if (!mk_grid_wait(sync, static_cast<unsigned>(level + 1) * gridDim.x, si - 1, level)) {
#if ARBOR_MK_K_EARLY
                block_stage_wait();  // (no copy of this workgroup's left in flight past its end)
#endif
                return;
            }
            if (prog.events && threadIdx.x == 0) mk_event(prog, &n_events, -(level + 1), t0, arbor_wall_ns());
        }
    }
#undef ARBOR_MK_STAGE
    // The last workgroup out resets the barrier for the next pass: no memset launch needed.
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        const unsigned arrived = atomicAdd(&sync.dev->counters[13].value, 1u);
        if (arrived + 1 == gridDim.x) {
            atomicExch(&sync.dev->barrier.value, 0u);
            for (int c = 0; c < 13; ++c) atomicExch(&sync.dev->counters[c].value, 0u);
            atomicExch(&sync.dev->counters[13].value, 0u);
            __threadfence();
        }
    }
}

const void* megakernel_entry() { return reinterpret_cast<const void*>(&megakernel); }

bool mk_set_ab_switches(unsigned bits) {
    void* flag = nullptr;
    return hipGetSymbolAddress(&flag, HIP_SYMBOL(mk_ab_switches)) == hipSuccess &&
           hipMemcpy(flag, &bits, sizeof bits, hipMemcpyHostToDevice) == hipSuccess;
}

// The item clock rows' names (mk_model.hpp, mk_flashnext.hpp).
static const char* mk_op_name(int op) {
    switch (op) {
    case kOpEmbed: return "embed";
    case kOpRopeTable: return "rope_table";
    case kOpRmsNorm: return "rms_norm";
    case kOpQkvDots: return "qkv_dots";
    case kOpQkvFinish: return "qkv_finish";
    case kOpAttnChunk: return "attn_chunk";
    case kOpAttnCombine: return "attn_combine";
    case kOpQuantize: return "quantize";
    case kOpMatMulAdd: return "matmul_add";
    case kOpGatedFfn: return "gated_ffn";
    case kOpMatMulStore: return "matmul_store";
    case kOpRouterSelect: return "router_select";
    case kOpExpertGatedFfn: return "expert_gated_ffn";
    case kOpExpertDownAdd: return "expert_down_add";
    case kOpExpertDownDots: return "expert_down_dots";
    case kOpMatMulAddTile: return "matmul_add_tile";
    case kOpGatedFfnTile: return "gated_ffn_tile";
    case kOpQkvDotsTile: return "qkv_dots_tile";
    case kOpExpertGatedFfnMajor: return "expert_gated_ffn_major";
    case kOpExpertDownMajor: return "expert_down_major";
    case kOpExpertDownCombine: return "expert_down_combine";
    case kOpFnEmbedHc: return "fn_embed_hc";
    case kOpFnHcDots: return "fn_hc_dots";
    case kOpFnHcFinish: return "fn_hc_finish";
    case kOpFnIdxSelect: return "fn_idx_select";
    case kOpFnAttnChunk: return "fn_attn_chunk";
    case kOpFnAttnCombine: return "fn_attn_combine";
    case kOpFnIdxDots: return "fn_idx_dots";
    case kOpFnIdxFinish: return "fn_idx_finish";
    case kOpFnIdxScore: return "fn_idx_score";
    case kOpFnMatMulHcPost: return "fn_matmul_hc_post";
    case kOpFnSharedGate: return "fn_shared_gate";
    case kOpFnSharedFfn: return "fn_shared_ffn";
    case kOpFnSharedQuantize: return "fn_shared_quantize";
    case kOpFnMoeDownHcPost: return "fn_moe_down_hc_post";
    default: return "";
    }
}

bool mk_phases_arm(bool on) {
    void *flag = nullptr, *ns = nullptr, *marks = nullptr;
    if (hipGetSymbolAddress(&flag, HIP_SYMBOL(mk_phase_on)) != hipSuccess ||
        hipGetSymbolAddress(&ns, HIP_SYMBOL(mk_phase_ns)) != hipSuccess ||
        hipGetSymbolAddress(&marks, HIP_SYMBOL(mk_phase_marks)) != hipSuccess)
        return false;
    void *item_ns = nullptr, *item_n = nullptr, *cycles = nullptr;
    if (hipGetSymbolAddress(&item_ns, HIP_SYMBOL(mk_item_ns)) != hipSuccess ||
        hipGetSymbolAddress(&item_n, HIP_SYMBOL(mk_item_n)) != hipSuccess ||
        hipGetSymbolAddress(&cycles, HIP_SYMBOL(mk_phase_cycles)) != hipSuccess)
        return false;
    const unsigned v = on ? 1u : 0u;
#if ARBOR_MK_STAGE_CLOCKS
    if (mk_stc_reset() != hipSuccess) return false;  // (measurement builds: the one-head items' stage clocks)
#endif
    return hipMemset(item_ns, 0, sizeof mk_item_ns) == hipSuccess && hipMemset(item_n, 0, sizeof mk_item_n) == hipSuccess &&
           hipMemset(cycles, 0, sizeof mk_phase_cycles) == hipSuccess &&
           hipMemset(ns, 0, sizeof(unsigned long long) * kMkPhases) == hipSuccess &&
           hipMemset(marks, 0, sizeof(unsigned long long) * kMkPhases) == hipSuccess &&
           hipMemcpy(flag, &v, sizeof v, hipMemcpyHostToDevice) == hipSuccess;
}

void mk_phases_read(std::vector<std::string>& rows, int grid) {
    void *ns = nullptr, *marks = nullptr, *cycles = nullptr;
    unsigned long long t[kMkPhases] = {}, m[kMkPhases] = {}, cy[kMkPhases] = {};
    if (hipGetSymbolAddress(&ns, HIP_SYMBOL(mk_phase_ns)) != hipSuccess ||
        hipGetSymbolAddress(&marks, HIP_SYMBOL(mk_phase_marks)) != hipSuccess ||
        hipGetSymbolAddress(&cycles, HIP_SYMBOL(mk_phase_cycles)) != hipSuccess ||
        hipMemcpy(t, ns, sizeof t, hipMemcpyDeviceToHost) != hipSuccess ||
        hipMemcpy(m, marks, sizeof m, hipMemcpyDeviceToHost) != hipSuccess ||
        hipMemcpy(cy, cycles, sizeof cy, hipMemcpyDeviceToHost) != hipSuccess)
        return;
    for (int p = 0; p < kMkPhases; ++p) {
        if (m[p] == 0) continue;
        char row[240];
        int len = std::snprintf(row, sizeof row, "phase %-28s total %10.1f us  per workgroup %9.2f us  per mark %8.3f us (%llu)",
                                kMkPhaseNames[p], t[p] / 1e3, t[p] / 1e3 / grid, t[p] / 1e3 / double(m[p]), m[p]);
        // Cycles a mark, and cycles over nanoseconds (the clock rate the phase ran at): counted
        // in -DARBOR_GPU_SUBPHASES=ON builds only.
        if (cy[p] > 0 && t[p] > 0 && len > 0 && len < int(sizeof row))
            std::snprintf(row + len, sizeof row - size_t(len), "  %9.0f cycles  %5.2f GHz", double(cy[p]) / double(m[p]),
                          double(cy[p]) / double(t[p]));
        rows.push_back(row);
    }
#if ARBOR_MK_STAGE_CLOCKS
    {  // (measurement builds: the one-head decode items' pieces, cycles an item; mk_block_ops.hpp)
        unsigned long long c[kStcSlots] = {}, n[kStcSlots] = {};
        if (mk_stc_read(c, n) == hipSuccess)
            for (int k = 0; k < kStcSlots; ++k) {
                if (n[k] == 0) continue;  // (a slot this build's items never reach)
                char name[64], row[160];
                mk_stc_name(k, name, sizeof name);
                std::snprintf(row, sizeof row, "stage clock %-30s %9.0f cycles an item (%llu)", name,
                              double(c[k]) / double(n[k]), n[k]);
                rows.push_back(row);
            }
    }
#endif
    static unsigned long long ins[kMkItemCopies][kMkItemOps][2], inn[kMkItemCopies][kMkItemOps][2];
    if (hipGetSymbolAddress(&ns, HIP_SYMBOL(mk_item_ns)) != hipSuccess ||
        hipGetSymbolAddress(&marks, HIP_SYMBOL(mk_item_n)) != hipSuccess ||
        hipMemcpy(ins, ns, sizeof ins, hipMemcpyDeviceToHost) != hipSuccess ||
        hipMemcpy(inn, marks, sizeof inn, hipMemcpyDeviceToHost) != hipSuccess)
        return;
    for (int op = 0; op < kMkItemOps; ++op) {
        double tn[2] = {0, 0}, nn[2] = {0, 0};
        for (int c = 0; c < kMkItemCopies; ++c)
            for (int k = 0; k < 2; ++k) tn[k] += double(ins[c][op][k]), nn[k] += double(inn[c][op][k]);
        if (nn[0] == 0) continue;
        char row[200];
        std::snprintf(row, sizeof row, "item op %-2d %-22s first %8.3f us (%.0f)  later %8.3f us (%.0f)", op,
                      mk_op_name(op), tn[0] / 1e3 / nn[0], nn[0], nn[1] > 0 ? tn[1] / 1e3 / nn[1] : 0.0, nn[1]);
        rows.push_back(row);
    }
}

}  // namespace arbor::gpu
