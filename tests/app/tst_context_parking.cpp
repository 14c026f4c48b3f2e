// Parking and waking contexts on a conversation switch, with the real engine and the bundled
// stories260K model. The oracle for every reply is a second worker that never switched: at
// temperature 0 the reply after a switch away and back must be the same text. A sound park
// file must be woken (all its cells restored, none recomputed); a damaged, truncated, foreign
// or deleted one must fall back to prefilling, say why, and still give the same reply. And at
// the controller: each conversation keeps its model, opening one loads it, and a missing model
// file is reported in the model state.
#include "spy_wait.hpp"
#include "chat/ChatController.h"
#include "chat/EngineWorker.h"
#include "chat/StoreThread.h"
#include "engine/EngineChatBackend.h"
#include "store/ChatStore.h"
#include "store/ModelRecords.h"
#include "store/ParkRecords.h"

#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace arbor::app;

namespace {

const QString kModel = QStringLiteral(ARBOR_DEMO_MODEL_SOURCE);

GenerationParams greedy() {
    GenerationParams p;
    p.temperature = 0;
    p.maxTokens = 24;
    p.seed = 1;
    return p;
}

// One engine worker over the real model and its own store, with parking on or off.
struct Rig {
    StoreThread store;
    std::unique_ptr<EngineWorker> worker;
    QString parkDir;

    bool start(const QString& dir, bool parking, qint64 budget = qint64(64) << 20) {
        QString why;
        if (!store.open(dir + QStringLiteral("/arbor.sqlite"), &why)) {
            qWarning("%s", qPrintable(why));
            return false;
        }
        worker = std::make_unique<EngineWorker>(std::make_unique<EngineChatBackend>(QStringLiteral("cpu"), 2), &store);
        parkDir = dir + QStringLiteral("/park");
        if (parking) worker->setParking(parkDir, budget);
        worker->start();
        QSignalSpy loaded(worker.get(), &EngineWorker::modelLoaded);
        worker->requestLoad(kModel);
        return arbor::test::waitForCount(loaded, 1, 30000);
    }
    ~Rig() {
        worker.reset();
        store.stop();
    }
    qint64 conversation() {
        qint64 id = 0;
        store.runAndWait([&](StoreContext& s) { id = s.chats.createConversation(QStringLiteral("t")); });
        return id;
    }
    // Adds `user` under `parent` in `conv`, generates the reply to `turns` + user; returns its text.
    QString reply(qint64 conv, qint64* parent, QVector<ChatTurn>* turns, const QString& user) {
        qint64 u = 0, r = 0;
        store.runAndWait([&](StoreContext& s) {
            u = s.chats.addMessage(conv, *parent, QStringLiteral("user"), user);
            r = s.chats.beginReply(conv, u);
        });
        *turns += {QStringLiteral("user"), user};
        GenerateRequest req;
        req.conversationId = conv;
        req.parentId = u;
        req.replyId = r;
        req.turns = *turns;
        req.params = greedy();
        QSignalSpy done(worker.get(), &EngineWorker::generationFinished);
        worker->requestGenerate(req);
        if (!arbor::test::waitForCount(done, 1, 60000)) return QStringLiteral("<timeout>");
        const auto res = done.at(0).at(0).value<ReplyResult>();
        if (res.state != QLatin1String("complete")) return QStringLiteral("<%1: %2>").arg(res.state, res.error);
        *turns += {QStringLiteral("assistant"), res.content};
        *parent = r;
        return res.content;
    }
    ContextSwitch activate(qint64 conv, qint64 leaf, const QVector<ChatTurn>& turns) {
        QSignalSpy switched(worker.get(), &EngineWorker::contextSwitched);
        worker->requestActivate(conv, leaf, turns, greedy());
        if (!arbor::test::waitForCount(switched, 1, 30000)) return {};
        return switched.at(0).at(0).value<ContextSwitch>();
    }
    QList<ParkRef> parks() {
        QList<ParkRef> out;
        store.runAndWait([&](StoreContext& s) { out = s.parks.all(); });
        return out;
    }
};

// The reference: conversation A without any switch, two turns.
struct Reference {
    QString first, second;
};

void damage(const QString& path, const QString& how) {
    QFile f(path);
    if (how == QLatin1String("deleted")) {
        QVERIFY(f.remove());
        return;
    }
    QVERIFY(f.open(QIODevice::ReadWrite));
    const qint64 size = f.size();
    if (how == QLatin1String("truncated")) {
        QVERIFY(f.resize(size / 2));
    } else if (how == QLatin1String("kv-bytes")) {
        // A byte near the end lies in the KV cells (the last big section before END).
        QVERIFY(f.seek(size - 200));
        char c = 0;
        QVERIFY(f.getChar(&c));
        QVERIFY(f.seek(size - 200));
        QVERIFY(f.putChar(char(c ^ 0x5a)));
    } else if (how == QLatin1String("header")) {
        QVERIFY(f.seek(0));
        QVERIFY(f.write("NOTPARK!", 8) == 8);
    }
}

}  // namespace

