// Probe: one reading of every telemetry source, labelled. Holds what a difference needs (the
// previous CPU counters, the previous v3.0 residency counters) and the NVML session.
#include "telemetry/nvml_reader.hpp"

#include <arbor/telemetry.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace arbor::telemetry {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// card0, card1, ... (not the connector entries such as card0-DP-1).
std::vector<std::string> discover_gpu_metrics(const std::string& sys_root) {
    std::vector<std::string> out;
    std::error_code ec;
    const fs::path drm = fs::path(sys_root) / "class/drm";
    for (fs::directory_iterator it(drm, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.size() <= 4 || name.rfind("card", 0) != 0) continue;
        if (!std::all_of(name.begin() + 4, name.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
        const fs::path p = it->path() / "device/gpu_metrics";
        std::error_code e2;
        if (fs::exists(p, e2)) out.push_back(p.string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::optional<uint32_t> delta(const std::optional<uint32_t>& now, const std::optional<uint32_t>& before) {
    if (!now || !before) return std::nullopt;
    return *now - *before;  // counters wrap modulo 2^32
}

}  // namespace

struct Probe::Impl {
    ProbeOptions opt;
    std::unique_ptr<detail::NvmlReader> nvml;
    std::vector<std::string> gpu_metrics_paths;
    std::optional<CpuTimes> prev_cpu;
    uint64_t prev_self = 0;
    std::map<std::string, ThrottleResidency> prev_residency;
    uint64_t sequence = 0;
};

Probe::Probe(ProbeOptions options) : impl_(std::make_unique<Impl>()) {
    impl_->opt = std::move(options);
    if (impl_->opt.self_pid == 0) impl_->opt.self_pid = static_cast<int>(getpid());
    impl_->gpu_metrics_paths = impl_->opt.gpu_metrics_paths.empty() ? discover_gpu_metrics(impl_->opt.sys_root)
                                                                     : impl_->opt.gpu_metrics_paths;
    if (impl_->opt.use_nvml) impl_->nvml = std::make_unique<detail::NvmlReader>(impl_->opt.nvml_library);
}

Probe::~Probe() = default;

const ProbeOptions& Probe::options() const { return impl_->opt; }

Snapshot Probe::sample() {
    Impl& im = *impl_;
    Snapshot s;
    s.sequence = ++im.sequence;
    s.unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch()).count();
    s.steady_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch()).count();

    // CPU: this process first, then the whole machine, so our own ticks are never ahead.
    const std::string self_path = im.opt.proc_root + "/" + std::to_string(im.opt.self_pid) + "/stat";
    std::optional<uint64_t> self;
    if (auto text = slurp(self_path))
        if (auto t = parse_process_stat_ticks(*text)) self = *t;
    if (auto text = slurp(im.opt.proc_root + "/stat")) {
        if (auto t = parse_proc_stat(*text)) {
            if (im.prev_cpu && self) s.cpu = cpu_load_between(*im.prev_cpu, *t, im.prev_self, *self);
            im.prev_cpu = *t;
            im.prev_self = self.value_or(0);
        }
    }

    for (const auto& path : im.gpu_metrics_paths) {
        AmdGpu g;
        g.path = path;
        auto m = read_gpu_metrics(path);
        if (m) {
            ThrottleResidency& prev = im.prev_residency[path];
            const ThrottleResidency& now = m->residency;
            g.residency_delta = {delta(now.prochot, prev.prochot), delta(now.spl, prev.spl),
                                 delta(now.fppt, prev.fppt),       delta(now.sppt, prev.sppt),
                                 delta(now.thm_core, prev.thm_core), delta(now.thm_gfx, prev.thm_gfx),
                                 delta(now.thm_soc, prev.thm_soc)};
            prev = now;
            g.metrics = std::move(m).value();
        } else {
            g.error = m.message();
        }
        s.amd.push_back(std::move(g));
    }

    if (auto kfd = list_kfd_processes(im.opt.sys_root, im.opt.proc_root, im.opt.self_pid)) {
        s.kfd_present = true;
        s.other_gpu_processes = std::move(*kfd);
    }

    if (im.nvml) {
        s.nvml_status = im.nvml->status();
        s.nvidia = im.nvml->read(im.opt.self_pid, s.other_gpu_processes);
    } else {
        s.nvml_status = "unavailable: disabled";
    }

    classify(s, im.opt.thresholds);
    return s;
}

}  // namespace arbor::telemetry
