// KFD listing and a whole Probe over a fake /sys and /proc built in a temporary folder: the
// sources are read, our own pid is excluded, CPU load and v3.0 residency growth come from the
// differences between two samples, and the label follows.
#include "kernel_layouts.hpp"

#include <arbor/telemetry.hpp>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

namespace k = arbor_test::kernel;
namespace tel = arbor::telemetry;

namespace {

bool write(const QString& path, const QByteArray& data) {
    QDir().mkpath(QFileInfo(path).path());
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
    return f.write(data) == data.size();
}

QByteArray v3_bytes(uint32_t thm_gfx, uint32_t spl) {
    auto s = k::unsupported_all<k::V3_0>(3, 0);
    s.average_socket_power = 70500;
    s.average_gfxclk_frequency = 2800;
    s.average_fclk_frequency = 2000;
    s.average_uclk_frequency = 1000;
    s.temperature_gfx = 6000;
    s.throttle_residency_thm_gfx = thm_gfx;
    s.throttle_residency_spl = spl;
    const std::string b = k::bytes_of(s);
    return QByteArray(b.data(), qsizetype(b.size()));
}

// A fake tree: self pid 500; KFD clients 100 (2 queues, 2 GPUs of VRAM), 200 (no queues),
// 300 (queues unreadable), 500 (us); one gpu_metrics file.
struct FakeRoots {
    QTemporaryDir dir;
    QString sys() const { return dir.filePath("sys"); }
    QString proc() const { return dir.filePath("proc"); }
    QString kfd(const QString& rel) const { return dir.filePath("sys/class/kfd/kfd/proc/" + rel); }

    bool build() {
        bool ok = dir.isValid();
        ok = ok && QDir().mkpath(kfd("100/queues/1")) && QDir().mkpath(kfd("100/queues/2"));
        ok = ok && write(kfd("100/vram_1234"), "1048576\n") && write(kfd("100/vram_5678"), "1024\n");
        ok = ok && write(kfd("100/pasid"), "32770\n");
        ok = ok && QDir().mkpath(kfd("200/queues"));
        ok = ok && QDir().mkpath(kfd("300"));
        ok = ok && QDir().mkpath(kfd("500/queues/7"));
        ok = ok && QDir().mkpath(kfd("not-a-pid"));
        ok = ok && write(dir.filePath("proc/100/comm"), "ollama\n");
        ok = ok && write(dir.filePath("proc/200/comm"), "rocminfo\n");
        ok = ok && write(dir.filePath("sys/class/drm/card1/device/gpu_metrics"), v3_bytes(10, 20));
        ok = ok && QDir().mkpath(dir.filePath("sys/class/drm/card1-DP-1"));
        ok = ok && QDir().mkpath(dir.filePath("sys/class/drm/renderD128"));
        ok = ok && set_cpu("cpu 100 0 100 800 0 0 0 0 0 0\ncpu0 1 1 1 1\ncpu1 1 1 1 1\n", 50);
        return ok;
    }
    bool set_cpu(const QByteArray& stat, int self_ticks) {
        const QByteArray self = "500 (arbor test) R 1 500 500 0 -1 0 0 0 0 0 " + QByteArray::number(self_ticks) +
                                " 0 0 0 20 0 4 0\n";
        return write(dir.filePath("proc/stat"), stat) && write(dir.filePath("proc/500/stat"), self);
    }
};

}  // namespace

class TestProbe : public QObject {
    Q_OBJECT
private slots:
    void kfd_listing();
    void kfd_absent();
    void probe_differences();
};

void TestProbe::kfd_listing() {
    FakeRoots r;
    QVERIFY(r.build());
    auto list = tel::list_kfd_processes(r.sys().toStdString(), r.proc().toStdString(), 500);
    QVERIFY(list);
    QCOMPARE(int(list->size()), 3);  // 100, 200, 300; not 500 (us), not "not-a-pid"
    const auto& a = (*list)[0];
    QCOMPARE(a.pid, 100);
    QCOMPARE(a.name, std::string("ollama"));
    QCOMPARE(a.source, std::string("kfd"));
    QCOMPARE(a.queues, std::optional<int>(2));
    QCOMPARE(a.vram_bytes, std::optional<uint64_t>(1048576 + 1024));
    QCOMPARE((*list)[1].pid, 200);
    QCOMPARE((*list)[1].queues, std::optional<int>(0));
    QVERIFY(!(*list)[1].vram_bytes);
    QCOMPARE((*list)[2].pid, 300);
    QVERIFY(!(*list)[2].queues);  // no queues folder: unknown
    QVERIFY((*list)[2].name.empty());
}

