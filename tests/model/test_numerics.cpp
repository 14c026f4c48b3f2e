// Tests for the engine's numerics contract (engine/src/model/numerics.hpp):
// - exp_f against float64 exp (close), with its specified special cases;
// - sincos_d against float64 sin/cos, and rope_cs against them after rounding;
// - the lanes32 dot re-implemented here from the contract's text;
// - the AVX2 kernels give the same bits as the scalar ones (dot, scores for f16 and f32 KV,
//   exp_sum, weighted_sum, scale_mul), over many lengths and random inputs;
// - softmax/top-k against a direct float64 computation and the tie rule.
#include "model/cpu_kernels.hpp"
#include "model/numerics.hpp"

#include <QRandomGenerator>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <vector>

using namespace arbor;
namespace num = arbor::num;

namespace {

uint32_t bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

std::vector<float> random_floats(QRandomGenerator& rng, int n, double scale) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = float((rng.generateDouble() * 2 - 1) * scale);
    return v;
}

std::vector<uint8_t> to_kv(const std::vector<float>& v, KvType t) {
    std::vector<uint8_t> out(v.size() * size_t(kv_type_bytes(t)));
    for (size_t i = 0; i < v.size(); ++i) {
        if (t == KvType::F32) {
            std::memcpy(&out[4 * i], &v[i], 4);
        } else {
            const uint16_t h = quant::blocks::f32_to_fp16(v[i]);
            std::memcpy(&out[2 * i], &h, 2);
        }
    }
    return out;
}

}  // namespace

class TestNumerics : public QObject {
    Q_OBJECT

private slots:
    void expAccuracy() {
        double worst = 0;
        for (int i = -870000; i <= 887000; i += 7) {
            const float x = float(i) * 1e-4f;
            const double ref = std::exp(double(x));
            const double got = num::exp_f(x);
            if (ref < 1.2e-38) continue;
            worst = std::max(worst, std::fabs(got - ref) / ref);
        }
        QVERIFY2(worst < 4e-7, qPrintable(QString("worst relative error %1").arg(worst)));
    }

    void expSpecialCases() {
        QCOMPARE(bits(num::exp_f(0.0f)), bits(1.0f));
        QCOMPARE(bits(num::exp_f(-0.0f)), bits(1.0f));
        QVERIFY(std::isinf(num::exp_f(89.0f)));
        QVERIFY(std::isinf(num::exp_f(INFINITY)));
        QCOMPARE(num::exp_f(-87.5f), 0.0f);
        QCOMPARE(num::exp_f(-INFINITY), 0.0f);
        QVERIFY(std::isnan(num::exp_f(NAN)));
        QVERIFY(std::isfinite(num::exp_f(88.7f)));  // n = 128: the two-step scaling
        QVERIFY(std::fabs(num::exp_f(88.7f) / std::exp(double(88.7f)) - 1) < 1e-6);
        QVERIFY(num::exp_f(-86.9f) > 0);
    }

    void sincos() {
        double worst = 0;
        QRandomGenerator rng(7);
        for (int i = 0; i < 200000; ++i) {
            const double x = (rng.generateDouble() * 2 - 1) * (i % 2 ? 10.0 : 2e5);
            double s, c;
            num::sincos_d(x, &s, &c);
            worst = std::max({worst, std::fabs(s - std::sin(x)), std::fabs(c - std::cos(x))});
        }
        QVERIFY2(worst < 1e-13, qPrintable(QString("worst abs error %1").arg(worst)));
        // rope_cs: theta = float(pos) * freq, cos/sin rounded once.
        for (int pos : {0, 1, 17, 255, 4096, 40959}) {
            for (float f : {1.0f, 0.5f, 1e-3f, 3.16e-6f}) {
                float c, s;
                num::rope_cs(pos, f, 1.0f, &c, &s);
                const double th = double(float(pos) * f);
                QVERIFY(std::fabs(c - std::cos(th)) <= 1e-7);
                QVERIFY(std::fabs(s - std::sin(th)) <= 1e-7);
            }
        }
        float c, s;
        num::rope_cs(0, 1.0f, 1.0f, &c, &s);
        QCOMPARE(c, 1.0f);
        QCOMPARE(bits(s), bits(0.0f));
    }

