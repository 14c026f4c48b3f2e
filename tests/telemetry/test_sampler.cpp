// The sampler thread (rate, history window, latest(), recordings, its measured CPU cost), the
// host lock (flock: a second open of the same file is refused until release) and the timing
// guard's clean/contended verdict over a fake KFD tree.
#include <arbor/telemetry.hpp>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include <unistd.h>

namespace tel = arbor::telemetry;
using namespace std::chrono_literals;

namespace {

tel::SamplerOptions quick(std::chrono::milliseconds interval = 100ms) {
    tel::SamplerOptions o;
    o.interval = interval;
    o.probe.use_nvml = false;
    return o;
}

}  // namespace

class TestSampler : public QObject {
    Q_OBJECT
private slots:
    void interval_clamped();
    void rate_history_and_cost();
    void history_window();
    void recording();
    void host_lock();
    void guard_contended_by_kfd_client();
    void guard_clean_and_serialised();
};

void TestSampler::interval_clamped() {
    QCOMPARE(tel::Sampler(quick(10ms)).interval(), 100ms);
    QCOMPARE(tel::Sampler(quick(1000ms)).interval(), 250ms);
    QCOMPARE(tel::Sampler(quick(200ms)).interval(), 200ms);
}

void TestSampler::rate_history_and_cost() {
    tel::SamplerOptions o = quick(100ms);
    o.probe.use_nvml = true;  // the real path: on a machine without NVIDIA, "unavailable"
    tel::Sampler s(o);
    QVERIFY(!s.latest());
    QVERIFY(s.start().ok());
    QVERIFY(s.running());
    QThread::msleep(2050);
    const auto cost = s.cost();
    const auto h = s.history();
    const auto last = s.latest();
    s.stop();
    QVERIFY(!s.running());
    // 10 Hz for ~2 s: 21 samples give or take scheduling on a loaded machine.
    QVERIFY2(h.size() >= 15 && h.size() <= 23, qPrintable(QString::number(h.size())));
    for (size_t i = 1; i < h.size(); ++i) {
        QCOMPARE(h[i].sequence, h[i - 1].sequence + 1);
        QVERIFY(h[i].steady_ns > h[i - 1].steady_ns);
    }
    QVERIFY(last);
    QCOMPARE(last->sequence, h.back().sequence);
    QVERIFY(last->cpu);
    QVERIFY(!last->nvml_status.empty());
    qInfo("sampler cost at 10 Hz: %llu samples in %.2f s, %.1f us CPU per sample, thread CPU %.3f s = %.3f%% of one core",
          (unsigned long long)cost.samples, cost.wall_seconds, cost.mean_sample_cpu_us, cost.thread_cpu_seconds,
          cost.cpu_fraction * 100);
    QVERIFY(cost.samples >= 15);
    QVERIFY(cost.mean_sample_cpu_us > 0);
    QVERIFY2(cost.cpu_fraction < 0.02, "the sampler should cost well under 2% of one core");
    // Stopped: no more samples.
    const uint64_t seq = s.latest()->sequence;
    QThread::msleep(250);
    QCOMPARE(s.latest()->sequence, seq);
}

void TestSampler::history_window() {
    tel::SamplerOptions o = quick(100ms);
    o.history = 1s;
    tel::Sampler s(o);
    QVERIFY(s.start().ok());
    QThread::msleep(1800);
    const auto h = s.history();
    s.stop();
    QVERIFY(h.size() >= 5);
    const double span_s = double(h.back().steady_ns - h.front().steady_ns) * 1e-9;
    QVERIFY2(span_s <= 1.0, qPrintable(QString::number(span_s)));
    QVERIFY2(h.size() <= 11, qPrintable(QString::number(h.size())));
    QVERIFY(h.front().sequence > 1);  // the oldest were dropped
}

void TestSampler::recording() {
    tel::Sampler s(quick(100ms));
    QVERIFY(s.start().ok());
    QVERIFY(s.wait_newer(0, 2000ms));
    const uint64_t id = s.begin_recording();
    QThread::msleep(600);
    auto rec = s.end_recording(id);
    QVERIFY2(rec.snapshots.size() >= 4 && rec.snapshots.size() <= 8, qPrintable(QString::number(rec.snapshots.size())));
    uint64_t total = 0;
    for (auto c : rec.counts) total += c;
    QCOMPARE(total, uint64_t(rec.snapshots.size()));
    QCOMPARE(rec.dropped, uint64_t(0));
    QVERIFY(s.end_recording(id).snapshots.empty());  // ended: gone
    const auto next = s.wait_newer(s.latest()->sequence, 1000ms);
    QVERIFY(next);
}

