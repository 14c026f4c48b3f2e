// Phase clocks inside work items, for `bench --profile`: where an item's time goes (staging,
// dot products, softmax, ...), summed over every item into one counter per phase, and the item
// clocks (each op's items' wall time). Off unless the profiler turns them on for a pass (one
// global flag, which the megakernel copies into shared memory at its entry); on, each workgroup
// mark is a workgroup barrier plus a clock read and atomic adds by thread 0 (a warp mark: a warp
// sync and lane 0's), so profiled passes run slightly slower and only the shares are
// meaningful. The counters are __device__ globals of the including module, so only
// megakernel.hip's translation unit may include this header (it does, also through
// mk_block_ops.hpp, mk_tile_ops.hpp, mk_model_ops.hpp and mk_flashnext_ops.hpp).
#pragma once

#include "arbor_hip.hpp"

namespace arbor::gpu {

enum MkPhase : int {
    kPhAttnQ,        // attention chunk: q of the group's heads into shared memory
    kPhAttnKStage,   // K rows into shared memory
    kPhAttnScores,   // q . k per cell and head
    kPhAttnSoftmax,  // chunk max, exponentials, l
    kPhAttnVStage,   // V rows into shared memory
    kPhAttnO,        // o over the cells
    kPhAttnWrite,    // o, m, l (or the direct result and its Q8A blocks) out
    kPhTileStage,    // prefill tiles: weight rows and Q8A blocks into shared memory
    kPhTileDots,     // prefill tiles: the lane chains
    kPhSelIn,        // router select: the logits in, their max
    kPhSelSoftmax,   // exponentials, their sum in expert order, the division
    kPhSelTopk,      // the K rounds of the largest remaining probability
    kPhSelWrite,     // the renormalising sum, the slots out
    kPhExpRoute,     // expert gated FFN (every 16th item): the descriptors and the expert id in
    kPhExpDots,      // the gate and up row dots
    kPhExpStore,     // silu(g) * u out
    kPhRmsIn,        // RMSNorm (decode): x staged, the weights in
    kPhRmsSum,       // the sum of squares (one warp) and the scale
    kPhRmsWrite,     // the scaled row out
    kPhRmsQuant,     // its Q8A blocks
    kPhDownSlot,     // expert down (every 16th item): one slot's expert id and two row dots
    kPhDownAdd,      // the residual add
    kPhCombScan,     // attention combine (mk_attn_combine_regs): each head's l and m, the max, the weights
    kPhCombL,        // L over the chunks (one lane a head); with ARBOR_MK_COMBINE_STAGE the wait for the rows
    kPhCombO,        // every (head, dim)'s o over the chunks, the division, the write
    kPhCombQ8a,      // the Q8A blocks
    kMkPhases
};

inline const char* const kMkPhaseNames[kMkPhases] = {
    "attn chunk: q",     "attn chunk: K stage",  "attn chunk: scores",  "attn chunk: softmax",
    "attn chunk: V stage", "attn chunk: o",      "attn chunk: write",   "tile: stage",
    "tile: dots",          "select: logits in",  "select: softmax",     "select: top-k",
    "select: write",       "expert ffn: route",  "expert ffn: dots",    "expert ffn: store",
    "rms: x and w in",     "rms: sum, scale",    "rms: write",          "rms: q8a",
    "expert down: a slot", "expert down: add",  "combine: l, m, max",  "combine: L",
    "combine: o",          "combine: q8a"};

__device__ unsigned mk_phase_on;

// The megakernel's entry copies mk_phase_on into shared memory (ARBOR_MK_PHASE_FLAG_SMEM, default
// on): every stage and every workgroup item tests the flag, and a global read of it after a grid
// barrier went to L2, with the branch on it stalling the item behind that round trip.
#ifndef ARBOR_MK_PHASE_FLAG_SMEM
#define ARBOR_MK_PHASE_FLAG_SMEM 1
#endif
#if ARBOR_MK_PHASE_FLAG_SMEM
__shared__ unsigned mk_phase_on_s;
__device__ inline bool mk_phase_flag() { return mk_phase_on_s != 0; }
#else
__device__ inline bool mk_phase_flag() { return mk_phase_on != 0; }
#endif
// At the megakernel's entry, before its first __syncthreads.
__device__ inline void mk_phase_flag_load() {
#if ARBOR_MK_PHASE_FLAG_SMEM
    if (threadIdx.x == 0) mk_phase_on_s = mk_phase_on;
#endif
}
__device__ unsigned long long mk_phase_ns[kMkPhases];
__device__ unsigned long long mk_phase_marks[kMkPhases];
__device__ unsigned long long mk_phase_cycles[kMkPhases];

// Item clocks, on with the phase clocks: each work item's wall time by op, the first item a warp
// (a workgroup, for workgroup ops) runs in a stage apart from its later ones. A first item pays
// the stage's cold costs (fetching its code, loading the descriptors), a later one runs warm.
// (ARBOR_GPU_PROBE_REPEAT=1 repeats the RMSNorm, router select and attention chunk stages, each
// idempotent, as stages of their own: the profile's stage rows then show each cold, then warm;
// the item clocks and phase rows, kept by op, sum both runs.) The sums are spread over
// kMkItemCopies copies (by workgroup) so the atomics do not queue on one address; the host adds
// them up.
constexpr int kMkItemOps = 64;
constexpr int kMkItemCopies = 8;
__device__ unsigned long long mk_item_ns[kMkItemCopies][kMkItemOps][2];
__device__ unsigned long long mk_item_n[kMkItemCopies][kMkItemOps][2];

// Called by the one thread that times the item (lane 0 of a warp item, thread 0 of a workgroup
// item), after the item's last instruction.
__device__ inline void mk_item_time(int op, bool later, unsigned long long t0) {
    if (op < 0 || op >= kMkItemOps) return;
    const int c = static_cast<int>(blockIdx.x) % kMkItemCopies, k = later ? 1 : 0;
    atomicAdd(&mk_item_ns[c][op][k], arbor_wall_ns() - t0);
    atomicAdd(&mk_item_n[c][op][k], 1ull);
}

// The sub-phase clocks (CMake ARBOR_GPU_SUBPHASES=ON): the marks inside the router select, the
// expert FFN and the RMSNorm items. Off by default, so those items carry no clock code at all.
#ifndef ARBOR_MK_SUBPHASES
#define ARBOR_MK_SUBPHASES 0
#endif

// One mark's time (and, in sub-phase builds, cycles) into phase p's counters.
__device__ inline void mk_phase_add(int p, unsigned long long ns, unsigned long long cycles) {
    atomicAdd(&mk_phase_ns[p], ns);
    atomicAdd(&mk_phase_marks[p], 1ull);
    if (ARBOR_MK_SUBPHASES) atomicAdd(&mk_phase_cycles[p], cycles);
}

// Workgroup-uniform: every thread of the item creates one and marks the same phases.
struct PhaseClock {
    bool on;
    unsigned long long t, c;
    // The flag is set by the host between launches, so the launch's copy (mk_phase_flag) is exact.
    // `enabled` false (a sub-phase clock without ARBOR_MK_SUBPHASES) leaves it off for good.
    // The cycles too only in sub-phase builds: elsewhere the attention items' registers stay as
    // they were.
    __device__ explicit PhaseClock(bool enabled = true) : on(enabled && mk_phase_flag()), t(0), c(0) {
        if (on) {
            __syncthreads();
            t = arbor_wall_ns();
            if (ARBOR_MK_SUBPHASES) c = arbor_cycles();
        }
    }
    // The time since the previous mark (or the start) goes to phase p.
    __device__ void mark(int p) {
        if (!on) return;
        __syncthreads();
        if (threadIdx.x == 0) {
            const unsigned long long now = arbor_wall_ns(), cyc = ARBOR_MK_SUBPHASES ? arbor_cycles() : 0ull;
            mk_phase_add(p, now - t, cyc - c);
            t = now;
            c = cyc;
        }
    }
};

// The same for a warp item's sub-phases (every lane creates one and marks the same phases; lane
// 0 keeps the time); only with ARBOR_MK_SUBPHASES. `sample` false leaves it off, for stages of
// many items that clock only some.
struct WarpPhaseClock {
    bool on;
    int lane;
    unsigned long long t, c;
    __device__ WarpPhaseClock(int lane_, bool sample = true)
        : on(ARBOR_MK_SUBPHASES && sample && mk_phase_flag()), lane(lane_), t(0), c(0) {
        if (on) {
            arbor_syncwarp();
            t = arbor_wall_ns();
            c = arbor_cycles();
        }
    }
    __device__ void mark(int p) {
        if (!on) return;
        arbor_syncwarp();
        if (lane == 0) {
            const unsigned long long now = arbor_wall_ns(), cyc = arbor_cycles();
            mk_phase_add(p, now - t, cyc - c);
            t = now;
            c = cyc;
        }
    }
};

}  // namespace arbor::gpu
