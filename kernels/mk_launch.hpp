// The megakernel's host-side launcher: control blocks, co-resident grid sizing, one launch per
// pass, the host watchdog, error reports and the profiler's trace.
#pragma once

#include "gpu_runtime.hpp"
#include "mk_program.hpp"

#include <arbor/result.hpp>

#include <string>
#include <vector>

namespace arbor::gpu {

const void* megakernel_entry();
// The phase clocks of mk_phase.hpp: zeroed and switched on (or off) for the next passes; read
// back as profile rows ("phase NAME  total/marks").
bool mk_phases_arm(bool on);
// The A/B switches (mk_control.hpp's MkAbSwitch bits) for the next passes.
bool mk_set_ab_switches(unsigned bits);
void mk_phases_read(std::vector<std::string>& rows, int grid);

class MkRuntime {
public:
    static Result<MkRuntime*> get();  // one per process and device, created on first use
    // Runs `stages` (host copies; pointers inside point to device memory) as one pass.
    Status run(const std::vector<MkStage>& stages, const RunOptions& opt, LaunchInfo* info);
    int grid() const { return grid_; }
    int block() const { return block_; }
    long long l2_bytes() const { return l2_bytes_; }  // the device's L2 cache

private:
    Status init();
    Status reset_after_abort();
    MkHostBlock* host_ = nullptr;     // pinned, host-mapped
    MkHostBlock* host_dev_ = nullptr; // its device address
    MkDeviceLines* lines_ = nullptr;
    MkStage* stages_dev_ = nullptr;
    size_t stages_cap_ = 0;
    MkEvent* events_ = nullptr;
    int max_events_ = 0;
    int grid_ = 0, block_ = kMkBlockThreads;
    long long l2_bytes_ = 0;
    bool cooperative_ = false;
    bool phases_on_ = false;  // the phase clocks were armed for the last pass
    std::string device_name_;
};

}  // namespace arbor::gpu
