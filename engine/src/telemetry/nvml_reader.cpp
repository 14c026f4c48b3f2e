// NVML through dlopen. The few types and constants used are declared here from NVML's
// documented ABI (no nvml.h needed): return codes are ints (0 = success, 7 = insufficient size),
// devices are opaque pointers, and the process record of the _v2/_v3 calls is
// { unsigned pid; unsigned long long usedGpuMemory; unsigned gpuInstanceId, computeInstanceId; }.
#include "telemetry/nvml_reader.hpp"

#include <dlfcn.h>

#include <fstream>

namespace arbor::telemetry::detail {
namespace {

using nvmlReturn = int;
using nvmlDevice = struct nvmlDeviceOpaque*;
constexpr nvmlReturn kSuccess = 0;
constexpr nvmlReturn kInsufficientSize = 7;
constexpr int kClockSm = 1;
constexpr int kClockMem = 2;
constexpr int kTemperatureGpu = 0;
constexpr unsigned long long kValueNotAvailable = ~0ull;

struct Utilization {
    unsigned gpu;
    unsigned memory;
};

struct ProcessInfo {
    unsigned pid;
    unsigned long long usedGpuMemory;
    unsigned gpuInstanceId;
    unsigned computeInstanceId;
};

std::string comm_of(int pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
    std::string s;
    std::getline(in, s);
    return s;
}

}  // namespace

struct NvmlReader::Api {
    nvmlReturn (*init)() = nullptr;
    nvmlReturn (*shutdown)() = nullptr;
    const char* (*error_string)(nvmlReturn) = nullptr;
    nvmlReturn (*count)(unsigned*) = nullptr;
    nvmlReturn (*handle)(unsigned, nvmlDevice*) = nullptr;
    nvmlReturn (*name)(nvmlDevice, char*, unsigned) = nullptr;
    nvmlReturn (*power)(nvmlDevice, unsigned*) = nullptr;
    nvmlReturn (*power_limit)(nvmlDevice, unsigned*) = nullptr;
    nvmlReturn (*clock)(nvmlDevice, int, unsigned*) = nullptr;
    nvmlReturn (*utilization)(nvmlDevice, Utilization*) = nullptr;
    nvmlReturn (*temperature)(nvmlDevice, int, unsigned*) = nullptr;
    nvmlReturn (*reasons)(nvmlDevice, unsigned long long*) = nullptr;
    nvmlReturn (*processes)(nvmlDevice, unsigned*, ProcessInfo*) = nullptr;
};

template <class Fn>
static void bind(void* lib, Fn& fn, std::initializer_list<const char*> names) {
    for (const char* n : names) {
        if (void* p = dlsym(lib, n)) {
            fn = reinterpret_cast<Fn>(p);
            return;
        }
    }
}

NvmlReader::NvmlReader(const std::string& library) {
    lib_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib_) {
        const char* e = dlerror();
        status_ = "unavailable: cannot load " + library + (e ? std::string(" (") + e + ")" : std::string());
        return;
    }
    api_ = std::make_unique<Api>();
    bind(lib_, api_->init, {"nvmlInit_v2"});
    bind(lib_, api_->shutdown, {"nvmlShutdown"});
    bind(lib_, api_->error_string, {"nvmlErrorString"});
    bind(lib_, api_->count, {"nvmlDeviceGetCount_v2"});
    bind(lib_, api_->handle, {"nvmlDeviceGetHandleByIndex_v2"});
    bind(lib_, api_->name, {"nvmlDeviceGetName"});
    bind(lib_, api_->power, {"nvmlDeviceGetPowerUsage"});
    bind(lib_, api_->power_limit, {"nvmlDeviceGetEnforcedPowerLimit"});
    bind(lib_, api_->clock, {"nvmlDeviceGetClockInfo"});
    bind(lib_, api_->utilization, {"nvmlDeviceGetUtilizationRates"});
    bind(lib_, api_->temperature, {"nvmlDeviceGetTemperature"});
    bind(lib_, api_->reasons, {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
    bind(lib_, api_->processes, {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"});
    if (!api_->init || !api_->shutdown || !api_->count || !api_->handle) {
        status_ = "unavailable: " + library + " lacks nvmlInit_v2/nvmlDeviceGetCount_v2/nvmlDeviceGetHandleByIndex_v2";
        return;
    }
    if (nvmlReturn r = api_->init(); r != kSuccess) {
        status_ = "unavailable: nvmlInit_v2 returned " + std::to_string(r) +
                  (api_->error_string ? std::string(" (") + api_->error_string(r) + ")" : std::string());
        return;
    }
    initialised_ = true;
    if (nvmlReturn r = api_->count(&count_); r != kSuccess || count_ == 0) {
        status_ = r != kSuccess ? "unavailable: nvmlDeviceGetCount_v2 returned " + std::to_string(r)
                                : std::string("unavailable: no NVIDIA device");
        return;
    }
    available_ = true;
    status_ = "ok";
}

NvmlReader::~NvmlReader() {
    if (initialised_ && api_->shutdown) api_->shutdown();
    if (lib_) dlclose(lib_);
}

std::vector<NvidiaGpu> NvmlReader::read(int exclude_pid, std::vector<GpuProcess>& others) {
    std::vector<NvidiaGpu> out;
    if (!available_) return out;
    for (unsigned i = 0; i < count_; ++i) {
        nvmlDevice dev = nullptr;
        if (api_->handle(i, &dev) != kSuccess) continue;
        NvidiaGpu g;
        g.index = i;
        unsigned v = 0;
        if (api_->name) {
            char buf[96] = {};
            if (api_->name(dev, buf, sizeof buf) == kSuccess) g.name = buf;
        }
        if (api_->power && api_->power(dev, &v) == kSuccess) g.power_w = v / 1000.0;
        if (api_->power_limit && api_->power_limit(dev, &v) == kSuccess) g.power_limit_w = v / 1000.0;
        if (api_->clock && api_->clock(dev, kClockSm, &v) == kSuccess) g.sm_clock_mhz = v;
        if (api_->clock && api_->clock(dev, kClockMem, &v) == kSuccess) g.mem_clock_mhz = v;
        if (api_->temperature && api_->temperature(dev, kTemperatureGpu, &v) == kSuccess) g.temperature_c = v;
        Utilization u{};
        if (api_->utilization && api_->utilization(dev, &u) == kSuccess) {
            g.gpu_util_pct = u.gpu;
            g.mem_util_pct = u.memory;
        }
        unsigned long long reasons = 0;
        if (api_->reasons && api_->reasons(dev, &reasons) == kSuccess) g.clock_event_reasons = reasons;
        if (api_->processes) {
            std::vector<ProcessInfo> procs(16);
            unsigned n = static_cast<unsigned>(procs.size());
            nvmlReturn r = api_->processes(dev, &n, procs.data());
            if (r == kInsufficientSize && n > procs.size() && n < 65536) {
                procs.resize(n + 8);
                n = static_cast<unsigned>(procs.size());
                r = api_->processes(dev, &n, procs.data());
            }
            if (r == kSuccess) {
                for (unsigned k = 0; k < n && k < procs.size(); ++k) {
                    if (int(procs[k].pid) == exclude_pid) continue;
                    GpuProcess p;
                    p.pid = int(procs[k].pid);
                    p.name = comm_of(p.pid);
                    p.source = "nvml";
                    if (procs[k].usedGpuMemory != kValueNotAvailable) p.vram_bytes = procs[k].usedGpuMemory;
                    others.push_back(std::move(p));
                }
            }
        }
        out.push_back(std::move(g));
    }
    return out;
}

}  // namespace arbor::telemetry::detail
