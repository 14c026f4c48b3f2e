// One HIP source, two vendors. Included by every file in kernels/ instead of
// <hip/hip_runtime.h>. With hipcc/clang (-x hip) it is the real HIP runtime; with nvcc it maps
// the part of the HIP runtime and device API that Arbor uses onto CUDA. Keep the mapping
// small and explicit: add a name here only when a kernel needs it.
//
// Wave size: both vendors run 32-wide here (gfx1151 is wave32). Nothing may assume 64.
#pragma once

#include "arbor_vendor.hpp"

#if defined(ARBOR_GPU_VENDOR_AMD)
#include <hip/hip_runtime.h>
#elif defined(ARBOR_GPU_VENDOR_NVIDIA)
#include <cuda_runtime.h>

// ---- runtime types and constants
using hipError_t = cudaError_t;
using hipStream_t = cudaStream_t;
using hipEvent_t = cudaEvent_t;
using hipDeviceProp_t = cudaDeviceProp;
using hipDeviceAttribute_t = cudaDeviceAttr;
#define hipSuccess cudaSuccess
#define hipErrorNotReady cudaErrorNotReady
#define hipMemcpyHostToDevice cudaMemcpyHostToDevice
#define hipMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define hipMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define hipDeviceAttributeIntegrated cudaDevAttrIntegrated
#define hipDeviceAttributeCooperativeLaunch cudaDevAttrCooperativeLaunch
#define hipDeviceAttributeMultiprocessorCount cudaDevAttrMultiProcessorCount
#define hipDeviceAttributeWarpSize cudaDevAttrWarpSize
#define hipStreamNonBlocking cudaStreamNonBlocking
#define hipHostMallocDefault cudaHostAllocDefault
#define hipHostMallocMapped cudaHostAllocMapped

// ---- runtime functions
#define hipGetErrorString cudaGetErrorString
#define hipGetLastError cudaGetLastError
#define hipGetDeviceCount cudaGetDeviceCount
#define hipSetDevice cudaSetDevice
#define hipGetDevice cudaGetDevice
#define hipGetDeviceProperties cudaGetDeviceProperties
#define hipDeviceGetAttribute cudaDeviceGetAttribute
#define hipDeviceSynchronize cudaDeviceSynchronize
#define hipMalloc cudaMalloc
#define hipFree cudaFree
#define hipHostMalloc cudaHostAlloc
#define hipHostFree cudaFreeHost
#define hipHostGetDevicePointer cudaHostGetDevicePointer
#define hipMemcpy cudaMemcpy
#define hipMemcpyAsync cudaMemcpyAsync
#define hipMemset cudaMemset
#define hipMemsetAsync cudaMemsetAsync
#define hipMemGetInfo cudaMemGetInfo
#define hipMallocManaged cudaMallocManaged
#define hipMemAttachGlobal cudaMemAttachGlobal
#define hipMemcpyDefault cudaMemcpyDefault
#define hipStreamCreateWithFlags cudaStreamCreateWithFlags
#define hipStreamDestroy cudaStreamDestroy
#define hipStreamSynchronize cudaStreamSynchronize
#define hipStreamQuery cudaStreamQuery
#define hipEventCreate cudaEventCreate
#define hipEventDestroy cudaEventDestroy
#define hipEventRecord cudaEventRecord
#define hipEventSynchronize cudaEventSynchronize
#define hipEventElapsedTime cudaEventElapsedTime
#define hipLaunchCooperativeKernel cudaLaunchCooperativeKernel
#define hipLaunchKernel cudaLaunchKernel
#define hipEventQuery cudaEventQuery
#define hipOccupancyMaxActiveBlocksPerMultiprocessor cudaOccupancyMaxActiveBlocksPerMultiprocessor
#define hipDriverGetVersion cudaDriverGetVersion
#define hipRuntimeGetVersion cudaRuntimeGetVersion
#define hipGetSymbolAddress cudaGetSymbolAddress
#define hipFuncSetAttribute cudaFuncSetAttribute
#define hipFuncAttributeMaxDynamicSharedMemorySize cudaFuncAttributeMaxDynamicSharedMemorySize
#define hipFuncAttributePreferredSharedMemoryCarveout cudaFuncAttributePreferredSharedMemoryCarveout
#define HIP_SYMBOL(x) x

