// Tests for the Q8A activation format and the row-dot contract (arbor/quant.hpp):
// - AVX2 gives the same bits as scalar, for every type and many row lengths;
// - the contract re-implemented here from its text (lanes, fmaf, tree) on blocks packed here
//   from known codes gives the same bits as dot_row;
// - every result is close to a float64 dot of the decoded weights and decoded activations;
// - quantize_q8a against the rule computed here, with its edge cases.
#include <arbor/gguf.hpp>
#include <arbor/quant.hpp>
#include <arbor/tensor_types.hpp>

#include <QDir>

#include <QRandomGenerator>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <vector>

using arbor::TensorType;
using arbor::quant::BlockQ8A;
using arbor::quant::Isa;
namespace quant = arbor::quant;

Q_DECLARE_METATYPE(TensorType)

namespace {

uint32_t bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

const TensorType kQuantTypes[] = {TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0,   TensorType::Q5_1,
                                  TensorType::Q8_0, TensorType::Q2_K, TensorType::Q3_K,   TensorType::Q4_K,
                                  TensorType::Q5_K, TensorType::Q6_K, TensorType::IQ4_NL, TensorType::IQ4_XS,
                                  TensorType::MXFP4};
const TensorType kFloatTypes[] = {TensorType::F32, TensorType::F16, TensorType::BF16};

QString name(TensorType t) {
    const auto info = arbor::tensor_type_info(static_cast<uint32_t>(t));
    return info ? QString::fromLatin1(info->name.data(), int(info->name.size())) : QString::number(uint32_t(t));
}

// Byte offsets of the fp16 scale fields in one block, so random blocks get finite scales.
std::vector<int> fp16_fields(TensorType t) {
    switch (t) {
        case TensorType::Q4_1:
        case TensorType::Q5_1:
        case TensorType::Q4_K:
        case TensorType::Q5_K: return {0, 2};
        case TensorType::Q2_K: return {80, 82};
        case TensorType::Q3_K: return {108};
        case TensorType::Q6_K: return {208};
        case TensorType::MXFP4: return {};
        default: return {0};
    }
}

// A finite half: mostly moderate, sometimes subnormal or large.
uint16_t random_half(QRandomGenerator& rng) {
    const uint32_t kind = rng.bounded(16);
    const uint32_t sign = rng.bounded(2) << 15, mant = rng.bounded(1024);
    if (kind == 0) return uint16_t(sign | mant);                                // subnormal
    if (kind == 1) return uint16_t(sign | (rng.bounded(20, 30) << 10) | mant);  // large
    return uint16_t(sign | (rng.bounded(5, 17) << 10) | mant);                  // 2^-10 .. 2
}

// Random weight bytes for `rows` rows of n elements of type t.
std::vector<uint8_t> random_weights(TensorType t, int64_t n, int64_t rows, QRandomGenerator& rng) {
    const auto info = *arbor::tensor_type_info(static_cast<uint32_t>(t));
    const int64_t blocks = n / info.block_size * rows;
    std::vector<uint8_t> w(size_t(blocks) * info.type_size + 64);
    for (auto& b : w) b = uint8_t(rng.bounded(256));
    if (t == TensorType::F32) {
        for (int64_t i = 0; i < blocks; ++i) {
            const float v = float(rng.generateDouble() * 4 - 2) * std::ldexp(1.0f, int(rng.bounded(-8, 8)));
            memcpy(&w[size_t(i) * 4], &v, 4);
        }
    } else if (t == TensorType::F16) {
        for (int64_t i = 0; i < blocks; ++i) {
            const uint16_t h = random_half(rng);
            memcpy(&w[size_t(i) * 2], &h, 2);
        }
    } else if (t == TensorType::BF16) {
        for (int64_t i = 0; i < blocks; ++i)
            w[size_t(i) * 2 + 1] = uint8_t((w[size_t(i) * 2 + 1] & 0x80) | rng.bounded(0x30, 0x48));
    } else if (t == TensorType::MXFP4) {
        for (int64_t i = 0; i < blocks; ++i) w[size_t(i) * 17] = uint8_t(rng.bounded(100, 150));
    } else {
        for (int64_t i = 0; i < blocks; ++i)
            for (int off : fp16_fields(t)) {
                const uint16_t h = random_half(rng);
                memcpy(&w[size_t(i) * info.type_size + off], &h, 2);
            }
    }
    return w;
}

// Activations with block magnitudes spread over many octaves, some zero blocks, some ties.
// `uniform`: every block of similar magnitude, so that every lane matters in the final sum.
std::vector<float> random_activations(int64_t n, QRandomGenerator& rng, bool uniform = false) {
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t b = 0; b < n; b += 32) {
        const int kind = uniform ? 9 : int(rng.bounded(10));
        const float scale = uniform ? 1.0f : std::ldexp(1.0f, int(rng.bounded(-12, 6)));
        for (int64_t i = b; i < std::min(n, b + 32); ++i)
            x[size_t(i)] = kind == 0 ? 0.0f : float(rng.generateDouble() * 2 - 1) * scale;
        if (kind == 1 && b + 32 <= n) x[size_t(b + 3)] = -x[size_t(b + 7)];  // amax tie
    }
    return x;
}