void TestSampler::host_lock() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("gpu.lock").toStdString();
    auto a = tel::HostLock::acquire(path, 0ms);
    QVERIFY2(a.ok(), a.ok() ? "" : a.message().c_str());
    QVERIFY(a->held());
    auto b = tel::HostLock::acquire(path, 100ms);
    QVERIFY(!b.ok());
    QVERIFY2(QString::fromStdString(b.message()).contains("is held by pid " + QString::number(getpid())), b.message().c_str());
    a->release();
    QVERIFY(!a->held());
    auto c = tel::HostLock::acquire(path, 0ms);
    QVERIFY(c.ok());
    tel::HostLock moved = std::move(c).value();
    QVERIFY(moved.held());
    QVERIFY(!tel::HostLock::acquire(path, 0ms).ok());
    // Default path: in the runtime dir, or /tmp with the uid.
    const QString def = QString::fromStdString(tel::default_host_lock_path());
    QVERIFY(def.endsWith(".lock"));
    QVERIFY(def.contains("arbor-gpu"));
    auto bad = tel::HostLock::acquire(dir.filePath("no/such/dir/x.lock").toStdString(), 0ms);
    QVERIFY(!bad.ok());
    QVERIFY(QString::fromStdString(bad.message()).contains("cannot open"));
}

void TestSampler::guard_contended_by_kfd_client() {
    QTemporaryDir dir;
    QVERIFY(QDir().mkpath(dir.filePath("sys/class/kfd/kfd/proc/4242/queues/0")));
    tel::SamplerOptions o = quick(100ms);
    o.probe.sys_root = dir.filePath("sys").toStdString();
    tel::Sampler s(o);
    QVERIFY(s.start().ok());
    auto g = tel::TimingGuard::begin(s, {dir.filePath("bench.lock").toStdString(), 0ms});
    QVERIFY2(g.ok(), g.ok() ? "" : g.message().c_str());
    QCOMPARE(int(g->warnings().size()), 1);
    QVERIFY(QString::fromStdString(g->warnings()[0]).contains("pid 4242 holds 1 GPU queue(s)"));
    QThread::msleep(350);
    auto report = g->finish();
    QVERIFY(report.contended);
    QVERIFY(report.seconds >= 0.3);
    QVERIFY(!report.recording.snapshots.empty());
    QCOMPARE(report.recording.counts[int(tel::Contention::other_gpu_process)], uint64_t(report.recording.snapshots.size()));
    // The lock was released by finish().
    QVERIFY(tel::HostLock::acquire(dir.filePath("bench.lock").toStdString(), 0ms).ok());
}

void TestSampler::guard_clean_and_serialised() {
    QTemporaryDir dir;
    // A frozen /proc/stat: no CPU difference, so no cpu-busy; no KFD, no gpu_metrics: quiet.
    QVERIFY(QDir().mkpath(dir.filePath("proc/1")));
    QFile f(dir.filePath("proc/stat"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("cpu 1 0 1 10 0 0 0 0 0 0\ncpu0 1 0 1 10\n");
    f.close();
    tel::SamplerOptions o = quick(100ms);
    o.probe.sys_root = dir.filePath("sys").toStdString();
    o.probe.proc_root = dir.filePath("proc").toStdString();
    o.probe.self_pid = 1;
    tel::Sampler s(o);
    QVERIFY(s.start().ok());
    const std::string lock = dir.filePath("bench.lock").toStdString();
    auto g = tel::TimingGuard::begin(s, {lock, 0ms});
    QVERIFY(g.ok());
    QVERIFY(g->warnings().empty());
    // A second timed run cannot start while the first holds the lock.
    auto second = tel::TimingGuard::begin(s, {lock, 50ms});
    QVERIFY(!second.ok());
    QVERIFY2(QString::fromStdString(second.message()).contains("is held"), second.message().c_str());
    QThread::msleep(300);
    auto report = g->finish();
    QVERIFY(!report.contended);
    QVERIFY(report.recording.snapshots.size() >= 2);
    QCOMPARE(report.recording.counts[int(tel::Contention::quiet)], uint64_t(report.recording.snapshots.size()));
    // A sampler that is not running still guards, with a warning.
    tel::Sampler idle(quick());
    auto g2 = tel::TimingGuard::begin(idle, {lock, 0ms});
    QVERIFY(g2.ok());
    QVERIFY(QString::fromStdString(g2->warnings().front()).contains("not running"));
    auto r2 = g2->finish();
    QVERIFY(!r2.contended);
}

QTEST_GUILESS_MAIN(TestSampler)
#include "test_sampler.moc"
