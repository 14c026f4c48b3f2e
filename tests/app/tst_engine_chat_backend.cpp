// The real engine behind the chat, with the bundled stories260K model: the backend streams the
// same text as `arbor-cli run --chat` for the same prompt and seed (the oracle), reuses the KV
// cells of a shared prefix, stops on a cancel; and the whole app path (controller, store
// thread, engine worker, real engine) stores a non-empty reply in the database.
#include "chat/ChatController.h"
#include "engine/EngineChatBackend.h"
#include "store/ChatStore.h"
#include "store/Database.h"

#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace arbor::app;

namespace {

const QString kModel = QStringLiteral(ARBOR_DEMO_MODEL_SOURCE);

struct Reply {
    GenerationOutcome out;
    QString text;
    PromptFacts facts;
};

Reply run(EngineChatBackend& b, const QVector<ChatTurn>& turns, const GenerationParams& p, int cancelAfter = -1) {
    Reply r;
    std::atomic<bool> cancel{false};
    int pieces = 0;
    r.out = b.generate(turns, p, cancel, [&](const PromptFacts& f) { r.facts = f; },
                       [&](const QString& piece) {
                           r.text += piece;
                           if (++pieces == cancelAfter) cancel = true;
                           return true;
                       });
    return r;
}

}  // namespace