std::vector<BlockQ8A> q8a(const std::vector<float>& x) {
    std::vector<BlockQ8A> out(x.size() / 32);
    quant::quantize_q8a_isa(Isa::Scalar, x.data(), out.data(), int64_t(x.size() / 32 * 32));
    return out;
}

float tree(float* acc) {
    for (int s = 16; s >= 1; s /= 2)
        for (int j = 0; j < s; ++j) acc[j] = acc[j] + acc[j + s];
    return acc[0];
}

uint16_t half_of(float v) {  // exact for the values used here
    const _Float16 h = _Float16(v);
    uint16_t u;
    memcpy(&u, &h, 2);
    return u;
}

}  // namespace

class TestDotRow : public QObject {
    Q_OBJECT
private slots:
    void avx2_matches_scalar_data();
    void avx2_matches_scalar();
    void close_to_float64_data();
    void close_to_float64();
    void real_tensors_data();
    void real_tensors();
    void contract_by_hand_float();
    void contract_by_hand_q8_0();
    void contract_by_hand_q4_1();
    void contract_by_hand_q4_k();
    void contract_by_hand_q2_k();
    void q8a_rule();
    void q8a_edge_cases();
    void dot_rows_matches_dot_row();
    void undecodable_type_gives_nan();
};

void TestDotRow::avx2_matches_scalar_data() {
    QTest::addColumn<TensorType>("type");
    QTest::addColumn<qint64>("n");
    for (TensorType t : kFloatTypes)
        for (qint64 n : {1, 7, 31, 32, 33, 100, 257, 4096, 4103})
            QTest::newRow(qPrintable(QString("%1 n=%2").arg(name(t)).arg(n))) << t << n;
    for (TensorType t : kQuantTypes) {
        const uint32_t bs = arbor::tensor_type_info(static_cast<uint32_t>(t))->block_size;
        const std::vector<qint64> ns = bs == 32 ? std::vector<qint64>{32, 96, 256, 288, 1024 + 96, 4096, 4096 + 224}
                                                : std::vector<qint64>{256, 512, 768, 1280, 4096, 5120};
        for (qint64 n : ns) QTest::newRow(qPrintable(QString("%1 n=%2").arg(name(t)).arg(n))) << t << n;
    }
}

void TestDotRow::avx2_matches_scalar() {
    QFETCH(TensorType, type);
    QFETCH(qint64, n);
    if (!quant::isa_supported(Isa::Avx2)) QSKIP("this CPU has no AVX2");
    QRandomGenerator rng(uint32_t(n * 131 + uint32_t(type)));
    const int rows = 24;
    const auto w = random_weights(type, n, rows, rng);
    const size_t stride = *quant::row_bytes(type, n);
    const auto x = random_activations(n, rng);
    const auto xq = q8a(x);
    for (int r = 0; r < rows; ++r) {
        const float s = quant::dot_row_isa(Isa::Scalar, type, w.data() + r * stride, x.data(), xq.data(), n);
        const float v = quant::dot_row_isa(Isa::Avx2, type, w.data() + r * stride, x.data(), xq.data(), n);
        QVERIFY2(!std::isnan(s), qPrintable(QString("row %1 NaN").arg(r)));
        QVERIFY2(bits(s) == bits(v),
                 qPrintable(
                     QString("row %1: scalar %2 avx2 %3").arg(r).arg(double(s), 0, 'g', 9).arg(double(v), 0, 'g', 9)));
    }
    // Unaligned rows: the kernels read any address.
    std::vector<uint8_t> shifted(w.begin() + 0, w.end());
    shifted.insert(shifted.begin(), 0);
    QCOMPARE(bits(quant::dot_row_isa(Isa::Avx2, type, shifted.data() + 1, x.data(), xq.data(), n)),
             bits(quant::dot_row_isa(Isa::Scalar, type, w.data(), x.data(), xq.data(), n)));
}

