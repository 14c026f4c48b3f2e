// ConversationListModel over a real store thread, checked by QAbstractItemModelTester: pinned
// first then newest, search through titles and message text, the Today / This week / Older
// groups, and moves (not resets) when a conversation becomes the newest.
#include "chat/StoreThread.h"
#include "models/ConversationListModel.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QtTest>

#include "store/Database.h"

using namespace arbor::app;

class TestConversationListModel : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    int m_n = 0;
    std::unique_ptr<StoreThread> m_store;
    std::unique_ptr<ConversationListModel> m_model;
    std::unique_ptr<QAbstractItemModelTester> m_tester;

    template <class Fn>
    void onStore(Fn fn) {
        m_store->post([fn](StoreContext& s) mutable { fn(s); });
        m_store->waitIdle();
    }
    void refreshed() {
        QSignalSpy spy(m_model.get(), &ConversationListModel::refreshed);
        m_model->refresh();
        QVERIFY(spy.wait(5000));
    }
    QStringList titles() {
        QStringList t;
        for (int i = 0; i < m_model->rowCount(); ++i)
            t << m_model->data(m_model->index(i), ConversationListModel::ConversationTitleRole).toString();
        return t;
    }

private slots:
    void init() {
        m_store = std::make_unique<StoreThread>();
        QString why;
        QVERIFY(m_store->open(m_dir.filePath(QStringLiteral("l%1.sqlite").arg(++m_n)), &why));
        m_model = std::make_unique<ConversationListModel>();
        m_model->setStore(m_store.get());
        m_tester = std::make_unique<QAbstractItemModelTester>(m_model.get(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    }
    void cleanup() {
        m_tester.reset();
        m_model.reset();
        m_store.reset();
    }

    void orderSearchAndPins() {
        qint64 cooking = 0, travel = 0;
        onStore([&](StoreContext& s) {
            cooking = s.chats.createConversation(QStringLiteral("Cooking"));
            s.chats.addMessage(cooking, 0, QStringLiteral("user"), QStringLiteral("how do I bake sourdough"));
            QThread::msleep(5);
            travel = s.chats.createConversation(QStringLiteral("Travel"));
            s.chats.addMessage(travel, 0, QStringLiteral("user"), QStringLiteral("trains to Rome"));
        });
        refreshed();
        QCOMPARE(titles(), (QStringList{"Travel", "Cooking"}));
        m_model->setSearch(QStringLiteral("sourd"));  // message text, prefix
        QTRY_COMPARE(titles(), QStringList{"Cooking"});
        m_model->setSearch(QStringLiteral("trav"));   // title
        QTRY_COMPARE(titles(), QStringList{"Travel"});
        m_model->setSearch(QString());
        QTRY_COMPARE(m_model->rowCount(), 2);
        onStore([&](StoreContext& s) { s.chats.setPinned(cooking, true); });
        QSignalSpy reset(m_model.get(), &QAbstractItemModel::modelReset);
        QSignalSpy moved(m_model.get(), &QAbstractItemModel::rowsMoved);
        refreshed();
        QCOMPARE(titles(), (QStringList{"Cooking", "Travel"}));
        QCOMPARE(reset.size(), 0);
        QCOMPARE(moved.size(), 1);
        QCOMPARE(m_model->data(m_model->index(0), ConversationListModel::GroupRole).toString(), QStringLiteral("Pinned"));
        QCOMPARE(m_model->rowOf(travel), 1);
        QCOMPARE(m_model->idAt(0), cooking);
    }

    void typingFastKeepsOnlyTheLastSearch() {
        onStore([&](StoreContext& s) {
            for (int i = 0; i < 30; ++i) s.chats.createConversation(QStringLiteral("chat %1").arg(i));
        });
        for (const char* q : {"c", "ch", "cha", "chat", "chat 1", "chat 17"}) m_model->setSearch(QString::fromLatin1(q));
        QSignalSpy spy(m_model.get(), &ConversationListModel::refreshed);
        QVERIFY(spy.wait(5000));
        QCOMPARE(spy.size(), 1);  // the earlier answers were dropped
        QCOMPARE(titles(), QStringList{"chat 17"});
    }

    void groupsByRecency_data() {
        QTest::addColumn<qint64>("ageHours");
        QTest::addColumn<bool>("pinned");
        QTest::addColumn<QString>("group");
        QTest::newRow("now") << qint64(0) << false << "Today";
        QTest::newRow("yesterday") << qint64(24) << false << "This week";
        QTest::newRow("six days") << qint64(6 * 24) << false << "This week";
        QTest::newRow("eight days") << qint64(8 * 24) << false << "Older";
        QTest::newRow("pinned and old") << qint64(400 * 24) << true << "Pinned";
    }
    void groupsByRecency() {
        QFETCH(qint64, ageHours);
        QFETCH(bool, pinned);
        QFETCH(QString, group);
        const QDateTime now(QDate(2026, 11, 29), QTime(12, 0));
        ConversationRow c;
        c.pinned = pinned;
        c.updatedAt = now.addSecs(-ageHours * 3600).toMSecsSinceEpoch();
        QCOMPARE(ConversationListModel::groupFor(c, now), group);
    }

    void removesAndInsertsWithoutReset() {
        QVector<ConversationRow> rows;
        for (int i = 1; i <= 5; ++i) {
            ConversationRow c;
            c.id = i;
            c.title = QStringLiteral("c%1").arg(i);
            rows << c;
        }
        m_model->setRows(rows);
        QSignalSpy reset(m_model.get(), &QAbstractItemModel::modelReset);
        QVector<ConversationRow> next{rows[4], rows[0], rows[2]};
        ConversationRow fresh;
        fresh.id = 9;
        fresh.title = QStringLiteral("new");
        next.insert(1, fresh);
        m_model->setRows(next);
        QCOMPARE(titles(), (QStringList{"c5", "new", "c1", "c3"}));
        QCOMPARE(reset.size(), 0);
    }
};

QTEST_GUILESS_MAIN(TestConversationListModel)
#include "tst_conversation_list_model.moc"