    // The lanes32 dot written again from the contract's words.
    void dotLanesContract() {
        QRandomGenerator rng(3);
        for (int n : {1, 7, 31, 32, 33, 64, 100, 128, 1000}) {
            auto a = random_floats(rng, n, 3), b = random_floats(rng, n, 3);
            float lanes[32] = {};
            for (int i = 0; i < n; ++i) lanes[i % 32] = std::fma(a[size_t(i)], b[size_t(i)], lanes[i % 32]);
            for (int s = 16; s >= 1; s /= 2)
                for (int j = 0; j < s; ++j) lanes[j] = lanes[j] + lanes[j + s];
            QCOMPARE(bits(num::dot_lanes(a.data(), b.data(), n)), bits(lanes[0]));
        }
    }

    void avx2MatchesScalar_data() {
        QTest::addColumn<int>("n");
        for (int n : {1, 8, 16, 31, 32, 33, 64, 96, 100, 128, 255, 256})
            QTest::newRow(qPrintable(QString("n=%1").arg(n))) << n;
    }
    void avx2MatchesScalar() {
        if (!cpu::cpu_has_avx2()) QSKIP("this CPU has no AVX2");
        QFETCH(int, n);
        const cpu::Kernels& S = cpu::scalar_kernels();
        const cpu::Kernels& A = cpu::avx2_kernels();
        QRandomGenerator rng(uint32_t(n) * 11 + 1);
        for (int rep = 0; rep < 20; ++rep) {
            const double scale = rep % 3 == 0 ? 1e3 : rep % 3 == 1 ? 1.0 : 1e-3;
            auto a = random_floats(rng, n, scale), b = random_floats(rng, n, scale);
            QCOMPARE(bits(A.dot(a.data(), b.data(), n)), bits(S.dot(a.data(), b.data(), n)));
            std::vector<float> ys(static_cast<size_t>(n)), ya(static_cast<size_t>(n));
            S.scale_mul(a.data(), 0.37f, b.data(), n, ys.data());
            A.scale_mul(a.data(), 0.37f, b.data(), n, ya.data());
            QVERIFY(std::memcmp(ys.data(), ya.data(), ys.size() * 4) == 0);
            auto g = random_floats(rng, n, rep % 2 ? 100.0 : 4.0);
            g[0] = NAN;
            if (n > 2) g[2] = -INFINITY;
            S.silu_mul(g.data(), b.data(), n, ys.data());
            A.silu_mul(g.data(), b.data(), n, ya.data());
            QVERIFY(std::memcmp(ys.data(), ya.data(), ys.size() * 4) == 0);
            // exp_sum over scores (n <= 256 is one attention chunk).
            auto s1 = random_floats(rng, n, rep % 2 ? 30.0 : 100.0);
            s1[0] = NAN;
            if (n > 3) s1[3] = -INFINITY;
            auto s2 = s1;
            const float l1 = S.exp_sum(s1.data(), n, 5.0f), l2 = A.exp_sum(s2.data(), n, 5.0f);
            QVERIFY(std::memcmp(s1.data(), s2.data(), s1.size() * 4) == 0);
            QCOMPARE(bits(l1), bits(l2));
        }
    }

