// Conversations as trees of messages, in the SQLite database. Nothing is ever overwritten:
// editing or regenerating adds a sibling and moves the parent's active-child pointer.
//
// Durability: every call is its own transaction (or a single statement) and is committed when
// it returns. A streaming reply is inserted in state 'streaming', checkpointed with
// checkpointReply() and ended with finishReply(); at start-up recoverInterrupted() marks any
// reply still 'streaming' (the app died) as 'interrupted'. Deletes are soft until purgeDeleted().
//
// All methods run on the thread that owns the database connection (the store thread); the UI
// thread only reads through the models.
#pragma once

#include <QJsonObject>
#include <QSqlDatabase>
#include <QString>
#include <QVector>

namespace arbor::app {

struct ConversationRow {
    qint64 id = 0;
    QString title;
    qint64 createdAt = 0, updatedAt = 0;
    QString modelPath, modelFingerprint, systemPrompt, samplerJson;
    bool pinned = false, archived = false, deleted = false;
};

struct GenerationStats {
    double decodeTokS = 0, prefillTokS = 0, ttftMs = 0;
    int tokenCount = 0;
    QString stopReason, backend, contention;
};

struct MessageRow {
    qint64 id = 0, conversationId = 0, parentId = 0, activeChildId = 0;
    QString role, content, reasoning, state;
    qint64 createdAt = 0;
    int siblingIndex = 0, siblingCount = 1;  // filled by activePath()
    GenerationStats stats;
};

class ChatStore {
public:
    explicit ChatStore(QSqlDatabase db) : m_db(std::move(db)) {}
    QString lastError() const { return m_error; }

    // Conversations.
    qint64 createConversation(const QString& title, const QString& modelPath = {}, const QString& systemPrompt = {});
    QVector<ConversationRow> conversations(const QString& search = {}) const;  // pinned first, newest first
    bool conversation(qint64 id, ConversationRow* out) const;
    bool renameConversation(qint64 id, const QString& title);
    bool setPinned(qint64 id, bool pinned);
    bool setModel(qint64 id, const QString& modelPath, const QString& fingerprint);
    bool setSystemPrompt(qint64 id, const QString& prompt);
    bool setSamplerJson(qint64 id, const QString& json);
    bool softDelete(qint64 id);
    bool undoDelete(qint64 id);
    int purgeDeleted();  // really removes soft-deleted conversations; returns how many

    // Messages. parentId 0 means a root (the first message of a conversation, or an edit of it).
    qint64 addMessage(qint64 conversationId, qint64 parentId, const QString& role, const QString& content);
    qint64 beginReply(qint64 conversationId, qint64 parentId);
    bool checkpointReply(qint64 id, const QString& content, const QString& reasoning);
    bool finishReply(qint64 id, const QString& content, const QString& reasoning, const QString& state,
                     const GenerationStats& stats);
    bool message(qint64 id, MessageRow* out) const;
    QVector<MessageRow> siblings(qint64 messageId) const;
    // The active path from the active root down, following active children.
    QVector<MessageRow> activePath(qint64 conversationId) const;
    // Makes `messageId` the active one among its siblings.
    bool activate(qint64 messageId);
    int recoverInterrupted();

    // Export and import. Import validates the whole document first and writes all or nothing.
    QJsonObject exportConversation(qint64 id) const;
    qint64 importConversation(const QJsonObject& doc, QString* why);
    QString exportMarkdown(qint64 id) const;

private:
    bool exec(const QString& sql, const QVariantList& binds = {}) const;
    bool touch(qint64 conversationId);
    QSqlDatabase m_db;
    mutable QString m_error;
};

}  // namespace arbor::app
