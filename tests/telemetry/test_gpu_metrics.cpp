// gpu_metrics decoding. Fixtures are the kernel's structs (kernel_layouts.hpp) filled member
// by member and copied out byte for byte, so the parser's offset tables are checked against
// the compiler's layout of the same declarations. Expected values are the raw numbers put in,
// converted by the units the kernel documents for each family.
#include "kernel_layouts.hpp"

#include <arbor/telemetry.hpp>

#include <QtTest>

#include <cmath>

namespace k = arbor_test::kernel;
namespace tel = arbor::telemetry;
using Expect = QMap<QString, QVariant>;  // key of to_json(GpuMetrics) -> value; invalid = null

Q_DECLARE_METATYPE(Expect)

namespace {

static_assert(sizeof(k::V1_0) == 80 && sizeof(k::V1_1) == 96 && sizeof(k::V1_2) == 104 && sizeof(k::V1_3) == 120);
static_assert(sizeof(k::V2_0) == 120 && sizeof(k::V2_1) == 120 && sizeof(k::V2_2) == 128);
static_assert(sizeof(k::V2_3) == 152 && sizeof(k::V2_4) == 168);
static_assert(sizeof(k::V3_0_First) == 224 && sizeof(k::V3_0) == 264);

QByteArray qbytes(const std::string& s) { return QByteArray(s.data(), qsizetype(s.size())); }

// v1.x: degrees C, W, percent.
template <class S>
S fill_v1(S s) {
    s.temperature_edge = 45;
    s.temperature_hotspot = 61;
    s.temperature_mem = 52;
    s.average_gfx_activity = 87;
    s.average_socket_power = 183;
    s.average_gfxclk_frequency = 2105;
    s.average_socclk_frequency = 1001;
    s.average_uclk_frequency = 875;
    s.current_gfxclk = 2203;
    s.current_socclk = 1100;
    s.current_uclk = 900;
    s.throttle_status = 0x12;
    s.system_clock_counter = 123456789012ull;
    return s;
}

Expect expect_v1(const char* layout) {
    return {{"layout", layout},           {"socket_power_w", 183.0},     {"gfxclk_mhz", 2105},
            {"gfxclk_source", "average"}, {"socclk_mhz", 1001},          {"uclk_mhz", 875},
            {"fclk_mhz", QVariant()},     {"temperature_edge_c", 45.0},  {"temperature_hotspot_c", 61.0},
            {"temperature_mem_c", 52.0},  {"temperature_gfx_c", QVariant()}, {"temperature_soc_c", QVariant()},
            {"gfx_activity_pct", 87.0},   {"throttle_status", 0x12},     {"system_clock_ns", 123456789012.0},
            {"indep_throttle_status", QVariant()}, {"gfx_max_freq_mhz", QVariant()}};
}

// v2.x: centi-degrees, mW, centi-percent.
template <class S>
S fill_v2(S s) {
    s.temperature_gfx = 5230;
    s.temperature_soc = 4815;
    s.average_gfx_activity = 4567;
    s.average_socket_power = 15234;
    s.average_cpu_power = 5120;
    s.average_soc_power = 2040;
    s.average_gfx_power = 8010;
    s.average_gfxclk_frequency = 1800;
    s.average_socclk_frequency = 800;
    s.average_uclk_frequency = 1600;
    s.average_fclk_frequency = 1601;
    s.current_gfxclk = 1900;
    s.current_fclk = 1700;
    s.throttle_status = 0x3;
    s.system_clock_counter = 987654321ull;
    return s;
}

Expect expect_v2(const char* layout) {
    return {{"layout", layout},           {"socket_power_w", 15.234},   {"cpu_power_w", 5.12},
            {"soc_power_w", 2.04},        {"gfx_power_w", 8.01},        {"gfxclk_mhz", 1800},
            {"gfxclk_source", "average"}, {"socclk_mhz", 800},          {"uclk_mhz", 1600},
            {"fclk_mhz", 1601},           {"temperature_gfx_c", 52.3},  {"temperature_soc_c", 48.15},
            {"temperature_edge_c", QVariant()}, {"gfx_activity_pct", 45.67}, {"throttle_status", 3},
            {"system_clock_ns", 987654321.0}, {"indep_throttle_status", QVariant()}};
}

// v3.0: centi-degrees, mW, centi-percent.
template <class S>
S fill_v3(S s) {
    s.temperature_gfx = 6125;
    s.temperature_soc = 5550;
    s.average_gfx_activity = 9912;
    s.average_socket_power = 98765;
    s.average_gfx_power = 61000;
    s.average_all_core_power = 22500;
    s.stapm_power_limit = 54000;
    s.current_stapm_power_limit = 53000;
    s.average_gfxclk_frequency = 2899;
    s.average_socclk_frequency = 1200;
    s.average_fclk_frequency = 2001;
    s.current_gfx_maxfreq = 2900;
    s.system_clock_counter = 5555555555ull;
    return s;
}

Expect expect_v3(const char* layout) {
    return {{"layout", layout},          {"format_revision", 3},        {"content_revision", 0},
            {"socket_power_w", 98.765},  {"gfx_power_w", 61.0},         {"cpu_power_w", 22.5},
            {"soc_power_w", QVariant()}, {"stapm_limit_w", 54.0},       {"current_stapm_limit_w", 53.0},
            {"gfxclk_mhz", 2899},        {"gfxclk_source", "average"},  {"socclk_mhz", 1200},
            {"fclk_mhz", 2001},          {"gfx_max_freq_mhz", 2900},    {"temperature_gfx_c", 61.25},
            {"temperature_soc_c", 55.5}, {"gfx_activity_pct", 99.12},   {"throttle_status", QVariant()},
            {"indep_throttle_status", QVariant()}, {"system_clock_ns", 5555555555.0}};
}

k::V3_0 v3_current() {
    auto s = fill_v3(k::unsupported_all<k::V3_0>(3, 0));
    s.average_uclk_frequency = 1000;
    s.throttle_residency_prochot = 1;
    s.throttle_residency_spl = 2;
    s.throttle_residency_fppt = 3;
    s.throttle_residency_sppt = 4;
    s.throttle_residency_thm_core = 5;
    s.throttle_residency_thm_gfx = 6;
    s.throttle_residency_thm_soc = 7;
    return s;
}

constexpr uint64_t kIndep = (1ull << 35) | (1ull << 4);

void compare_json(const arbor::json::Value& j, const Expect& e) {
    for (auto it = e.begin(); it != e.end(); ++it) {
        const std::string key = it.key().toStdString();
        const arbor::json::Value* v = j.find(key);
        QVERIFY2(v, qPrintable("missing key " + it.key()));
        if (!it.value().isValid()) {
            QVERIFY2(v->is_null(), qPrintable(it.key() + " should be null, is " + QString::fromStdString(arbor::json::dump(*v))));
        } else if (it.value().typeId() == QMetaType::QString) {
            QCOMPARE(QString::fromStdString(v->as_string()), it.value().toString());
        } else {
            QVERIFY2(v->is_number(), qPrintable(it.key() + " should be a number"));
            const double want = it.value().toDouble();
            QVERIFY2(std::fabs(v->as_double() - want) <= 1e-9 * std::max(1.0, std::fabs(want)),
                     qPrintable(it.key() + ": got " + QString::number(v->as_double(), 'g', 17) + ", want " +
                                QString::number(want, 'g', 17)));
        }
    }
}

tel::GpuMetrics parse_ok(const QByteArray& b) {
    auto r = tel::parse_gpu_metrics(std::span(reinterpret_cast<const uint8_t*>(b.constData()), size_t(b.size())), "fixture");
    if (!r) qWarning("%s", r.message().c_str());
    return r ? *r : tel::GpuMetrics{};
}

QList<QPair<QString, QByteArray>> all_fixtures() {
    return {
        {"v1.0", qbytes(k::bytes_of(fill_v1(k::unsupported_all<k::V1_0>(1, 0))))},
        {"v1.1", qbytes(k::bytes_of(fill_v1(k::unsupported_all<k::V1_1>(1, 1))))},
        {"v1.2", qbytes(k::bytes_of(fill_v1(k::unsupported_all<k::V1_2>(1, 2))))},
        {"v1.3", qbytes(k::bytes_of(fill_v1(k::unsupported_all<k::V1_3>(1, 3))))},
        {"v2.0", qbytes(k::bytes_of(fill_v2(k::unsupported_all<k::V2_0>(2, 0))))},
        {"v2.1", qbytes(k::bytes_of(fill_v2(k::unsupported_all<k::V2_1>(2, 1))))},
        {"v2.2", qbytes(k::bytes_of(fill_v2(k::unsupported_all<k::V2_2>(2, 2))))},
        {"v2.3", qbytes(k::bytes_of(fill_v2(k::unsupported_all<k::V2_3>(2, 3))))},
        {"v2.4", qbytes(k::bytes_of(fill_v2(k::unsupported_all<k::V2_4>(2, 4))))},
        {"v3.0/224", qbytes(k::bytes_of(fill_v3(k::unsupported_all<k::V3_0_First>(3, 0))))},
        {"v3.0/264", qbytes(k::bytes_of(v3_current()))},
    };
}

}  // namespace

