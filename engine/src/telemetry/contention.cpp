// The contention label of a snapshot. Every rule that fires adds a reason; the label is the
// most important rule that fired, in this order:
//   other-gpu-process  another process holds KFD queues, or NVML lists another compute process
//   cpu-busy           other processes use >= thresholds.cpu_other_busy of all CPUs
//   thermal-limited    a thermal limiter is active (gpu_metrics indep throttle bits 32-47,
//                      a v3.0 PROCHOT/THM residency counter grew, NVML thermal/HW slowdown)
//   power-limited      a power/current limiter is active (indep bits 0-23, a v3.0 SPL/FPPT/SPPT
//                      residency counter grew, NVML SW power cap / HW power brake)
//   quiet              none of these
// The first two name causes outside the engine that a user can act on; a power limit is often
// their consequence on an APU that shares its package power.
#include <arbor/telemetry.hpp>

#include <cstdio>

namespace arbor::telemetry {
namespace {

std::string percent(double f) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f%%", f * 100.0);
    return buf;
}

bool grew(const std::optional<uint32_t>& d) { return d && *d > 0; }

std::string hex(uint64_t v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

}  // namespace

const char* contention_name(Contention c) {
    switch (c) {
        case Contention::quiet: return "quiet";
        case Contention::cpu_busy: return "cpu-busy";
        case Contention::other_gpu_process: return "other-gpu-process";
        case Contention::power_limited: return "power-limited";
        case Contention::thermal_limited: return "thermal-limited";
    }
    return "quiet";
}

void classify(Snapshot& s, const ContentionThresholds& t) {
    std::vector<std::string> gpu_procs, cpu, thermal, power;

    for (const auto& p : s.other_gpu_processes) {
        if (p.source == "kfd" && p.queues && *p.queues == 0) continue;  // opened /dev/kfd, no queues
        std::string who = "pid " + std::to_string(p.pid) + (p.name.empty() ? "" : " (" + p.name + ")");
        if (p.source == "kfd")
            who += p.queues ? " holds " + std::to_string(*p.queues) + " KFD queue(s)" : " is a KFD client";
        else
            who += " runs on an NVIDIA GPU";
        gpu_procs.push_back(who);
    }

    if (s.cpu && s.cpu->other >= t.cpu_other_busy)
        cpu.push_back("other processes use " + percent(s.cpu->other) + " of " + std::to_string(s.cpu->cpus) +
                      " CPUs (threshold " + percent(t.cpu_other_busy) + ")");

    for (const auto& g : s.amd) {
        if (!g.metrics) continue;
        const GpuMetrics& m = *g.metrics;
        if (m.indep_throttle_status) {
            if (*m.indep_throttle_status & kIndepThrottleThermalMask)
                thermal.push_back(g.path + ": thermal throttle bits " + hex(*m.indep_throttle_status & kIndepThrottleThermalMask));
            if (*m.indep_throttle_status & kIndepThrottlePowerMask)
                power.push_back(g.path + ": power throttle bits " + hex(*m.indep_throttle_status & kIndepThrottlePowerMask));
        }
        const ThrottleResidency& d = g.residency_delta;
        if (grew(d.prochot) || grew(d.thm_core) || grew(d.thm_gfx) || grew(d.thm_soc))
            thermal.push_back(g.path + ": PROCHOT/thermal residency grew");
        if (grew(d.spl) || grew(d.fppt) || grew(d.sppt)) power.push_back(g.path + ": SPL/FPPT/SPPT residency grew");
    }

    for (const auto& g : s.nvidia) {
        if (!g.clock_event_reasons) continue;
        const std::string who = "NVIDIA GPU " + std::to_string(g.index);
        if (*g.clock_event_reasons & kNvmlThermalReasons)
            thermal.push_back(who + ": clock event reasons " + hex(*g.clock_event_reasons & kNvmlThermalReasons));
        if (*g.clock_event_reasons & kNvmlPowerReasons)
            power.push_back(who + ": clock event reasons " + hex(*g.clock_event_reasons & kNvmlPowerReasons));
    }

    s.reasons.clear();
    s.contention = Contention::quiet;
    auto take = [&](std::vector<std::string>& v, Contention c) {
        if (v.empty()) return;
        if (s.contention == Contention::quiet) s.contention = c;
        for (auto& r : v) s.reasons.push_back(std::string(contention_name(c)) + ": " + std::move(r));
    };
    take(gpu_procs, Contention::other_gpu_process);
    take(cpu, Contention::cpu_busy);
    take(thermal, Contention::thermal_limited);
    take(power, Contention::power_limited);
}

}  // namespace arbor::telemetry
