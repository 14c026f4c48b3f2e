// Bounded cross-workgroup waits for the megakernel. Every wait polls the abort flags and gives
// up after timeout_ns (about 1 s): on AMD roughly 15 s of spinning starves the gfx ring and
// forces a GPU reset, so nothing may spin unbounded. The first workgroup to time out records
// which stage, level and wait kind, sets the abort flags, and every other wait then returns
// false promptly so the whole grid exits.
#pragma once

#include "arbor_hip.hpp"
#include "mk_control.hpp"

namespace arbor::gpu {

struct MkSync {
    MkDeviceLines* dev;
    MkHostBlock* host;  // host-mapped
    unsigned long long timeout_ns;
};

__device__ inline unsigned mk_load(const unsigned int* p) {
    return *reinterpret_cast<const volatile unsigned int*>(p);
}

__device__ inline void mk_report(const MkSync& s, int code, int stage, int level, int wait_kind, unsigned long long waited) {
    if (atomicCAS(&s.host->error_claim.value, 0u, 1u) == 0u) {
        volatile MkError* e = &s.host->error;
        e->code = code;
        e->stage = stage;
        e->level = level;
        e->wait_kind = wait_kind;
        e->block = static_cast<int>(blockIdx.x);
        e->waited_ns = waited;
        __threadfence_system();
    }
    atomicExch(&s.dev->abort.value, 1u);
    atomicExch(&s.host->abort.value, 1u);
    __threadfence_system();
}

// Waits (one thread) until *counter >= target. False when the pass is being aborted.
__device__ inline bool mk_wait_geq(const MkSync& s, const unsigned int* counter, unsigned target, int stage, int level,
                                   int wait_kind) {
    const unsigned long long t0 = arbor_wall_ns();
    for (unsigned it = 0;; ++it) {
        if (mk_load(counter) >= target) {
            __threadfence();
            return true;
        }
        if (mk_load(&s.dev->abort.value)) return false;
        if ((it & 63u) == 0u) {
            const unsigned long long waited = arbor_wall_ns() - t0;
            // The host's abort flag lives in host memory: a read crosses the bus, and hundreds
            // of workgroups reading it at every barrier stall the whole memory system. So only
            // workgroup 0 reads it, and only once a wait has lasted 50 us; it then raises the
            // device-side flag that every other wait polls.
            if (blockIdx.x == 0 && waited > 50000ull && mk_load(&s.host->abort.value)) {
                mk_report(s, kMkHostAbort, stage, level, wait_kind, waited);
                return false;
            }
            if (waited > s.timeout_ns) {
                mk_report(s, kMkTimeout, stage, level, wait_kind, waited);
                return false;
            }
        }
        arbor_pause();
    }
}

// A grid barrier in two halves: every workgroup arrives once per level, then waits until
// `target` = (levels passed) * grid have arrived. Between the two a workgroup may do work that
// does not depend on the others (ARBOR_MK_SMEM_DESC's descriptor copy, ARBOR_MK_L2_PREFETCH's
// prefetch). The wait returns false
// (for every thread of the block) when the pass is being aborted.
__device__ inline void mk_grid_arrive(const MkSync& s) {
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(&s.dev->barrier.value, 1u);
    }
}
// mk_grid_arrive that also tells the workgroup whether it arrived last (the count reached
// `target`): ARBOR_MK_BARRIER_TAILS's last arriver runs the next level alone, then adds the
// grid's arrivals at that level's barrier for everyone (mk_grid_release).
__device__ inline bool mk_grid_arrive_last(const MkSync& s, unsigned target) {
    __shared__ int last;
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        last = atomicAdd(&s.dev->barrier.value, 1u) + 1u == target ? 1 : 0;
        if (last) __threadfence();  // the other workgroups' stores are visible to this one's tail
    }
    __syncthreads();
    return last != 0;
}
__device__ inline void mk_grid_release(const MkSync& s) {
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(&s.dev->barrier.value, gridDim.x);
    }
}
__device__ inline bool mk_grid_wait(const MkSync& s, unsigned target, int stage, int level) {
    __shared__ int ok;
    if (threadIdx.x == 0) ok = mk_wait_geq(s, &s.dev->barrier.value, target, stage, level, kWaitGridBarrier) ? 1 : 0;
    __syncthreads();
    return ok != 0;
}

}  // namespace arbor::gpu
