// ChatPathModel over a real store thread, checked by QAbstractItemModelTester: the active path
// of a tree, structured updates when the path changes (inserts and removes, not resets), one
// reset when another conversation is opened (flagged as `opening` until the path changes in place), live
// streaming text kept across reloads, sibling switching through the store, and edit/regenerate
// as requests.
#include "chat/StoreThread.h"
#include "models/ChatPathModel.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace arbor::app;

class TestChatPathModel : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    int m_n = 0;
    std::unique_ptr<StoreThread> m_store;
    std::unique_ptr<ChatPathModel> m_model;
    std::unique_ptr<QAbstractItemModelTester> m_tester;
    qint64 m_conv = 0, m_u1 = 0, m_a1 = 0, m_a2 = 0;

    template <class Fn>
    void onStore(Fn fn) {
        m_store->post([fn](StoreContext& s) mutable { fn(s); });
        m_store->waitIdle();
    }
    QString textAt(int row) { return m_model->data(m_model->index(row), ChatPathModel::MessageTextRole).toString(); }
    bool loaded() {
        QSignalSpy applied(m_model.get(), &ChatPathModel::pathApplied);
        return applied.wait(5000);
    }

private slots:
    void init() {
        m_store = std::make_unique<StoreThread>();
        QString why;
        QVERIFY(m_store->open(m_dir.filePath(QStringLiteral("p%1.sqlite").arg(++m_n)), &why));
        m_model = std::make_unique<ChatPathModel>();
        m_model->setStore(m_store.get());
        m_tester = std::make_unique<QAbstractItemModelTester>(m_model.get(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        // user "hi" -> replies "one", "two" (active: two)
        onStore([this](StoreContext& s) {
            m_conv = s.chats.createConversation(QStringLiteral("c"));
            m_u1 = s.chats.addMessage(m_conv, 0, QStringLiteral("user"), QStringLiteral("hi"));
            m_a1 = s.chats.beginReply(m_conv, m_u1);
            s.chats.finishReply(m_a1, QStringLiteral("one"), {}, QStringLiteral("complete"), {});
            m_a2 = s.chats.beginReply(m_conv, m_u1);
            GenerationStats st;
            st.decodeTokS = 12.5;
            st.ttftMs = 80;
            st.tokenCount = 3;
            st.backend = QStringLiteral("cpu");
            s.chats.finishReply(m_a2, QStringLiteral("two\n```\ncode\n```"), QStringLiteral("why"), QStringLiteral("complete"), st);
        });
    }
    void cleanup() {
        m_tester.reset();
        m_model.reset();
        m_store.reset();
    }

    void loadsTheActivePath() {
        m_model->open(m_conv);
        QVERIFY(loaded());
        QCOMPARE(m_model->rowCount(), 2);
        const QModelIndex r1 = m_model->index(1);
        QCOMPARE(r1.data(ChatPathModel::MessageIdRole).toLongLong(), m_a2);
        QCOMPARE(r1.data(ChatPathModel::MessageRoleRole).toString(), QStringLiteral("assistant"));
        QCOMPARE(r1.data(ChatPathModel::SiblingIndexRole).toInt(), 1);
        QCOMPARE(r1.data(ChatPathModel::SiblingCountRole).toInt(), 2);
        QCOMPARE(r1.data(ChatPathModel::ReasoningTextRole).toString(), QStringLiteral("why"));
        auto* segments = qobject_cast<MessageSegmentsModel*>(r1.data(ChatPathModel::SegmentModelRole).value<QObject*>());
        QVERIFY(segments);
        QCOMPARE(segments->rowCount(), 2);  // "two", then the code block
        QCOMPARE(r1.data(ChatPathModel::StatsTextRole).toString(), QStringLiteral("12.5 tok/s · 80 ms to first token · 3 tokens · cpu"));
        QCOMPARE(m_model->lastBranchRow(), 1);
        // Role names never shadow control properties.
        for (const QByteArray& name : m_model->roleNames()) QVERIFY(name != "text" && name != "color" && name != "role");
    }

    void switchSiblingGoesThroughTheStore() {
        m_model->open(m_conv);
        QVERIFY(loaded());
        QSignalSpy reset(m_model.get(), &QAbstractItemModel::modelReset);
        QSignalSpy changed(m_model.get(), &QAbstractItemModel::dataChanged);
        m_model->switchSibling(1, -1);
        QVERIFY(loaded());
        QCOMPARE(textAt(1), QStringLiteral("one"));
        QCOMPARE(reset.size(), 0);
        m_model->switchSibling(1, -1);  // already the first: nothing happens
        m_model->switchSibling(1, +1);
        QVERIFY(loaded());
        QVERIFY(textAt(1).startsWith(QStringLiteral("two")));
        // The choice is stored: a fresh model sees it.
        ChatPathModel other;
        other.setStore(m_store.get());
        QSignalSpy applied(&other, &ChatPathModel::pathApplied);
        other.open(m_conv);
        QVERIFY(applied.wait(5000));
        QVERIFY(other.data(other.index(1), ChatPathModel::MessageTextRole).toString().startsWith(QStringLiteral("two")));
    }

    void growingAndForkingPathsAreStructuredUpdates() {
        m_model->open(m_conv);
        QVERIFY(loaded());
        QSignalSpy inserted(m_model.get(), &QAbstractItemModel::rowsInserted);
        QSignalSpy removed(m_model.get(), &QAbstractItemModel::rowsRemoved);
        QSignalSpy reset(m_model.get(), &QAbstractItemModel::modelReset);
        qint64 u2 = 0;
        onStore([&](StoreContext& s) { u2 = s.chats.addMessage(m_conv, m_a2, QStringLiteral("user"), QStringLiteral("more")); });
        m_model->reload();
        QVERIFY(loaded());
        QCOMPARE(m_model->rowCount(), 3);
        QCOMPARE(inserted.size(), 1);
        // Edit the first message: the whole path forks at row 0.
        onStore([&](StoreContext& s) { s.chats.addMessage(m_conv, 0, QStringLiteral("user"), QStringLiteral("hello, edited")); });
        m_model->reload();
        QVERIFY(loaded());
        QCOMPARE(m_model->rowCount(), 1);
        QCOMPARE(textAt(0), QStringLiteral("hello, edited"));
        QCOMPARE(removed.size(), 1);
        QCOMPARE(reset.size(), 0);
        QCOMPARE(m_model->index(0).data(ChatPathModel::SiblingCountRole).toInt(), 2);
    }

    void openingAnotherConversationIsOneReset() {
        m_model->open(m_conv);
        QVERIFY(loaded());
        QVERIFY(m_model->opening());
        qint64 other = 0;
        onStore([&](StoreContext& s) {
            other = s.chats.createConversation(QStringLiteral("other"));
            const qint64 u = s.chats.addMessage(other, 0, QStringLiteral("user"), QStringLiteral("a"));
            const qint64 r = s.chats.beginReply(other, u);
            s.chats.finishReply(r, QStringLiteral("b"), {}, QStringLiteral("complete"), {});
            s.chats.addMessage(other, r, QStringLiteral("user"), QStringLiteral("c"));
        });
        QSignalSpy reset(m_model.get(), &QAbstractItemModel::modelReset);
        QSignalSpy inserted(m_model.get(), &QAbstractItemModel::rowsInserted);
        QSignalSpy removed(m_model.get(), &QAbstractItemModel::rowsRemoved);
        m_model->open(other);
        QVERIFY(loaded());
        QCOMPARE(m_model->rowCount(), 3);
        QCOMPARE(textAt(2), QStringLiteral("c"));
        QCOMPARE(reset.size(), 1);
        QCOMPARE(inserted.size(), 0);
        QCOMPARE(removed.size(), 0);
        QVERIFY(m_model->opening());
        // The path grows in place (a reply): no longer an opening.
        onStore([&](StoreContext& s) { s.chats.beginReply(other, m_model->lastMessageId()); });
        m_model->reload();
        QVERIFY(loaded());
        QCOMPARE(m_model->rowCount(), 4);
        QCOMPARE(inserted.size(), 1);
        QVERIFY(!m_model->opening());
    }

    void liveTextSurvivesReloads() {
        qint64 streaming = 0;
        onStore([&](StoreContext& s) {
            const qint64 u = s.chats.addMessage(m_conv, m_a2, QStringLiteral("user"), QStringLiteral("go on"));
            streaming = s.chats.beginReply(m_conv, u);
        });
        m_model->open(m_conv);
        QVERIFY(loaded());
        const int row = m_model->rowOf(streaming);
        QCOMPARE(row, 3);
        QVERIFY(m_model->index(row).data(ChatPathModel::StreamingRole).toBool());
        QSignalSpy changed(m_model.get(), &QAbstractItemModel::dataChanged);
        m_model->setLive(streaming, QStringLiteral("Once "), {});
        m_model->setLive(streaming, QStringLiteral("Once upon"), QStringLiteral("plot"));
        QCOMPARE(textAt(row), QStringLiteral("Once upon"));
        QCOMPARE(changed.size(), 2);
        // A reload sees the database's older checkpoint, but the live text wins.
        onStore([&](StoreContext& s) { s.chats.checkpointReply(streaming, QStringLiteral("Once"), {}); });
        m_model->reload();
        QVERIFY(loaded());
        QCOMPARE(textAt(row), QStringLiteral("Once upon"));
        m_model->setLive(streaming, QStringLiteral("Once upon a time"), QStringLiteral("plot"));
        QCOMPARE(textAt(row), QStringLiteral("Once upon a time"));
        GenerationStats st;
        st.tokenCount = 4;
        m_model->finishLive(streaming, QStringLiteral("Once upon a time."), QStringLiteral("plot"), QStringLiteral("complete"), st);
        QCOMPARE(textAt(row), QStringLiteral("Once upon a time."));
        QVERIFY(!m_model->index(row).data(ChatPathModel::StreamingRole).toBool());
    }

    void editAndRegenerateAreRequests() {
        m_model->open(m_conv);
        QVERIFY(loaded());
        QSignalSpy edit(m_model.get(), &ChatPathModel::editRequested);
        QSignalSpy regen(m_model.get(), &ChatPathModel::regenerateRequested);
        m_model->editMessage(0, QStringLiteral("changed"));
        m_model->editMessage(1, QStringLiteral("not a user message"));
        m_model->editMessage(0, QStringLiteral("   "));
        m_model->regenerate(1);
        m_model->regenerate(7);
        QCOMPARE(edit.size(), 1);
        QCOMPARE(edit.at(0).at(0).toLongLong(), m_u1);
        QCOMPARE(edit.at(0).at(1).toString(), QStringLiteral("changed"));
        QCOMPARE(regen.size(), 1);
        QCOMPARE(regen.at(0).at(0).toLongLong(), m_a2);
        QCOMPARE(m_model->rowCount(), 2);  // nothing changed by asking
    }

    void switchingConversationsDropsStaleLoads() {
        qint64 other = 0;
        onStore([&](StoreContext& s) {
            other = s.chats.createConversation(QStringLiteral("other"));
            s.chats.addMessage(other, 0, QStringLiteral("user"), QStringLiteral("elsewhere"));
        });
        m_model->open(m_conv);
        m_model->open(other);  // before the first load came back
        QTRY_COMPARE(m_model->rowCount(), 1);
        QCOMPARE(textAt(0), QStringLiteral("elsewhere"));
        m_model->open(0);
        QCOMPARE(m_model->rowCount(), 0);
    }
};

QTEST_GUILESS_MAIN(TestChatPathModel)
#include "tst_chat_path_model.moc"
