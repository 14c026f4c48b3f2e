// The GGUF reader on real files, the writer round trip, typed access and split models.
#include "gguf_fixtures.hpp"
#include "test_data.hpp"

#include <arbor/gguf.hpp>
#include <arbor/model_summary.hpp>

#include <QDir>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QtTest>
#include <sys/stat.h>

using namespace arbor;

class TestGgufReader : public QObject {
    Q_OBJECT
private slots:
    void storiesFacts() {
        const QString path = test::sourceDir() + "/resources/models/stories260K.gguf";
        ARBOR_REQUIRE_PATH(path);
        auto f = GgufFile::open(path.toStdString());
        QVERIFY2(f.ok(), f.ok() ? "" : f.message().c_str());
        const GgufFile& g = **f;
        QCOMPARE(g.version(), 3u);
        QCOMPARE(g.tensors().size(), size_t(48));
        QCOMPARE(g.file_size(), uint64_t(1185376));
        QCOMPARE(g.architecture(), std::string("llama"));
        QCOMPARE(*g.get_uint("llama.embedding_length").value(), uint64_t(64));
        QCOMPARE(*g.get_uint("llama.block_count").value(), uint64_t(5));
        QCOMPARE(*g.get_float("llama.attention.layer_norm_rms_epsilon").value(), double(1e-5f));
        const GgufValue* tokens = g.find("tokenizer.ggml.tokens");
        QVERIFY(tokens && tokens->is_array());
        QCOMPARE(tokens->length, uint64_t(512));
        QCOMPARE(tokens->strings.size(), size_t(512));
        const GgufTensor* emb = g.tensor("token_embd.weight");
        QVERIFY(emb);
        QCOMPARE(emb->ne[0], int64_t(64));
        QCOMPARE(emb->ne[1], int64_t(512));
        QCOMPARE(emb->offset, uint64_t(14176));
        // A type mismatch is an error that names the key, an absent key is nullopt.
        auto bad = g.get_uint("general.name");
        QVERIFY(!bad.ok());
        QVERIFY(bad.message().find("general.name") != std::string::npos);
        QVERIFY(!g.get_uint("no.such.key").value().has_value());
        auto s = summarize_model(g);
        QVERIFY(s.ok());
        QCOMPARE(s->parameters, uint64_t(292800));
        QCOMPARE(*s->head_count_kv, uint64_t(4));
    }

    void sharedQuantFilesOpen_data() {
        QTest::addColumn<QString>("file");
        const QString dir = test::sharedData() + "/quant";
        for (const QString& f : QDir(dir).entryList({"*.gguf"}, QDir::Files, QDir::Name))
            QTest::newRow(qPrintable(f)) << dir + "/" + f;
        if (QDir(dir).entryList({"*.gguf"}).isEmpty()) QTest::newRow("missing") << dir + "/random-qwen3-bf16.gguf";
    }
    void sharedQuantFilesOpen() {
        QFETCH(QString, file);
        ARBOR_REQUIRE_PATH(file);
        QElapsedTimer t;
        t.start();
        auto f = GgufFile::open(file.toStdString());
        QVERIFY2(f.ok(), f.ok() ? "" : f.message().c_str());
        QVERIFY((*f)->tensors().size() > 10);
        for (const auto& tn : (*f)->tensors()) {
            QVERIFY(tn.offset % (*f)->alignment() == 0);
            QVERIFY(tn.offset + tn.nbytes <= (*f)->file_size());
        }
        QVERIFY(t.elapsed() < 1000);
    }

    void writerRoundTrip() {
        QTemporaryDir dir;
        const QString p = dir.filePath("rt.gguf");
        auto w = test::fixture_writer();
        QVERIFY(w.write(p.toStdString()).ok());
        auto f = GgufFile::open(p.toStdString());
        QVERIFY2(f.ok(), f.ok() ? "" : f.message().c_str());
        const GgufFile& g = **f;
        QCOMPARE(*g.get_string("general.name").value(), std::string("fixture"));
        QCOMPARE(*g.get_int("test.i32").value(), int64_t(-7));
        QCOMPARE(*g.get_uint("test.u64").value(), uint64_t(1) << 40);
        QCOMPARE(*g.get_bool("test.bool").value(), true);
        QCOMPARE(*g.get_float("llama.rope.freq_base").value(), 10000.0);
        const GgufValue* toks = g.find("tokenizer.ggml.tokens");
        QCOMPARE(toks->strings[4], std::string_view("héllo"));
        QCOMPARE(toks->strings[5], std::string_view(""));
        const GgufValue* sc = g.find("tokenizer.ggml.scores");
        QCOMPARE(sc->float_at(3), -2.0);
        QCOMPARE(g.find("tokenizer.ggml.token_type")->int_at(0), int64_t(3));
        const GgufTensor* q = g.tensor("blk.0.attn_q.weight");
        QVERIFY(q);
        QCOMPARE(q->type, TensorType::Q4_K);
        QCOMPARE(q->nbytes, uint64_t(288));
        QCOMPARE(q->row_bytes(), uint64_t(144));
        // The bytes come back exactly.
        const auto again = test::fixture_bytes();
        const auto written = test::read_all(p);
        QCOMPARE(written.size(), again.size());
        QVERIFY(written == again);
    }

