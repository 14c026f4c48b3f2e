// Tests for arbor::quant::dequantize: every tensor of the shared quant models decodes to the
// exact bytes of ggml's reference decoder (SHA-256 list in shared/data/quant), fp16/bf16
// conversions against the compiler's own _Float16 and a nearest-value property, and the errors.
#include "sha256.hpp"

#include <arbor/gguf.hpp>
#include <arbor/quant.hpp>

#include <QFile>
#include <QRandomGenerator>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <map>
#include <vector>

using arbor::TensorType;
namespace quant = arbor::quant;

namespace {

QString quant_dir() { return qEnvironmentVariable("ARBOR_SHARED_DATA") + "/quant"; }

// Missing shared data fails under CI and skips elsewhere.
#define REQUIRE_FILE(path)                                                                    \
    do {                                                                                      \
        if (!QFile::exists(path)) {                                                           \
            if (qEnvironmentVariable("CI") == "true") QFAIL(qPrintable("missing " + (path))); \
            QSKIP(qPrintable("missing " + (path)));                                           \
        }                                                                                     \
    } while (0)

struct HashLine {
    QString tensor;
    qint64 n;
    QString sha;
};

std::map<QString, std::vector<HashLine>> read_hash_list(const QString& path) {
    std::map<QString, std::vector<HashLine>> out;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return out;
    while (!f.atEnd()) {
        const QList<QByteArray> parts = f.readLine().trimmed().split(' ');
        if (parts.size() != 4) continue;
        out[QString(parts[0])].push_back({QString(parts[1]), parts[2].toLongLong(), QString(parts[3])});
    }
    return out;
}

uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
float bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

}  // namespace

class TestDequantize : public QObject {
    Q_OBJECT
private slots:
    void reference_hashes_data();
    void reference_hashes();
    void hash_list_complete();
    void fp16_all_values();
    void fp16_encode_matches_compiler();
    void bf16_round_trip_property();
    void hand_made_blocks();
    void errors_name_the_type();
};

void TestDequantize::reference_hashes_data() {
    QTest::addColumn<QString>("file");
    const QString list = quant_dir() + "/DEQUANT-SHA256.txt";
    if (!QFile::exists(list)) {
        QTest::newRow("missing") << QString();
        return;
    }
    for (const auto& [file, lines] : read_hash_list(list)) QTest::newRow(qPrintable(file)) << file;
}

void TestDequantize::reference_hashes() {
    QFETCH(QString, file);
    REQUIRE_FILE(quant_dir() + "/DEQUANT-SHA256.txt");
    const auto lines = read_hash_list(quant_dir() + "/DEQUANT-SHA256.txt").at(file);
    REQUIRE_FILE(quant_dir() + "/" + file);
    auto gguf = arbor::GgufFile::open((quant_dir() + "/" + file).toStdString());
    QVERIFY2(gguf.ok(), gguf.ok() ? "" : gguf.message().c_str());
    QStringList mismatches;
    std::vector<float> buf;
    for (const HashLine& line : lines) {
        const arbor::GgufTensor* t = (*gguf)->tensor(line.tensor.toStdString());
        QVERIFY2(t, qPrintable(file + ": no tensor " + line.tensor));
        QCOMPARE(t->n_elements(), line.n);
        const auto info = arbor::tensor_type_info(static_cast<uint32_t>(t->type));
        const QString type = info ? QString::fromLatin1(info->name.data(), int(info->name.size())) : "?";
        buf.assign(size_t(line.n), 0.0f);
        const arbor::Status st = quant::dequantize(t->type, t->data, buf.data(), line.n);
        if (!st.ok()) {
            mismatches << QString("%1 %2 (%3): %4").arg(file, line.tensor, type, QString::fromStdString(st.message()));
            continue;
        }
        const QString got = QString::fromStdString(arbor::test::Sha256::of(buf.data(), buf.size() * 4));
        if (got != line.sha) mismatches << QString("%1 %2 (%3): sha256 %4").arg(file, line.tensor, type, got);
    }
    QVERIFY2(mismatches.isEmpty(), qPrintable(mismatches.join("\n")));
}

