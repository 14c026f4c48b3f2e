// arbor-cli telemetry end to end: a gpu_metrics fixture written here is decoded to the JSON the
// issue specifies (read back with Qt's own JSON parser), bad files and flags give exit 1 with
// one "error:" line, live snapshots work on this machine (CPU only is fine), and SIGINT ends
// the endless mode with exit 0.
#include "cli_run.hpp"
#include "kernel_layouts.hpp"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <signal.h>

namespace k = arbor_test::kernel;

namespace {

QString cli() { return qEnvironmentVariable("ARBOR_CLI"); }

using Run = arbor::test::CliRun;

Run run(const QStringList& args, int timeout_ms = 20000) {
    return arbor::test::runCli(QStringList{"telemetry"} + args, timeout_ms);
}

QByteArray v3_fixture() {
    auto s = k::unsupported_all<k::V3_0>(3, 0);
    s.average_socket_power = 84250;  // mW
    s.average_gfxclk_frequency = 2875;
    s.average_fclk_frequency = 1999;
    s.average_uclk_frequency = 1000;
    s.temperature_gfx = 6712;  // centi-degrees
    s.temperature_soc = 5901;
    const std::string b = k::bytes_of(s);
    return QByteArray(b.data(), qsizetype(b.size()));
}

const QStringList kLabels{"quiet", "cpu-busy", "other-gpu-process", "power-limited", "thermal-limited"};

}  // namespace

class TestTelemetryCli : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void decode_v3_json();
    void decode_errors_data();
    void decode_errors();
    void once_json();
    void count_lines();
    void sigint_exits_zero();
    void usage_errors_data();
    void usage_errors();
};

void TestTelemetryCli::initTestCase() {
    if (cli().isEmpty() || !QFile::exists(cli())) {
        if (qEnvironmentVariable("CI") == "true") QFAIL("ARBOR_CLI is not set or missing");
        QSKIP("ARBOR_CLI is not set (run through ctest)");
    }
}

void TestTelemetryCli::decode_v3_json() {
    QTemporaryDir dir;
    const QString path = dir.filePath("gpu_metrics.bin");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(v3_fixture());
    f.close();
    Run r = run({"--gpu-metrics", path, "--json"});
    QCOMPARE(r.code, 0);
    QVERIFY(r.err.isEmpty());
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(r.out, &pe);
    QVERIFY2(pe.error == QJsonParseError::NoError, qPrintable(pe.errorString()));
    const QJsonObject o = doc.object();
    QCOMPARE(o["format_revision"].toInt(), 3);
    QCOMPARE(o["content_revision"].toInt(), 0);
    QCOMPARE(o["socket_power_w"].toDouble(), 84.25);
    QCOMPARE(o["gfxclk_mhz"].toInt(), 2875);
    QCOMPARE(o["fclk_mhz"].toInt(), 1999);
    QCOMPARE(o["uclk_mhz"].toInt(), 1000);
    QCOMPARE(o["temperature_gfx_c"].toDouble(), 67.12);
    QCOMPARE(o["temperature_soc_c"].toDouble(), 59.01);
    QVERIFY(o.contains("gfx_power_w") && o["gfx_power_w"].isNull());  // all ones: absent
    QCOMPARE(o["layout"].toString(), QString("v3.0/264"));

    Run text = run({"--gpu-metrics", path});
    QCOMPARE(text.code, 0);
    QVERIFY2(text.out.contains("84.2 W") || text.out.contains("84.3 W"), text.out.constData());
    QVERIFY(text.out.contains("gfx 2875 MHz"));
}

void TestTelemetryCli::decode_errors_data() {
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<QString>("message");
    QTest::newRow("truncated") << v3_fixture().left(100) << "truncated: 100 bytes";
    QByteArray unknown = v3_fixture();
    unknown[2] = char(7);
    QTest::newRow("unknown version") << unknown << "v7.0 is not a supported version";
    QTest::newRow("empty") << QByteArray() << "header truncated";
}

