// The GPU backend as the rest of the engine sees it: which backend this build has, which
// devices it finds, and basic measurements. The backend lives in kernels/ (HIP sources built
// with hipcc for AMD, or with nvcc through kernels/arbor_hip.hpp for NVIDIA); a build without
// one links kernels/host/no_gpu.cpp, whose answers say why no GPU is used.
#pragma once

#include <arbor/result.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace arbor {

struct GpuDevice {
    int index = 0;
    std::string name;               // "NVIDIA H200", "AMD Radeon 8060S"
    std::string arch;               // "sm_90", "gfx1151"
    int compute_units = 0;          // SMs or CUs
    int warp_size = 32;
    uint64_t memory_bytes = 0;
    bool integrated = false;        // shares system memory (Strix Halo)
    bool cooperative_launch = false;
};

// "cuda", "hip" or "none".
std::string gpu_backend_name();
// The devices this build can use; an Error says why there are none (no backend compiled in,
// no driver, no device), in words fit for the status bar.
Result<std::vector<GpuDevice>> gpu_devices();
// Device-to-device copy bandwidth of device `index` in bytes per second (read + write counted),
// the median of a few copies of `bytes` bytes.
Result<double> gpu_copy_bandwidth(int index, uint64_t bytes = 1ull << 30);

}  // namespace arbor