void TestDotRow::close_to_float64_data() {
    QTest::addColumn<TensorType>("type");
    for (TensorType t : kFloatTypes) QTest::newRow(qPrintable(name(t))) << t;
    for (TensorType t : kQuantTypes) QTest::newRow(qPrintable(name(t))) << t;
}

// dot_row against Σ dequant(w)·x (float types) or Σ dequant(w)·dequant(xq) in float64.
void TestDotRow::close_to_float64() {
    QFETCH(TensorType, type);
    QRandomGenerator rng(uint32_t(type) + 5);
    const int64_t n = 2048;
    const int rows = 16;
    const auto w = random_weights(type, n, rows, rng);
    const size_t stride = *quant::row_bytes(type, n);
    const auto x = random_activations(n, rng);
    const auto xq = q8a(x);
    std::vector<double> a(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
        a[size_t(i)] =
            quant::uses_q8a(type) ? double(xq[size_t(i / 32)].d) * xq[size_t(i / 32)].q[i % 32] : x[size_t(i)];
    std::vector<float> wd(static_cast<size_t>(n));
    for (int r = 0; r < rows; ++r) {
        QVERIFY(quant::dequantize(type, w.data() + r * stride, wd.data(), n).ok());
        double ref = 0, mag = 0;
        for (int64_t i = 0; i < n; ++i) {
            ref += double(wd[size_t(i)]) * a[size_t(i)];
            mag += std::fabs(double(wd[size_t(i)]) * a[size_t(i)]);
        }
        for (Isa isa : {Isa::Scalar, Isa::Avx2}) {
            const double got = quant::dot_row_isa(isa, type, w.data() + r * stride, x.data(), xq.data(), n);
            QVERIFY2(std::fabs(got - ref) <= 2e-6 * mag + 1e-30,
                     qPrintable(QString("row %1 %2: got %3 want %4 (magnitude %5)")
                                    .arg(r)
                                    .arg(quant::isa_name(isa))
                                    .arg(got, 0, 'g', 10)
                                    .arg(ref, 0, 'g', 10)
                                    .arg(mag)));
        }
    }
}

void TestDotRow::real_tensors_data() {
    QTest::addColumn<QString>("path");
    const QDir dir(qEnvironmentVariable("ARBOR_SHARED_DATA") + "/quant");
    const QStringList files = dir.entryList({"random-*.gguf"}, QDir::Files, QDir::Name);
    if (files.isEmpty()) QTest::newRow("missing") << QString();
    for (const QString& f : files) QTest::newRow(qPrintable(f)) << dir.filePath(f);
}

// The 2-D tensors of the shared models (weights quantized by llama-quantize, every decodable
// type): first rows of each, AVX2 == scalar bit for bit, and close to the float64 dot.
void TestDotRow::real_tensors() {
    QFETCH(QString, path);
    if (path.isEmpty()) {
        if (qEnvironmentVariable("CI") == "true") QFAIL("shared quant data missing");
        QSKIP("shared quant data missing");
    }
    auto file = arbor::GgufFile::open(path.toStdString());
    QVERIFY2(file.ok(), file.ok() ? "" : file.message().c_str());
    QRandomGenerator rng(12);
    int checked = 0;
    for (const arbor::GgufTensor& t : (*file)->tensors()) {
        if (t.n_dims < 2 || !quant::decodable(t.type)) continue;
        const int64_t n = t.ne[0];
        const size_t stride = *quant::row_bytes(t.type, n);
        const int64_t rows = std::min<int64_t>(t.rows(), 32);
        const auto x = random_activations(n, rng, true);
        const auto xq = q8a(x);
        std::vector<float> s(static_cast<size_t>(rows)), v(static_cast<size_t>(rows)), wd(static_cast<size_t>(n));
        quant::dot_rows_isa(Isa::Scalar, t.type, t.data, stride, rows, x.data(), xq.data(), n, s.data());
        if (quant::isa_supported(Isa::Avx2))
            quant::dot_rows_isa(Isa::Avx2, t.type, t.data, stride, rows, x.data(), xq.data(), n, v.data());
        else
            v = s;
        for (int64_t r = 0; r < rows; ++r) {
            QVERIFY(quant::dequantize(t.type, t.data + r * stride, wd.data(), n).ok());
            double ref = 0, mag = 0;
            for (int64_t i = 0; i < n; ++i) {
                const double a = quant::uses_q8a(t.type) ? double(xq[size_t(i / 32)].d) * xq[size_t(i / 32)].q[i % 32]
                                                         : double(x[size_t(i)]);
                ref += wd[size_t(i)] * a;
                mag += std::fabs(wd[size_t(i)] * a);
            }
            const QString where =
                QString("%1 row %2").arg(QString::fromLatin1(t.name.data(), int(t.name.size()))).arg(r);
            if (bits(s[size_t(r)]) != bits(v[size_t(r)]))
                QFAIL(qPrintable(where + QString(": scalar %1 avx2 %2")
                                             .arg(double(s[size_t(r)]), 0, 'g', 9)
                                             .arg(double(v[size_t(r)]), 0, 'g', 9)));
            if (!(std::fabs(s[size_t(r)] - ref) <= 2e-6 * mag + 1e-30))
                QFAIL(qPrintable(where + QString(": %1 vs float64 %2").arg(double(s[size_t(r)])).arg(ref)));
        }
        ++checked;
    }
    QVERIFY(checked > 0);
}

// F32 lanes: acc[i%32] = fmaf(w, x, acc) in increasing i, then the tree. Values chosen so that
// any other order gives other bits.
void TestDotRow::contract_by_hand_float() {
    const int64_t n = 77;
    std::vector<float> w(n), x(n);
    QRandomGenerator rng(3);
    for (int64_t i = 0; i < n; ++i) {
        w[size_t(i)] = float(rng.generateDouble() - 0.5) * std::ldexp(1.0f, int(rng.bounded(-20, 20)));
        x[size_t(i)] = float(rng.generateDouble() - 0.5) * std::ldexp(1.0f, int(rng.bounded(-20, 20)));
    }
    float acc[32] = {};
    for (int64_t i = 0; i < n; ++i) acc[i % 32] = std::fmaf(w[size_t(i)], x[size_t(i)], acc[i % 32]);
    const float want = tree(acc);
    double plain = 0;
    for (int64_t i = 0; i < n; ++i) plain = float(plain + double(w[size_t(i)]) * x[size_t(i)]);
    for (Isa isa : {Isa::Scalar, Isa::Avx2})
        QCOMPARE(bits(quant::dot_row_isa(isa, TensorType::F32, w.data(), x.data(), nullptr, n)), bits(want));
    std::vector<uint16_t> h(n);
    for (int64_t i = 0; i < n; ++i) {
        h[size_t(i)] = half_of(w[size_t(i)]);
        _Float16 v;
        memcpy(&v, &h[size_t(i)], 2);
        w[size_t(i)] = float(v);
    }
    float acc16[32] = {};
    for (int64_t i = 0; i < n; ++i) acc16[i % 32] = std::fmaf(w[size_t(i)], x[size_t(i)], acc16[i % 32]);
    const float want16 = tree(acc16);
    for (Isa isa : {Isa::Scalar, Isa::Avx2})
        QCOMPARE(bits(quant::dot_row_isa(isa, TensorType::F16, h.data(), x.data(), nullptr, n)), bits(want16));
}

// Q8_0 packed here from known codes; 150 sub-blocks, so every lane gets several.
void TestDotRow::contract_by_hand_q8_0() {
    for (int rep = 0; rep < 8; ++rep) {
        QRandomGenerator rng(100 * rep + 4);
        const int subs = 150;
        std::vector<uint8_t> w(size_t(subs) * 34);
        std::vector<int8_t> q(size_t(subs) * 32);
        std::vector<float> d(subs);
        for (int b = 0; b < subs; ++b) {
            d[size_t(b)] = float(rng.bounded(1, 2048)) / 1024.0f * std::ldexp(1.0f, int(rng.bounded(-6, 6)));
            const uint16_t h = half_of(d[size_t(b)]);
            memcpy(&w[size_t(b) * 34], &h, 2);
            for (int i = 0; i < 32; ++i) {
                q[size_t(b * 32 + i)] = int8_t(int(rng.bounded(256)) - 128);
                w[size_t(b) * 34 + 2 + size_t(i)] = uint8_t(q[size_t(b * 32 + i)]);
            }
        }
        const auto x = random_activations(subs * 32, rng, true);
        const auto xq = q8a(x);
        float acc[32] = {};
        for (int b = 0; b < subs; ++b) {
            int32_t i1 = 0;
            for (int i = 0; i < 32; ++i) i1 += int32_t(q[size_t(b * 32 + i)]) * xq[size_t(b)].q[i];
            acc[b % 32] = std::fmaf(d[size_t(b)] * xq[size_t(b)].d, float(i1), acc[b % 32]);
        }
        const float want = tree(acc);
        for (Isa isa : {Isa::Scalar, Isa::Avx2})
            QCOMPARE(bits(quant::dot_row_isa(isa, TensorType::Q8_0, w.data(), nullptr, xq.data(), subs * 32)),
                     bits(want));
    }
}

// Q4_1: a min type with one scale per 32 values (I2 = xq.sum, B = m * xd).
void TestDotRow::contract_by_hand_q4_1() {
    for (int rep = 0; rep < 8; ++rep) {
        QRandomGenerator rng(100 * rep + 5);
        const int subs = 133;
        std::vector<uint8_t> w(size_t(subs) * 20);
        float acc[32] = {};
        const auto x = random_activations(subs * 32, rng, true);
        const auto xq = q8a(x);
        for (int b = 0; b < subs; ++b) {
            const float d = float(rng.bounded(1, 1024)) / 4096.0f, m = -float(rng.bounded(0, 1024)) / 512.0f;
            const uint16_t hd = half_of(d), hm = half_of(m);
            uint8_t* blk = &w[size_t(b) * 20];
            memcpy(blk, &hd, 2);
            memcpy(blk + 2, &hm, 2);
            int32_t i1 = 0;
            for (int j = 0; j < 16; ++j) {
                const int lo = int(rng.bounded(16)), hi = int(rng.bounded(16));
                blk[4 + j] = uint8_t(lo | (hi << 4));
                i1 += lo * xq[size_t(b)].q[j] + hi * xq[size_t(b)].q[j + 16];
            }
            acc[b % 32] = std::fmaf(d * xq[size_t(b)].d, float(i1), acc[b % 32]);
            acc[b % 32] = std::fmaf(m * xq[size_t(b)].d, float(xq[size_t(b)].sum), acc[b % 32]);
        }
        const float want = tree(acc);
        for (Isa isa : {Isa::Scalar, Isa::Avx2})
            QCOMPARE(bits(quant::dot_row_isa(isa, TensorType::Q4_1, w.data(), nullptr, xq.data(), subs * 32)),
                     bits(want));
    }
}

// Q4_K: 6-bit scales and mins packed here into the 12-byte field, B = -(dmin * xd).
void TestDotRow::contract_by_hand_q4_k() {
    for (int rep = 0; rep < 8; ++rep) {
        QRandomGenerator rng(100 * rep + 6);
        const int nblocks = 20;  // 160 sub-blocks, five per lane
        std::vector<uint8_t> w(size_t(nblocks) * 144);
        const auto x = random_activations(nblocks * 256, rng, true);
        const auto xq = q8a(x);
        float acc[32] = {};
        for (int blkno = 0; blkno < nblocks; ++blkno) {
            uint8_t* blk = &w[size_t(blkno) * 144];
            const float d = float(rng.bounded(1, 1024)) / 8192.0f, dmin = float(rng.bounded(1, 1024)) / 8192.0f;
            const uint16_t hd = half_of(d), hm = half_of(dmin);
            memcpy(blk, &hd, 2);
            memcpy(blk + 2, &hm, 2);
            int sc[8], mn[8];
            for (int j = 0; j < 8; ++j) sc[j] = int(rng.bounded(64)), mn[j] = int(rng.bounded(64));
            // Layout: bytes 0-3 hold sc0-3 (6 bits) + top bits of sc4-7; 4-7 mn0-3 + top bits of
            // mn4-7; 8-11 low nibbles of sc4-7 and mn4-7.
            for (int j = 0; j < 4; ++j) {
                blk[4 + j] = uint8_t(sc[j] | ((sc[j + 4] >> 4) << 6));
                blk[8 + j] = uint8_t(mn[j] | ((mn[j + 4] >> 4) << 6));
                blk[12 + j] = uint8_t((sc[j + 4] & 15) | ((mn[j + 4] & 15) << 4));
            }
            for (int sb = 0; sb < 8; ++sb) {
                const BlockQ8A& a = xq[size_t(blkno * 8 + sb)];
                int32_t dot = 0;
                for (int l = 0; l < 32; ++l) {
                    const int q = int(rng.bounded(16));
                    uint8_t& byte = blk[16 + 32 * (sb / 2) + l];
                    byte = sb % 2 ? uint8_t(byte | (q << 4)) : uint8_t(q);
                    dot += q * a.q[l];
                }
                const int lane = (blkno * 8 + sb) % 32;
                acc[lane] = std::fmaf(d * a.d, float(sc[sb] * dot), acc[lane]);
                acc[lane] = std::fmaf(-(dmin * a.d), float(mn[sb] * a.sum), acc[lane]);
            }
        }
        const float want = tree(acc);
        for (Isa isa : {Isa::Scalar, Isa::Avx2})
            QCOMPARE(bits(quant::dot_row_isa(isa, TensorType::Q4_K, w.data(), nullptr, xq.data(), nblocks * 256)),
                     bits(want));
    }
}

// Q2_K: two 16-element groups per sub-block, each with its own 4-bit scale and 4-bit min.
void TestDotRow::contract_by_hand_q2_k() {
    for (int rep = 0; rep < 8; ++rep) {
        QRandomGenerator rng(100 * rep + 8);
        const int nblocks = 21;
        std::vector<uint8_t> w(size_t(nblocks) * 84, 0);
        const auto x = random_activations(nblocks * 256, rng, true);
        const auto xq = q8a(x);
        float acc[32] = {};
        for (int blkno = 0; blkno < nblocks; ++blkno) {
            uint8_t* blk = &w[size_t(blkno) * 84];
            const float d = float(rng.bounded(1, 1024)) / 8192.0f, dmin = float(rng.bounded(1, 1024)) / 8192.0f;
            const uint16_t hd = half_of(d), hm = half_of(dmin);
            memcpy(blk + 80, &hd, 2);
            memcpy(blk + 82, &hm, 2);
            for (int g = 0; g < 16; ++g) blk[g] = uint8_t(rng.bounded(256));
            for (int sb = 0; sb < 8; ++sb) {
                const BlockQ8A& a = xq[size_t(blkno * 8 + sb)];
                int32_t i1 = 0, i2 = 0;
                for (int l = 0; l < 32; ++l) {
                    const int q = int(rng.bounded(4));
                    // Sub-block sb = 4h + j: 2-bit field j of bytes 32h .. 32h+31 of qs.
                    blk[16 + 32 * (sb / 4) + l] |= uint8_t(q << (2 * (sb % 4)));
                    const int s = blk[2 * sb + l / 16];
                    i1 += (s & 15) * q * a.q[l];
                    i2 += (s >> 4) * a.q[l];
                }
                const int lane = (blkno * 8 + sb) % 32;
                acc[lane] = std::fmaf(d * a.d, float(i1), acc[lane]);
                acc[lane] = std::fmaf(-(dmin * a.d), float(i2), acc[lane]);
            }
        }
        const float want = tree(acc);
        for (Isa isa : {Isa::Scalar, Isa::Avx2})
            QCOMPARE(bits(quant::dot_row_isa(isa, TensorType::Q2_K, w.data(), nullptr, xq.data(), nblocks * 256)),
                     bits(want));
    }
}

// quantize_q8a (both ISAs) against the rule written out here.
void TestDotRow::q8a_rule() {
    QRandomGenerator rng(9);
    const int64_t n = 32 * 500;
    const auto x = random_activations(n, rng);
    for (Isa isa : {Isa::Scalar, Isa::Avx2}) {
        std::vector<BlockQ8A> out(n / 32);
        quant::quantize_q8a_isa(isa, x.data(), out.data(), n);
        for (int64_t b = 0; b < n / 32; ++b) {
            float amax = 0;
            for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[size_t(b * 32 + i)]));
            const float d = amax / 127.0f;
            QCOMPARE(bits(out[size_t(b)].d), bits(d));
            int32_t sum = 0;
            for (int i = 0; i < 32; ++i) {
                const int q = d == 0 ? 0 : std::clamp(int(std::nearbyint(x[size_t(b * 32 + i)] / d)), -127, 127);
                QCOMPARE(int(out[size_t(b)].q[i]), q);
                sum += q;
            }
            QCOMPARE(out[size_t(b)].sum, sum);
        }
    }
}

