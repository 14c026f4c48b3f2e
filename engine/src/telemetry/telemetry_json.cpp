// JSON forms of the telemetry types (arbor-cli telemetry --json, the app's tooltip, benchmark
// records). Absent values are null rather than missing, so every record has the same keys.
#include <arbor/telemetry.hpp>

namespace arbor::telemetry {
namespace {

template <class T>
json::Value opt(const std::optional<T>& v) {
    if (!v) return nullptr;
    return json::Value(*v);
}

json::Value residency(const ThrottleResidency& r) {
    json::Value o = json::Value::object();
    o["prochot"] = opt(r.prochot);
    o["spl"] = opt(r.spl);
    o["fppt"] = opt(r.fppt);
    o["sppt"] = opt(r.sppt);
    o["thm_core"] = opt(r.thm_core);
    o["thm_gfx"] = opt(r.thm_gfx);
    o["thm_soc"] = opt(r.thm_soc);
    return o;
}

}  // namespace

json::Value to_json(const GpuMetrics& m) {
    json::Value o = json::Value::object();
    o["format_revision"] = unsigned(m.format_revision);
    o["content_revision"] = unsigned(m.content_revision);
    o["structure_size"] = unsigned(m.structure_size);
    o["layout"] = m.layout;
    o["socket_power_w"] = opt(m.socket_power_w);
    o["gfx_power_w"] = opt(m.gfx_power_w);
    o["cpu_power_w"] = opt(m.cpu_power_w);
    o["soc_power_w"] = opt(m.soc_power_w);
    o["stapm_limit_w"] = opt(m.stapm_limit_w);
    o["current_stapm_limit_w"] = opt(m.current_stapm_limit_w);
    o["gfxclk_mhz"] = opt(m.gfxclk_mhz);
    o["gfxclk_source"] = m.gfxclk_mhz ? json::Value(m.gfxclk_is_average ? "average" : "current") : json::Value();
    o["socclk_mhz"] = opt(m.socclk_mhz);
    o["fclk_mhz"] = opt(m.fclk_mhz);
    o["uclk_mhz"] = opt(m.uclk_mhz);
    o["gfx_max_freq_mhz"] = opt(m.gfx_max_freq_mhz);
    o["temperature_gfx_c"] = opt(m.temperature_gfx_c);
    o["temperature_soc_c"] = opt(m.temperature_soc_c);
    o["temperature_edge_c"] = opt(m.temperature_edge_c);
    o["temperature_hotspot_c"] = opt(m.temperature_hotspot_c);
    o["temperature_mem_c"] = opt(m.temperature_mem_c);
    o["gfx_activity_pct"] = opt(m.gfx_activity_pct);
    o["throttle_status"] = opt(m.throttle_status);
    o["indep_throttle_status"] = opt(m.indep_throttle_status);
    o["throttle_residency"] = residency(m.residency);
    o["system_clock_ns"] = opt(m.system_clock_ns);
    return o;
}

json::Value to_json(const Snapshot& s) {
    json::Value o = json::Value::object();
    o["sequence"] = s.sequence;
    o["unix_ms"] = s.unix_ms;
    o["contention"] = contention_name(s.contention);
    json::Value reasons = json::Value::array();
    for (const auto& r : s.reasons) reasons.push_back(r);
    o["reasons"] = std::move(reasons);

    if (s.cpu) {
        json::Value c = json::Value::object();
        c["cpus"] = s.cpu->cpus;
        c["busy"] = s.cpu->busy;
        c["self"] = s.cpu->self;
        c["other"] = s.cpu->other;
        o["cpu"] = std::move(c);
    } else {
        o["cpu"] = nullptr;
    }

    json::Value amd = json::Value::array();
    for (const auto& g : s.amd) {
        json::Value a = json::Value::object();
        a["path"] = g.path;
        a["error"] = g.error.empty() ? json::Value() : json::Value(g.error);
        a["metrics"] = g.metrics ? to_json(*g.metrics) : json::Value();
        a["residency_delta"] = residency(g.residency_delta);
        amd.push_back(std::move(a));
    }
    o["amd"] = std::move(amd);

    json::Value nv = json::Value::object();
    nv["status"] = s.nvml_status;
    json::Value gpus = json::Value::array();
    for (const auto& g : s.nvidia) {
        json::Value d = json::Value::object();
        d["index"] = g.index;
        d["name"] = g.name;
        d["power_w"] = opt(g.power_w);
        d["power_limit_w"] = opt(g.power_limit_w);
        d["sm_clock_mhz"] = opt(g.sm_clock_mhz);
        d["mem_clock_mhz"] = opt(g.mem_clock_mhz);
        d["gpu_util_pct"] = opt(g.gpu_util_pct);
        d["mem_util_pct"] = opt(g.mem_util_pct);
        d["temperature_c"] = opt(g.temperature_c);
        d["clock_event_reasons"] = opt(g.clock_event_reasons);
        gpus.push_back(std::move(d));
    }
    nv["gpus"] = std::move(gpus);
    o["nvml"] = std::move(nv);

    o["kfd_present"] = s.kfd_present;
    json::Value procs = json::Value::array();
    for (const auto& p : s.other_gpu_processes) {
        json::Value d = json::Value::object();
        d["pid"] = p.pid;
        d["name"] = p.name;
        d["source"] = p.source;
        d["queues"] = opt(p.queues);
        d["vram_bytes"] = opt(p.vram_bytes);
        procs.push_back(std::move(d));
    }
    o["other_gpu_processes"] = std::move(procs);
    return o;
}

json::Value to_json(const SamplerCost& c) {
    json::Value o = json::Value::object();
    o["samples"] = c.samples;
    o["wall_seconds"] = c.wall_seconds;
    o["thread_cpu_seconds"] = c.thread_cpu_seconds;
    o["mean_sample_cpu_us"] = c.mean_sample_cpu_us;
    o["cpu_fraction"] = c.cpu_fraction;
    return o;
}

}  // namespace arbor::telemetry
