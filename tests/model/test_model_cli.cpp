// arbor-cli run and arbor-cli logits end to end: the published stories260K sample on stdout,
// the stats line and the seed on stderr, reproducibility by seed, stop strings, the exit codes
// of the command-line contract (bad usage 1, prompt over the context 1, --backend gpu without a
// GPU 2), and the logits JSON: its shape, its ordering rules, float32 round-trip printing
// checked against the library's own logits, and identical output across --threads/--chunk.
#include <arbor/backend.hpp>

#include "engine_test_util.hpp"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QtTest>

using namespace arbor;
using namespace arbor::test;

namespace {

QString stories() { return modelPath("models/stories260K.gguf"); }

QString published() {
    QFile f(sharedData() + "/models/stories260K.llama2c-doc.md");
    if (!f.open(QIODevice::ReadOnly)) return {};
    const auto m = QRegularExpression("-t 0\\.0\\n(.*?)\\n```", QRegularExpression::DotMatchesEverythingOption)
                       .match(QString::fromUtf8(f.readAll()));
    return m.hasMatch() ? m.captured(1) : QString();
}

QString lastLine(const QByteArray& b) { return QString::fromUtf8(b).trimmed().split('\n').last(); }

}  // namespace

class TestModelCli : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        if (qEnvironmentVariable("ARBOR_CLI").isEmpty()) QSKIP("ARBOR_CLI is not set (run through ctest)");
        ARBOR_REQUIRE_PATH(stories());
    }

    void runPublishedSample() {
        const CliRun r = cli({"run", "-m", stories(), "-p", "", "--temp", "0", "-n", "256"});
        QCOMPARE(r.code, 0);
        QCOMPARE(QString::fromUtf8(r.out), published());
        QVERIFY(QString::fromUtf8(r.err).contains(QRegularExpression("^seed: \\d+$", QRegularExpression::MultilineOption)));
        const QRegularExpression stats(
            "^stats: prompt_tokens=1 prefill_tok_s=\\d+\\.\\d+ decode_tok_s=\\d+\\.\\d+ ttft_ms=\\d+\\.\\d+ backend=cpu$");
        QVERIFY2(stats.match(lastLine(r.err)).hasMatch(), qPrintable(lastLine(r.err)));
    }

    void runSeeds() {
        const QStringList base = {"run", "-m", stories(), "-p", "Once upon a time", "-n", "40", "--temp", "1.0"};
        const CliRun a = cli(base + QStringList{"--seed", "7"});
        const CliRun b = cli(base + QStringList{"--seed", "7", "--threads", "1"});
        QCOMPARE(a.code, 0);
        QCOMPARE(a.out, b.out);
        QVERIFY(!a.out.isEmpty());
        const CliRun c = cli(base + QStringList{"--seed", "8"});
        QVERIFY(c.out != a.out);
        // Without --seed the seed is printed, and running with it reproduces the text.
        const CliRun d = cli(base);
        const auto m = QRegularExpression("^seed: (\\d+)$", QRegularExpression::MultilineOption).match(QString::fromUtf8(d.err));
        QVERIFY(m.hasMatch());
        const CliRun e = cli(base + QStringList{"--seed", m.captured(1)});
        QCOMPARE(e.out, d.out);
        // Penalties and the other settings are accepted and change nothing about determinism.
        const QStringList pen = {"--repeat-penalty", "1.3", "--frequency-penalty", "0.2", "--presence-penalty", "0.1",
                                 "--top-k", "10", "--top-p", "0.9", "--min-p", "0.02", "--seed", "3"};
        const CliRun f = cli(base + pen), g = cli(base + pen);
        QCOMPARE(f.code, 0);
        QCOMPARE(f.out, g.out);
    }

    void runStopString() {
        const CliRun r = cli({"run", "-m", stories(), "-p", "", "--temp", "0", "-n", "256", "--stop", "red ball", "--stop", "zebra"});
        QCOMPARE(r.code, 0);
        QCOMPARE(QString::fromUtf8(r.out), published().left(published().indexOf("red ball")));
    }

    void runChat() {
        const QString m = modelPath("quant/random-qwen3-Q4_K_M.gguf");
        ARBOR_REQUIRE_PATH(m);
        const CliRun r = cli({"run", "-m", m, "-p", "hello", "--chat", "-n", "8", "--seed", "1"});
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY(lastLine(r.err).startsWith("stats: prompt_tokens="));
    }

    void exitCodes_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("code");
        QTest::newRow("gpu backend") << QStringList{"run", "-m", stories(), "-p", "", "--backend", "gpu"} << 2;
        QTest::newRow("gpu logits") << QStringList{"logits", "-m", stories(), "-p", "x", "--backend", "gpu"} << 2;
        QTest::newRow("unknown flag") << QStringList{"run", "-m", stories(), "-p", "", "--bogus"} << 1;
        QTest::newRow("missing model") << QStringList{"run", "-p", ""} << 1;
        QTest::newRow("bad model path") << QStringList{"run", "-m", "/nonexistent.gguf", "-p", ""} << 1;
        QTest::newRow("prompt over context") << QStringList{"run", "-m", stories(), "-p", QString("Once upon a time ").repeated(20), "--ctx", "16"} << 1;
        QTest::newRow("empty prompt, no bos") << QStringList{"run", "-m", stories(), "-p", "", "--no-bos"} << 1;
        QTest::newRow("bad temperature") << QStringList{"run", "-m", stories(), "-p", "", "--temp", "-1"} << 1;
        QTest::newRow("bad chunk") << QStringList{"logits", "-m", stories(), "-p", "x", "--chunk", "0"} << 1;
    }
    void exitCodes() {
        QFETCH(QStringList, args);
        QFETCH(int, code);
        const CliRun r = cli(args);
        QCOMPARE(r.code, code);
        QVERIFY(r.out.isEmpty());
        QVERIFY2(lastLine(r.err).startsWith("error: "), r.err.constData());
        QCOMPARE(lastLine(r.err).count('\n'), 0);
    }

    void logitsJson() {
        const CliRun r = cli({"logits", "-m", stories(), "-p", "Once upon a time", "-n", "6", "--threads", "2"});
        QCOMPARE(r.code, 0);
        QJsonParseError pe;
        const QJsonObject o = QJsonDocument::fromJson(r.out, &pe).object();
        QCOMPARE(pe.error, QJsonParseError::NoError);
        const QJsonArray tokens = o["tokens"].toArray();
        QCOMPARE(tokens.first().toInt(), 1);  // BOS, as the model's tokenizer asks
        const QJsonArray per = o["per_position_top5"].toArray();
        QCOMPARE(per.size(), tokens.size());
        const QJsonArray last = o["last_logits"].toArray();
        QCOMPARE(last.size(), 512);
        QCOMPARE(o["backend"].toString(), QString("cpu"));
        QCOMPARE(o["greedy"].toArray().size(), 6);
        // The library's logits for the same tokens, bit for bit, through the JSON text.
        auto m = loadModel(stories());
        QVERIFY(m);
        std::vector<TokenId> toks;
        for (const auto& t : tokens) toks.push_back(t.toInt());
        const auto ref = promptLogits(m, toks, {.threads = 1});
        const size_t V = 512, P = toks.size();
        for (size_t i = 0; i < V; ++i) {
            const float got = float(last[int(i)].toDouble());
            QCOMPARE(got, ref[(P - 1) * V + i]);
        }
        for (size_t p = 0; p < P; ++p) {
            const QJsonArray top = per[int(p)].toArray();
            QCOMPARE(top.size(), 5);
            std::vector<int> ids(V);
            for (size_t i = 0; i < V; ++i) ids[i] = int(i);
            const float* l = &ref[p * V];
            std::sort(ids.begin(), ids.end(), [&](int a, int b) { return l[a] > l[b] || (l[a] == l[b] && a < b); });
            for (int k = 0; k < 5; ++k) {
                QCOMPARE(top[k].toArray()[0].toInt(), ids[size_t(k)]);
                QCOMPARE(float(top[k].toArray()[1].toDouble()), l[ids[size_t(k)]]);
            }
        }
        QCOMPARE(o["greedy_text"].toString().isEmpty(), false);
    }

    void logitsIdenticalAcrossThreadsAndChunks() {
        const QString text = QString("Once upon a time, there was a little girl named Lily. ").repeated(6);
        const QStringList base = {"logits", "-m", stories(), "-p", text, "-n", "4"};
        const CliRun a = cli(base + QStringList{"--threads", "1", "--chunk", "256"});
        QCOMPARE(a.code, 0);
        for (const QStringList& extra : {QStringList{"--threads", "2", "--chunk", "50"}, QStringList{"--threads", "7", "--chunk", "1"},
                                         QStringList{"--threads", "2", "--chunk", "37"}}) {
            const CliRun b = cli(base + extra);
            QCOMPARE(b.code, 0);
            QVERIFY2(a.out == b.out, qPrintable(extra.join(' ')));
        }
    }
};

QTEST_GUILESS_MAIN(TestModelCli)
#include "test_model_cli.moc"
