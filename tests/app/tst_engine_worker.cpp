// The engine worker over the fake backend and a real store thread: text arrives in batches of
// at most one per frame, checkpoints reach the database while a reply streams, the finished
// reply is committed before generationFinished, cancel takes effect within one token, the
// backend only ever runs on the worker thread and the database never on this (the UI) thread,
// and the context overflow policy is applied.
#include "fake_script_util.hpp"
#include "spy_wait.hpp"
#include "chat/EngineWorker.h"
#include "chat/StoreThread.h"
#include "engine/FakeChatBackend.h"
#include "store/Database.h"

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QtTest>

using namespace arbor::app;

namespace {

}  // namespace

class TestEngineWorker : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    int m_n = 0;
    std::unique_ptr<StoreThread> m_store;
    FakeChatBackend* m_fake = nullptr;
    std::unique_ptr<EngineWorker> m_worker;
    QString m_path;

    void start(const QByteArray& json) {
        m_path = m_dir.filePath(QStringLiteral("w%1.sqlite").arg(++m_n));
        m_store = std::make_unique<StoreThread>();
        QString why;
        QVERIFY2(m_store->open(m_path, &why), qPrintable(why));
        auto fake = std::make_unique<FakeChatBackend>(script(json));
        m_fake = fake.get();
        m_worker = std::make_unique<EngineWorker>(std::move(fake), m_store.get());
        m_worker->start();
        QSignalSpy loaded(m_worker.get(), &EngineWorker::modelLoaded);
        m_worker->requestLoad(QStringLiteral(ARBOR_DEMO_MODEL_SOURCE));
        QVERIFY(arbor::test::waitForCount(loaded, 1, 5000));
    }
    // A conversation with one user message and a streaming reply, committed on the store thread.
    GenerateRequest prepare(const QString& user) {
        struct Ids {
            qint64 conv, reply;
        };
        Ids ids{};
        m_store->post([&ids, user](StoreContext& s) {
            ids.conv = s.chats.createConversation(QStringLiteral("t"));
            const qint64 u = s.chats.addMessage(ids.conv, 0, QStringLiteral("user"), user);
            ids.reply = s.chats.beginReply(ids.conv, u);
        });
        m_store->waitIdle();
        GenerateRequest r;
        r.conversationId = ids.conv;
        r.replyId = ids.reply;
        r.turns = {{QStringLiteral("user"), user}};
        return r;
    }
    MessageRow stored(qint64 id) {
        MessageRow m;
        m_store->post([&m, id](StoreContext& s) { s.chats.message(id, &m); });
        m_store->waitIdle();
        return m;
    }