    void attentionKernels_data() {
        QTest::addColumn<int>("hd");
        QTest::addColumn<int>("nq");
        QTest::addColumn<int>("cells");
        QTest::addColumn<bool>("f16");
        for (bool f16 : {false, true})
            for (int hd : {8, 64, 128})
                for (int nq : {1, 2, 3})
                    for (int cells : {1, 5, 256})
                        QTest::newRow(qPrintable(QString("hd%1 q%2 n%3 %4").arg(hd).arg(nq).arg(cells).arg(f16 ? "f16" : "f32")))
                            << hd << nq << cells << f16;
    }
    void attentionKernels() {
        if (!cpu::cpu_has_avx2()) QSKIP("this CPU has no AVX2");
        QFETCH(int, hd);
        QFETCH(int, nq);
        QFETCH(int, cells);
        QFETCH(bool, f16);
        const KvType t = f16 ? KvType::F16 : KvType::F32;
        QRandomGenerator rng(uint32_t(hd * 1000 + nq * 10 + cells));
        auto q = random_floats(rng, nq * hd, 2.0);
        auto kf = random_floats(rng, cells * hd, 2.0), vf = random_floats(rng, cells * hd, 2.0);
        auto k = to_kv(kf, t), v = to_kv(vf, t);
        const size_t stride = size_t(hd * kv_type_bytes(t));
        std::vector<float> s1(size_t(nq) * num::kAttnChunk), s2 = s1;
        cpu::scalar_kernels().scores(q.data(), nq, hd, k.data(), stride, t, cells, hd, 0.125f, s1.data());
        cpu::avx2_kernels().scores(q.data(), nq, hd, k.data(), stride, t, cells, hd, 0.125f, s2.data());
        QVERIFY(std::memcmp(s1.data(), s2.data(), s1.size() * 4) == 0);
        // And each score is the contract's dot of q with the stored (rounded) key.
        for (int h = 0; h < nq; ++h)
            for (int j = 0; j < cells; ++j) {
                std::vector<float> krow(static_cast<size_t>(hd));
                for (int d = 0; d < hd; ++d)
                    krow[size_t(d)] = f16 ? quant::blocks::fp16_to_f32(quant::blocks::f32_to_fp16(kf[size_t(j * hd + d)]))
                                          : kf[size_t(j * hd + d)];
                QCOMPARE(bits(s1[size_t(h * num::kAttnChunk + j)]),
                         bits(num::dot_lanes(q.data() + h * hd, krow.data(), hd) * 0.125f));
            }
        auto e = random_floats(rng, cells, 1.0);
        std::vector<float> o1(static_cast<size_t>(hd)), o2(static_cast<size_t>(hd));
        cpu::scalar_kernels().weighted_sum(e.data(), cells, v.data(), stride, t, hd, o1.data());
        cpu::avx2_kernels().weighted_sum(e.data(), cells, v.data(), stride, t, hd, o2.data());
        QVERIFY(std::memcmp(o1.data(), o2.data(), o1.size() * 4) == 0);
    }

    void softmaxTopK() {
        const float l[6] = {1.0f, 3.0f, 3.0f, -2.0f, 0.5f, 3.0f};
        float p[6];
        num::softmax(l, 6, p);
        double z = 0;
        for (float x : l) z += std::exp(double(x) - 3.0);
        for (int i = 0; i < 6; ++i) QVERIFY(std::fabs(p[i] - std::exp(double(l[i]) - 3.0) / z) < 1e-7);
        int idx[3];
        float w[3];
        num::top_k(p, 6, 3, true, idx, w);
        QCOMPARE(idx[0], 1);  // ties go to the lower id, in order
        QCOMPARE(idx[1], 2);
        QCOMPARE(idx[2], 5);
        QVERIFY(std::fabs(double(w[0]) + w[1] + w[2] - 1.0) < 1e-6);
        num::top_k(p, 6, 2, false, idx, w);
        QCOMPARE(bits(w[0]), bits(p[1]));
    }

    void siluAndRmsNorm() {
        QCOMPARE(num::silu(0.0f), 0.0f);
        QVERIFY(std::fabs(num::silu(2.0f) - 2.0 / (1.0 + std::exp(-2.0))) < 1e-6);
        QCOMPARE(num::silu(-200.0f), -0.0f);
        const float x[4] = {1, -2, 3, -4}, w[4] = {1, 1, 0.5f, 2};
        float y[4];
        num::rms_norm(x, w, 1e-6f, 4, y);
        const double r = 1.0 / std::sqrt((1 + 4 + 9 + 16) / 4.0 + 1e-6);
        for (int i = 0; i < 4; ++i) QVERIFY(std::fabs(y[i] - x[i] * r * w[i]) < 1e-6);
    }
};

QTEST_GUILESS_MAIN(TestNumerics)
#include "test_numerics.moc"