void TestDotRow::q8a_edge_cases() {
    const float nan = std::nanf(""), inf = INFINITY;
    struct Case {
        const char* label;
        std::vector<float> x;
        float d;
        std::vector<int> q;  // first values checked
    };
    std::vector<Case> cases;
    cases.push_back({"zeros", std::vector<float>(32, 0.0f), 0.0f, {0, 0, 0}});
    {
        std::vector<float> x(32, 0.0f);
        x[0] = 127.0f, x[1] = -127.0f, x[2] = 2.5f, x[3] = 3.5f, x[4] = -2.5f, x[5] = 0.5f, x[6] = -0.5f;
        cases.push_back({"ties to even, amax tie", x, 1.0f, {127, -127, 2, 4, -2, 0, 0}});
    }
    {
        std::vector<float> x(32, 1.0f);
        x[0] = nan, x[1] = 127.0f;
        cases.push_back({"NaN ignored", x, 1.0f, {0, 127, 1}});
    }
    {
        std::vector<float> x(32, 1.0f);
        x[0] = inf;
        cases.push_back({"inf", x, inf, {0, 0, 0}});
    }
    {
        std::vector<float> x(32, 0.0f);
        x[0] = 1e-45f, x[1] = -1e-45f, x[2] = 3e-45f;  // subnormal: d rounds, codes clamp
        cases.push_back({"subnormal", x, 3e-45f / 127.0f, {}});
    }
    for (const Case& c : cases) {
        BlockQ8A s, v;
        quant::quantize_q8a_isa(Isa::Scalar, c.x.data(), &s, 32);
        quant::quantize_q8a_isa(Isa::Avx2, c.x.data(), &v, 32);
        QVERIFY2(memcmp(&s, &v, sizeof s) == 0, c.label);
        QVERIFY2(bits(s.d) == bits(c.d), qPrintable(QString("%1: d = %2").arg(c.label).arg(double(s.d))));
        int32_t sum = 0;
        for (int i = 0; i < 32; ++i) {
            QVERIFY2(s.q[i] >= -127 && s.q[i] <= 127, c.label);
            sum += s.q[i];
        }
        QCOMPARE(s.sum, sum);
        for (size_t i = 0; i < c.q.size(); ++i)
            QVERIFY2(s.q[i] == c.q[i], qPrintable(QString("%1: q[%2] = %3").arg(c.label).arg(i).arg(s.q[i])));
    }
}

