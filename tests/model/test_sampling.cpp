// The sampler (arbor/sampling.hpp): the PRNG against an independent Python implementation of
// splitmix64 + xoshiro256**; greedy and its tie rule; draw frequencies against the softmax
// (temperature, top-k, top-p, min-p); the penalties' arithmetic; reproducibility by seed; and
// the serialised state (round trip continues the same stream; bad bytes are refused).
#include <arbor/sampling.hpp>

#include <QProcess>
#include <QtTest>

#include <cmath>
#include <vector>

using namespace arbor;

namespace {

std::vector<float> logits_of(const std::vector<double>& probs, double shift = 3.0) {
    std::vector<float> l;
    for (double p : probs) l.push_back(float(std::log(p) + shift));
    return l;
}

std::vector<double> frequencies(Sampler& s, const std::vector<float>& l, int draws) {
    std::vector<double> f(l.size(), 0.0);
    for (int i = 0; i < draws; ++i) f[size_t(s.sample(l))] += 1.0 / draws;
    return f;
}

SamplerParams plain(float temp = 1.0f) {
    SamplerParams p;
    p.temperature = temp;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    p.seed = 1234;
    return p;
}

}  // namespace

class TestSampling : public QObject {
    Q_OBJECT

private slots:
    void rngMatchesOracle() {
        for (quint64 seed : {quint64(0), quint64(42), quint64(0xdeadbeefcafef00dULL)}) {
            QProcess py;
            py.start(qEnvironmentVariable("ARBOR_PYTHON", "/usr/bin/python3"),
                     {QString(ARBOR_ORACLE_DIR) + "/rng_oracle.py", QString::number(seed), "16"});
            QVERIFY(py.waitForFinished(30000));
            QCOMPARE(py.exitCode(), 0);
            const QStringList lines = QString::fromUtf8(py.readAllStandardOutput()).split('\n', Qt::SkipEmptyParts);
            QCOMPARE(lines.size(), 16);
            Rng rng(seed);
            for (const QString& l : lines) QCOMPARE(rng.next_u64(), l.toULongLong());
        }
        Rng r(5);
        for (int i = 0; i < 10000; ++i) {
            const float u = r.uniform();
            QVERIFY(u >= 0.0f && u < 1.0f);
        }
    }

    void greedy() {
        SamplerParams p = plain(0.0f);
        Sampler s(p, 5);
        QCOMPARE(s.sample(std::vector<float>{0.1f, 2.0f, -1.0f, 2.0f, 1.9f}), 1);  // tie: lower id
        QCOMPARE(s.sample(std::vector<float>{-5.0f, -4.0f, -3.0f, -2.0f, -1.0f}), 4);
        // top_k = 1 at any temperature is greedy too.
        SamplerParams k1 = plain(1.5f);
        k1.top_k = 1;
        Sampler s1(k1, 5);
        for (int i = 0; i < 50; ++i) QCOMPARE(s1.sample(std::vector<float>{0.1f, 2.0f, -1.0f, 2.0f, 1.9f}), 1);
    }

    void distributions_data() {
        QTest::addColumn<float>("temp");
        QTest::addColumn<int>("topK");
        QTest::addColumn<float>("topP");
        QTest::addColumn<float>("minP");
        QTest::addColumn<QVector<double>>("expected");
        // probabilities 0.5, 0.3, 0.15, 0.05
        QTest::newRow("plain") << 1.0f << 0 << 1.0f << 0.0f << QVector<double>{0.5, 0.3, 0.15, 0.05};
        const double z = 0.25 + 0.09 + 0.0225 + 0.0025;
        QTest::newRow("temp 0.5") << 0.5f << 0 << 1.0f << 0.0f
                                  << QVector<double>{0.25 / z, 0.09 / z, 0.0225 / z, 0.0025 / z};
        QTest::newRow("top-k 2") << 1.0f << 2 << 1.0f << 0.0f << QVector<double>{0.625, 0.375, 0, 0};
        QTest::newRow("top-p 0.6") << 1.0f << 0 << 0.6f << 0.0f << QVector<double>{0.625, 0.375, 0, 0};
        QTest::newRow("top-p 0.85") << 1.0f << 0 << 0.85f << 0.0f << QVector<double>{0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0};
        // min-p keeps p >= min_p * p_max.
        QTest::newRow("min-p 0.5") << 1.0f << 0 << 1.0f << 0.5f << QVector<double>{0.625, 0.375, 0, 0};
        QTest::newRow("min-p 0.2") << 1.0f << 0 << 1.0f << 0.2f << QVector<double>{0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0};
        QTest::newRow("k40 p0.9 m0.05") << 1.0f << 40 << 0.9f << 0.05f << QVector<double>{0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0};
    }
    void distributions() {
        QFETCH(float, temp);
        QFETCH(int, topK);
        QFETCH(float, topP);
        QFETCH(float, minP);
        QFETCH(QVector<double>, expected);
        SamplerParams p = plain(temp);
        p.top_k = topK;
        p.top_p = topP;
        p.min_p = minP;
        Sampler s(p, 4);
        const auto f = frequencies(s, logits_of({0.5, 0.3, 0.15, 0.05}), 20000);
        for (int i = 0; i < 4; ++i) {
            if (expected[i] == 0) QCOMPARE(f[size_t(i)], 0.0);
            QVERIFY2(std::fabs(f[size_t(i)] - expected[i]) < 0.016,
                     qPrintable(QString("token %1: %2 vs %3").arg(i).arg(f[size_t(i)]).arg(expected[i])));
        }
    }