void TestProbe::kfd_absent() {
    QTemporaryDir d;
    QVERIFY(!tel::list_kfd_processes(d.path().toStdString(), d.path().toStdString(), 1));
}

void TestProbe::probe_differences() {
    FakeRoots r;
    QVERIFY(r.build());
    tel::ProbeOptions po;
    po.sys_root = r.sys().toStdString();
    po.proc_root = r.proc().toStdString();
    po.self_pid = 500;
    po.use_nvml = false;
    tel::Probe probe(po);

    auto first = probe.sample();
    QCOMPARE(first.sequence, uint64_t(1));
    QVERIFY(!first.cpu);  // nothing to difference yet
    QCOMPARE(int(first.amd.size()), 1);  // card1 only, not the connector or render node
    QVERIFY(QString::fromStdString(first.amd[0].path).endsWith("class/drm/card1/device/gpu_metrics"));
    QVERIFY(first.amd[0].metrics);
    QCOMPARE(*first.amd[0].metrics->socket_power_w, 70.5);
    QCOMPARE(*first.amd[0].metrics->uclk_mhz, 1000u);
    QVERIFY(!first.amd[0].residency_delta.thm_gfx);  // no previous counters
    QVERIFY(first.kfd_present);
    QCOMPARE(int(first.other_gpu_processes.size()), 3);
    QCOMPARE(first.contention, tel::Contention::other_gpu_process);
    QCOMPARE(int(first.reasons.size()), 2);  // pid 100 (2 queues) and pid 300 (unknown); not 200
    QCOMPARE(first.nvml_status, std::string("unavailable: disabled"));

    // Second reading: +1000 ticks, 600 busy of which 100 ours; thermal residency grew by 3.
    QVERIFY(r.set_cpu("cpu 300 0 500 1200 0 0 0 0 0 0\ncpu0 1 1 1 1\ncpu1 1 1 1 1\n", 150));
    QVERIFY(write(r.dir.filePath("sys/class/drm/card1/device/gpu_metrics"), v3_bytes(13, 20)));
    QVERIFY(QDir(r.kfd("100")).removeRecursively());
    QVERIFY(QDir(r.kfd("300")).removeRecursively());
    auto second = probe.sample();
    QCOMPARE(second.sequence, uint64_t(2));
    QVERIFY(second.cpu);
    QCOMPARE(second.cpu->busy, 0.6);
    QCOMPARE(second.cpu->self, 0.1);
    QCOMPARE(second.cpu->other, 0.5);
    QCOMPARE(second.cpu->cpus, 2);
    QCOMPARE(second.amd[0].residency_delta.thm_gfx, std::optional<uint32_t>(3));
    QCOMPARE(second.amd[0].residency_delta.spl, std::optional<uint32_t>(0));
    QCOMPARE(second.contention, tel::Contention::cpu_busy);  // 50% other > 25%, then thermal
    QCOMPARE(int(second.reasons.size()), 2);
    QVERIFY(QString::fromStdString(second.reasons[1]).startsWith("thermal-limited: "));
    QVERIFY(second.steady_ns >= first.steady_ns);

    // The JSON form carries the same numbers.
    const auto j = tel::to_json(second);
    QCOMPARE(QString::fromStdString(j.find("contention")->as_string()), QString("cpu-busy"));
    QCOMPARE(j.find("cpu")->find("other")->as_double(), 0.5);
    QCOMPARE(j.find("amd")->as_array()[0].find("residency_delta")->find("thm_gfx")->as_int(), 3);
    QCOMPARE(j.find("other_gpu_processes")->size(), size_t(1));
}

QTEST_GUILESS_MAIN(TestProbe)
#include "test_probe.moc"
