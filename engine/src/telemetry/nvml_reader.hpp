// NVIDIA GPUs through NVML, loaded at run time with dlopen so that nothing NVIDIA is needed to
// build or run. A missing library, a failed init or zero devices leave the reader unavailable
// with the reason in status(); they are not errors.
#pragma once

#include <arbor/telemetry.hpp>

#include <memory>
#include <string>
#include <vector>

namespace arbor::telemetry::detail {

class NvmlReader {
public:
    explicit NvmlReader(const std::string& library);
    ~NvmlReader();
    NvmlReader(const NvmlReader&) = delete;
    NvmlReader& operator=(const NvmlReader&) = delete;

    bool available() const { return available_; }
    const std::string& status() const { return status_; }

    // One reading of every device; compute processes other than exclude_pid go to `others`.
    std::vector<NvidiaGpu> read(int exclude_pid, std::vector<GpuProcess>& others);

private:
    struct Api;
    void* lib_ = nullptr;
    std::unique_ptr<Api> api_;
    bool available_ = false;
    bool initialised_ = false;
    std::string status_;
    unsigned count_ = 0;
};

}  // namespace arbor::telemetry::detail
