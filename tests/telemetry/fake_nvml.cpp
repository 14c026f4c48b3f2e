// A stand-in libnvidia-ml for test_nvml: the handful of entry points the engine binds, with
// fixed readings. It exports only the older name of the clock-reason call and only the _v3
// process call, and lists 20 processes (one of them the caller) so that the engine's
// "insufficient size" retry and own-pid exclusion are exercised.
#include <unistd.h>

#include <cstring>

extern "C" {

struct FakeProcess {
    unsigned pid;
    unsigned long long usedGpuMemory;
    unsigned gpuInstanceId;
    unsigned computeInstanceId;
};
struct FakeUtilization {
    unsigned gpu, memory;
};
using Dev = void*;

int nvmlInit_v2() { return 0; }
int nvmlShutdown() { return 0; }
const char* nvmlErrorString(int) { return "fake"; }
int nvmlDeviceGetCount_v2(unsigned* n) {
    *n = 2;
    return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned i, Dev* d) {
    if (i >= 2) return 2;  // NVML_ERROR_INVALID_ARGUMENT
    *d = reinterpret_cast<Dev>(static_cast<unsigned long>(i + 1));
    return 0;
}
static unsigned index_of(Dev d) { return static_cast<unsigned>(reinterpret_cast<unsigned long>(d)) - 1; }
int nvmlDeviceGetName(Dev d, char* buf, unsigned len) {
    std::strncpy(buf, index_of(d) == 0 ? "Fake GPU A" : "Fake GPU B", len);
    return 0;
}
int nvmlDeviceGetPowerUsage(Dev d, unsigned* mw) {
    *mw = index_of(d) == 0 ? 123456 : 45000;
    return 0;
}
int nvmlDeviceGetEnforcedPowerLimit(Dev, unsigned* mw) {
    *mw = 300000;
    return 0;
}
int nvmlDeviceGetClockInfo(Dev, int type, unsigned* mhz) {
    if (type == 1) *mhz = 1980;       // NVML_CLOCK_SM
    else if (type == 2) *mhz = 2619;  // NVML_CLOCK_MEM
    else return 3;                    // NVML_ERROR_NOT_SUPPORTED
    return 0;
}
int nvmlDeviceGetUtilizationRates(Dev, FakeUtilization* u) {
    u->gpu = 97;
    u->memory = 40;
    return 0;
}
int nvmlDeviceGetTemperature(Dev, int, unsigned* t) {
    *t = 71;
    return 0;
}
int nvmlDeviceGetCurrentClocksThrottleReasons(Dev d, unsigned long long* r) {
    *r = index_of(d) == 1 ? 0x20ull : 0x1ull;  // B: software thermal slowdown; A: idle
    return 0;
}
int nvmlDeviceGetComputeRunningProcesses_v3(Dev d, unsigned* count, FakeProcess* infos) {
    if (index_of(d) != 0) {
        *count = 0;
        return 0;
    }
    const unsigned n = 20;
    if (*count < n) {
        *count = n;
        return 7;  // NVML_ERROR_INSUFFICIENT_SIZE
    }
    for (unsigned i = 0; i < n; ++i) {
        infos[i].pid = i == 0 ? static_cast<unsigned>(getpid()) : 1000 + i;
        infos[i].usedGpuMemory = i == 5 ? ~0ull : (1ull << 20) * i;  // #5: NVML_VALUE_NOT_AVAILABLE
        infos[i].gpuInstanceId = infos[i].computeInstanceId = ~0u;
    }
    *count = n;
    return 0;
}

}  // extern "C"
