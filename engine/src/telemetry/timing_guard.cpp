// TimingGuard: what a benchmark wraps around each timed run. It serialises GPU runs on the host
// lock, warns when another process already holds GPU queues, and records the sampler's
// snapshots during the run to label it clean or contended.
#include <arbor/telemetry.hpp>

namespace arbor::telemetry {
namespace {

std::vector<std::string> queue_warnings(const Snapshot& s) {
    std::vector<std::string> out;
    for (const auto& p : s.other_gpu_processes) {
        if (p.source == "kfd" && p.queues && *p.queues == 0) continue;
        std::string w = "pid " + std::to_string(p.pid) + (p.name.empty() ? "" : " (" + p.name + ")");
        if (p.source == "kfd")
            w += p.queues ? " holds " + std::to_string(*p.queues) + " GPU queue(s)" : " has the GPU open (KFD)";
        else
            w += " is running on an NVIDIA GPU";
        out.push_back(w + ": timings may be contended");
    }
    return out;
}

}  // namespace

TimingGuard::TimingGuard(Sampler& s, HostLock lock, uint64_t rec, std::vector<std::string> w)
    : sampler_(&s), lock_(std::move(lock)), recording_(rec), warnings_(std::move(w)),
      start_(std::chrono::steady_clock::now()) {}

TimingGuard::TimingGuard(TimingGuard&& o) noexcept
    : sampler_(o.sampler_), lock_(std::move(o.lock_)), recording_(o.recording_), warnings_(std::move(o.warnings_)),
      start_(o.start_), finished_(o.finished_) {
    o.finished_ = true;
}

Result<TimingGuard> TimingGuard::begin(Sampler& sampler, TimingGuardOptions options) {
    const std::string path = options.lock_path.empty() ? default_host_lock_path() : options.lock_path;
    auto lock = HostLock::acquire(path, options.lock_wait);
    if (!lock) return lock.error();

    std::vector<std::string> warnings;
    std::optional<Snapshot> now;
    if (sampler.running()) {
        // A snapshot taken after the lock, so that a run that just ended is not reported.
        const uint64_t seq = sampler.latest() ? sampler.latest()->sequence : 0;
        now = sampler.wait_newer(seq, std::chrono::milliseconds(1000));
    } else {
        warnings.push_back("telemetry sampler is not running: the run is not monitored");
    }
    if (now)
        for (auto& w : queue_warnings(*now)) warnings.push_back(std::move(w));
    const uint64_t rec = sampler.begin_recording();
    return TimingGuard(sampler, std::move(lock).value(), rec, std::move(warnings));
}

TimingGuard::~TimingGuard() {
    if (!finished_) finish();
}

TimedRunReport TimingGuard::finish() {
    TimedRunReport r;
    if (finished_) return r;
    finished_ = true;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    r.recording = sampler_->end_recording(recording_);
    r.warnings = warnings_;
    const auto& c = r.recording.counts;
    r.contended = c[int(Contention::other_gpu_process)] + c[int(Contention::cpu_busy)] +
                      c[int(Contention::thermal_limited)] > 0;
    if (r.recording.snapshots.empty() && r.recording.dropped == 0)
        r.warnings.push_back("no telemetry snapshot fell inside the run (shorter than the sampling interval)");
    lock_.release();
    return r;
}

}  // namespace arbor::telemetry