class TestContextParking : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    int m_n = 0;
    Reference m_ref;

    QString freshDir() {
        const QString d = m_dir.filePath(QStringLiteral("p%1").arg(++m_n));
        QDir().mkpath(d);
        return d;
    }

private slots:
    void initTestCase() {
        if (!QFileInfo::exists(kModel)) QFAIL("resources/models/stories260K.gguf is missing");
        Rig rig;
        QVERIFY(rig.start(freshDir(), false));
        const qint64 a = rig.conversation();
        qint64 parent = 0;
        QVector<ChatTurn> turns;
        m_ref.first = rig.reply(a, &parent, &turns, QStringLiteral("Tell me about a cat."));
        m_ref.second = rig.reply(a, &parent, &turns, QStringLiteral("And then the dog came."));
        QVERIFY2(!m_ref.first.startsWith(QLatin1Char('<')) && !m_ref.second.startsWith(QLatin1Char('<')), qPrintable(m_ref.second));
        QVERIFY(!m_ref.second.isEmpty());
    }

    // A, then B (parks A), then back to A as the UI does: open it (wake), then send.
    void switchingAwayAndBackWakesTheContext() {
        Rig rig;
        QVERIFY(rig.start(freshDir(), true));
        const qint64 a = rig.conversation(), b = rig.conversation();
        qint64 pa = 0, pb = 0;
        QVector<ChatTurn> ta, tb;
        QCOMPARE(rig.reply(a, &pa, &ta, QStringLiteral("Tell me about a cat.")), m_ref.first);
        rig.reply(b, &pb, &tb, QStringLiteral("Once upon a time"));
        const ContextSwitch away = rig.worker->lastSwitch();  // the switch to B parked A
        QCOMPARE(away.fromConversation, a);
        QCOMPARE(away.toConversation, b);
        QVERIFY2(away.parkError.isEmpty(), qPrintable(away.parkError));
        QVERIFY(away.parkedCells > 0);
        QVERIFY(QFileInfo::exists(away.parkedFile));
        // The store refers to it from A's reply, the node the context ends at.
        const QList<ParkRef> refs = rig.parks();
        QCOMPARE(refs.size(), 1);
        QCOMPARE(refs[0].messageId, pa);
        QCOMPARE(refs[0].path, away.parkedFile);
        QCOMPARE(refs[0].bytes, QFileInfo(away.parkedFile).size());

        const ContextSwitch back = rig.activate(a, pa, ta);
        QCOMPARE(back.fromConversation, b);
        QCOMPARE(back.wokenFile, away.parkedFile);
        QVERIFY2(back.problem.isEmpty(), qPrintable(back.problem));
        QCOMPARE(back.restoredCells, away.parkedCells);
        QCOMPARE(back.recomputedCells, 0);
        QVERIFY(!back.parkedFile.isEmpty());  // B was parked on the way out
        QCOMPARE(rig.reply(a, &pa, &ta, QStringLiteral("And then the dog came.")), m_ref.second);
        QCOMPARE(rig.worker->lastSwitch().toConversation, a);  // the send did not switch again
    }

    // Park files outlive the app: a new worker on the same data folder wakes them.
    void aParkedContextWakesAfterARestart() {
        const QString dir = freshDir();
        qint64 a = 0, pa = 0;
        QVector<ChatTurn> ta;
        int parked = 0;
        {
            Rig rig;
            QVERIFY(rig.start(dir, true));
            a = rig.conversation();
            const qint64 b = rig.conversation();
            qint64 pb = 0;
            QVector<ChatTurn> tb;
            rig.reply(a, &pa, &ta, QStringLiteral("Tell me about a cat."));
            rig.reply(b, &pb, &tb, QStringLiteral("Once upon a time"));
            parked = rig.worker->lastSwitch().parkedCells;
        }
        Rig rig;
        QVERIFY(rig.start(dir, true));
        const ContextSwitch back = rig.activate(a, pa, ta);
        QVERIFY2(back.problem.isEmpty(), qPrintable(back.problem));
        QCOMPARE(back.restoredCells, parked);
        QCOMPARE(rig.reply(a, &pa, &ta, QStringLiteral("And then the dog came.")), m_ref.second);
    }

    // A context that was never switched away from is parked when the app quits.
    void theHeldContextIsParkedOnQuit() {
        const QString dir = freshDir();
        qint64 a = 0, pa = 0;
        QVector<ChatTurn> ta;
        {
            Rig rig;
            QVERIFY(rig.start(dir, true));
            a = rig.conversation();
            QCOMPARE(rig.reply(a, &pa, &ta, QStringLiteral("Tell me about a cat.")), m_ref.first);
            QVERIFY(rig.parks().isEmpty());  // nothing parked while it runs
            rig.worker->shutdown();
            const ContextSwitch quit = rig.worker->lastSwitch();
            QVERIFY2(quit.parkError.isEmpty(), qPrintable(quit.parkError));
            QVERIFY(quit.parkedCells > 0);
            QVERIFY(QFileInfo::exists(quit.parkedFile));
            QCOMPARE(rig.parks().size(), 1);
        }
        Rig rig;
        QVERIFY(rig.start(dir, true));
        const ContextSwitch back = rig.activate(a, pa, ta);
        QVERIFY2(back.problem.isEmpty(), qPrintable(back.problem));
        QVERIFY(back.restoredCells > 0);
        QCOMPARE(back.recomputedCells, 0);
        QCOMPARE(rig.reply(a, &pa, &ta, QStringLiteral("And then the dog came.")), m_ref.second);
    }

    void aBadParkFileFallsBackToPrefill_data() {
        QTest::addColumn<QString>("how");
        QTest::newRow("kv bytes flipped") << QStringLiteral("kv-bytes");
        QTest::newRow("truncated") << QStringLiteral("truncated");
        QTest::newRow("header") << QStringLiteral("header");
        QTest::newRow("deleted (evicted)") << QStringLiteral("deleted");
    }
    void aBadParkFileFallsBackToPrefill() {
        QFETCH(QString, how);
        Rig rig;
        QVERIFY(rig.start(freshDir(), true));
        const qint64 a = rig.conversation(), b = rig.conversation();
        qint64 pa = 0, pb = 0;
        QVector<ChatTurn> ta, tb;
        rig.reply(a, &pa, &ta, QStringLiteral("Tell me about a cat."));
        rig.reply(b, &pb, &tb, QStringLiteral("Once upon a time"));
        const QString file = rig.worker->lastSwitch().parkedFile;
        QVERIFY(QFileInfo::exists(file));
        damage(file, how);

        const ContextSwitch back = rig.activate(a, pa, ta);
        QCOMPARE(back.restoredCells, 0);
        QVERIFY2(!back.problem.isEmpty(), "the fallback must say why");
        QVERIFY2(back.problem.contains(file), qPrintable(back.problem));  // names the file
        QVERIFY(back.recomputedCells > 0);  // the conversation was prefilled instead
        QVERIFY(!QFileInfo::exists(file));  // a bad file is not tried again
        for (const ParkRef& r : rig.parks()) QVERIFY(r.path != file);
        QCOMPARE(rig.reply(a, &pa, &ta, QStringLiteral("And then the dog came.")), m_ref.second);
    }

    // The disk budget: with room for one file, parking the second evicts the first, and
    // waking the evicted one falls back quietly.
    void theBudgetEvictsTheLeastRecentlyUsed() {
        Rig rig;
        const QString dir = freshDir();
        QVERIFY(rig.start(dir, true, 1));  // room for no more than the file just written
        const qint64 a = rig.conversation(), b = rig.conversation(), c = rig.conversation();
        qint64 pa = 0, pb = 0, pc = 0;
        QVector<ChatTurn> ta, tb, tc;
        rig.reply(a, &pa, &ta, QStringLiteral("Tell me about a cat."));
        rig.reply(b, &pb, &tb, QStringLiteral("Once upon a time"));  // parks A
        const QString fileA = rig.worker->lastSwitch().parkedFile;
        rig.reply(c, &pc, &tc, QStringLiteral("The sun was hot."));  // parks B, evicts A
        const ContextSwitch s = rig.worker->lastSwitch();
        QVERIFY(s.evicted.contains(fileA));
        QVERIFY(!QFileInfo::exists(fileA));
        QVERIFY(QFileInfo::exists(s.parkedFile));
        const QList<ParkRef> refs = rig.parks();
        QCOMPARE(refs.size(), 1);
        QCOMPARE(refs[0].path, s.parkedFile);
        const ContextSwitch back = rig.activate(a, pa, ta);
        QCOMPARE(back.restoredCells, 0);
        QVERIFY(back.recomputedCells > 0);
        QCOMPARE(rig.reply(a, &pa, &ta, QStringLiteral("And then the dog came.")), m_ref.second);
    }

    // The controller: each conversation keeps its model; opening one loads it; a missing
    // model file is a model state with a reason; switching wakes the parked context.
    void eachConversationKeepsItsModel() {
        const QString dir = freshDir();
        const QString modelA = dir + QStringLiteral("/a.gguf"), modelB = dir + QStringLiteral("/b.gguf");
        QVERIFY(QFile::copy(kModel, modelA));
        QVERIFY(QFile::copy(kModel, modelB));
        ChatController c(nullptr);
        ControllerOptions o;
        o.dataDir = dir + QStringLiteral("/profile");
        o.telemetry = false;
        QString why;
        QVERIFY2(c.start(o, &why), qPrintable(why));
        QSignalSpy done(&c, &ChatController::replyFinished);
        auto sendAndWait = [&](const QString& text) {
            done.clear();
            QVERIFY(c.send(text));
            QVERIFY(done.wait(60000));
            QCOMPARE(done.at(0).at(1).toString(), QStringLiteral("complete"));
        };
        auto settings = c.conversationSettings().toMap();
        settings[QStringLiteral("temperature")] = 0.0;
        settings[QStringLiteral("maxTokens")] = 16;

        c.selectModel(modelA);
        QTRY_VERIFY_WITH_TIMEOUT(c.modelLoaded(), 30000);
        c.saveConversationSettings(settings);
        sendAndWait(QStringLiteral("Tell me about a cat."));
        const qint64 convA = c.conversationId();
        c.newChat();
        c.selectModel(modelB);
        QTRY_VERIFY_WITH_TIMEOUT(c.modelLoaded(), 30000);
        c.saveConversationSettings(settings);
        sendAndWait(QStringLiteral("Once upon a time"));
        const qint64 convB = c.conversationId();

        // Stored: each conversation's model path and the file's fingerprint.
        ConversationRow ra, rb;
        c.store()->runAndWait([&](StoreContext& s) {
            s.chats.conversation(convA, &ra);
            s.chats.conversation(convB, &rb);
        });
        QCOMPARE(ra.modelPath, modelA);
        QCOMPARE(rb.modelPath, modelB);
        QCOMPARE(ra.modelFingerprint, modelFingerprint(modelA, nullptr));
        QVERIFY(!ra.modelFingerprint.isEmpty());

        // Opening A loads A's model, and wakes A's context (parked when B's reply started).
        QSignalSpy switched(c.worker(), &EngineWorker::contextSwitched);
        c.openConversation(convA);
        QTRY_COMPARE_WITH_TIMEOUT(c.modelPath(), modelA, 5000);
        QTRY_VERIFY_WITH_TIMEOUT(c.modelLoaded(), 30000);
        QCOMPARE(c.worker()->info().modelPath, modelA);
        QTRY_VERIFY_WITH_TIMEOUT(c.lastContextSwitch().toConversation == convA, 30000);
        QVERIFY2(c.lastContextSwitch().restoredCells > 0, qPrintable(c.lastContextSwitch().problem));
        QVERIFY(c.contextNote().contains(QStringLiteral("woken")));

        // B's model file disappears: opening B says so, and sending is refused.
        QVERIFY(QFile::remove(modelB));
        c.openConversation(convB);
        QTRY_COMPARE_WITH_TIMEOUT(c.modelState(), QStringLiteral("error"), 5000);
        QVERIFY2(c.modelError().contains(QStringLiteral("missing")) && c.modelError().contains(modelB), qPrintable(c.modelError()));
        QVERIFY(!c.modelLoaded());
        QSignalSpy failed(&c, &ChatController::sendFailed);
        QVERIFY(!c.send(QStringLiteral("hello?")));
        QCOMPARE(failed.size(), 1);
        // Back to A: its model is there again.
        c.openConversation(convA);
        QTRY_VERIFY_WITH_TIMEOUT(c.modelLoaded(), 30000);
        QCOMPARE(c.modelPath(), modelA);
        // Nothing of this ran a database job on this (the UI) thread.
        QVERIFY(!c.store()->jobThreads().contains(QThread::currentThread()));
        c.shutdown();
    }
};

QTEST_GUILESS_MAIN(TestContextParking)
#include "tst_context_parking.moc"
