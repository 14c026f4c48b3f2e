// Sampler: a Probe on its own thread. Each tick reads every source, stores the snapshot as the
// latest, appends it to the one-minute history and to every open recording, then sleeps until
// the next tick (ticks keep their phase; a slow read delays only itself). The thread measures
// its own CPU time with CLOCK_THREAD_CPUTIME_ID, so cost() is what sampling really costs.
#include <arbor/telemetry.hpp>

#include <time.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <system_error>
#include <thread>

namespace arbor::telemetry {
namespace {

double thread_cpu_seconds() {
    timespec ts{};
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

}  // namespace

struct Sampler::Impl {
    SamplerOptions opt;
    std::thread thread;
    mutable std::mutex mu;
    mutable std::condition_variable cv;
    bool stop = false;
    bool running = false;

    std::optional<Snapshot> latest;
    std::deque<Snapshot> history;
    std::map<uint64_t, Recording> recordings;
    uint64_t next_recording = 1;

    std::chrono::steady_clock::time_point started;
    uint64_t samples = 0;
    double sample_cpu = 0;  // CPU seconds spent inside Probe::sample()
    double thread_cpu = 0;  // CPU seconds of the whole thread so far

    void run();
};

void Sampler::Impl::run() {
    Probe probe(opt.probe);
    const auto interval = opt.interval;
    auto next = std::chrono::steady_clock::now();
    for (;;) {
        const double c0 = thread_cpu_seconds();
        Snapshot s = probe.sample();
        const double c1 = thread_cpu_seconds();
        {
            std::lock_guard lock(mu);
            ++samples;
            sample_cpu += c1 - c0;
            thread_cpu = c1;
            const int64_t keep_from =
                s.steady_ns - std::chrono::duration_cast<std::chrono::nanoseconds>(opt.history).count();
            history.push_back(s);
            while (!history.empty() && history.front().steady_ns < keep_from) history.pop_front();
            for (auto& [id, rec] : recordings) {
                ++rec.counts[static_cast<int>(s.contention)];
                if (rec.snapshots.size() < kMaxRecorded)
                    rec.snapshots.push_back(s);
                else
                    ++rec.dropped;
            }
            latest = std::move(s);
        }
        cv.notify_all();

        next += interval;
        const auto now = std::chrono::steady_clock::now();
        if (next < now) next = now;  // fell behind: do not burst to catch up
        std::unique_lock lock(mu);
        if (cv.wait_until(lock, next, [&] { return stop; })) break;
    }
    std::lock_guard lock(mu);
    thread_cpu = thread_cpu_seconds();
}

Sampler::Sampler(SamplerOptions options) : impl_(std::make_unique<Impl>()) {
    impl_->opt = std::move(options);
    impl_->opt.interval = std::clamp(impl_->opt.interval, std::chrono::milliseconds(100), std::chrono::milliseconds(250));
    if (impl_->opt.history < std::chrono::seconds(1)) impl_->opt.history = std::chrono::seconds(1);
}

Sampler::~Sampler() { stop(); }

Status Sampler::start() {
    std::lock_guard lock(impl_->mu);
    if (impl_->running) return {};
    impl_->stop = false;
    impl_->started = std::chrono::steady_clock::now();
    impl_->samples = 0;
    impl_->sample_cpu = impl_->thread_cpu = 0;
    try {
        impl_->thread = std::thread([im = impl_.get()] { im->run(); });
    } catch (const std::system_error& e) {
        return make_error(std::string("telemetry sampler: cannot start its thread: ") + e.what());
    }
    impl_->running = true;
    return {};
}

void Sampler::stop() {
    {
        std::lock_guard lock(impl_->mu);
        if (!impl_->running) return;
        impl_->stop = true;
    }
    impl_->cv.notify_all();
    impl_->thread.join();
    std::lock_guard lock(impl_->mu);
    impl_->running = false;
}

bool Sampler::running() const {
    std::lock_guard lock(impl_->mu);
    return impl_->running;
}

std::chrono::milliseconds Sampler::interval() const { return impl_->opt.interval; }

std::optional<Snapshot> Sampler::latest() const {
    std::lock_guard lock(impl_->mu);
    return impl_->latest;
}

std::vector<Snapshot> Sampler::history() const {
    std::lock_guard lock(impl_->mu);
    return {impl_->history.begin(), impl_->history.end()};
}

SamplerCost Sampler::cost() const {
    std::lock_guard lock(impl_->mu);
    SamplerCost c;
    c.samples = impl_->samples;
    c.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - impl_->started).count();
    c.thread_cpu_seconds = impl_->thread_cpu;
    c.mean_sample_cpu_us = c.samples ? impl_->sample_cpu / double(c.samples) * 1e6 : 0;
    c.cpu_fraction = c.wall_seconds > 0 ? c.thread_cpu_seconds / c.wall_seconds : 0;
    return c;
}

std::optional<Snapshot> Sampler::wait_newer(uint64_t after_sequence, std::chrono::milliseconds timeout) const {
    std::unique_lock lock(impl_->mu);
    impl_->cv.wait_for(lock, timeout, [&] { return impl_->latest && impl_->latest->sequence > after_sequence; });
    if (impl_->latest && impl_->latest->sequence > after_sequence) return impl_->latest;
    return std::nullopt;
}

uint64_t Sampler::begin_recording() {
    std::lock_guard lock(impl_->mu);
    const uint64_t id = impl_->next_recording++;
    impl_->recordings[id];
    return id;
}

Sampler::Recording Sampler::end_recording(uint64_t id) {
    std::lock_guard lock(impl_->mu);
    auto it = impl_->recordings.find(id);
    if (it == impl_->recordings.end()) return {};
    Recording r = std::move(it->second);
    impl_->recordings.erase(it);
    return r;
}

}  // namespace arbor::telemetry
