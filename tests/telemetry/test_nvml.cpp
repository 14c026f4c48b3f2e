// The NVML path through a stand-in library (fake_nvml.cpp): symbols bound by their versioned
// names with fallbacks, units converted (mW -> W), the process list grown on "insufficient
// size", our own pid left out, and a missing library reported as unavailable, not as an error.
#include <arbor/telemetry.hpp>

#include <QtTest>

#include <unistd.h>

namespace tel = arbor::telemetry;

class TestNvml : public QObject {
    Q_OBJECT
private slots:
    void fake_library();
    void missing_library();
};

void TestNvml::fake_library() {
    tel::ProbeOptions po;
    po.nvml_library = FAKE_NVML_PATH;
    po.gpu_metrics_paths = {"/nonexistent"};
    po.sys_root = "/nonexistent";
    tel::Probe probe(po);
    auto s = probe.sample();
    QCOMPARE(s.nvml_status, std::string("ok"));
    QCOMPARE(int(s.nvidia.size()), 2);
    const auto& a = s.nvidia[0];
    QCOMPARE(a.name, std::string("Fake GPU A"));
    QCOMPARE(*a.power_w, 123.456);
    QCOMPARE(*a.power_limit_w, 300.0);
    QCOMPARE(*a.sm_clock_mhz, 1980u);
    QCOMPARE(*a.mem_clock_mhz, 2619u);
    QCOMPARE(*a.gpu_util_pct, 97u);
    QCOMPARE(*a.mem_util_pct, 40u);
    QCOMPARE(*a.temperature_c, 71u);
    QCOMPARE(*a.clock_event_reasons, 0x1ull);                 // via the older "ThrottleReasons" name
    QCOMPARE(*s.nvidia[1].clock_event_reasons, 0x20ull);
    QCOMPARE(int(s.other_gpu_processes.size()), 19);          // 20 listed, ours left out
    for (const auto& p : s.other_gpu_processes) {
        QVERIFY(p.pid != getpid());
        QCOMPARE(p.source, std::string("nvml"));
        if (p.pid == 1005)
            QVERIFY(!p.vram_bytes);  // NVML_VALUE_NOT_AVAILABLE
        else
            QCOMPARE(*p.vram_bytes, uint64_t(p.pid - 1000) << 20);
    }
    QCOMPARE(s.contention, tel::Contention::other_gpu_process);
    QVERIFY(QString::fromStdString(s.reasons.back()).startsWith("thermal-limited: NVIDIA GPU 1"));
}

void TestNvml::missing_library() {
    tel::ProbeOptions po;
    po.nvml_library = "libnvidia-ml-does-not-exist.so.1";
    tel::Probe probe(po);
    auto s = probe.sample();
    QVERIFY(s.nvidia.empty());
    QVERIFY(QString::fromStdString(s.nvml_status).startsWith("unavailable: cannot load libnvidia-ml-does-not-exist.so.1"));
}

QTEST_GUILESS_MAIN(TestNvml)
#include "test_nvml.moc"
