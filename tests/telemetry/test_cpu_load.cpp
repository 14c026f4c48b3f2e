// /proc/stat and /proc/<pid>/stat parsing on fixture text (expected sums worked out by hand
// from proc(5)'s field order), the load arithmetic, and one live check that the CPU time this
// process burns shows up as `self` and not as `other`.
#include <arbor/telemetry.hpp>

#include <QElapsedTimer>
#include <QtTest>

#include <time.h>

#include <cmath>

namespace tel = arbor::telemetry;

class TestCpuLoad : public QObject {
    Q_OBJECT
private slots:
    void proc_stat_data();
    void proc_stat();
    void proc_stat_errors_data();
    void proc_stat_errors();
    void process_stat_data();
    void process_stat();
    void load_between();
    void live_self_load();
};

void TestCpuLoad::proc_stat_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<quint64>("busy");
    QTest::addColumn<quint64>("total");
    QTest::addColumn<int>("cpus");
    // user nice system idle iowait irq softirq steal guest guest_nice
    QTest::newRow("full") << QByteArray("cpu  100 20 30 400 50 6 7 8 9 10\n"
                                        "cpu0 50 10 15 200 25 3 3 4 4 5\n"
                                        "cpu1 50 10 15 200 25 3 4 4 5 5\n"
                                        "intr 12345 0 0\nctxt 999\nbtime 1700000000\n")
                          << quint64(100 + 20 + 30 + 6 + 7 + 8) << quint64(171 + 400 + 50) << 2;
    QTest::newRow("old kernel, 4 fields") << QByteArray("cpu 1 2 3 4\ncpu0 1 2 3 4\n") << quint64(6) << quint64(10) << 1;
    QTest::newRow("cpu line not first") << QByteArray("intr 1\ncpu 10 0 10 80 0 0 0 0 0 0\ncpu0 1 1 1 1\ncpu1 1 1 1 1\ncpu2 1 1 1 1\ncpu3 1 1 1 1")
                                        << quint64(20) << quint64(100) << 4;
    QTest::newRow("guest not counted twice") << QByteArray("cpu 500 0 0 500 0 0 0 0 400 0\n") << quint64(500)
                                             << quint64(1000) << 1;
}

void TestCpuLoad::proc_stat() {
    QFETCH(QByteArray, text);
    QFETCH(quint64, busy);
    QFETCH(quint64, total);
    QFETCH(int, cpus);
    auto r = tel::parse_proc_stat(std::string_view(text.constData(), size_t(text.size())));
    QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
    QCOMPARE(quint64(r->busy), busy);
    QCOMPARE(quint64(r->total), total);
    QCOMPARE(r->cpus, cpus);
}

void TestCpuLoad::proc_stat_errors_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("message");
    QTest::newRow("empty") << QByteArray() << "no aggregate 'cpu' line";
    QTest::newRow("only per-cpu") << QByteArray("cpu0 1 2 3 4\n") << "no aggregate 'cpu' line";
    QTest::newRow("not a number") << QByteArray("intr 1\ncpu 1 2 x3 4\n") << "line 2: 'cpu' field 'x3' is not a number";
    QTest::newRow("too few") << QByteArray("cpu 1 2 3\n") << "line 1: 'cpu' has 3 fields, need at least 4";
}

void TestCpuLoad::proc_stat_errors() {
    QFETCH(QByteArray, text);
    QFETCH(QString, message);
    auto r = tel::parse_proc_stat(std::string_view(text.constData(), size_t(text.size())));
    QVERIFY(!r.ok());
    QVERIFY2(QString::fromStdString(r.message()).contains(message), r.message().c_str());
}

