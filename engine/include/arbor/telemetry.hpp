// Live telemetry: power, clocks, temperatures, CPU load and who else is using the GPU, with a
// contention label per snapshot and a timing guard for benchmarks. Qt-free; see
// docs/TELEMETRY.md for the layouts, units, thresholds and the sampler's measured cost.
//
// Sources (each optional; a missing one is "unavailable", never an error):
// - AMD gpu_metrics (/sys/class/drm/card*/device/gpu_metrics): a binary struct versioned by its
//   header. parse_gpu_metrics() decodes v1.0-v1.3, v2.0-v2.4 and v3.0, picking the layout by
//   (format_revision, content_revision, structure_size). Anything else is an Error.
// - KFD (/sys/class/kfd/kfd/proc/<pid>/): other processes holding GPU queues.
// - NVML, loaded with dlopen("libnvidia-ml.so.1") at run time (no build dependency).
// - /proc/stat and /proc/self/stat: CPU busy fraction and the part of it not ours.
//
// Probe reads every source once per sample() (one thread at a time). Sampler runs a Probe on
// its own thread at 4-10 Hz and keeps the last minute; latest() and history() are thread-safe.
#pragma once

#include <arbor/json.hpp>
#include <arbor/result.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace arbor::telemetry {

// ---------------------------------------------------------------------------------------------
// AMD gpu_metrics

// Accumulated throttle residency counters (gpu_metrics v3.0, 264-byte layout). The firmware
// counts up while a limiter is active; only differences between two samples mean anything.
struct ThrottleResidency {
    std::optional<uint32_t> prochot, spl, fppt, sppt, thm_core, thm_gfx, thm_soc;
};

// One decoded gpu_metrics table, in SI-ish units whatever the version's raw units were.
// A field is nullopt when the layout lacks it or the firmware marked it unsupported (all ones).
struct GpuMetrics {
    uint16_t structure_size = 0;
    uint8_t format_revision = 0;
    uint8_t content_revision = 0;
    std::string layout;  // e.g. "v3.0/264": the table entry that decoded it

    std::optional<uint64_t> system_clock_ns;  // driver timestamp
    std::optional<double> socket_power_w;     // average socket (package) power
    std::optional<double> gfx_power_w;
    std::optional<double> cpu_power_w;        // v2: CPU, v3: sum of all cores
    std::optional<double> soc_power_w;
    std::optional<double> stapm_limit_w;          // v3: maximum STAPM limit
    std::optional<double> current_stapm_limit_w;  // v3: time-filtered STAPM limit
    std::optional<uint32_t> gfxclk_mhz;       // average gfx clock where supported, else current
    bool gfxclk_is_average = false;
    std::optional<uint32_t> socclk_mhz, fclk_mhz, uclk_mhz;  // average, else current
    std::optional<uint32_t> gfx_max_freq_mhz;  // v3: gfx clock limit being enforced
    std::optional<double> temperature_gfx_c, temperature_soc_c;  // APUs (v2, v3)
    std::optional<double> temperature_edge_c, temperature_hotspot_c, temperature_mem_c;  // dGPUs (v1)
    std::optional<double> gfx_activity_pct;
    std::optional<uint32_t> throttle_status;        // ASIC-dependent bits (v1, v2)
    std::optional<uint64_t> indep_throttle_status;  // ASIC-independent bits (v1.3, v2.2+)
    ThrottleResidency residency;                    // v3.0/264
};

// Bits of indep_throttle_status (the kernel's SMU_THROTTLER_* numbering): 0-23 are power and
// current limiters (PPT, SPL, FPPT, SPPT, TDC, EDC, APCC), 32-47 thermal ones (incl. VR hot
// and PROCHOT).
inline constexpr uint64_t kIndepThrottlePowerMask = 0x0000'0000'00ff'ffffull;
inline constexpr uint64_t kIndepThrottleThermalMask = 0x0000'ffff'0000'0000ull;

// Decodes one gpu_metrics table. `source` names it in error messages (a path, "fixture").
Result<GpuMetrics> parse_gpu_metrics(std::span<const uint8_t> bytes, std::string_view source);
// Reads and decodes a gpu_metrics file (sysfs or a captured copy).
Result<GpuMetrics> read_gpu_metrics(const std::string& path);

// A supported layout, for documentation and tests.
struct GpuMetricsLayoutInfo {
    uint8_t format_revision;
    uint8_t content_revision;
    uint16_t structure_size;
    const char* name;  // "v3.0/264"
};
std::vector<GpuMetricsLayoutInfo> supported_gpu_metrics_layouts();

// ---------------------------------------------------------------------------------------------
// CPU

