// The active path of the open conversation as a flat list: one row per message from the root
// down, following each node's active child. Rows carry the sibling index and count (for the
// `‹ 2/3 ›` switcher), the streaming state and the generation stats.
//
// It loads through the store thread (never touching the database itself) and applies the
// latest load only. A reply that is streaming keeps its live text across reloads: the deltas
// from the engine worker are the truth until the reply is finished.
//
// Branching asks the controller: editMessage() and regenerate() are requests (they start a
// generation), switchSibling() moves the active branch through the store and reloads.
#pragma once

#include "models/MessageSegmentsModel.h"
#include "store/ChatStore.h"

#include <QAbstractListModel>
#include <QHash>
#include <QtQml/qqmlregistration.h>

namespace arbor::app {

class StoreThread;

class ChatPathModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("ChatPathModel is provided by ChatController.messages")
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
    Q_PROPERTY(qint64 conversationId READ conversationId NOTIFY conversationIdChanged)
    Q_PROPERTY(bool loading READ loading NOTIFY loadingChanged)
    // The rows came from opening the conversation (not from chatting in it): a view may make
    // their delegates' heavy parts asynchronously. False again once the path changes in place.
    Q_PROPERTY(bool opening READ opening NOTIFY openingChanged)
    Q_PROPERTY(int lastBranchRow READ lastBranchRow NOTIFY branchesChanged)

public:
    enum Role {
        MessageIdRole = Qt::UserRole + 1,
        MessageRoleRole,     // "user", "assistant", "system"
        MessageTextRole,     // the answer (Markdown)
        ReasoningTextRole,   // what was inside <think>…</think>
        SegmentModelRole,    // the answer cut into paragraphs and code blocks (a MessageSegmentsModel)
        SiblingIndexRole,    // 0-based
        SiblingCountRole,
        MessageStateRole,    // "complete", "streaming", "interrupted", "error"
        StreamingRole,
        StatsTextRole,       // "42.1 tok/s · 120 ms to first token · 96 tokens · cpu"
        DecodeTokSRole,
        TtftMsRole,
        TokenCountRole,
        StopReasonRole,
        ContentionRole,
        CreatedAtRole,
    };
    Q_ENUM(Role)

    explicit ChatPathModel(QObject* parent = nullptr);
    void setStore(StoreThread* store) { m_store = store; }

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    qint64 conversationId() const { return m_conversationId; }
    bool loading() const { return m_loading; }
    bool opening() const { return m_opening; }
    int lastBranchRow() const;
    const QVector<MessageRow>& rows() const { return m_rows; }
    int rowOf(qint64 messageId) const;
    qint64 lastMessageId() const { return m_rows.isEmpty() ? 0 : m_rows.back().id; }

    // Shows `conversationId` (0: none) and loads its active path.
    void open(qint64 conversationId);
    void reload();
    // Applies a path loaded elsewhere (the controller's send/edit jobs), if it is still wanted.
    void applyPath(qint64 conversationId, const QVector<MessageRow>& rows);

    // Streaming: the whole text so far of a reply, applied to its row and kept across reloads
    // (a reload reads the last checkpoint, which is older).
    void setLive(qint64 replyId, const QString& content, const QString& reasoning);
    void finishLive(qint64 replyId, const QString& content, const QString& reasoning, const QString& state,
                    const GenerationStats& stats);

    Q_INVOKABLE void switchSibling(int row, int delta);
    Q_INVOKABLE void editMessage(int row, const QString& text);
    Q_INVOKABLE void regenerate(int row);
    Q_INVOKABLE QString messageTextAt(int row) const;

signals:
    void countChanged();
    void conversationIdChanged();
    void loadingChanged();
    void openingChanged();
    void branchesChanged();
    void pathApplied();
    void editRequested(qint64 messageId, const QString& text);
    void regenerateRequested(qint64 messageId);

private:
    struct Live {
        QString content, reasoning;
    };
    void setLoading(bool l);
    void setOpening(bool o);
    MessageSegmentsModel* segmentsFor(const MessageRow& row);

    StoreThread* m_store = nullptr;
    qint64 m_conversationId = 0;
    qint64 m_rowsConversation = 0;  // the conversation m_rows belong to
    QVector<MessageRow> m_rows;
    QVector<MessageSegmentsModel*> m_segments;  // parallel to m_rows, owned by this model
    QHash<qint64, Live> m_live;
    quint64 m_serial = 0;  // the latest load asked for
    bool m_loading = false;
    bool m_opening = false;
};

}  // namespace arbor::app