void TestCpuLoad::process_stat_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<qint64>("ticks");  // -1: error
    // fields: pid (comm) state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime ...
    QTest::newRow("plain") << QByteArray("4242 (arbor-cli) S 1 4242 4242 0 -1 4194304 100 0 0 0 50 25 0 0 20 0 3 0\n")
                           << qint64(75);
    QTest::newRow("comm with spaces and parens")
        << QByteArray("77 (my (odd) proc) R 1 77 77 0 -1 0 1 2 3 4 1234 4321 9 9 20 0 1 0") << qint64(5555);
    QTest::newRow("no paren") << QByteArray("77 arbor S 1 2 3") << qint64(-1);
    QTest::newRow("too short") << QByteArray("77 (a) S 1 2 3 4 5") << qint64(-1);
    QTest::newRow("bad utime") << QByteArray("77 (a) S 1 2 3 4 5 6 7 8 9 10 x 12") << qint64(-1);
}

void TestCpuLoad::process_stat() {
    QFETCH(QByteArray, text);
    QFETCH(qint64, ticks);
    auto r = tel::parse_process_stat_ticks(std::string_view(text.constData(), size_t(text.size())));
    if (ticks < 0) {
        QVERIFY(!r.ok());
        QVERIFY(r.message().rfind("process stat: ", 0) == 0);
    } else {
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        QCOMPARE(qint64(*r), ticks);
    }
}

void TestCpuLoad::load_between() {
    tel::CpuTimes a{100, 1000, 4}, b{600, 2000, 4};
    auto l = tel::cpu_load_between(a, b, 10, 210);
    QVERIFY(l);
    QCOMPARE(l->busy, 0.5);   // 500 of 1000 ticks
    QCOMPARE(l->self, 0.2);   // 200 of 1000
    QCOMPARE(l->other, 0.3);
    QCOMPARE(l->cpus, 4);
    // Our own ticks can run ahead of the machine's by rounding: never negative load.
    auto m = tel::cpu_load_between(a, b, 0, 900);
    QVERIFY(m);
    QCOMPARE(m->self, 0.5);
    QCOMPARE(m->other, 0.0);
    QVERIFY(!tel::cpu_load_between(a, a, 0, 0));  // no time passed
    QVERIFY(!tel::cpu_load_between(b, a, 0, 0));  // counters went back (a different boot)
}

// Busy-loop ~400 ms between two probe samples. The oracle for `self` is this process's CPU
// time from clock_gettime over the wall time between the samples, spread over all CPUs; the
// kernel's tick accounting may differ by a few 10 ms ticks.
void TestCpuLoad::live_self_load() {
    tel::ProbeOptions po;
    po.use_nvml = false;
    po.gpu_metrics_paths = {"/nonexistent/gpu_metrics"};
    tel::Probe probe(po);
    auto cpu_now = [] {
        timespec ts{};
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
    };
    const double c0 = cpu_now();
    auto first = probe.sample();
    QElapsedTimer t;
    t.start();
    volatile uint64_t x = 0;
    while (t.elapsed() < 400) x = x + 1;
    auto s = probe.sample();
    const double c1 = cpu_now();
    QVERIFY(s.cpu);
    const double wall = double(s.steady_ns - first.steady_ns) * 1e-9;
    const double expected_self = (c1 - c0) / (wall * s.cpu->cpus);
    qInfo("busy %.3f self %.3f (clock_gettime says %.3f) other %.3f on %d CPUs", s.cpu->busy, s.cpu->self,
          expected_self, s.cpu->other, s.cpu->cpus);
    QVERIFY2(std::abs(s.cpu->self - expected_self) < 0.1, "our own CPU time was not counted as `self`");
    QVERIFY(s.cpu->self > 0);
    QVERIFY(s.cpu->self <= s.cpu->busy + 1e-12);
    QVERIFY(s.cpu->other >= 0 && s.cpu->other <= 1);
    QCOMPARE(s.amd.size(), size_t(1));  // the explicit path is read, and its failure reported
    QVERIFY(!s.amd[0].metrics && !s.amd[0].error.empty());
}

QTEST_GUILESS_MAIN(TestCpuLoad)
#include "test_cpu_load.moc"