    void penalties() {
        // History: token 0 once, token 1 twice. repeat 2, frequency 0.5, presence 0.25:
        //   l0 = 2/2 - (1*0.5 + 0.25) = 0.25;  l1 = -0.5*2 - (2*0.5 + 0.25) = -2.25;
        //   l2 = 1.0 (unseen);  l3 = 0.5.
        SamplerParams p = plain(0.0f);
        p.repeat_penalty = 2.0f;
        p.frequency_penalty = 0.5f;
        p.presence_penalty = 0.25f;
        Sampler s(p, 4);
        s.accept(std::vector<TokenId>{0, 1, 1});
        QCOMPARE(s.sample(std::vector<float>{2.0f, -0.5f, 1.0f, 0.5f}), 2);
        // Without history the raw argmax wins.
        Sampler s2(p, 4);
        QCOMPARE(s2.sample(std::vector<float>{2.0f, -0.5f, 1.0f, 0.5f}), 0);
        // The window: only the last penalty_last_n tokens count.
        p.penalty_last_n = 2;
        Sampler s3(p, 4);
        s3.accept(std::vector<TokenId>{0, 1, 1});  // token 0 fell out of the window
        QCOMPARE(s3.sample(std::vector<float>{2.0f, -0.5f, 1.0f, 0.5f}), 0);
        // A distribution check of the penalised logits: l = {0.25, x, 1.0, 0.5} at temp 1.
        SamplerParams q = plain(1.0f);
        q.repeat_penalty = 2.0f;
        q.frequency_penalty = 0.5f;
        q.presence_penalty = 0.25f;
        Sampler s4(q, 4);
        s4.accept(std::vector<TokenId>{0, 1, 1});
        const auto f = frequencies(s4, std::vector<float>{2.0f, -0.5f, 1.0f, 0.5f}, 20000);
        const double e[4] = {std::exp(0.25), std::exp(-2.25), std::exp(1.0), std::exp(0.5)};
        const double z = e[0] + e[1] + e[2] + e[3];
        for (int i = 0; i < 4; ++i) QVERIFY(std::fabs(f[size_t(i)] - e[i] / z) < 0.016);
    }

    void seedsReproduce() {
        SamplerParams p;  // the CLI defaults
        p.seed = 77;
        std::vector<float> l(64);
        for (size_t i = 0; i < l.size(); ++i) l[i] = float(std::sin(double(i)) * 3);
        Sampler a(p, 64), b(p, 64);
        std::vector<TokenId> ta, tb;
        for (int i = 0; i < 200; ++i) ta.push_back(a.sample(l)), tb.push_back(b.sample(l));
        QCOMPARE(ta, tb);
        p.seed = 78;
        Sampler c(p, 64);
        std::vector<TokenId> tc;
        for (int i = 0; i < 200; ++i) tc.push_back(c.sample(l));
        QVERIFY(ta != tc);
    }

    void serializeRoundTrip() {
        SamplerParams p = plain(0.9f);
        p.repeat_penalty = 1.1f;
        p.penalty_last_n = 8;
        p.seed = 99;
        std::vector<float> l(32);
        for (size_t i = 0; i < l.size(); ++i) l[i] = float(std::cos(double(i) * 0.7) * 2);
        Sampler a(p, 32);
        for (int i = 0; i < 10; ++i) a.accept(a.sample(l));
        const std::string bytes = a.serialize();
        auto b = Sampler::deserialize(bytes);
        QVERIFY2(b.ok(), b.ok() ? "" : b.message().c_str());
        QVERIFY(a == b.value());
        for (int i = 0; i < 30; ++i) {
            const TokenId x = a.sample(l), y = b.value().sample(l);
            QCOMPARE(x, y);
            a.accept(x);
            b.value().accept(y);
        }
        // Changing the settings keeps the RNG stream.
        Sampler c(p, 32), d(p, 32);
        SamplerParams p2 = p;
        p2.temperature = 0.5f;
        d.set_params(p2);
        QCOMPARE(c.serialize().substr(56), d.serialize().substr(56));  // from the RNG state on
        // Bad input.
        QVERIFY(!Sampler::deserialize("").ok());
        QVERIFY(!Sampler::deserialize(bytes.substr(0, bytes.size() - 3)).ok());
        std::string bad = bytes;
        bad[4] = 9;  // version
        QVERIFY(QString::fromStdString(Sampler::deserialize(bad).message()).contains("version"));
        bad = bytes;
        bad[0] = 'X';
        QVERIFY(!Sampler::deserialize(bad).ok());
    }

    void validate() {
        SamplerParams p;
        QVERIFY(p.validate().ok());
        p.top_p = 0;
        QVERIFY(!p.validate().ok());
        p = {};
        p.temperature = -1;
        QVERIFY(!p.validate().ok());
        p = {};
        p.repeat_penalty = 0;
        QVERIFY(!p.validate().ok());
        p = {};
        p.min_p = 2;
        QVERIFY(!p.validate().ok());
    }
};

QTEST_GUILESS_MAIN(TestSampling)
#include "test_sampling.moc"