void TestTelemetryCli::decode_errors() {
    QFETCH(QByteArray, content);
    QFETCH(QString, message);
    QTemporaryDir dir;
    const QString path = dir.filePath("bad.bin");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(content);
    f.close();
    Run r = run({"--gpu-metrics", path, "--json"});
    QCOMPARE(r.code, 1);
    QVERIFY(r.out.isEmpty());
    QVERIFY2(r.err.startsWith("error: ") && r.err.count('\n') == 1, r.err.constData());
    QVERIFY2(QString::fromUtf8(r.err).contains(message), r.err.constData());
    QVERIFY(QString::fromUtf8(r.err).contains(path));
}

void TestTelemetryCli::once_json() {
    Run r = run({"--once", "--json"});
    QCOMPARE(r.code, 0);
    QCOMPARE(r.out.count('\n'), 1);
    QJsonParseError pe;
    const QJsonObject o = QJsonDocument::fromJson(r.out, &pe).object();
    QVERIFY2(pe.error == QJsonParseError::NoError, qPrintable(pe.errorString()));
    QVERIFY(kLabels.contains(o["contention"].toString()));
    QVERIFY(o["reasons"].isArray());
    const QJsonObject cpu = o["cpu"].toObject();  // two readings one interval apart: a load exists
    QVERIFY(cpu["cpus"].toInt() >= 1);
    QVERIFY(cpu["busy"].toDouble() >= 0 && cpu["busy"].toDouble() <= 1);
    QVERIFY(cpu["other"].toDouble() <= cpu["busy"].toDouble() + 1e-9);
    QVERIFY(o["nvml"].toObject().contains("status"));
    QVERIFY(o["amd"].isArray());
    QVERIFY(o["other_gpu_processes"].isArray());
    QVERIFY(o["unix_ms"].toDouble() > 1.6e12);
}

void TestTelemetryCli::count_lines() {
    Run r = run({"--count", "3", "--interval", "100", "--json"});
    QCOMPARE(r.code, 0);
    const QList<QByteArray> lines = r.out.trimmed().split('\n');
    QCOMPARE(lines.size(), 3);
    qint64 prev = 0;
    for (const auto& line : lines) {
        const QJsonObject o = QJsonDocument::fromJson(line).object();
        QVERIFY(o["sequence"].toInteger() > prev);
        prev = o["sequence"].toInteger();
    }
    Run text = run({"--count", "1"});
    QCOMPARE(text.code, 0);
    QCOMPARE(text.out.count('\n'), 1);
    QVERIFY(kLabels.contains(QString::fromUtf8(text.out.split(' ').value(1))));
}

void TestTelemetryCli::sigint_exits_zero() {
    QProcess p;
    p.start(cli(), {"telemetry", "--json", "--interval", "100"});
    QVERIFY(p.waitForStarted());
    QVERIFY(p.waitForReadyRead(10000));  // it is running its loop
    QTest::qWait(300);
    ::kill(static_cast<pid_t>(p.processId()), SIGINT);
    QVERIFY(p.waitForFinished(5000));
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    QCOMPARE(p.exitCode(), 0);
    const QList<QByteArray> lines = p.readAllStandardOutput().trimmed().split('\n');
    QVERIFY(lines.size() >= 2);
    for (const auto& line : lines) QVERIFY(!QJsonDocument::fromJson(line).isNull());  // no torn line
}

void TestTelemetryCli::usage_errors_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("interval too short") << QStringList{"--interval", "50"} << "--interval is 100..250 ms";
    QTest::newRow("count zero") << QStringList{"--count", "0"} << "--count needs a positive number";
    QTest::newRow("once and count") << QStringList{"--once", "--count", "2"} << "exclude each other";
    QTest::newRow("unknown flag") << QStringList{"--bogus"} << "unexpected argument '--bogus'";
    QTest::newRow("missing file") << QStringList{"--gpu-metrics", "/nonexistent/gpu_metrics"} << "cannot open";
}

void TestTelemetryCli::usage_errors() {
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    Run r = run(args);
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.startsWith("error: ") && QString::fromUtf8(r.err).contains(message), r.err.constData());
}

QTEST_GUILESS_MAIN(TestTelemetryCli)
#include "test_telemetry_cli.moc"