class TestGpuMetrics : public QObject {
    Q_OBJECT
private slots:
    void decode_data();
    void decode();
    void rejects_data();
    void rejects();
    void every_truncation_rejected();
    void layout_table_matches_kernel_structs();
    void read_file();
};

void TestGpuMetrics::decode_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<Expect>("expect");

    QTest::newRow("v1.0") << qbytes(k::bytes_of(fill_v1(k::unsupported_all<k::V1_0>(1, 0)))) << expect_v1("v1.0/80");
    QTest::newRow("v1.1") << qbytes(k::bytes_of(fill_v1(k::unsupported_all<k::V1_1>(1, 1)))) << expect_v1("v1.1/96");
    QTest::newRow("v1.2") << qbytes(k::bytes_of(fill_v1(k::unsupported_all<k::V1_2>(1, 2)))) << expect_v1("v1.2/104");
    {
        auto s = fill_v1(k::unsupported_all<k::V1_3>(1, 3));
        s.indep_throttle_status = kIndep;
        Expect e = expect_v1("v1.3/120");
        e["indep_throttle_status"] = double(kIndep);
        QTest::newRow("v1.3") << qbytes(k::bytes_of(s)) << e;
    }
    {
        auto s = fill_v1(k::unsupported_all<k::V1_1>(1, 1));
        s.average_gfxclk_frequency = 0xffff;  // firmware: not supported -> current clock
        s.average_uclk_frequency = 0xffff;
        s.temperature_mem = 0xffff;
        Expect e = expect_v1("v1.1/96");
        e["gfxclk_mhz"] = 2203;
        e["gfxclk_source"] = "current";
        e["uclk_mhz"] = 900;
        e["temperature_mem_c"] = QVariant();
        QTest::newRow("v1.1 average clocks unsupported") << qbytes(k::bytes_of(s)) << e;
    }
    QTest::newRow("v2.0") << qbytes(k::bytes_of(fill_v2(k::unsupported_all<k::V2_0>(2, 0)))) << expect_v2("v2.0/120");
    QTest::newRow("v2.1") << qbytes(k::bytes_of(fill_v2(k::unsupported_all<k::V2_1>(2, 1)))) << expect_v2("v2.1/120");
    {
        auto s = fill_v2(k::unsupported_all<k::V2_2>(2, 2));
        s.indep_throttle_status = kIndep;
        Expect e = expect_v2("v2.2/128");
        e["indep_throttle_status"] = double(kIndep);
        QTest::newRow("v2.2") << qbytes(k::bytes_of(s)) << e;
    }
    QTest::newRow("v2.3") << qbytes(k::bytes_of(fill_v2(k::unsupported_all<k::V2_3>(2, 3)))) << expect_v2("v2.3/152");
    {
        auto s = fill_v2(k::unsupported_all<k::V2_4>(2, 4));
        s.indep_throttle_status = 0;
        s.average_temperature_gfx = 9999;  // a neighbour of the fields read: must not leak in
        s.average_gfx_current = 1234;
        Expect e = expect_v2("v2.4/168");
        e["indep_throttle_status"] = 0;
        QTest::newRow("v2.4") << qbytes(k::bytes_of(s)) << e;
    }
    {
        auto s = fill_v2(k::unsupported_all<k::V2_2>(2, 2));
        s.temperature_gfx = 0xffff;
        s.average_socket_power = 0xffff;
        s.average_fclk_frequency = 0xffff;
        Expect e = expect_v2("v2.2/128");
        e["temperature_gfx_c"] = QVariant();
        e["socket_power_w"] = QVariant();
        e["fclk_mhz"] = 1700;
        QTest::newRow("v2.2 fields unsupported") << qbytes(k::bytes_of(s)) << e;
    }
    {
        Expect e = expect_v3("v3.0/224");
        e["uclk_mhz"] = QVariant();  // the first v3.0 layout has no uclk
        QTest::newRow("v3.0/224") << qbytes(k::bytes_of(fill_v3(k::unsupported_all<k::V3_0_First>(3, 0)))) << e;
    }
    {
        Expect e = expect_v3("v3.0/264");
        e["uclk_mhz"] = 1000;
        e["structure_size"] = 264;
        QTest::newRow("v3.0/264") << qbytes(k::bytes_of(v3_current())) << e;
    }
    {
        auto s = v3_current();
        s.average_socket_power = 0xffffffffu;
        s.average_uclk_frequency = 0xffff;
        s.temperature_soc = 0xffff;
        Expect e = expect_v3("v3.0/264");
        e["socket_power_w"] = QVariant();
        e["uclk_mhz"] = QVariant();
        e["temperature_soc_c"] = QVariant();
        QTest::newRow("v3.0/264 fields unsupported") << qbytes(k::bytes_of(s)) << e;
    }
}

