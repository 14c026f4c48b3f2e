// Synthetic models: valid files of each architecture, the real shapes' parameter counts, sane
// weight scales, determinism across thread counts, and header-only files that are instant.
#include <arbor/gguf.hpp>
#include <arbor/model_summary.hpp>
#include <arbor/quant.hpp>
#include <arbor/synth.hpp>

#include <QCryptographicHash>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace arbor;

namespace {
QByteArray sha(const QString& path) {
    QFile f(path);
    f.open(QIODevice::ReadOnly);
    return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256).toHex();
}
}  // namespace

class TestSynth : public QObject {
    Q_OBJECT
private slots:
    void tinyModelsAreValid_data() {
        QTest::addColumn<QString>("arch");
        for (const auto& a : synth_architectures()) QTest::newRow(a.c_str()) << QString::fromStdString(a);
    }
    void tinyModelsAreValid() {
        QFETCH(QString, arch);
        QTemporaryDir dir;
        const QString p = dir.filePath("m.gguf");
        SynthOptions o;
        o.arch = arch.toStdString();
        QVERIFY2(synthesize_model(o, p.toStdString()).ok(), "synthesize failed");
        auto f = GgufFile::open(p.toStdString());
        QVERIFY2(f.ok(), f.ok() ? "" : f.message().c_str());
        auto s = summarize_model(**f);
        QVERIFY(s.ok());
        QCOMPARE(QString::fromStdString(s->architecture), arch);
        QCOMPARE(*s->tokenizer_model, std::string("gpt2"));
        QVERIFY(s->has_chat_template);
        QCOMPARE(*s->vocab_size, uint64_t((*f)->find("tokenizer.ggml.tokens")->length));
        QVERIFY((*f)->find("tokenizer.ggml.merges")->length > 100);
        // Every weight decodes to finite values of a sane scale.
        for (const auto& t : (*f)->tensors()) {
            std::vector<float> row(t.ne[0]);
            QVERIFY(quant::dequantize(t.type, t.data, row.data(), t.ne[0]).ok());
            double sq = 0;
            for (float x : row) {
                QVERIFY(std::isfinite(x));
                sq += double(x) * x;
            }
            const double rms = std::sqrt(sq / row.size());
            QVERIFY2(rms > 1e-3 && rms < 2.0, t.name.data());
        }
    }

    void deterministicAcrossThreads() {
        QTemporaryDir dir;
        SynthOptions o;
        o.arch = "qwen3moe";
        o.seed = 7;
        o.threads = 1;
        QVERIFY(synthesize_model(o, dir.filePath("a.gguf").toStdString()).ok());
        o.threads = 3;
        QVERIFY(synthesize_model(o, dir.filePath("b.gguf").toStdString()).ok());
        QCOMPARE(sha(dir.filePath("a.gguf")), sha(dir.filePath("b.gguf")));
        o.seed = 8;
        QVERIFY(synthesize_model(o, dir.filePath("c.gguf").toStdString()).ok());
        QVERIFY(sha(dir.filePath("a.gguf")) != sha(dir.filePath("c.gguf")));
    }

    // --zero-data --routed: the token embeddings, the norm weights and the routers are the random
    // file's bytes, so tokens route as they would there; every other tensor is zeros.
    void routedZeroDataKeepsTheRouting() {
        QTemporaryDir dir;
        SynthOptions o;
        o.arch = "qwen3moe";
        o.seed = 7;
        QVERIFY(synthesize_model(o, dir.filePath("r.gguf").toStdString()).ok());
        o.zero_data = true;
        o.routed = true;
        QVERIFY(synthesize_model(o, dir.filePath("z.gguf").toStdString()).ok());
        auto r = GgufFile::open(dir.filePath("r.gguf").toStdString());
        auto z = GgufFile::open(dir.filePath("z.gguf").toStdString());
        QVERIFY(r.ok() && z.ok());
        int kept = 0, zeroed = 0;
        for (const auto& t : (*z)->tensors()) {
            const GgufTensor* rt = (*r)->tensor(t.name);
            QVERIFY(rt && rt->nbytes == t.nbytes);
            const bool random = t.name == "token_embd.weight" || t.n_dims == 1 ||
                                t.name.find("ffn_gate_inp") != std::string_view::npos;
            if (random) {
                QVERIFY2(std::memcmp(t.data, rt->data, t.nbytes) == 0, t.name.data());
                ++kept;
            } else {
                QVERIFY2(std::all_of(t.data, t.data + t.nbytes, [](uint8_t b) { return b == 0; }), t.name.data());
                ++zeroed;
            }
        }
        QVERIFY(kept >= 4);  // the embeddings, a layer's two norms and its router at least
        QVERIFY(zeroed > kept);
    }

    void realShapesHeaderOnly_data() {
        QTest::addColumn<QString>("arch");
        QTest::addColumn<QString>("shape");
        QTest::addColumn<double>("billions");
        QTest::newRow("qwen3-0.6b") << "qwen3" << "qwen3-0.6b" << 0.596;
        QTest::newRow("qwen3-4b") << "qwen3" << "qwen3-4b" << 4.02;
        QTest::newRow("qwen3moe-30b-a3b") << "qwen3moe" << "qwen3moe-30b-a3b" << 30.5;
    }
    void realShapesHeaderOnly() {
        QFETCH(QString, arch);
        QFETCH(QString, shape);
        QFETCH(double, billions);
        QTemporaryDir dir;
        const QString p = dir.filePath("m.gguf");
        SynthOptions o;
        o.arch = arch.toStdString();
        o.shape = shape.toStdString();
        o.zero_data = true;
        QElapsedTimer t;
        t.start();
        QVERIFY(synthesize_model(o, p.toStdString()).ok());
        QVERIFY(t.elapsed() < 5000);
        struct stat st {};
        QCOMPARE(::stat(p.toLocal8Bit().constData(), &st), 0);
        QVERIFY(st.st_blocks * 512 < 64 << 20);  // only the header is really on disk
        auto f = GgufFile::open(p.toStdString());
        QVERIFY(f.ok());
        auto s = summarize_model(**f);
        QVERIFY(s.ok());
        const double b = s->parameters / 1e9;
        QVERIFY2(std::abs(b - billions) / billions < 0.03, qPrintable(QString::number(b)));
    }

    void unknownShapeIsNamed() {
        auto s = synth_shape("qwen3", "qwen3-70b");
        QVERIFY(!s.ok());
        QVERIFY(s.message().find("qwen3-70b") != std::string::npos);
        QVERIFY(!synth_shape("mamba", "tiny").ok());
    }
};

QTEST_GUILESS_MAIN(TestSynth)
#include "tst_synth.moc"