// The aggregate "cpu" line of /proc/stat, in clock ticks.
struct CpuTimes {
    uint64_t busy = 0;   // user+nice+system+irq+softirq+steal (guest time is inside user)
    uint64_t total = 0;  // busy + idle + iowait
    int cpus = 0;        // number of cpuN lines
};
Result<CpuTimes> parse_proc_stat(std::string_view text);
// utime+stime of a /proc/<pid>/stat line, in clock ticks (the comm may hold spaces and ')').
Result<uint64_t> parse_process_stat_ticks(std::string_view text);

struct CpuLoad {
    double busy = 0;   // fraction of all CPUs busy over the interval, 0..1
    double self = 0;   // the part of it that was this process
    double other = 0;  // busy - self, clamped to 0..1: the load from other processes
    int cpus = 0;
};
// Load between two readings; nullopt when no time passed (total did not advance).
std::optional<CpuLoad> cpu_load_between(const CpuTimes& before, const CpuTimes& after, uint64_t self_before,
                                        uint64_t self_after);

// ---------------------------------------------------------------------------------------------
// Other GPU users

struct GpuProcess {
    int pid = 0;
    std::string name;                 // /proc/<pid>/comm where readable
    std::string source;               // "kfd" or "nvml"
    std::optional<int> queues;        // KFD queues held; nullopt when not readable
    std::optional<uint64_t> vram_bytes;
};

// Processes listed under <sys_root>/class/kfd/kfd/proc other than exclude_pid. nullopt when
// there is no KFD (no AMD compute driver).
std::optional<std::vector<GpuProcess>> list_kfd_processes(const std::string& sys_root,
                                                          const std::string& proc_root, int exclude_pid);

// ---------------------------------------------------------------------------------------------
// NVIDIA

struct NvidiaGpu {
    unsigned index = 0;
    std::string name;
    std::optional<double> power_w, power_limit_w;
    std::optional<uint32_t> sm_clock_mhz, mem_clock_mhz;
    std::optional<uint32_t> gpu_util_pct, mem_util_pct, temperature_c;
    std::optional<uint64_t> clock_event_reasons;  // nvmlClocksEventReason bits
};

// nvmlClocksEventReason bits (formerly "throttle reasons").
inline constexpr uint64_t kNvmlReasonSwPowerCap = 0x4;
inline constexpr uint64_t kNvmlReasonHwSlowdown = 0x8;
inline constexpr uint64_t kNvmlReasonSwThermal = 0x20;
inline constexpr uint64_t kNvmlReasonHwThermal = 0x40;
inline constexpr uint64_t kNvmlReasonHwPowerBrake = 0x80;
inline constexpr uint64_t kNvmlPowerReasons = kNvmlReasonSwPowerCap | kNvmlReasonHwPowerBrake;
inline constexpr uint64_t kNvmlThermalReasons = kNvmlReasonSwThermal | kNvmlReasonHwThermal | kNvmlReasonHwSlowdown;

// ---------------------------------------------------------------------------------------------
// Snapshot and contention

enum class Contention { quiet, cpu_busy, other_gpu_process, power_limited, thermal_limited };
inline constexpr int kContentionCount = 5;
const char* contention_name(Contention c);  // "quiet", "cpu-busy", ...

struct ContentionThresholds {
    double cpu_other_busy = 0.25;  // other processes use >= 25% of all CPUs -> cpu-busy
};

struct AmdGpu {
    std::string path;                   // the gpu_metrics file
    std::optional<GpuMetrics> metrics;  // nullopt when it failed to read or decode
    std::string error;
    ThrottleResidency residency_delta;  // growth since the previous sample (v3.0/264 only)
};

struct Snapshot {
    uint64_t sequence = 0;  // 1, 2, ... per Probe
    int64_t unix_ms = 0;    // wall clock
    int64_t steady_ns = 0;  // std::chrono::steady_clock, for ordering and intervals
    std::optional<CpuLoad> cpu;
    std::vector<AmdGpu> amd;
    std::vector<NvidiaGpu> nvidia;
    std::string nvml_status;  // "ok" or why NVML is unavailable
    bool kfd_present = false;
    std::vector<GpuProcess> other_gpu_processes;
    Contention contention = Contention::quiet;
    std::vector<std::string> reasons;  // every trigger that applied, most important first
};

// Labels a snapshot from its own fields. Order of precedence: other-gpu-process, cpu-busy,
// thermal-limited, power-limited, quiet (see docs/TELEMETRY.md).
void classify(Snapshot& s, const ContentionThresholds& t = {});

// ---------------------------------------------------------------------------------------------
// Probe and sampler

struct ProbeOptions {
    std::string sys_root = "/sys";
    std::string proc_root = "/proc";
    int self_pid = 0;                            // 0: getpid()
    bool use_nvml = true;
    std::string nvml_library = "libnvidia-ml.so.1";
    std::vector<std::string> gpu_metrics_paths;  // empty: discover under sys_root/class/drm
    ContentionThresholds thresholds;
};