private slots:
    void cleanup() {
        m_worker.reset();
        m_store.reset();
    }

    void batchesPerFrameAndCommitsBeforeFinishing() {
        start(R"({"token_ms": 1, "default": {"tokens": ["ab"], "repeat": 400}})");
        QSignalSpy progress(m_worker.get(), &EngineWorker::replyProgress);
        QSignalSpy finished(m_worker.get(), &EngineWorker::generationFinished);
        const GenerateRequest req = prepare(QStringLiteral("go"));
        QElapsedTimer t;
        t.start();
        m_worker->requestGenerate(req);
        QVERIFY(arbor::test::waitForCount(finished, 1, 20000));
        const double ms = t.elapsed();
        QString text;
        for (const auto& args : progress) text += args.at(0).value<ReplyProgress>().contentDelta;
        QCOMPARE(text, QString(QStringLiteral("ab")).repeated(400));
        // At most one batch per 16 ms (plus the first and the last).
        qInfo("%lld batches for 400 tokens in %.0f ms", qlonglong(progress.size()), ms);
        QVERIFY2(progress.size() <= ms / 16 + 3, qPrintable(QString::number(progress.size())));
        QVERIFY(progress.size() < 200);
        const ReplyResult res = finished.at(0).at(0).value<ReplyResult>();
        QCOMPARE(res.state, QStringLiteral("complete"));
        QCOMPARE(res.stats.tokenCount, 400);
        QVERIFY(res.stats.decodeTokS > 0);
        // The finish was queued to the store before the signal: the next job sees it.
        const MessageRow m = stored(req.replyId);
        QCOMPARE(m.state, QStringLiteral("complete"));
        QCOMPARE(m.content, text);
        QCOMPARE(m.stats.tokenCount, 400);
        QCOMPARE(m.stats.backend, QStringLiteral("fake · scripted"));
        // Threads: the backend only on the worker, the database never here.
        QCOMPARE(m_fake->callThreads(), QSet<QThread*>{m_worker.get()});
        QVERIFY(!m_store->jobThreads().contains(QThread::currentThread()));
        QCOMPARE(m_store->jobThreads(), QSet<QThread*>{m_store.get()});
    }

    void flowControlWaitsForTheUi() {
        start(R"({"token_ms": 1, "default": {"tokens": ["ab"], "repeat": 300}})");
        m_worker->setFlowControl(true);
        QSignalSpy progress(m_worker.get(), &EngineWorker::replyProgress);
        QSignalSpy finished(m_worker.get(), &EngineWorker::generationFinished);
        const GenerateRequest req = prepare(QStringLiteral("go"));
        m_worker->requestGenerate(req);
        QVERIFY(arbor::test::waitForCount(finished, 1, 20000));
        // Never acknowledged: the first batch, then everything else in the last one.
        QCOMPARE(progress.size(), 2);
        QCOMPARE(progress.at(1).at(0).value<ReplyProgress>().contentDelta.size(), 600 - progress.at(0).at(0).value<ReplyProgress>().contentDelta.size());
        // Acknowledged as they come: batches flow again, nothing is lost.
        progress.clear();
        connect(m_worker.get(), &EngineWorker::replyProgress, this, [this] { m_worker->acknowledgeProgress(); });
        const GenerateRequest again = prepare(QStringLiteral("go"));
        m_worker->requestGenerate(again);
        QVERIFY(arbor::test::waitForCount(finished, 2, 20000));
        QString text;
        for (const auto& args : progress) text += args.at(0).value<ReplyProgress>().contentDelta;
        QCOMPARE(text.size(), 600);
        QVERIFY(progress.size() > 2);
    }

    void checkpointsWhileStreaming() {
        start(R"({"token_ms": 10, "default": {"tokens": ["x"], "repeat": 120}})");
        m_worker->setCheckpointIntervalMs(200);
        QSignalSpy finished(m_worker.get(), &EngineWorker::generationFinished);
        const GenerateRequest req = prepare(QStringLiteral("go"));
        m_worker->requestGenerate(req);
        // Read the row from a separate connection, as a crash-and-reopen would.
        Database reader;
        QVERIFY(reader.open(m_path, QStringLiteral("reader")));
        QSet<int> seen;
        while (finished.isEmpty()) {
            QSqlQuery q(reader.handle());
            q.prepare(QStringLiteral("SELECT length(content), state FROM messages WHERE id=?"));
            q.addBindValue(req.replyId);
            if (q.exec() && q.next() && q.value(1).toString() == QLatin1String("streaming")) seen.insert(q.value(0).toInt());
            finished.wait(20);
        }
        seen.remove(0);
        qInfo("checkpoints seen: %lld", qlonglong(seen.size()));
        QVERIFY2(seen.size() >= 3, "a 1.2 s reply with 200 ms checkpoints is saved several times while streaming");
        QCOMPARE(stored(req.replyId).content.size(), 120);
    }

    void cancelWithinOneToken() {
        start(R"({"token_ms": 40, "default": {"tokens": ["t"], "repeat": 200}})");
        QSignalSpy progress(m_worker.get(), &EngineWorker::replyProgress);
        QSignalSpy finished(m_worker.get(), &EngineWorker::generationFinished);
        const GenerateRequest req = prepare(QStringLiteral("go"));
        m_worker->requestGenerate(req);
        QTRY_VERIFY_WITH_TIMEOUT(!progress.isEmpty() && progress.last().at(0).value<ReplyProgress>().generatedTokens >= 3, 5000);
        QElapsedTimer t;
        t.start();
        m_worker->cancel(req.replyId);
        QVERIFY(arbor::test::waitForCount(finished, 1, 5000));
        const qint64 ms = t.elapsed();
        const ReplyResult res = finished.at(0).at(0).value<ReplyResult>();
        qInfo("cancel took %lld ms (a token takes 40 ms)", ms);
        QVERIFY2(ms < 40 + 40, qPrintable(QString::number(ms)));
        QCOMPARE(res.state, QStringLiteral("interrupted"));
        QCOMPARE(res.stats.stopReason, QStringLiteral("cancelled"));
        const MessageRow m = stored(req.replyId);
        QCOMPARE(m.state, QStringLiteral("interrupted"));
        QCOMPARE(m.content, res.content);
        QVERIFY(m.content.size() >= 3);
    }

    void cancelBeforeItStarts() {
        start(R"({"token_ms": 40, "default": {"tokens": ["t"], "repeat": 50}})");
        QSignalSpy finished(m_worker.get(), &EngineWorker::generationFinished);
        const GenerateRequest a = prepare(QStringLiteral("first")), b = prepare(QStringLiteral("second"));
        m_worker->requestGenerate(a);
        m_worker->requestGenerate(b);
        m_worker->cancel(b.replyId);  // queued, not started
        m_worker->cancel(a.replyId);
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 2, 5000);
        QCOMPARE(finished.at(1).at(0).value<ReplyResult>().stats.tokenCount, 0);
        QCOMPARE(stored(b.replyId).state, QStringLiteral("interrupted"));
    }

    void overflowPolicies() {
        start(R"({"token_ms": 0, "model": {"context_length": 64}, "default": {"tokens": ["ok"]}})");
        QSignalSpy ready(m_worker.get(), &EngineWorker::promptReady);
        QSignalSpy finished(m_worker.get(), &EngineWorker::generationFinished);
        GenerateRequest req = prepare(QStringLiteral("last"));
        const QString words = QStringLiteral("a b c d e f g h i j k l m n o p q r s t");
        req.turns = {{QStringLiteral("system"), QStringLiteral("be brief")}};
        for (int i = 0; i < 4; ++i) req.turns += {{QStringLiteral("user"), words}, {QStringLiteral("assistant"), words}};
        req.turns += {QStringLiteral("user"), QStringLiteral("last")};
        req.policy = ContextPolicy::KeepNewest;
        m_worker->requestGenerate(req);
        QVERIFY(arbor::test::waitForCount(finished, 1, 5000));
        QCOMPARE(finished.at(0).at(0).value<ReplyResult>().state, QStringLiteral("complete"));
        const int dropped = ready.at(0).at(3).toInt();
        QVERIFY2(dropped >= 6, qPrintable(QString::number(dropped)));  // 64 - 16 reserve leaves room for ~2 exchanges
        QVERIFY(ready.at(0).at(1).toInt() <= 48);

        GenerateRequest refused = prepare(QStringLiteral("again"));
        refused.turns = req.turns;
        refused.policy = ContextPolicy::Refuse;
        m_worker->requestGenerate(refused);
        QVERIFY(arbor::test::waitForCount(finished, 2, 5000));
        const ReplyResult res = finished.at(1).at(0).value<ReplyResult>();
        QCOMPARE(res.state, QStringLiteral("error"));
        QVERIFY(res.stats.stopReason.startsWith(QStringLiteral("context-overflow")));
        QVERIFY(res.error.contains(QStringLiteral("context")));
    }

    void recordsContentionAndReasoning() {
        start(R"({"token_ms": 0, "default": {"tokens": ["<think>", "hmm", "</think>", "yes"]}})");
        m_worker->setContentionSource([] { return QStringLiteral("cpu-busy"); });
        QSignalSpy finished(m_worker.get(), &EngineWorker::generationFinished);
        const GenerateRequest req = prepare(QStringLiteral("q"));
        m_worker->requestGenerate(req);
        QVERIFY(arbor::test::waitForCount(finished, 1, 5000));
        const MessageRow m = stored(req.replyId);
        QCOMPARE(m.content, QStringLiteral("yes"));
        QCOMPARE(m.reasoning, QStringLiteral("hmm"));
        QCOMPARE(m.stats.contention, QStringLiteral("cpu-busy"));
    }

    void shutdownFinishesTheReplyAsInterrupted() {
        start(R"({"token_ms": 20, "default": {"tokens": ["t"], "repeat": 1000}})");
        QSignalSpy progress(m_worker.get(), &EngineWorker::replyProgress);
        const GenerateRequest req = prepare(QStringLiteral("go"));
        m_worker->requestGenerate(req);
        QTRY_VERIFY_WITH_TIMEOUT(!progress.isEmpty(), 5000);
        m_worker.reset();  // the app quits mid-reply
        const MessageRow m = stored(req.replyId);
        QCOMPARE(m.state, QStringLiteral("interrupted"));
        QVERIFY(!m.content.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestEngineWorker)
#include "tst_engine_worker.moc"