class TestEngineChatBackend : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void initTestCase() {
        if (!QFileInfo::exists(kModel)) QFAIL("resources/models/stories260K.gguf is missing");
    }

    void matchesArborCliRun() {
        EngineChatBackend b(QStringLiteral("cpu"), 0);
        BackendInfo info;
        QString why;
        QVERIFY2(b.load(kModel, &info, &why), qPrintable(why));
        QCOMPARE(info.backend, QStringLiteral("cpu"));
        QCOMPARE(info.architecture, QStringLiteral("llama"));
        QVERIFY(info.contextLength > 0);
        QVERIFY(!info.gpuNote.isEmpty());  // says why no GPU is used
        GenerationParams p;
        p.seed = 42;
        p.maxTokens = 48;
        const Reply r = run(b, {{QStringLiteral("user"), QStringLiteral("Once upon a time")}}, p);
        QVERIFY2(r.out.end == GenerationOutcome::End::Finished, qPrintable(r.out.error));
        QVERIFY(r.out.generatedTokens > 0);
        QVERIFY(r.facts.promptTokens > 0);

        const QString cli = qEnvironmentVariable("ARBOR_CLI");
        if (cli.isEmpty() || !QFileInfo::exists(cli)) {
            if (qEnvironmentVariable("CI") == QLatin1String("true")) QFAIL("ARBOR_CLI is needed in CI");
            QSKIP("arbor-cli is not built: the comparison with `arbor-cli run` is skipped");
        }
        QProcess proc;
        proc.start(cli, {QStringLiteral("run"), QStringLiteral("-m"), kModel, QStringLiteral("-p"), QStringLiteral("Once upon a time"),
                         QStringLiteral("--chat"), QStringLiteral("--seed"), QStringLiteral("42"), QStringLiteral("-n"), QStringLiteral("48")});
        QVERIFY(proc.waitForFinished(60000));
        QVERIFY2(proc.exitCode() == 0, proc.readAllStandardError().constData());
        const QString expect = QString::fromUtf8(proc.readAllStandardOutput());
        QCOMPARE(r.text, expect);
    }

    void reusesTheSharedPrefix() {
        EngineChatBackend b(QStringLiteral("auto"), 0);
        BackendInfo info;
        QString why;
        QVERIFY(b.load(kModel, &info, &why));
        GenerationParams p;
        p.seed = 1;
        p.maxTokens = 16;
        QVector<ChatTurn> turns{{QStringLiteral("user"), QStringLiteral("Tell me about a cat.")}};
        const Reply first = run(b, turns, p);
        QCOMPARE(first.facts.reusedTokens, 0);
        turns += {{QStringLiteral("assistant"), first.text}, {QStringLiteral("user"), QStringLiteral("And a dog?")}};
        const Reply second = run(b, turns, p);
        QVERIFY2(second.facts.reusedTokens >= first.facts.promptTokens - 1,
                 qPrintable(QStringLiteral("%1 of %2").arg(second.facts.reusedTokens).arg(first.facts.promptTokens)));
        // The same prompt and seed again: only the last prompt token is fed, the text is the same.
        const Reply again = run(b, turns, p);
        QCOMPARE(again.facts.reusedTokens, again.facts.promptTokens - 1);
        QCOMPARE(again.text, second.text);
        QCOMPARE(b.promptTokens(turns, p, &why), second.facts.promptTokens);
    }

    void cancelStopsAtOnce() {
        EngineChatBackend b(QStringLiteral("cpu"), 1);
        BackendInfo info;
        QString why;
        QVERIFY(b.load(kModel, &info, &why));
        GenerationParams p;
        p.seed = 3;
        p.maxTokens = 200;
        const Reply r = run(b, {{QStringLiteral("user"), QStringLiteral("Once")}}, p, 5);
        if (r.out.end == GenerationOutcome::End::Finished) QSKIP("the model ended its reply within 5 tokens");
        QCOMPARE(r.out.end, GenerationOutcome::End::Cancelled);
        QCOMPARE(r.out.generatedTokens, 5);
    }

    void loadErrorsNameTheFile() {
        EngineChatBackend b(QStringLiteral("cpu"), 0);
        BackendInfo info;
        QString why;
        const QString bad = m_dir.filePath(QStringLiteral("bad.gguf"));
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("GGUF but not really");
        f.close();
        QVERIFY(!b.load(bad, &info, &why));
        QVERIFY2(why.contains(QStringLiteral("bad.gguf")), qPrintable(why));
        QVERIFY(!b.isLoaded());
    }

    void theAppStoresARealReply() {
        ChatController c(nullptr);
        ControllerOptions o;
        o.dataDir = m_dir.filePath(QStringLiteral("profile"));
        o.demoModelPath = kModel;
        o.demo = true;  // the real engine: no fake script
        QString why;
        QVERIFY2(c.start(o, &why), qPrintable(why));
        QTRY_VERIFY_WITH_TIMEOUT(c.modelState() != QLatin1String("loading") && c.modelState() != QLatin1String("none"), 30000);
        QVERIFY2(c.modelLoaded(), qPrintable(c.modelError()));
        QVERIFY(c.backendText().startsWith(QStringLiteral("cpu")));
        QVariantMap settings = c.conversationSettings().toMap();
        settings[QStringLiteral("maxTokens")] = 40;
        settings[QStringLiteral("seed")] = 5;
        c.saveConversationSettings(settings);
        QSignalSpy done(&c, &ChatController::replyFinished);
        QVERIFY(c.send(QStringLiteral("Once upon a time there was a little fox.")));
        QVERIFY(done.wait(60000));
        QCOMPARE(done.at(0).at(1).toString(), QStringLiteral("complete"));
        const qint64 reply = done.at(0).at(0).toLongLong();
        MessageRow m;
        c.store()->post([&m, reply](StoreContext& s) { s.chats.message(reply, &m); });
        c.store()->waitIdle();
        QVERIFY2(!m.content.trimmed().isEmpty(), "the stored reply is empty");
        QCOMPARE(m.state, QStringLiteral("complete"));
        QVERIFY(m.stats.tokenCount > 0 && m.stats.tokenCount <= 40);
        QVERIFY(m.stats.decodeTokS > 0);
        QVERIFY(m.stats.backend.startsWith(QStringLiteral("cpu")));
        QVERIFY(!m.stats.contention.isEmpty());  // the telemetry label at the time
        QVERIFY(!c.store()->jobThreads().contains(QThread::currentThread()));
        QTRY_COMPARE(c.messages()->rowCount(), 2);
        QCOMPARE(c.messages()->data(c.messages()->index(1), ChatPathModel::MessageTextRole).toString(), m.content);
        qInfo("stories260K replied %d tokens at %.0f tok/s: %s", m.stats.tokenCount, m.stats.decodeTokS, qPrintable(m.content.left(80)));
    }
};

QTEST_GUILESS_MAIN(TestEngineChatBackend)
#include "tst_engine_chat_backend.moc"
