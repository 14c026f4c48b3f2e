// The GPU backend's factory. Defined by the GPU build (kernels/gpu_backend.hip, compiled by
// nvcc or hipcc) or, in a build without a GPU backend, by kernels/host/no_gpu.cpp, whose error
// says why. Never a silent CPU fallback: callers asked for the GPU get it or an error.
#pragma once

#include <arbor/backend.hpp>

namespace arbor {

Result<std::unique_ptr<Backend>> make_gpu_backend(std::shared_ptr<const Model> model, BackendOptions opts);

}  // namespace arbor
