// arbor-cli telemetry: live power, clocks, CPU load and contention, or a captured gpu_metrics
// file decoded. Without --once it prints one snapshot per interval until interrupted; SIGINT
// and SIGTERM end it cleanly (exit 0). They are blocked and taken with sigtimedwait(), which
// doubles as the sleep between samples, so no handler or global flag is needed.
#include "cli.hpp"

#include <arbor/json.hpp>
#include <arbor/telemetry.hpp>

#include <signal.h>
#include <time.h>

#include <cerrno>
#include <cstdio>
#include <thread>

namespace arbor::cli {
namespace {

namespace tel = arbor::telemetry;

std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

template <class T>
std::string or_dash(const std::optional<T>& v, const char* f) {
    return v ? fmt(f, double(*v)) : std::string("-");
}

std::string text_metrics(const tel::GpuMetrics& m) {
    std::string s = "gpu_metrics " + m.layout + ": " + or_dash(m.socket_power_w, "%.1f W") + ", gfx " +
                    or_dash(m.gfxclk_mhz, "%.0f MHz") + ", fclk " + or_dash(m.fclk_mhz, "%.0f") + ", uclk " +
                    or_dash(m.uclk_mhz, "%.0f") + ", socclk " + or_dash(m.socclk_mhz, "%.0f");
    if (m.temperature_gfx_c || m.temperature_soc_c)
        s += ", " + or_dash(m.temperature_gfx_c, "%.1f C") + " gfx, " + or_dash(m.temperature_soc_c, "%.1f C") + " soc";
    if (m.temperature_edge_c || m.temperature_hotspot_c)
        s += ", " + or_dash(m.temperature_edge_c, "%.0f C") + " edge, " + or_dash(m.temperature_hotspot_c, "%.0f C") +
             " hotspot";
    if (m.gfx_activity_pct) s += ", busy " + fmt("%.0f%%", *m.gfx_activity_pct);
    if (m.gfx_max_freq_mhz) s += ", gfx limit " + fmt("%.0f MHz", *m.gfx_max_freq_mhz);
    return s;
}

std::string text_snapshot(const tel::Snapshot& s) {
    char when[32] = "?";
    const time_t secs = static_cast<time_t>(s.unix_ms / 1000);
    struct tm local {};
    if (localtime_r(&secs, &local)) std::strftime(when, sizeof when, "%H:%M:%S", &local);
    std::string line = std::string(when) + fmt(".%03.0f ", double(s.unix_ms % 1000)) + tel::contention_name(s.contention);
    if (s.cpu)
        line += " | cpu " + fmt("%.0f%%", s.cpu->busy * 100) + " busy, " + fmt("%.0f%%", s.cpu->other * 100) +
                " other (" + std::to_string(s.cpu->cpus) + " CPUs)";
    for (const auto& g : s.amd)
        line += " | " + g.path + ": " + (g.metrics ? text_metrics(*g.metrics) : g.error);
    for (const auto& g : s.nvidia)
        line += " | nvidia" + std::to_string(g.index) + " " + g.name + ": " + or_dash(g.power_w, "%.1f W") + ", sm " +
                or_dash(g.sm_clock_mhz, "%.0f MHz") + ", mem " + or_dash(g.mem_clock_mhz, "%.0f MHz") + ", util " +
                or_dash(g.gpu_util_pct, "%.0f%%") + ", " + or_dash(g.temperature_c, "%.0f C");
    if (s.nvidia.empty()) line += " | nvml " + s.nvml_status;
    if (s.amd.empty()) line += " | no gpu_metrics";
    if (!s.kfd_present) line += " | no kfd";
    for (const auto& r : s.reasons) line += " | " + r;
    return line + "\n";
}

void print_snapshot(const tel::Snapshot& s, bool as_json) {
    write_stdout(as_json ? json::dump(tel::to_json(s)) + "\n" : text_snapshot(s));
    std::fflush(stdout);
}

// Sleeps up to `ms`; true when SIGINT or SIGTERM arrived (they are blocked, so they wait here).
bool interrupted_within(const sigset_t& set, long ms) {
    timespec ts{ms / 1000, (ms % 1000) * 1000000L};
    for (;;) {
        int sig = sigtimedwait(&set, nullptr, &ts);
        if (sig > 0) return true;
        if (errno == EINTR) continue;  // another signal; the remaining time is lost, which is fine
        return false;                  // EAGAIN: the interval passed
    }
}

int run_telemetry(std::vector<std::string> argv) {
    Args args(std::move(argv));
    const bool once = args.flag("--once");
    const bool as_json = args.flag("--json");
    const bool no_nvml = args.flag("--no-nvml");
    const bool lock_path = args.flag("--lock-path");
    const auto file = args.value("--gpu-metrics");
    const auto count = args.integer("--count");
    const auto interval = args.integer("--interval");
    const auto cost_seconds = args.integer("--sampler-cost");
    args.finish();

    if (lock_path) {
        write_stdout(tel::default_host_lock_path() + "\n");
        return 0;
    }
    if (file) {
        if (once || count || interval) throw UsageError("--gpu-metrics decodes a file; it takes no --once/--count/--interval");
        auto m = tel::read_gpu_metrics(*file);
        if (!m) throw InputError(m.message());
        write_stdout(as_json ? json::dump(tel::to_json(*m)) + "\n" : text_metrics(*m) + "\n");
        return 0;
    }
    if (cost_seconds && (*cost_seconds < 1 || *cost_seconds > 600)) throw UsageError("--sampler-cost is 1..600 seconds");
    if (count && *count < 1) throw UsageError("--count needs a positive number");
    if (once && count) throw UsageError("--once and --count exclude each other");
    const long interval_ms = interval ? static_cast<long>(*interval) : 250;
    if (interval_ms < 100 || interval_ms > 250) throw UsageError("--interval is 100..250 ms (4-10 Hz)");

    if (cost_seconds) {
        // Runs the background sampler as the app does and reports what it cost.
        tel::SamplerOptions so;
        so.interval = std::chrono::milliseconds(interval_ms);
        so.probe.use_nvml = !no_nvml;
        tel::Sampler sampler(so);
        if (auto st = sampler.start(); !st) throw RuntimeFailure(st.message());
        std::this_thread::sleep_for(std::chrono::seconds(*cost_seconds));
        sampler.stop();
        const tel::SamplerCost c = sampler.cost();
        if (as_json)
            write_stdout(json::dump(tel::to_json(c)) + "\n");
        else
            write_stdout(std::to_string(c.samples) + " samples in " + fmt("%.2f s", c.wall_seconds) + ": " +
                         fmt("%.1f us", c.mean_sample_cpu_us) + " CPU per sample, " +
                         fmt("%.3f%%", c.cpu_fraction * 100) + " of one core\n");
        return 0;
    }

    // Block the signals before anything can start a thread (NVML may), so every thread inherits it.
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    if (pthread_sigmask(SIG_BLOCK, &set, &old) != 0) throw RuntimeFailure("cannot block SIGINT/SIGTERM");

    tel::ProbeOptions po;
    po.use_nvml = !no_nvml;
    tel::Probe probe(po);
    probe.sample();  // baseline for the CPU and residency differences
    const int64_t limit = once ? 1 : count.value_or(0);
    int64_t printed = 0;
    while (!interrupted_within(set, interval_ms)) {
        print_snapshot(probe.sample(), as_json);
        if (limit && ++printed >= limit) break;
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return 0;
}

const Command kTelemetry(
    "telemetry", "live power, clocks, CPU load and GPU contention, or decode a gpu_metrics file",
    "[--once | --count N] [--interval MS] [--json] [--no-nvml] | --gpu-metrics FILE [--json] | "
    "--sampler-cost SECONDS [--json] | --lock-path",
    run_telemetry);

}  // namespace
}  // namespace arbor::cli