void TestDotRow::dot_rows_matches_dot_row() {
    QRandomGenerator rng(10);
    const int64_t n = 1024;
    const int rows = 9;
    const auto x = random_activations(n, rng);
    const auto xq = q8a(x);
    for (TensorType t : {TensorType::Q4_K, TensorType::Q8_0, TensorType::BF16, TensorType::IQ4_XS}) {
        const auto w = random_weights(t, n, rows, rng);
        const size_t stride = *quant::row_bytes(t, n);
        std::vector<float> out(rows);
        quant::dot_rows(t, w.data(), stride, rows, x.data(), xq.data(), n, out.data());
        for (int r = 0; r < rows; ++r)
            QCOMPARE(bits(out[size_t(r)]), bits(quant::dot_row(t, w.data() + r * stride, x.data(), xq.data(), n)));
    }
}

void TestDotRow::undecodable_type_gives_nan() {
    std::vector<uint8_t> w(1024);
    std::vector<BlockQ8A> xq(8);
    QVERIFY(std::isnan(quant::dot_row(TensorType::IQ2_XXS, w.data(), nullptr, xq.data(), 256)));
    QVERIFY(std::isnan(quant::dot_row(TensorType::Q4_K, w.data(), nullptr, xq.data(), 224)));  // not whole blocks
    QVERIFY(std::isnan(quant::dot_row(TensorType::Q8_0, w.data(), nullptr, xq.data(), -32)));
    QCOMPARE(quant::dot_row(TensorType::Q8_0, w.data(), nullptr, xq.data(), 0), 0.0f);
    QVERIFY(!quant::decodable(TensorType::Q8_K));
    QVERIFY(quant::decodable(TensorType::MXFP4) && quant::uses_q8a(TensorType::MXFP4));
    QVERIFY(quant::decodable(TensorType::BF16) && !quant::uses_q8a(TensorType::BF16));
}

QTEST_GUILESS_MAIN(TestDotRow)
#include "test_dot_row.moc"
