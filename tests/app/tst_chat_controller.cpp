// ChatController end to end without QML, over the fake engine: send, stream, stop, edit into
// a branch, regenerate, delete and undo, settings, recovery after a crash, --demo; and the
// rule that no engine call and no database job ever runs on the UI thread.
#include "chat/ChatController.h"
#include "engine/FakeChatBackend.h"
#include "store/ChatStore.h"
#include "store/Database.h"

#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace arbor::app;

class TestChatController : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    int m_n = 0;
    QString m_script;

    std::unique_ptr<ChatController> make(const QString& dataDir, bool demo = true, const QString& script = {}) {
        auto c = std::make_unique<ChatController>(nullptr);
        ControllerOptions o;
        o.dataDir = dataDir;
        o.fakeScriptPath = script.isEmpty() ? m_script : script;
        o.demoModelPath = QStringLiteral(ARBOR_DEMO_MODEL_SOURCE);
        o.demo = demo;
        o.telemetry = false;
        QString why;
        if (!c->start(o, &why)) qWarning("start failed: %s", qPrintable(why));
        return c;
    }
    QString freshDir() { return m_dir.filePath(QStringLiteral("profile%1").arg(++m_n)); }
    static bool waitReply(ChatController& c) {
        QSignalSpy done(&c, &ChatController::replyFinished);
        return done.wait(10000);
    }
    static QString textAt(ChatController& c, int row) {
        return c.messages()->data(c.messages()->index(row), ChatPathModel::MessageTextRole).toString();
    }