void TestGpuMetrics::decode() {
    QFETCH(QByteArray, bytes);
    QFETCH(Expect, expect);
    auto r = tel::parse_gpu_metrics(std::span(reinterpret_cast<const uint8_t*>(bytes.constData()), size_t(bytes.size())),
                                   "fixture");
    QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
    compare_json(tel::to_json(*r), expect);
}

void TestGpuMetrics::rejects_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("message");
    const QByteArray v3 = qbytes(k::bytes_of(v3_current()));
    QTest::newRow("empty") << QByteArray() << "header truncated: 0 bytes";
    QTest::newRow("3 bytes") << v3.left(3) << "header truncated: 3 bytes";
    QByteArray unknown = v3;
    unknown[2] = char(9);
    unknown[3] = char(9);
    QTest::newRow("v9.9") << unknown << "v9.9 is not a supported version";
    QByteArray mi300 = qbytes(std::string(120, '\xff'));
    mi300[0] = char(120);
    mi300[1] = 0;
    mi300[2] = char(1);
    mi300[3] = char(4);
    QTest::newRow("v1.4") << mi300 << "v1.4 is not a supported version";
    QByteArray odd = v3;
    odd[0] = char(240);  // structure_size is little-endian: 240 = 0x00f0
    odd[1] = 0;
    QTest::newRow("v3.0 size 240") << odd << "v3.0 with structure_size 240 (byte 0) matches no known layout of that version (known sizes: 224, 264)";
    QTest::newRow("v3.0/264 cut to 224") << v3.left(224) << "v3.0 truncated: 224 bytes, structure_size (byte 0) says 264";
    const QByteArray v24 = qbytes(k::bytes_of(fill_v2(k::unsupported_all<k::V2_4>(2, 4))));
    QTest::newRow("v2.4 one byte short") << v24.left(167) << "v2.4 truncated: 167 bytes";
    QByteArray v2_wrong = v24;
    v2_wrong[0] = char(152);  // v2.4 claiming v2.3's size
    QTest::newRow("v2.4 with v2.3 size") << v2_wrong << "known sizes: 168";
}