class Probe {
public:
    explicit Probe(ProbeOptions options = {});
    ~Probe();
    Probe(const Probe&) = delete;
    Probe& operator=(const Probe&) = delete;

    // Reads every source. CPU load and residency deltas need a previous sample: the first
    // snapshot has cpu == nullopt.
    Snapshot sample();
    const ProbeOptions& options() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

struct SamplerOptions {
    ProbeOptions probe;
    std::chrono::milliseconds interval{250};  // clamped to 100..250 ms (4-10 Hz)
    std::chrono::seconds history{60};
};

// What the sampler thread has cost so far.
struct SamplerCost {
    uint64_t samples = 0;
    double wall_seconds = 0;         // since start()
    double thread_cpu_seconds = 0;   // CPU time of the sampler thread
    double mean_sample_cpu_us = 0;   // CPU time per sample
    double cpu_fraction = 0;         // thread_cpu_seconds / wall_seconds (of one core)
};

class Sampler {
public:
    explicit Sampler(SamplerOptions options = {});
    ~Sampler();  // stops the thread
    Sampler(const Sampler&) = delete;
    Sampler& operator=(const Sampler&) = delete;

    Status start();
    void stop();
    bool running() const;
    std::chrono::milliseconds interval() const;

    std::optional<Snapshot> latest() const;
    std::vector<Snapshot> history() const;  // oldest first, at most the last `history` seconds
    SamplerCost cost() const;

    // Waits until a snapshot newer than `after_sequence` exists (or the timeout passes).
    std::optional<Snapshot> wait_newer(uint64_t after_sequence, std::chrono::milliseconds timeout) const;

    // Recordings collect every snapshot taken while open (for timed runs). At most
    // kMaxRecorded snapshots are kept per recording; later ones are only counted.
    static constexpr size_t kMaxRecorded = 6000;
    uint64_t begin_recording();
    struct Recording {
        std::vector<Snapshot> snapshots;
        uint64_t dropped = 0;
        std::array<uint64_t, kContentionCount> counts{};  // by Contention, over all of them
    };
    Recording end_recording(uint64_t id);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// ---------------------------------------------------------------------------------------------
// Timing guard for benchmarks

// $XDG_RUNTIME_DIR/arbor-gpu.lock, or /tmp/arbor-gpu-<uid>.lock without a runtime dir.
// Shell scripts and builds can take the same lock with flock(1) on this path.
std::string default_host_lock_path();

// An exclusive flock(2) on a file, held until release() or destruction.
class HostLock {
public:
    // Waits up to `wait` (0: try once). The error names the holder's pid when it wrote one.
    static Result<HostLock> acquire(const std::string& path, std::chrono::milliseconds wait);
    HostLock(HostLock&& o) noexcept;
    HostLock& operator=(HostLock&& o) noexcept;
    ~HostLock();
    void release();
    bool held() const { return fd_ >= 0; }
    const std::string& path() const { return path_; }

private:
    HostLock(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
    int fd_ = -1;
    std::string path_;
};

struct TimingGuardOptions {
    std::string lock_path;                      // empty: default_host_lock_path()
    std::chrono::milliseconds lock_wait{600000};
};

struct TimedRunReport {
    bool contended = false;
    double seconds = 0;
    std::vector<std::string> warnings;  // other GPU queue holders seen before timing, ...
    Sampler::Recording recording;
};

// begin(): takes the host lock, warns about other processes holding GPU queues, and starts
// recording the sampler's snapshots. finish(): stops recording, labels the run and releases the
// lock. A run is contended when any snapshot during it was other-gpu-process, cpu-busy or
// thermal-limited; power-limited alone is the steady state of a GPU-bound run on a shared
// package and is reported in the counts only.
class TimingGuard {
public:
    static Result<TimingGuard> begin(Sampler& sampler, TimingGuardOptions options = {});
    TimingGuard(TimingGuard&& o) noexcept;
    TimingGuard& operator=(TimingGuard&&) = delete;
    ~TimingGuard();
    TimedRunReport finish();
    const std::vector<std::string>& warnings() const { return warnings_; }

private:
    TimingGuard(Sampler& s, HostLock lock, uint64_t rec, std::vector<std::string> w);
    Sampler* sampler_;
    HostLock lock_;
    uint64_t recording_ = 0;
    std::vector<std::string> warnings_;
    std::chrono::steady_clock::time_point start_;
    bool finished_ = false;
};

// ---------------------------------------------------------------------------------------------
// JSON

json::Value to_json(const GpuMetrics& m);
json::Value to_json(const Snapshot& s);
json::Value to_json(const SamplerCost& c);

}  // namespace arbor::telemetry