// Every line of the list was checked by some row of reference_hashes (676 tensors), and together
// they cover every decodable quantized type.
void TestDequantize::hash_list_complete() {
    REQUIRE_FILE(quant_dir() + "/DEQUANT-SHA256.txt");
    const auto list = read_hash_list(quant_dir() + "/DEQUANT-SHA256.txt");
    size_t total = 0;
    std::map<TensorType, int> types;
    for (const auto& [file, lines] : list) {
        total += lines.size();
        REQUIRE_FILE(quant_dir() + "/" + file);
        auto gguf = arbor::GgufFile::open((quant_dir() + "/" + file).toStdString());
        QVERIFY(gguf.ok());
        for (const HashLine& line : lines)
            if (const auto* t = (*gguf)->tensor(line.tensor.toStdString())) ++types[t->type];
    }
    QCOMPARE(total, size_t(676));
    for (TensorType t : {TensorType::F32, TensorType::F16, TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0,
                         TensorType::Q5_1, TensorType::Q8_0, TensorType::Q2_K, TensorType::Q3_K, TensorType::Q4_K,
                         TensorType::Q5_K, TensorType::Q6_K, TensorType::IQ4_NL, TensorType::IQ4_XS, TensorType::MXFP4})
        QVERIFY2(types[t] > 0, qPrintable(QString("no tensor of type %1 in the list").arg(uint32_t(t))));
}

// All 65536 halves against GCC's _Float16 conversion (libgcc's soft-float code); NaNs must stay
// NaNs with the same sign and payload, made quiet.
void TestDequantize::fp16_all_values() {
    std::vector<uint16_t> h(65536);
    for (uint32_t i = 0; i < 65536; ++i) h[i] = uint16_t(i);
    std::vector<float> out(65536);
    QVERIFY(quant::dequantize(TensorType::F16, h.data(), out.data(), 65536).ok());
    for (uint32_t i = 0; i < 65536; ++i) {
        _Float16 v;
        const uint16_t bits = uint16_t(i);
        memcpy(&v, &bits, 2);
        const float want = float(v);
        const uint32_t expect =
            std::isnan(want) ? (uint32_t(i & 0x8000) << 16) | 0x7fc00000u | ((i & 0x3ffu) << 13) : f32_bits(want);
        if (f32_bits(out[i]) != expect)  // message built only on failure: this loop is hot
            QFAIL(qPrintable(QString("half 0x%1 -> 0x%2, want 0x%3")
                                 .arg(i, 4, 16, QChar('0'))
                                 .arg(f32_bits(out[i]), 8, 16, QChar('0'))
                                 .arg(expect, 8, 16, QChar('0'))));
    }
}

