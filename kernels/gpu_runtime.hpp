// Host side of the GPU backend (implemented in kernels/*.hip, compiled by nvcc or hipcc):
// the persistent megakernel's launcher with its watchdog, and the programs the GPU test
// suites run. Internal to the engine; arbor/gpu.hpp is the public face.
#pragma once

#include <arbor/quant.hpp>
#include <arbor/result.hpp>
#include <arbor/tensor_types.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace arbor::gpu {

struct LaunchInfo {
    int grid = 0;              // workgroups (all co-resident)
    int block = 0;             // threads per workgroup
    bool cooperative = false;  // launched with the cooperative API
    int launches = 0;          // kernel launches in the pass (the contract: 1)
    double ms = 0;             // device time of the pass
    std::vector<std::string> profile_rows;  // per-stage table when profiling
};

struct RunOptions {
    double timeout_s = 1.0;    // bound on any single cross-workgroup wait
    double watchdog_s = 10.0;  // host aborts a pass that runs longer
    bool profile = false;
    std::string trace_path;    // Chrome/Perfetto trace JSON, when profiling
    std::vector<std::string> stage_names;  // labels of the profile rows and trace spans (optional)
};

// out[r] = dot_row(t, row r of w, x, xq) for every row, computed by the megakernel.
Status mk_dot_rows(TensorType t, const void* w, size_t row_bytes, int64_t rows, int64_t n, const float* x,
                   const quant::BlockQ8A* xq, float* out, const RunOptions& opt, LaunchInfo* info);

// A program whose second stage waits on a counter that nothing signals: it must end with a
// timeout error naming that stage and wait, and leave the device usable.
Status mk_planted_hang(const RunOptions& opt, LaunchInfo* info);

// Signal/wait through a per-dependency counter (a wait that is satisfied): must succeed.
Status mk_counter_handoff(const RunOptions& opt, LaunchInfo* info);

}  // namespace arbor::gpu
