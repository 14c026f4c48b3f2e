// The fake engine: its script is validated with messages that name the field, and it answers
// with the scripted tokens at the scripted pace, fails on demand, stops at its context and
// honours a cancel within one token.
#include "fake_script_util.hpp"
#include "engine/FakeChatBackend.h"
#include "engine/FakeScript.h"

#include <QElapsedTimer>
#include <QThread>
#include <QtTest>

using namespace arbor::app;

namespace {

struct Run {
    GenerationOutcome out;
    QStringList pieces;
    PromptFacts facts;
};

Run generate(FakeChatBackend& b, const QString& user, const std::atomic<bool>& cancel, int cancelAfter = -1,
             std::atomic<bool>* cancelFlag = nullptr) {
    Run r;
    r.out = b.generate({{QStringLiteral("user"), user}}, GenerationParams{}, cancel, [&](const PromptFacts& f) { r.facts = f; },
                       [&](const QString& p) {
                           r.pieces << p;
                           if (cancelFlag && r.pieces.size() == cancelAfter) cancelFlag->store(true);
                           return true;
                       });
    return r;
}

}  // namespace

class TestFakeChatBackend : public QObject {
    Q_OBJECT
private slots:
    void rejectsBadScripts_data() {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("not json") << QByteArray("{\"token_ms\": ") << "byte";
        QTest::newRow("not an object") << QByteArray("[1,2]") << "JSON object";
        QTest::newRow("negative pace") << QByteArray(R"({"token_ms": -5})") << "script.token_ms";
        QTest::newRow("fractional pace") << QByteArray(R"({"token_ms": 2.5})") << "script.token_ms";
        QTest::newRow("model not object") << QByteArray(R"({"model": 3})") << "model";
        QTest::newRow("context too small") << QByteArray(R"({"model": {"context_length": 4}})") << "model.context_length";
        QTest::newRow("thinking not bool") << QByteArray(R"({"model": {"thinking": "yes"}})") << "model.thinking";
        QTest::newRow("tokens missing") << QByteArray(R"({"replies": [{"when": "x"}]})") << "replies[0].tokens";
        QTest::newRow("token not string") << QByteArray(R"({"replies": [{"tokens": ["a", 2]}]})") << "replies[0].tokens[1]";
        QTest::newRow("default bad") << QByteArray(R"({"default": {"tokens": "abc"}})") << "default.tokens";
    }
    void rejectsBadScripts() {
        QFETCH(QByteArray, json);
        QFETCH(QString, mentions);
        FakeScript s;
        QString why;
        QVERIFY(!FakeScript::parse(json, QStringLiteral("bad.json"), &s, &why));
        QVERIFY2(why.startsWith(QStringLiteral("bad.json: ")), qPrintable(why));
        QVERIFY2(why.contains(mentions), qPrintable(why));
    }

    void repliesAtThePace() {
        FakeChatBackend b(script(R"({"token_ms": 10, "default": {"tokens": ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]}})"));
        BackendInfo info;
        QString why;
        QVERIFY2(b.load(QStringLiteral(ARBOR_DEMO_MODEL_SOURCE), &info, &why), qPrintable(why));
        QCOMPARE(info.backend, QStringLiteral("fake"));
        std::atomic<bool> cancel{false};
        QElapsedTimer t;
        t.start();
        const Run r = generate(b, QStringLiteral("hello world"), cancel);
        const qint64 ms = t.elapsed();
        QCOMPARE(r.pieces.join(QString()), QStringLiteral("abcdefghij"));
        QCOMPARE(r.out.end, GenerationOutcome::End::Finished);
        QCOMPARE(r.out.stopReason, QStringLiteral("eog"));
        QCOMPARE(r.out.generatedTokens, 10);
        QVERIFY2(ms >= 95, qPrintable(QString::number(ms)));
        // Prompt: 2 + (2 + 2 words).
        QCOMPARE(r.facts.promptTokens, 6);
        QCOMPARE(r.out.contextUsed, 16);
        QCOMPARE(b.callThreads(), QSet<QThread*>{QThread::currentThread()});
    }

    void scriptedRepliesAndPlaceholders() {
        FakeChatBackend b(script(R"({"token_ms": 0, "replies": [{"when": "fail", "tokens": ["x"], "error": "boom"}],)"
                                 R"( "default": {"tokens": ["No.{n}: ", "{last_user}"]}})"));
        BackendInfo info;
        QString why;
        QVERIFY(b.load(QStringLiteral(ARBOR_DEMO_MODEL_SOURCE), &info, &why));
        std::atomic<bool> cancel{false};
        QCOMPARE(generate(b, QStringLiteral("hi"), cancel).pieces.join(QString()), QStringLiteral("No.1: hi"));
        QCOMPARE(generate(b, QStringLiteral("again"), cancel).pieces.join(QString()), QStringLiteral("No.2: again"));
        const Run failed = generate(b, QStringLiteral("please fail"), cancel);
        QCOMPARE(failed.out.end, GenerationOutcome::End::Failed);
        QCOMPARE(failed.out.error, QStringLiteral("boom"));
        QCOMPARE(failed.pieces, QStringList{QStringLiteral("x")});
    }

    void stopsAtTheContext() {
        FakeChatBackend b(script(R"({"token_ms": 0, "model": {"context_length": 20}, "default": {"tokens": ["w "], "repeat": 100}})"));
        BackendInfo info;
        QString why;
        QVERIFY(b.load(QStringLiteral(ARBOR_DEMO_MODEL_SOURCE), &info, &why));
        std::atomic<bool> cancel{false};
        const Run r = generate(b, QStringLiteral("one two"), cancel);  // 6 prompt tokens
        QCOMPARE(r.out.stopReason, QStringLiteral("context-full"));
        QCOMPARE(r.out.generatedTokens, 14);
        QCOMPARE(r.out.contextUsed, 20);
    }

    void cancelWithinOneToken() {
        FakeChatBackend b(script(R"({"token_ms": 30, "default": {"tokens": ["t"], "repeat": 100}})"));
        BackendInfo info;
        QString why;
        QVERIFY(b.load(QStringLiteral(ARBOR_DEMO_MODEL_SOURCE), &info, &why));
        std::atomic<bool> cancel{false};
        QElapsedTimer t;
        t.start();
        const Run r = generate(b, QStringLiteral("go"), cancel, 3, &cancel);
        QCOMPARE(r.out.end, GenerationOutcome::End::Cancelled);
        QCOMPARE(r.pieces.size(), 3);  // nothing after the cancel
        QVERIFY(t.elapsed() < 3 * 30 + 30 + 20);
    }

    void loadFailures() {
        FakeChatBackend missing(script("{}"));
        BackendInfo info;
        QString why;
        QVERIFY(!missing.load(QStringLiteral("/nonexistent/model.gguf"), &info, &why));
        QVERIFY(why.contains(QStringLiteral("does not exist")));
        FakeChatBackend scripted(script(R"({"load_error": "out of memory, scripted"})"));
        QVERIFY(!scripted.load(QStringLiteral(ARBOR_DEMO_MODEL_SOURCE), &info, &why));
        QCOMPARE(why, QStringLiteral("out of memory, scripted"));
        QVERIFY(!scripted.isLoaded());
    }
};

QTEST_GUILESS_MAIN(TestFakeChatBackend)
#include "tst_fake_chat_backend.moc"