    void zeroDataIsSparse() {
        QTemporaryDir dir;
        const QString p = dir.filePath("big.gguf");
        GgufWriter w;
        w.set("general.architecture", GgufWriteValue::string("llama"));
        // 2 GiB of Q4_K weights written as a hole.
        QVERIFY(w.add_tensor("big", {4096, 4096 * 128}, TensorType::Q4_K, {}).ok());
        QVERIFY(w.write(p.toStdString(), true).ok());
        struct stat st {};
        QCOMPARE(::stat(p.toLocal8Bit().constData(), &st), 0);
        QVERIFY(st.st_size > (int64_t(1) << 30));
        QVERIFY(st.st_blocks * 512 < (1 << 20));  // nothing was really written
        QElapsedTimer t;
        t.start();
        auto f = GgufFile::open(p.toStdString());
        QVERIFY(f.ok());
        QVERIFY(t.elapsed() < 200);
    }

    void splitModelOpensFromAnyPart() {
        QTemporaryDir dir;
        const int parts = 3;
        for (int i = 1; i <= parts; ++i) {
            GgufWriter w;
            w.set("split.no", GgufWriteValue::u32(i - 1));
            w.set("split.count", GgufWriteValue::u32(parts));
            if (i == 1) w.set("general.architecture", GgufWriteValue::string("llama"));
            std::vector<uint8_t> data(32 * 4, static_cast<uint8_t>(i));
            QVERIFY(w.add_tensor("t" + std::to_string(i), {32}, TensorType::F32, data).ok());
            const QString p = dir.filePath(QStringLiteral("m-%1-of-%2.gguf").arg(i, 5, 10, QChar('0')).arg(parts, 5, 10, QChar('0')));
            QVERIFY(w.write(p.toStdString()).ok());
        }
        for (int i = 1; i <= parts; ++i) {
            const QString p = dir.filePath(QStringLiteral("m-%1-of-00003.gguf").arg(i, 5, 10, QChar('0')));
            auto f = GgufFile::open(p.toStdString());
            QVERIFY2(f.ok(), f.ok() ? "" : f.message().c_str());
            QCOMPARE((*f)->split_count(), size_t(3));
            QCOMPARE((*f)->tensors().size(), size_t(3));
            QCOMPARE((*f)->architecture(), std::string("llama"));
            QCOMPARE((*f)->tensor("t3")->data[0], uint8_t(3));
        }
        // A missing part is named.
        QFile::remove(dir.filePath("m-00002-of-00003.gguf"));
        auto f = GgufFile::open(dir.filePath("m-00001-of-00003.gguf").toStdString());
        QVERIFY(!f.ok());
        QVERIFY(f.message().find("m-00002-of-00003.gguf") != std::string::npos);
    }

    void duplicateKeysAndTensorsRejected() {
        GgufWriter w;
        w.set("a.key", GgufWriteValue::u32(1));
        QVERIFY(!w.add_tensor("x", {33}, TensorType::Q8_0, {}).ok());  // not a block multiple
        QVERIFY(w.add_tensor("x", {32}, TensorType::F32, {}).ok());
        QVERIFY(!w.add_tensor("x", {32}, TensorType::F32, {}).ok());
    }

    void missingFileIsClean() {
        auto f = GgufFile::open("/nonexistent/model.gguf");
        QVERIFY(!f.ok());
        QVERIFY(f.message().find("/nonexistent/model.gguf") != std::string::npos);
        auto d = GgufFile::open("/tmp");
        QVERIFY(!d.ok());
    }
};

QTEST_GUILESS_MAIN(TestGgufReader)
#include "tst_gguf_reader.moc"
