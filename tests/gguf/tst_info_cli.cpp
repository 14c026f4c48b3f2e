// `arbor-cli info` end to end: the JSON contract on the real demo model and on a header-only
// 30B-A3B-shaped file, speed, and the error contract on bad input.
#include "test_data.hpp"

#include <arbor/json.hpp>
#include <arbor/synth.hpp>

#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

using namespace arbor;

namespace {
struct Run {
    int code;
    QByteArray out, err;
    qint64 ms;
};
Run cli(const QStringList& args) {
    QProcess p;
    QElapsedTimer t;
    t.start();
    p.start(qEnvironmentVariable("ARBOR_CLI"), args);
    p.waitForFinished(60000);
    return {p.exitCode(), p.readAllStandardOutput(), p.readAllStandardError(), t.elapsed()};
}
}  // namespace

class TestInfoCli : public QObject {
    Q_OBJECT
private slots:
    void storiesJson() {
        const QString model = test::sourceDir() + "/resources/models/stories260K.gguf";
        const Run r = cli({"info", "--json", model});
        QCOMPARE(r.code, 0);
        QVERIFY(r.err.isEmpty());
        auto v = json::parse(std::string_view(r.out.constData(), size_t(r.out.size())));
        QVERIFY2(v.ok(), r.out.left(200).constData());
        const json::Value& o = *v;
        QCOMPARE(o.find("architecture")->as_string(), std::string("llama"));
        QCOMPARE(o.find("parameters")->as_int(), int64_t(292800));
        QCOMPARE(o.find("file_size")->as_int(), int64_t(1185376));
        QCOMPARE(o.find("tensor_count")->as_int(), int64_t(48));
        QCOMPARE(o.find("context_length")->as_int(), int64_t(2048));
        QCOMPARE(o.find("block_count")->as_int(), int64_t(5));
        QCOMPARE(o.find("head_count")->as_int(), int64_t(8));
        QCOMPARE(o.find("head_count_kv")->as_int(), int64_t(4));
        QVERIFY(o.find("expert_count")->is_null());
        QCOMPARE(o.find("vocab_size")->as_int(), int64_t(512));
        QCOMPARE(o.find("tokenizer_model")->as_string(), std::string("llama"));
        QCOMPARE(o.find("has_chat_template")->as_bool(), false);
        // Long arrays are summarised unless --full.
        const json::Value* toks = o.find("metadata")->find("tokenizer.ggml.tokens");
        QVERIFY(toks && toks->is_object());
        QCOMPARE(toks->find("length")->as_int(), int64_t(512));
        const auto& tensors = o.find("tensors")->as_array();
        QCOMPARE(tensors.size(), size_t(48));
        QCOMPARE(tensors[0].find("name")->as_string(), std::string("token_embd.weight"));
        QCOMPARE(tensors[0].find("type")->as_string(), std::string("F32"));
        QCOMPARE(tensors[0].find("shape")->as_array()[0].as_int(), int64_t(64));
        QCOMPARE(tensors[0].find("offset")->as_int(), int64_t(14176));
        const Run full = cli({"info", "--json", "--full", model});
        auto vf = json::parse(std::string_view(full.out.constData(), size_t(full.out.size())));
        QVERIFY(vf.ok());
        QCOMPARE(vf->find("metadata")->find("tokenizer.ggml.tokens")->as_array().size(), size_t(512));
    }

    void moe30bHeaderOnlyIsInstant() {
        QTemporaryDir dir;
        const QString p = dir.filePath("moe.gguf");
        SynthOptions o;
        o.arch = "qwen3moe";
        o.shape = "qwen3moe-30b-a3b";
        o.zero_data = true;
        QVERIFY(synthesize_model(o, p.toStdString()).ok());
        const Run r = cli({"info", "--json", p});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.ms < 3000, qPrintable(QString::number(r.ms)));
        auto v = json::parse(std::string_view(r.out.constData(), size_t(r.out.size())));
        QVERIFY(v.ok());
        QCOMPARE(v->find("expert_count")->as_int(), int64_t(128));
        QCOMPARE(v->find("expert_used_count")->as_int(), int64_t(8));
        QCOMPARE(v->find("block_count")->as_int(), int64_t(48));
        QVERIFY(std::abs(v->find("parameters")->as_double() / 1e9 - 30.5) < 0.5);
        QVERIFY(v->find("has_chat_template")->as_bool());
        const Run text = cli({"info", "--tensors", p});
        QCOMPARE(text.code, 0);
        QVERIFY(text.out.contains("blk.47.ffn_down_exps.weight"));
        QVERIFY(text.out.contains("IQ4_XS"));
    }

    void badInputContract() {
        QTemporaryDir dir;
        const QString bogus = dir.filePath("x.gguf");
        QFile f(bogus);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("GGUF\x03\x00\x00\x00\xff\xff", 10);
        f.close();
        Run r = cli({"info", bogus});
        QCOMPARE(r.code, 1);
        QVERIFY(r.out.isEmpty());
        QVERIFY(r.err.startsWith("error: "));
        QCOMPARE(r.err.count('\n'), 1);
        QVERIFY(r.err.contains("byte"));
        r = cli({"info"});
        QCOMPARE(r.code, 1);
        r = cli({"info", "--bogus-flag", bogus});
        QCOMPARE(r.code, 1);
        QVERIFY(r.err.contains("--bogus-flag"));
        r = cli({"no-such-command"});
        QCOMPARE(r.code, 1);
        r = cli({"--version"});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.startsWith("arbor-cli "));
    }
};

QTEST_GUILESS_MAIN(TestInfoCli)
#include "tst_info_cli.moc"
