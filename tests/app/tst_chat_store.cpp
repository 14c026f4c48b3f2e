// The chat tree store: branches never overwrite, active paths, search, soft delete, recovery,
// export and import.
#include "store/ChatStore.h"
#include "store/Database.h"

#include <QJsonArray>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QtTest>

using namespace arbor::app;

class TestChatStore : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    Database m_db;
    ChatStore* m_store = nullptr;

private slots:
    void init() {
        static int n = 0;
        QVERIFY(m_db.open(m_dir.filePath(QStringLiteral("db%1.sqlite").arg(++n))));
        m_store = new ChatStore(m_db.handle());
    }
    void cleanup() {
        delete m_store;
        m_db.close();
    }

    void branchesNeverOverwrite() {
        ChatStore& s = *m_store;
        const qint64 c = s.createConversation("trees");
        const qint64 u1 = s.addMessage(c, 0, "user", "hello");
        const qint64 a1 = s.beginReply(c, u1);
        QVERIFY(s.finishReply(a1, "hi there", {}, "complete", {}));
        auto path = s.activePath(c);
        QCOMPARE(path.size(), 2);
        QCOMPARE(path[1].content, QStringLiteral("hi there"));
        // Regenerate: a sibling reply; the first one is still there.
        const qint64 a2 = s.beginReply(c, u1);
        QVERIFY(s.finishReply(a2, "hello!", {}, "complete", {}));
        path = s.activePath(c);
        QCOMPARE(path[1].id, a2);
        QCOMPARE(path[1].siblingCount, 2);
        QCOMPARE(path[1].siblingIndex, 1);
        // Edit the first user message: a sibling root with its own reply.
        const qint64 u2 = s.addMessage(c, 0, "user", "hello, edited");
        const qint64 a3 = s.beginReply(c, u2);
        QVERIFY(s.finishReply(a3, "edited reply", {}, "complete", {}));
        path = s.activePath(c);
        QCOMPARE(path.size(), 2);
        QCOMPARE(path[0].content, QStringLiteral("hello, edited"));
        QCOMPARE(path[0].siblingCount, 2);
        // Switch back: the old branch, with its active reply, is intact.
        QVERIFY(s.activate(u1));
        path = s.activePath(c);
        QCOMPARE(path[0].id, u1);
        QCOMPARE(path[1].id, a2);
        QVERIFY(s.activate(a1));
        QCOMPARE(s.activePath(c)[1].content, QStringLiteral("hi there"));
        QSqlQuery q(m_db.handle());
        QVERIFY(q.exec("SELECT count(*) FROM messages") && q.next());
        QCOMPARE(q.value(0).toInt(), 5);
    }

    void streamingCheckpointsAndRecovery() {
        ChatStore& s = *m_store;
        const qint64 c = s.createConversation("stream");
        const qint64 u = s.addMessage(c, 0, "user", "tell me");
        const qint64 a = s.beginReply(c, u);
        MessageRow m;
        QVERIFY(s.message(a, &m));
        QCOMPARE(m.state, QStringLiteral("streaming"));
        QVERIFY(s.checkpointReply(a, "Once upon", ""));
        QCOMPARE(s.recoverInterrupted(), 1);
        QVERIFY(s.message(a, &m));
        QCOMPARE(m.state, QStringLiteral("interrupted"));
        QCOMPARE(m.content, QStringLiteral("Once upon"));
        // A finished reply keeps its stats.
        const qint64 b = s.beginReply(c, u);
        GenerationStats st;
        st.decodeTokS = 42.5;
        st.ttftMs = 12;
        st.backend = "cpu";
        st.stopReason = "eog";
        st.contention = "quiet";
        QVERIFY(s.finishReply(b, "done", "thinking", "complete", st));
        QVERIFY(s.message(b, &m));
        QCOMPARE(m.stats.decodeTokS, 42.5);
        QCOMPARE(m.reasoning, QStringLiteral("thinking"));
        QCOMPARE(m.stats.contention, QStringLiteral("quiet"));
    }

    void searchDeleteUndoPurge() {
        ChatStore& s = *m_store;
        const qint64 a = s.createConversation("Cooking");
        s.addMessage(a, 0, "user", "how do I bake sourdough bread");
        const qint64 b = s.createConversation("Travel");
        s.addMessage(b, 0, "user", "trains from Paris to Rome");
        QCOMPARE(s.conversations().size(), 2);
        QCOMPARE(s.conversations("sourd").size(), 1);      // prefix match in message text
        QCOMPARE(s.conversations("sourd")[0].id, a);
        QCOMPARE(s.conversations("trav").size(), 1);       // title match
        QCOMPARE(s.conversations("nothing here").size(), 0);
        QCOMPARE(s.conversations("\"quote").size(), 0);     // odd input is not an error
        QVERIFY(s.setPinned(a, true));
        QCOMPARE(s.conversations()[0].id, a);              // pinned first
        QVERIFY(s.softDelete(a));
        QCOMPARE(s.conversations().size(), 1);
        QVERIFY(s.undoDelete(a));
        QCOMPARE(s.conversations().size(), 2);
        QVERIFY(s.softDelete(a));
        QCOMPARE(s.purgeDeleted(), 1);
        QSqlQuery q(m_db.handle());
        QVERIFY(q.exec("SELECT count(*) FROM messages") && q.next());
        QCOMPARE(q.value(0).toInt(), 1);
        QVERIFY(q.exec("PRAGMA foreign_key_check") && !q.next());
    }

    void exportImportRoundTrip() {
        ChatStore& s = *m_store;
        const qint64 c = s.createConversation("Export me", {}, "be brief");
        const qint64 u = s.addMessage(c, 0, "user", "héllo ✓");
        const qint64 a1 = s.beginReply(c, u);
        s.finishReply(a1, "one", {}, "complete", {});
        const qint64 a2 = s.beginReply(c, u);
        s.finishReply(a2, "two", "hmm", "complete", {});
        s.activate(a1);
        const QJsonObject doc = s.exportConversation(c);
        QCOMPARE(doc["messages"].toArray().size(), 3);
        QString why;
        const qint64 c2 = s.importConversation(doc, &why);
        QVERIFY2(c2 > 0, qPrintable(why));
        const auto p1 = s.activePath(c), p2 = s.activePath(c2);
        QCOMPARE(p2.size(), p1.size());
        for (int i = 0; i < p1.size(); ++i) {
            QCOMPARE(p2[i].content, p1[i].content);
            QCOMPARE(p2[i].siblingCount, p1[i].siblingCount);
        }
        const QString md = s.exportMarkdown(c);
        QVERIFY(md.startsWith("# Export me"));
        QVERIFY(md.contains("héllo ✓"));
        QVERIFY(md.contains("one") && !md.contains("two"));
    }

    void importRejectsMalformedWithoutWriting_data() {
        QTest::addColumn<QByteArray>("json");
        QTest::newRow("wrong format") << QByteArray(R"({"format":"x","version":1,"messages":[]})");
        QTest::newRow("bad role") << QByteArray(R"({"format":"arbor-conversation","version":1,"messages":[{"id":1,"role":"robot","content":""}]})");
        QTest::newRow("dangling parent") << QByteArray(R"({"format":"arbor-conversation","version":1,"messages":[{"id":1,"parent":7,"role":"user","content":"x"}]})");
        QTest::newRow("duplicate id") << QByteArray(R"({"format":"arbor-conversation","version":1,"messages":[{"id":1,"role":"user","content":"x"},{"id":1,"role":"user","content":"y"}]})");
        QTest::newRow("no content") << QByteArray(R"({"format":"arbor-conversation","version":1,"messages":[{"id":1,"role":"user"}]})");
        QTest::newRow("future version") << QByteArray(R"({"format":"arbor-conversation","version":9,"messages":[]})");
    }
    void importRejectsMalformedWithoutWriting() {
        QFETCH(QByteArray, json);
        const int before = m_store->conversations().size();
        QString why;
        QCOMPARE(m_store->importConversation(QJsonDocument::fromJson(json).object(), &why), 0);
        QVERIFY(!why.isEmpty());
        QCOMPARE(m_store->conversations().size(), before);
    }
};

QTEST_GUILESS_MAIN(TestChatStore)
#include "tst_chat_store.moc"