void TestGpuMetrics::rejects() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, message);
    auto r = tel::parse_gpu_metrics(std::span(reinterpret_cast<const uint8_t*>(bytes.constData()), size_t(bytes.size())),
                                   "fixture.bin");
    QVERIFY(!r.ok());
    QVERIFY2(QString::fromStdString(r.message()).contains(message), r.message().c_str());
    QVERIFY2(QString::fromStdString(r.message()).startsWith("fixture.bin: "), r.message().c_str());
}

// Never misread: every proper prefix of every valid table is an error.
void TestGpuMetrics::every_truncation_rejected() {
    for (const auto& [name, bytes] : all_fixtures()) {
        QVERIFY(parse_ok(bytes).structure_size == bytes.size());
        for (qsizetype n = 0; n < bytes.size(); ++n) {
            auto r = tel::parse_gpu_metrics(std::span(reinterpret_cast<const uint8_t*>(bytes.constData()), size_t(n)), "x");
            QVERIFY2(!r.ok(), qPrintable(name + " accepted at " + QString::number(n) + " bytes"));
        }
    }
}

void TestGpuMetrics::layout_table_matches_kernel_structs() {
    QMap<QString, int> want{{"v1.0/80", sizeof(k::V1_0)},       {"v1.1/96", sizeof(k::V1_1)},
                            {"v1.2/104", sizeof(k::V1_2)},      {"v1.3/120", sizeof(k::V1_3)},
                            {"v2.0/120", sizeof(k::V2_0)},      {"v2.1/120", sizeof(k::V2_1)},
                            {"v2.2/128", sizeof(k::V2_2)},      {"v2.3/152", sizeof(k::V2_3)},
                            {"v2.4/168", sizeof(k::V2_4)},      {"v3.0/224", sizeof(k::V3_0_First)},
                            {"v3.0/264", sizeof(k::V3_0)}};
    const auto layouts = tel::supported_gpu_metrics_layouts();
    QCOMPARE(int(layouts.size()), int(want.size()));
    for (const auto& l : layouts) {
        QVERIFY2(want.contains(l.name), l.name);
        QCOMPARE(int(l.structure_size), want.value(l.name));
    }
    // Every layout's fixture with all fields unsupported decodes to nulls only.
    for (const auto& [name, bytes] : all_fixtures()) {
        QByteArray blank(bytes.size(), char(0xff));
        blank[0] = bytes[0];
        blank[1] = bytes[1];
        blank[2] = bytes[2];
        blank[3] = bytes[3];
        auto m = parse_ok(blank);
        QCOMPARE(QString::fromStdString(m.layout).left(4), name.left(4));
        QVERIFY(!m.socket_power_w && !m.gfxclk_mhz && !m.fclk_mhz && !m.uclk_mhz && !m.temperature_gfx_c &&
                !m.temperature_edge_c && !m.gfx_activity_pct && !m.indep_throttle_status && !m.residency.spl);
    }
}

void TestGpuMetrics::read_file() {
    QTemporaryDir dir;
    const QString path = dir.filePath("gpu_metrics");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(qbytes(k::bytes_of(v3_current())));
    f.close();
    auto r = tel::read_gpu_metrics(path.toStdString());
    QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
    QCOMPARE(r->layout, std::string("v3.0/264"));
    QCOMPARE(*r->residency.thm_soc, 7u);
    auto missing = tel::read_gpu_metrics(dir.filePath("nope").toStdString());
    QVERIFY(!missing.ok());
    QVERIFY(QString::fromStdString(missing.message()).contains("cannot open"));
}

QTEST_GUILESS_MAIN(TestGpuMetrics)
#include "test_gpu_metrics.moc"
