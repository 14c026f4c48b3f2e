// Memory requests that no register waits on (NVIDIA; other targets do without them):
// - mk_l2_prefetch: asks the L2 for a byte range (sm_90's bulk prefetch, one instruction for a
//   whole weight row or a whole attention chunk's K or V rows);
// - block_stage_async / block_async_wait: a workgroup's copy from global to shared memory that
//   runs while the workgroup does other work (sm_80's cp.async, 16 bytes a request).
// None of them changes a value anything computes: they only move when bytes arrive.
#pragma once

#include "arbor_hip.hpp"
#include "mk_model.hpp"

namespace arbor::gpu {

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

#if defined(ARBOR_GPU_VENDOR_NVIDIA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define ARBOR_CP_ASYNC 1
#else
#define ARBOR_CP_ASYNC 0
#endif

// One 16-byte cp.async request (shared-space address dst, 16-byte aligned global src), the
// commit of this thread's requests so far as one group, and the waits for all but the newest
// group or for all; nothing where cp.async does not exist (callers then copy by loads).
__device__ inline void cp_async16(unsigned dst, const void* src) {
#if ARBOR_CP_ASYNC
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
#else
    (void)dst;
    (void)src;
#endif
}
__device__ inline void cp_async_commit() {
#if ARBOR_CP_ASYNC
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
__device__ inline void cp_async_wait_all_but_newest() {
#if ARBOR_CP_ASYNC
    asm volatile("cp.async.wait_group 1;" ::: "memory");
#endif
}
__device__ inline unsigned shared_address(const void* p) {
#if ARBOR_CP_ASYNC
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
#else
    (void)p;
    return 0;
#endif
}

// Starts copying `bytes` from global src to shared dst with the whole workgroup (call it from
// every thread with the same arguments), without registers: each thread's 16-byte requests are
// issued and it goes on. True when the copy was started; false (nothing started, the caller
// copies) on targets without cp.async or when src, dst or bytes are not 16-byte multiples.
// A started copy is complete for the whole workgroup after block_async_wait and __syncthreads.
__device__ inline bool block_stage_async(void* dst, const void* src, long long bytes) {
#if ARBOR_CP_ASYNC
    if (((reinterpret_cast<unsigned long long>(src) | reinterpret_cast<unsigned long long>(dst) |
          static_cast<unsigned long long>(bytes)) & 15) != 0)
        return false;
    const unsigned d = shared_address(dst);
    const char* s = static_cast<const char*>(src);
    for (long long i = 16 * static_cast<long long>(threadIdx.x); i < bytes; i += 16 * kMkBlockThreads)
        cp_async16(d + static_cast<unsigned>(i), s + i);
    cp_async_commit();
    return true;
#else
    (void)dst;
    (void)src;
    (void)bytes;
    return false;
#endif
}

// This thread's started copies have landed (then __syncthreads for the workgroup's).
__device__ inline void block_async_wait() {
#if ARBOR_CP_ASYNC
    asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

}  // namespace arbor::gpu
