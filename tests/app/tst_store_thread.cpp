// The store thread: every job runs on it, in order; results come back on the receiver's
// thread; opening recovers interrupted replies and refuses a newer database; stopping purges
// the conversations deleted in this run.
#include "chat/StoreThread.h"
#include "store/ChatStore.h"
#include "store/Database.h"

#include <QSignalSpy>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QtTest>

using namespace arbor::app;

class TestStoreThread : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    int m_n = 0;
    QString freshPath() { return m_dir.filePath(QStringLiteral("db%1.sqlite").arg(++m_n)); }

private slots:
    void jobsRunInOrderOnTheStoreThread() {
        StoreThread store;
        QString why;
        QVERIFY2(store.open(freshPath(), &why), qPrintable(why));
        QVector<int> order;
        QSet<QThread*> threads;
        for (int i = 0; i < 50; ++i)
            store.post([&order, &threads, i](StoreContext& s) {
                threads.insert(QThread::currentThread());
                order << i;
                s.chats.createConversation(QStringLiteral("c%1").arg(i));
            });
        store.waitIdle();
        QVector<int> expect(50);
        std::iota(expect.begin(), expect.end(), 0);
        QCOMPARE(order, expect);
        QCOMPARE(threads, QSet<QThread*>{&store});
        QVERIFY(!store.jobThreads().contains(QThread::currentThread()));
        QCOMPARE(store.jobsRun(), 50);
    }

    void queryAnswersOnTheReceiverThread() {
        StoreThread store;
        QString why;
        QVERIFY(store.open(freshPath(), &why));
        QThread* answeredOn = nullptr;
        int count = -1;
        QObject receiver;
        store.post([](StoreContext& s) { s.chats.createConversation(QStringLiteral("one")); });
        store.query([](StoreContext& s) { return int(s.chats.conversations().size()); }, &receiver, [&](int n) {
            answeredOn = QThread::currentThread();
            count = n;
        });
        QTRY_COMPARE(count, 1);
        QCOMPARE(answeredOn, QThread::currentThread());
    }

    void openRecoversAndStopPurges() {
        const QString path = freshPath();
        qint64 reply = 0, doomed = 0;
        {
            Database db;
            QVERIFY(db.open(path, QStringLiteral("setup")));
            ChatStore s(db.handle());
            const qint64 c = s.createConversation(QStringLiteral("crashed"));
            reply = s.beginReply(c, s.addMessage(c, 0, QStringLiteral("user"), QStringLiteral("q")));
            s.checkpointReply(reply, QStringLiteral("half"), {});
            doomed = s.createConversation(QStringLiteral("to delete"));
        }
        StoreThread store;
        QString why;
        int recovered = 0;
        QVERIFY(store.open(path, &why, &recovered));
        QCOMPARE(recovered, 1);
        store.post([doomed](StoreContext& s) { s.chats.softDelete(doomed); });
        store.stop();
        QVERIFY(!store.isOpen());
        Database check;
        QVERIFY(check.open(path, QStringLiteral("check")));
        ChatStore s(check.handle());
        MessageRow m;
        QVERIFY(s.message(reply, &m));
        QCOMPARE(m.state, QStringLiteral("interrupted"));
        QCOMPARE(m.content, QStringLiteral("half"));
        ConversationRow gone;
        QVERIFY(!s.conversation(doomed, &gone));  // purged when the store stopped
    }

    void refusesANewerDatabase() {
        const QString path = freshPath();
        {
            Database db;
            QVERIFY(db.open(path, QStringLiteral("future")));
            QSqlQuery q(db.handle());
            QVERIFY(q.exec(QStringLiteral("PRAGMA user_version=99")));
        }
        StoreThread store;
        QString why;
        QVERIFY(!store.open(path, &why));
        QVERIFY2(why.contains(QStringLiteral("newer")), qPrintable(why));
        QVERIFY(!store.isOpen());
        store.post([](StoreContext&) { QFAIL("a job ran on a store that did not open"); });
    }
};

QTEST_GUILESS_MAIN(TestStoreThread)
#include "tst_store_thread.moc"
