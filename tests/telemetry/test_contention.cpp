// Contention labels: each rule at and around its threshold, and the order of precedence when
// several apply. Snapshots are built by hand, field by field.
#include <arbor/telemetry.hpp>

#include <QtTest>

namespace tel = arbor::telemetry;

namespace {

struct Case {
    std::optional<double> cpu_other = {};
    std::vector<tel::GpuProcess> procs = {};
    std::optional<uint64_t> indep = {};
    tel::ThrottleResidency delta = {};
    std::optional<uint64_t> nvml_reasons = {};
};

tel::Snapshot build(const Case& c) {
    tel::Snapshot s;
    if (c.cpu_other) s.cpu = tel::CpuLoad{*c.cpu_other + 0.05, 0.05, *c.cpu_other, 16};
    s.other_gpu_processes = c.procs;
    tel::AmdGpu g;
    g.path = "/sys/class/drm/card0/device/gpu_metrics";
    g.metrics = tel::GpuMetrics{};
    g.metrics->indep_throttle_status = c.indep;
    g.residency_delta = c.delta;
    s.amd.push_back(g);
    if (c.nvml_reasons) {
        tel::NvidiaGpu n;
        n.clock_event_reasons = c.nvml_reasons;
        s.nvidia.push_back(n);
    }
    return s;
}

tel::GpuProcess kfd(int pid, std::optional<int> queues) {
    tel::GpuProcess p;
    p.pid = pid;
    p.name = "other";
    p.source = "kfd";
    p.queues = queues;
    return p;
}

}  // namespace

Q_DECLARE_METATYPE(Case)

class TestContention : public QObject {
    Q_OBJECT
private slots:
    void label_data();
    void label();
    void names();
    void custom_threshold();
};

void TestContention::label_data() {
    QTest::addColumn<Case>("input");
    QTest::addColumn<QString>("label");
    QTest::addColumn<int>("reasons");

    QTest::newRow("nothing known") << Case{} << "quiet" << 0;
    QTest::newRow("cpu other 24.9%") << Case{0.249} << "quiet" << 0;
    QTest::newRow("cpu other 25%") << Case{0.25} << "cpu-busy" << 1;
    QTest::newRow("cpu other 90%") << Case{0.9} << "cpu-busy" << 1;
    QTest::newRow("kfd client, 0 queues") << Case{0.0, {kfd(10, 0)}} << "quiet" << 0;
    QTest::newRow("kfd client, 3 queues") << Case{0.0, {kfd(10, 3)}} << "other-gpu-process" << 1;
    QTest::newRow("kfd client, queues unreadable") << Case{0.0, {kfd(10, std::nullopt)}} << "other-gpu-process" << 1;
    {
        tel::GpuProcess p;
        p.pid = 99;
        p.source = "nvml";
        QTest::newRow("nvml compute process") << Case{0.0, {p}} << "other-gpu-process" << 1;
    }
    QTest::newRow("indep bit 4 (SPL)") << Case{0.0, {}, 1ull << 4} << "power-limited" << 1;
    QTest::newRow("indep bit 16 (TDC GFX)") << Case{0.0, {}, 1ull << 16} << "power-limited" << 1;
    QTest::newRow("indep bit 33 (TEMP CORE)") << Case{0.0, {}, 1ull << 33} << "thermal-limited" << 1;
    QTest::newRow("indep bit 47 (PROCHOT GFX)") << Case{0.0, {}, 1ull << 47} << "thermal-limited" << 1;
    QTest::newRow("indep bit 56 (PPM) only") << Case{0.0, {}, 1ull << 56} << "quiet" << 0;
    QTest::newRow("indep thermal+power") << Case{0.0, {}, (1ull << 35) | 1ull} << "thermal-limited" << 2;
    QTest::newRow("indep zero") << Case{0.0, {}, 0ull} << "quiet" << 0;
    {
        tel::ThrottleResidency d{0, 0, 0, 0, 0, 0, 0};
        QTest::newRow("residency unchanged") << Case{0.0, {}, std::nullopt, d} << "quiet" << 0;
        d.sppt = 12;
        QTest::newRow("residency SPPT grew") << Case{0.0, {}, std::nullopt, d} << "power-limited" << 1;
        d = {};
        d.thm_gfx = 1;
        QTest::newRow("residency THM_GFX grew") << Case{0.0, {}, std::nullopt, d} << "thermal-limited" << 1;
        d = {};
        d.prochot = 1;
        QTest::newRow("residency PROCHOT grew") << Case{0.0, {}, std::nullopt, d} << "thermal-limited" << 1;
    }
    QTest::newRow("nvml idle") << Case{0.0, {}, std::nullopt, {}, 0x1ull} << "quiet" << 0;
    QTest::newRow("nvml sw power cap") << Case{0.0, {}, std::nullopt, {}, 0x4ull} << "power-limited" << 1;
    QTest::newRow("nvml hw power brake") << Case{0.0, {}, std::nullopt, {}, 0x80ull} << "power-limited" << 1;
    QTest::newRow("nvml sw thermal") << Case{0.0, {}, std::nullopt, {}, 0x20ull} << "thermal-limited" << 1;
    QTest::newRow("nvml hw thermal") << Case{0.0, {}, std::nullopt, {}, 0x40ull} << "thermal-limited" << 1;
    QTest::newRow("precedence: all four") << Case{0.5, {kfd(7, 1)}, (1ull << 35) | 1ull} << "other-gpu-process" << 4;
    QTest::newRow("precedence: cpu over thermal") << Case{0.5, {}, 1ull << 35} << "cpu-busy" << 2;
}

void TestContention::label() {
    QFETCH(Case, input);
    QFETCH(QString, label);
    QFETCH(int, reasons);
    tel::Snapshot s = build(input);
    tel::classify(s);
    QCOMPARE(QString(tel::contention_name(s.contention)), label);
    QCOMPARE(int(s.reasons.size()), reasons);
    if (reasons > 0)  // the first reason is the label's own
        QVERIFY2(QString::fromStdString(s.reasons.front()).startsWith(label + ": "), s.reasons.front().c_str());
}

void TestContention::names() {
    QCOMPARE(QString(tel::contention_name(tel::Contention::quiet)), QString("quiet"));
    QCOMPARE(QString(tel::contention_name(tel::Contention::cpu_busy)), QString("cpu-busy"));
    QCOMPARE(QString(tel::contention_name(tel::Contention::other_gpu_process)), QString("other-gpu-process"));
    QCOMPARE(QString(tel::contention_name(tel::Contention::power_limited)), QString("power-limited"));
    QCOMPARE(QString(tel::contention_name(tel::Contention::thermal_limited)), QString("thermal-limited"));
}

void TestContention::custom_threshold() {
    tel::Snapshot s = build(Case{0.4});
    tel::classify(s, tel::ContentionThresholds{0.5});
    QCOMPARE(s.contention, tel::Contention::quiet);
    tel::classify(s, tel::ContentionThresholds{0.4});
    QCOMPARE(s.contention, tel::Contention::cpu_busy);
}

QTEST_GUILESS_MAIN(TestContention)
#include "test_contention.moc"
