// The GPU backend of a build that has none: every answer says why no GPU is used.
#include <arbor/gpu.hpp>

namespace arbor {

std::string gpu_backend_name() { return "none"; }

Result<std::vector<GpuDevice>> gpu_devices() {
    return make_error("this build has no GPU backend (configure with ARBOR_CUDA=ON on an NVIDIA machine or "
                      "ARBOR_HIP=ON with ROCm installed)");
}

Result<double> gpu_copy_bandwidth(int, uint64_t) { return make_error("this build has no GPU backend"); }

}  // namespace arbor

#include "model/gpu_backend.hpp"

namespace arbor {

Result<std::unique_ptr<Backend>> make_gpu_backend(std::shared_ptr<const Model>, BackendOptions) {
    return make_error("the GPU backend is not available: this build of the engine has no GPU backend "
                      "(no HIP or CUDA device code was compiled in)");
}

}  // namespace arbor
