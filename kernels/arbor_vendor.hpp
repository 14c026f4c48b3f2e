// Which vendor's compiler is building this translation unit, from the compiler's own macros and
// nothing else, so that every header can test it whatever was included before it (mk_model.hpp's
// switch defaults depend on it, and mk_launch.hip includes that header before arbor_hip.hpp).
// ARBOR_GPU_VENDOR_AMD: hipcc or clang -x hip; ARBOR_GPU_VENDOR_NVIDIA: nvcc; neither: a host
// compiler.
#pragma once

#if defined(__HIP__) || (defined(__HIPCC__) && !defined(__CUDACC__))
#define ARBOR_GPU_VENDOR_AMD 1
#elif defined(__CUDACC__)
#define ARBOR_GPU_VENDOR_NVIDIA 1
#endif
