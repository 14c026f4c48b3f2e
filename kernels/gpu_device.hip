// Device discovery and the copy-bandwidth probe (the denominator of the benchmarks'
// bandwidth floor). Host code of the GPU backend; see arbor/gpu.hpp.
#include "arbor_hip.hpp"

#include <arbor/gpu.hpp>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace {

__global__ void copy_kernel(const float4* __restrict__ src, float4* __restrict__ dst, long long n) {
    long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    for (; i < n; i += stride) dst[i] = src[i];
}

std::string err(const char* what, hipError_t e) { return std::string(what) + ": " + hipGetErrorString(e); }

}  // namespace

namespace arbor {

std::string gpu_backend_name() {
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
    return "cuda";
#else
    return "hip";
#endif
}

Result<std::vector<GpuDevice>> gpu_devices() {
    int n = 0;
    hipError_t e = hipGetDeviceCount(&n);
    if (e != hipSuccess) return make_error(err("no usable GPU driver", e));
    if (n == 0) return make_error("the GPU driver reports no devices");
    std::vector<GpuDevice> out;
    for (int i = 0; i < n; ++i) {
        hipDeviceProp_t p{};
        if ((e = hipGetDeviceProperties(&p, i)) != hipSuccess) return make_error(err("cannot read device properties", e));
        GpuDevice d;
        d.index = i;
        d.name = p.name;
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
        d.arch = "sm_" + std::to_string(p.major) + std::to_string(p.minor);
#else
        d.arch = p.gcnArchName;
        d.arch = d.arch.substr(0, d.arch.find(':'));
#endif
        d.compute_units = p.multiProcessorCount;
        d.warp_size = p.warpSize;
        d.memory_bytes = p.totalGlobalMem;
        int v = 0;
        if (hipDeviceGetAttribute(&v, hipDeviceAttributeIntegrated, i) == hipSuccess) d.integrated = v != 0;
        if (hipDeviceGetAttribute(&v, hipDeviceAttributeCooperativeLaunch, i) == hipSuccess) d.cooperative_launch = v != 0;
        out.push_back(d);
    }
    return out;
}

Result<double> gpu_copy_bandwidth(int index, uint64_t bytes) {
    hipError_t e = hipSetDevice(index);
    if (e != hipSuccess) return make_error(err("cannot select the device", e));
    bytes = bytes / 16 * 16;
    float4 *a = nullptr, *b = nullptr;
    if ((e = hipMalloc(&a, bytes)) != hipSuccess) return make_error(err("cannot allocate the copy source", e));
    if ((e = hipMalloc(&b, bytes)) != hipSuccess) {
        (void)hipFree(a);
        return make_error(err("cannot allocate the copy target", e));
    }
    (void)hipMemset(a, 0, bytes);
    hipEvent_t t0, t1;
    (void)hipEventCreate(&t0);
    (void)hipEventCreate(&t1);
    hipDeviceProp_t p{};
    (void)hipGetDeviceProperties(&p, index);
    const int blocks = p.multiProcessorCount * 8;
    const long long n = static_cast<long long>(bytes / 16);
    std::vector<float> ms;
    for (int rep = 0; rep < 7; ++rep) {
        (void)hipEventRecord(t0, nullptr);
        copy_kernel<<<blocks, 256>>>(a, b, n);
        (void)hipEventRecord(t1, nullptr);
        (void)hipEventSynchronize(t1);
        float m = 0;
        (void)hipEventElapsedTime(&m, t0, t1);
        if (rep > 0) ms.push_back(m);  // the first copy warms up
    }
    e = hipGetLastError();
    (void)hipEventDestroy(t0);
    (void)hipEventDestroy(t1);
    (void)hipFree(a);
    (void)hipFree(b);
    if (e != hipSuccess) return make_error(err("the copy kernel failed", e));
    std::sort(ms.begin(), ms.end());
    const double median_s = ms[ms.size() / 2] / 1e3;
    return 2.0 * static_cast<double>(bytes) / median_s;
}

}  // namespace arbor