// quantize(F16) rounds to nearest even exactly like the compiler's float -> _Float16.
void TestDequantize::fp16_encode_matches_compiler() {
    std::vector<float> x;
    for (float v : {0.0f, -0.0f, 1.0f, 65504.0f, 65519.99f, 65520.0f, 1e9f, -1e9f, 6.1035156e-05f, 5.9604645e-08f,
                    2.9802322e-08f, 2.9802326e-08f, 8.940697e-08f, INFINITY, -INFINITY})
        x.push_back(v);
    QRandomGenerator rng(7);
    for (int i = 0; i < 200000; ++i) {
        const uint32_t u = rng.generate();
        const float f = bits_f32(u);
        if (!std::isnan(f)) x.push_back(f);
        x.push_back(bits_f32((u & 0x87ffffffu) | 0x30000000u));  // dense around half's range
    }
    std::vector<uint16_t> got(x.size());
    QVERIFY(quant::quantize(TensorType::F16, x.data(), got.data(), int64_t(x.size())).ok());
    for (size_t i = 0; i < x.size(); ++i) {
        const _Float16 h = _Float16(x[i]);
        uint16_t want;
        memcpy(&want, &h, 2);
        if (got[i] != want)
            QFAIL(qPrintable(QString("float %1 (0x%2): 0x%3 != 0x%4")
                                 .arg(double(x[i]))
                                 .arg(f32_bits(x[i]), 8, 16, QChar('0'))
                                 .arg(got[i], 4, 16, QChar('0'))
                                 .arg(want, 4, 16, QChar('0'))));
    }
    const float nan = bits_f32(0x7fa00001u);
    uint16_t h;
    QVERIFY(quant::quantize(TensorType::F16, &nan, &h, 1).ok());
    QVERIFY((h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0);
}

// BF16: decode is a shift; encode returns the nearest bf16 (ties to even mantissa).
void TestDequantize::bf16_round_trip_property() {
    QRandomGenerator rng(11);
    std::vector<float> x(100000);
    for (float& v : x) {
        do v = bits_f32(rng.generate());
        while (std::isnan(v) || std::isinf(v) || std::fabs(v) > 3.3e38f);
    }
    x[0] = bits_f32(0x3f808000u);  // tie, even below
    x[1] = bits_f32(0x3f818000u);  // tie, even above
    std::vector<uint16_t> enc(x.size());
    std::vector<float> dec(x.size());
    QVERIFY(quant::quantize(TensorType::BF16, x.data(), enc.data(), int64_t(x.size())).ok());
    QVERIFY(quant::dequantize(TensorType::BF16, enc.data(), dec.data(), int64_t(x.size())).ok());
    QCOMPARE(f32_bits(dec[0]), 0x3f800000u);
    QCOMPARE(f32_bits(dec[1]), 0x3f820000u);
    for (size_t i = 0; i < x.size(); ++i) {
        const double v = x[i], r = dec[i];
        const uint32_t rb = f32_bits(dec[i]);
        const uint32_t mag = rb & 0x7fffffffu, sign = rb & 0x80000000u;
        const double up = bits_f32(sign | (mag + 0x10000u));
        const double down = mag == 0 ? bits_f32((sign ^ 0x80000000u) | 0x10000u) : bits_f32(sign | (mag - 0x10000u));
        const double err = std::fabs(v - r);
        const bool tie = err == std::fabs(v - up) || err == std::fabs(v - down);
        if (rb != uint32_t(enc[i]) << 16 || err > std::fabs(v - up) || err > std::fabs(v - down) ||
            (tie && ((rb >> 16) & 1u) != 0))
            QFAIL(qPrintable(QString("float %1 -> bf16 0x%2").arg(v, 0, 'g', 9).arg(enc[i], 4, 16, QChar('0'))));
    }
}

// Blocks built by hand from known codes decode to the values the format defines.
void TestDequantize::hand_made_blocks() {
    {  // Q4_0: d = 0.5 (0x3800), nibbles 0..15 -> (q - 8) * 0.5
        uint8_t b[18] = {0x00, 0x38};
        for (int j = 0; j < 16; ++j) b[2 + j] = uint8_t(j | ((15 - j) << 4));
        float y[32];
        QVERIFY(quant::dequantize(TensorType::Q4_0, b, y, 32).ok());
        for (int j = 0; j < 16; ++j) {
            QCOMPARE(y[j], (j - 8) * 0.5f);
            QCOMPARE(y[j + 16], (15 - j - 8) * 0.5f);
        }
    }
    {  // MXFP4: e = 128 -> scale 2^(128-128) = 1 ("half" scale), codes give the doubled e2m1 values
        uint8_t b[17] = {128};
        for (int j = 0; j < 16; ++j) b[1 + j] = uint8_t(j | (j << 4));
        float y[32];
        QVERIFY(quant::dequantize(TensorType::MXFP4, b, y, 32).ok());
        const float e2m1[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};
        for (int j = 0; j < 16; ++j) QCOMPARE(y[j] / 2, e2m1[j]);
        b[0] = 0;  // subnormal scale 2^-128
        QVERIFY(quant::dequantize(TensorType::MXFP4, b, y, 32).ok());
        QCOMPARE(y[7], 12.0f * std::ldexp(1.0f, -128));
    }
    {  // Q6_K: d = 1, scales[g] = g - 8, every 6-bit code 33 -> value (g - 8) * 1
        uint8_t b[210] = {};
        for (int i = 0; i < 128; ++i) b[i] = 0x11;       // low nibbles 1
        for (int i = 0; i < 64; ++i) b[128 + i] = 0xaa;  // high bits 2 -> 32 + 1 = 33
        for (int g = 0; g < 16; ++g) b[192 + g] = uint8_t(int8_t(g - 8));
        b[208] = 0x00;
        b[209] = 0x3c;
        float y[256];
        QVERIFY(quant::dequantize(TensorType::Q6_K, b, y, 256).ok());
        for (int i = 0; i < 256; ++i) QCOMPARE(y[i], float(i / 16 - 8));
    }
}

void TestDequantize::errors_name_the_type() {
    float y[256];
    uint8_t b[512] = {};
    auto st = quant::dequantize(TensorType::IQ2_XXS, b, y, 256);
    QVERIFY(!st.ok());
    QVERIFY2(st.message().find("IQ2_XXS") != std::string::npos, st.message().c_str());
    st = quant::dequantize(TensorType::Q4_K, b, y, 100);
    QVERIFY(!st.ok());
    QVERIFY2(st.message().find("Q4_K") != std::string::npos && st.message().find("256") != std::string::npos,
             st.message().c_str());
    st = quant::dequantize(static_cast<TensorType>(99), b, y, 32);
    QVERIFY(!st.ok());
    QVERIFY2(st.message().find("99") != std::string::npos, st.message().c_str());
    QVERIFY(!quant::dequantize(TensorType::Q8_0, b, y, -32).ok());
}

QTEST_GUILESS_MAIN(TestDequantize)
#include "test_dequantize.moc"