private slots:
    void initTestCase() {
        m_script = m_dir.filePath(QStringLiteral("script.json"));
        QFile f(m_script);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"token_ms": 2, "replies": [)"
                R"({"when": "slow", "tokens": ["s"], "repeat": 500, "token_ms": 20},)"
                R"({"when": "fail", "tokens": ["partial"], "error": "scripted failure"}],)"
                R"("default": {"tokens": ["Reply ", "{n}", ": ", "{last_user}"]}})");
    }

    void sendStreamsAndStores() {
        auto c = make(freshDir());
        QTRY_VERIFY(c->modelLoaded());
        QCOMPARE(c->modelPath(), QStringLiteral(ARBOR_DEMO_MODEL_SOURCE));  // --demo selects the bundled model
        QSignalSpy generating(c.get(), &ChatController::generatingChanged);
        QVERIFY(c->send(QStringLiteral("hello there")));
        QVERIFY(c->generating());
        QVERIFY(!c->send(QStringLiteral("a second one while busy")));
        QVERIFY(waitReply(*c));
        QVERIFY(!c->generating());
        QTRY_COMPARE(c->messages()->rowCount(), 2);
        QCOMPARE(textAt(*c, 1), QStringLiteral("Reply 1: hello there"));
        QVERIFY(c->conversationId() > 0);
        QCOMPARE(c->conversationTitle(), QStringLiteral("hello there"));
        QTRY_COMPARE(c->conversations()->rowCount(), 1);
        QVERIFY(c->decodeTokS() > 0);
        QVERIFY(c->contextUsed() > 0);
        // No database job on this (the UI) thread; the backend only on the worker.
        QVERIFY(!c->store()->jobThreads().contains(QThread::currentThread()));
        QCOMPARE(c->store()->jobThreads(), QSet<QThread*>{c->store()});
        auto* fake = static_cast<FakeChatBackend*>(c->worker()->backend());
        QCOMPARE(fake->callThreads(), QSet<QThread*>{c->worker()});
    }

    void stopKeepsThePartialReply() {
        auto c = make(freshDir());
        QTRY_VERIFY(c->modelLoaded());
        QVERIFY(c->send(QStringLiteral("slow please")));
        QTRY_VERIFY(c->messages()->rowCount() == 2 && textAt(*c, 1).size() >= 3);
        c->stop();
        QVERIFY(waitReply(*c));
        QTRY_COMPARE(c->messages()->data(c->messages()->index(1), ChatPathModel::MessageStateRole).toString(), QStringLiteral("interrupted"));
        QVERIFY(textAt(*c, 1).size() < 500);
    }

    void editAndRegenerateMakeSiblings() {
        auto c = make(freshDir());
        QTRY_VERIFY(c->modelLoaded());
        QVERIFY(c->send(QStringLiteral("first")));
        QVERIFY(waitReply(*c));
        QTRY_COMPARE(c->messages()->rowCount(), 2);
        c->editMessage(0, QStringLiteral("second"));
        QVERIFY(waitReply(*c));
        QTRY_COMPARE(textAt(*c, 0), QStringLiteral("second"));
        QCOMPARE(c->messages()->data(c->messages()->index(0), ChatPathModel::SiblingCountRole).toInt(), 2);
        QTRY_COMPARE(textAt(*c, 1), QStringLiteral("Reply 2: second"));
        c->regenerate(1);
        QVERIFY(waitReply(*c));
        QTRY_COMPARE(textAt(*c, 1), QStringLiteral("Reply 3: second"));
        QCOMPARE(c->messages()->data(c->messages()->index(1), ChatPathModel::SiblingIndexRole).toInt(), 1);
        c->switchLastBranch(-1);
        QTRY_COMPARE(textAt(*c, 1), QStringLiteral("Reply 2: second"));
        c->switchSibling(0, -1);
        QTRY_COMPARE(textAt(*c, 0), QStringLiteral("first"));
        QTRY_COMPARE(textAt(*c, 1), QStringLiteral("Reply 1: first"));
        // Five messages, nothing overwritten.
        int count = 0;
        c->store()->post([&count](StoreContext& s) { count = int(s.chats.conversations().size()); });
        c->store()->waitIdle();
        QCOMPARE(count, 1);
    }

    void failureBecomesANotice() {
        auto c = make(freshDir());
        QTRY_VERIFY(c->modelLoaded());
        QVERIFY(c->send(QStringLiteral("please fail")));
        QVERIFY(waitReply(*c));
        QVERIFY(c->notice().contains(QStringLiteral("scripted failure")));
        QTRY_COMPARE(c->messages()->data(c->messages()->index(1), ChatPathModel::MessageStateRole).toString(), QStringLiteral("error"));
    }

    void deleteUndoAndPurgeAtQuit() {
        const QString dir = freshDir();
        qint64 kept = 0, purged = 0;
        {
            auto c = make(dir);
            QTRY_VERIFY(c->modelLoaded());
            QVERIFY(c->send(QStringLiteral("keep me")));
            QVERIFY(waitReply(*c));
            kept = c->conversationId();
            c->newChat();
            QVERIFY(c->send(QStringLiteral("drop me")));
            QVERIFY(waitReply(*c));
            purged = c->conversationId();
            QTRY_COMPARE(c->conversations()->rowCount(), 2);
            c->deleteConversation(kept);
            QCOMPARE(c->undoTitle(), QStringLiteral("keep me"));
            QTRY_COMPARE(c->conversations()->rowCount(), 1);
            c->undoDelete();
            QTRY_COMPARE(c->conversations()->rowCount(), 2);
            QCOMPARE(c->conversationId(), kept);
            QVERIFY(c->undoTitle().isEmpty());
            c->deleteConversation(purged);
            QTRY_COMPARE(c->conversations()->rowCount(), 1);
        }  // quitting purges the soft-deleted conversation
        Database db;
        QVERIFY(db.open(dir + QStringLiteral("/arbor.sqlite"), QStringLiteral("check")));
        ChatStore s(db.handle());
        ConversationRow row;
        QVERIFY(s.conversation(kept, &row));
        QVERIFY(!s.conversation(purged, &row));
    }

    void settingsReachTheConversation() {
        auto c = make(freshDir());
        QTRY_VERIFY(c->modelLoaded());
        QVariantMap m = c->conversationSettings().toMap();
        QCOMPARE(m.value(QStringLiteral("seed")).toInt(), -1);
        m[QStringLiteral("systemPrompt")] = QStringLiteral("Answer in French.");
        m[QStringLiteral("temperature")] = 0.2;
        m[QStringLiteral("seed")] = 7;
        c->saveConversationSettings(m);  // a draft: kept until the chat exists
        QVERIFY(c->send(QStringLiteral("bonjour")));
        QVERIFY(waitReply(*c));
        ConversationRow row;
        const qint64 id = c->conversationId();
        c->store()->post([&row, id](StoreContext& s) { s.chats.conversation(id, &row); });
        c->store()->waitIdle();
        QCOMPARE(row.systemPrompt, QStringLiteral("Answer in French."));
        QVERIFY(row.samplerJson.contains(QStringLiteral("\"seed\":7")));
        QCOMPARE(c->conversationSettings().toMap().value(QStringLiteral("temperature")).toDouble(), 0.2);
    }

    void recoversARunThatDied() {
        const QString dir = freshDir();
        QDir().mkpath(dir);
        {
            Database db;
            QVERIFY(db.open(dir + QStringLiteral("/arbor.sqlite"), QStringLiteral("crash")));
            ChatStore s(db.handle());
            const qint64 conv = s.createConversation(QStringLiteral("died"));
            const qint64 reply = s.beginReply(conv, s.addMessage(conv, 0, QStringLiteral("user"), QStringLiteral("q")));
            s.checkpointReply(reply, QStringLiteral("half a"), {});
        }
        auto c = make(dir, false);
        QVERIFY(c->notice().contains(QStringLiteral("interrupted")));
        QTRY_COMPARE(c->conversations()->rowCount(), 1);
        c->openConversation(c->conversations()->idAt(0));
        QTRY_COMPARE(c->messages()->rowCount(), 2);
        QCOMPARE(c->messages()->data(c->messages()->index(1), ChatPathModel::MessageStateRole).toString(), QStringLiteral("interrupted"));
        QCOMPARE(textAt(*c, 1), QStringLiteral("half a"));
    }

    void rejectsWithoutAModel() {
        auto c = make(freshDir(), false);
        QCOMPARE(c->modelState(), QStringLiteral("none"));
        QVERIFY(c->composerHint().startsWith(QStringLiteral("Load a model")));
        QSignalSpy failed(c.get(), &ChatController::sendFailed);
        QVERIFY(!c->send(QStringLiteral("hello?")));
        QCOMPARE(failed.size(), 1);
        ChatController inert(nullptr);  // what QML gets without a prepared controller
        QVERIFY(!inert.ready());
        QVERIFY(!inert.send(QStringLiteral("x")));
        inert.deleteConversation(1);
        inert.importFiles({});
    }

    void badScriptIsAStartError() {
        const QString bad = m_dir.filePath(QStringLiteral("bad.json"));
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"token_ms": "fast"})");
        f.close();
        ChatController c(nullptr);
        ControllerOptions o;
        o.dataDir = freshDir();
        o.fakeScriptPath = bad;
        o.telemetry = false;
        QString why;
        QVERIFY(!c.start(o, &why));
        QVERIFY2(why.contains(QStringLiteral("script.token_ms")), qPrintable(why));
    }

    void demoFlagThroughTheBinary() {
        // `arbor --demo` (here with the fake engine and a screenshot to end the run) opens with
        // the bundled model selected: it is the remembered default afterwards.
        const QString dir = freshDir();
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(ARBOR_GUI_BINARY), {QStringLiteral("--demo"), QStringLiteral("--fake-engine"), m_script,
                                                     QStringLiteral("--data-dir"), dir, QStringLiteral("--screenshot"),
                                                     m_dir.filePath(QStringLiteral("demo.png"))});
        QVERIFY(p.waitForFinished(60000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        QSettings s(dir + QStringLiteral("/settings.ini"), QSettings::IniFormat);
        QCOMPARE(s.value(QStringLiteral("models/default")).toString(), QStringLiteral(ARBOR_DEMO_MODEL_SOURCE));
    }
};

QTEST_GUILESS_MAIN(TestChatController)
#include "tst_chat_controller.moc"
