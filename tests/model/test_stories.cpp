// stories260K.gguf, greedy from BOS, must reproduce character for character the sample its
// author published in stories260K.llama2c-doc.md (llama2.c's run.c at temperature 0, 256
// steps) - an oracle entirely independent of this engine. Checked through the Session (CPU,
// 1 and 2 threads, f16 and f32 KV cells) and through the scalar reference kernels.
#include <arbor/session.hpp>

#include "engine_test_util.hpp"

#include <QFile>
#include <QRegularExpression>
#include <QtTest>

using namespace arbor;
using namespace arbor::test;

namespace {

// The text of the code block that follows "-t 0.0" in the doc (without the command line).
QString publishedSample(QString* err) {
    QFile f(sharedData() + "/models/stories260K.llama2c-doc.md");
    if (!f.open(QIODevice::ReadOnly)) {
        *err = "cannot read the doc";
        return {};
    }
    const QString doc = QString::fromUtf8(f.readAll());
    const QRegularExpression re("-t 0\\.0\\n(.*?)\\n```", QRegularExpression::DotMatchesEverythingOption);
    const auto m = re.match(doc);
    if (!m.hasMatch()) {
        *err = "no temperature-0 sample in the doc";
        return {};
    }
    return m.captured(1);
}

}  // namespace

class TestStories : public QObject {
    Q_OBJECT

private slots:
    void greedySample_data() {
        QTest::addColumn<int>("threads");
        QTest::addColumn<bool>("f32kv");
        QTest::addColumn<int>("chunk");
        QTest::newRow("1 thread, f16 kv") << 1 << false << 256;
        QTest::newRow("2 threads, f16 kv") << 2 << false << 256;
        QTest::newRow("2 threads, f32 kv") << 2 << true << 256;
    }
    void greedySample() {
        QFETCH(int, threads);
        QFETCH(bool, f32kv);
        QFETCH(int, chunk);
        const QString path = modelPath("models/stories260K.gguf");
        ARBOR_REQUIRE_PATH(path);
        ARBOR_REQUIRE_PATH(sharedData() + "/models/stories260K.llama2c-doc.md");
        QString err;
        const QString want = publishedSample(&err);
        QVERIFY2(!want.isEmpty(), qPrintable(err));
        QVERIFY(want.startsWith("Once upon a time") && want.size() > 500);

        auto model = loadModel(path);
        QVERIFY(model);
        SessionOptions so;
        so.threads = threads;
        so.kv_type = f32kv ? KvType::F32 : KvType::F16;
        so.prefill_chunk = chunk;
        auto session = Session::create(model, so);
        QVERIFY(session.ok());
        Session& s = *session.value();
        auto ids = prompt_tokens(*model, "", std::nullopt, false);
        QVERIFY(ids.ok());
        QCOMPARE(ids.value(), std::vector<TokenId>{model->tokenizer().bos()});
        QVERIFY(s.feed(ids.value()).ok());
        SamplerParams sp;
        sp.temperature = 0;
        Sampler sampler(sp, model->config().n_vocab);
        GenerateOptions go;
        go.max_tokens = 256;  // run.c's 256 steps
        std::string text;
        auto r = s.generate(sampler, go, [&](std::string_view t) {
            text += t;
            return true;
        });
        QVERIFY(r.ok());
        QCOMPARE(r.value(), StopReason::Length);
        QCOMPARE(QString::fromStdString(text), want);
    }

    // The same tokens through the scalar reference kernels, token by token.
    void scalarKernelsAgree() {
        const QString path = modelPath("models/stories260K.gguf");
        ARBOR_REQUIRE_PATH(path);
        auto model = loadModel(path);
        QVERIFY(model);
        std::vector<TokenId> toks = {model->tokenizer().bos()};
        auto fast = makeBackend(model, {.threads = 2});
        auto slow = makeBackend(model, {.threads = 1, .scalar = true});
        auto cache = std::make_shared<KvCache>(model->config(), KvType::F16, 4);
        KvSequence a(cache, 512), b(cache, 512);
        PassLogits la, lb;
        for (int i = 0; i < 120; ++i) {
            BatchEntry ea{&a, std::span<const TokenId>(&toks.back(), 1), LogitsMode::Last};
            BatchEntry eb{&b, std::span<const TokenId>(&toks.back(), 1), LogitsMode::Last};
            QVERIFY(fast->eval(std::span<const BatchEntry>(&ea, 1), &la).ok());
            QVERIFY(slow->eval(std::span<const BatchEntry>(&eb, 1), &lb).ok());
            QVERIFY2(sameBits(la.data, lb.data), qPrintable(QString("step %1").arg(i)));
            int best = 0;
            for (int v = 1; v < la.n_vocab; ++v)
                if (la.data[size_t(v)] > la.data[size_t(best)]) best = v;
            toks.push_back(best);
        }
    }

    void stopStringsAndEog() {
        const QString path = modelPath("models/stories260K.gguf");
        ARBOR_REQUIRE_PATH(path);
        auto model = loadModel(path);
        QVERIFY(model);
        auto session = Session::create(model, {});
        QVERIFY(session.ok());
        Session& s = *session.value();
        QVERIFY(s.feed(std::vector<TokenId>{model->tokenizer().bos()}).ok());
        SamplerParams sp;
        sp.temperature = 0;
        Sampler sampler(sp, model->config().n_vocab);
        GenerateOptions go;
        go.max_tokens = 256;
        go.stop = {"red ball"};
        std::string text;
        auto r = s.generate(sampler, go, [&](std::string_view t) {
            text += t;
            return true;
        });
        QVERIFY(r.ok());
        QCOMPARE(r.value(), StopReason::StopString);
        QCOMPARE(QString::fromStdString(text),
                 QString("Once upon a time, there was a little girl named Lily. She loved to play outside in the "
                         "park. One day, she saw a big, "));
    }
};

QTEST_GUILESS_MAIN(TestStories)
#include "test_stories.moc"