// ---- device side: HIP's maskless warp intrinsics are full-warp operations.
#define __shfl_xor(v, m) __shfl_xor_sync(0xffffffffu, (v), (m))
#define __shfl_down(v, d) __shfl_down_sync(0xffffffffu, (v), (d))
#define __shfl(v, l) __shfl_sync(0xffffffffu, (v), (l))
#endif

#if defined(__CUDACC__) || defined(__HIP__) || defined(__HIPCC__)
// A wall clock in nanoseconds, for bounded waits and the profiler ring.
__device__ inline unsigned long long arbor_wall_ns() {
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
#else
    // The constant-rate "steady" counter (s_memrealtime / REALTIME message), 100 MHz on
    // current parts, including gfx11.
    return static_cast<unsigned long long>(__builtin_readsteadycounter()) * 10ull;
#endif
}

// The SM's cycle counter (the phase clocks divide it by the wall clock: the clock rate the work
// ran at). NVIDIA only: on gfx11 the cycle counter the compiler reads is a 20-bit register that
// wraps within a phase, so AMD builds count no cycles (0, and the profile leaves them out).
__device__ inline unsigned long long arbor_cycles() {
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
    return static_cast<unsigned long long>(clock64());
#else
    return 0ull;
#endif
}

// Orders global/shared memory accesses among the lanes of one warp/wave (all lanes call it).
__device__ inline void arbor_syncwarp() {
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
    __syncwarp();
#else
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront");
    __builtin_amdgcn_wave_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront");
#endif
}

// The lanes (of 32) whose predicate is true, as a bit mask.
__device__ inline unsigned arbor_ballot(bool p) {
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
    return __ballot_sync(0xffffffffu, p);
#else
    return static_cast<unsigned>(__ballot(p));
#endif
}

// Tells the compiler that p points into shared memory (the workgroup's arena), so that its loads
// and stores, and those of pointers derived from it, are shared-memory instructions (LDS/STS,
// ds_read/ds_write) instead of generic ones. A pointer passed to a function that is not inlined
// loses its address space: the megakernel's noinline items read the arena through generic loads
// (cuobjdump of the sm_90 entry, gpu-next18: 31308 generic loads, 2457 LDS). p must point into
// shared memory: anything else is undefined behaviour.
template <class T>
__device__ inline void arbor_assume_shared(const T* p) {
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
    __builtin_assume(__isShared(static_cast<const void*>(p)));
#elif defined(__HIP_DEVICE_COMPILE__)
    __builtin_assume(__builtin_amdgcn_is_shared(static_cast<const void*>(p)));
#else
    (void)p;  // the host pass of a HIP build: no device code
#endif
}

// *p, read as a global-memory load (NVIDIA: ld.global, told by __isGlobal; AMD: global_load,
// through an address_space(1) pointer) instead of a generic one (ld / flat_load). On AMD a flat
// load counts against both the memory and the LDS wait counters, so every LDS wait after it also
// waits for it; clang-19 does not infer the global space from an assume of !is_shared &&
// !is_private (it splits the assume), so the load itself is typed. p must point into global
// memory (device, managed or mapped host memory): a shared or local address is undefined behaviour.
template <int N>
struct ArborLoadBits;
template <>
struct ArborLoadBits<1> { using type = unsigned char; };
template <>
struct ArborLoadBits<2> { using type = unsigned short; };
template <>
struct ArborLoadBits<4> { using type = unsigned int; };
template <>
struct ArborLoadBits<8> { typedef unsigned int type __attribute__((ext_vector_type(2))); };
template <>
struct ArborLoadBits<16> { typedef unsigned int type __attribute__((ext_vector_type(4))); };
template <class T>
__device__ inline T arbor_ldg(const T* p) {
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
    __builtin_assume(__isGlobal(static_cast<const void*>(p)));
    return *p;
#elif defined(__HIP_DEVICE_COMPILE__)
    using B = typename ArborLoadBits<sizeof(T)>::type;
    using G = const __attribute__((address_space(1))) B*;  // only a C-style cast changes the address space
    const B b = *(G)p;
    T r;
    __builtin_memcpy(&r, &b, sizeof(T));  // HIP's vector types are not trivially copyable (no bit_cast)
    return r;
#else
    return *p;  // the host pass of a HIP build: no device code
#endif
}

// Back off inside a spin-wait without burning issue slots.
__device__ inline void arbor_pause() {
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
    __nanosleep(100);
#else
    __builtin_amdgcn_s_sleep(2);
#endif
}
#endif
