#include "store/ChatStore.h"

#include <QDateTime>
#include <QJsonArray>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

#include <functional>
#include <map>

namespace arbor::app {
namespace {

qint64 now() { return QDateTime::currentMSecsSinceEpoch(); }

// Text columns are NOT NULL: a null QString would bind as SQL NULL, so bind "" instead.
QString nn(const QString& s) { return s.isNull() ? QStringLiteral("") : s; }

const char* kMessageColumns =
    "id, conversation_id, parent_id, active_child_id, role, content, reasoning, state, created_at, "
    "decode_tok_s, prefill_tok_s, ttft_ms, token_count, stop_reason, backend, contention";

MessageRow readMessage(const QSqlQuery& q) {
    MessageRow m;
    m.id = q.value(0).toLongLong();
    m.conversationId = q.value(1).toLongLong();
    m.parentId = q.value(2).toLongLong();
    m.activeChildId = q.value(3).toLongLong();
    m.role = q.value(4).toString();
    m.content = q.value(5).toString();
    m.reasoning = q.value(6).toString();
    m.state = q.value(7).toString();
    m.createdAt = q.value(8).toLongLong();
    m.stats.decodeTokS = q.value(9).toDouble();
    m.stats.prefillTokS = q.value(10).toDouble();
    m.stats.ttftMs = q.value(11).toDouble();
    m.stats.tokenCount = q.value(12).toInt();
    m.stats.stopReason = q.value(13).toString();
    m.stats.backend = q.value(14).toString();
    m.stats.contention = q.value(15).toString();
    return m;
}

ConversationRow readConversation(const QSqlQuery& q) {
    ConversationRow c;
    c.id = q.value(0).toLongLong();
    c.title = q.value(1).toString();
    c.createdAt = q.value(2).toLongLong();
    c.updatedAt = q.value(3).toLongLong();
    c.modelPath = q.value(4).toString();
    c.systemPrompt = q.value(5).toString();
    c.samplerJson = q.value(6).toString();
    c.pinned = q.value(7).toBool();
    c.archived = q.value(8).toBool();
    c.deleted = !q.value(9).isNull();
    c.modelFingerprint = q.value(10).toString();
    return c;
}

const char* kConversationColumns =
    "id, title, created_at, updated_at, model_path, system_prompt, sampler_json, pinned, archived, deleted_at, model_fingerprint";

}  // namespace

bool ChatStore::exec(const QString& sql, const QVariantList& binds) const {
    QSqlQuery q(m_db);
    q.prepare(sql);
    for (const auto& b : binds) q.addBindValue(b);
    if (!q.exec()) {
        m_error = q.lastError().text();
        return false;
    }
    return true;
}

bool ChatStore::touch(qint64 conversationId) {
    return exec(QStringLiteral("UPDATE conversations SET updated_at=? WHERE id=?"), {now(), conversationId});
}

qint64 ChatStore::createConversation(const QString& title, const QString& modelPath, const QString& systemPrompt) {
    QSqlQuery q(m_db);
    q.prepare(QStringLiteral("INSERT INTO conversations(title, created_at, updated_at, model_path, system_prompt) VALUES(?,?,?,?,?)"));
    const qint64 t = now();
    q.addBindValue(nn(title));
    q.addBindValue(t);
    q.addBindValue(t);
    q.addBindValue(modelPath.isEmpty() ? QVariant() : QVariant(modelPath));
    q.addBindValue(nn(systemPrompt));
    if (!q.exec()) {
        m_error = q.lastError().text();
        return 0;
    }
    return q.lastInsertId().toLongLong();
}

QVector<ConversationRow> ChatStore::conversations(const QString& search) const {
    QVector<ConversationRow> out;
    QSqlQuery q(m_db);
    QString sql = QStringLiteral("SELECT %1 FROM conversations c WHERE deleted_at IS NULL").arg(QLatin1String(kConversationColumns));
    if (!search.trimmed().isEmpty()) {
        // Title match, or any message whose text matches (FTS5 prefix query over each word).
        QStringList terms;
        for (const QString& w : search.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
            QString t = w;
            t.replace(QLatin1Char('"'), QLatin1String("\"\""));
            terms << QStringLiteral("\"%1\"*").arg(t);
        }
        sql += QStringLiteral(" AND (title LIKE ? ESCAPE '\\' OR id IN (SELECT m.conversation_id FROM messages m "
                              "JOIN messages_fts f ON f.rowid = m.id WHERE messages_fts MATCH ?))");
        q.prepare(sql + QStringLiteral(" ORDER BY pinned DESC, updated_at DESC, id DESC"));
        QString like = search.trimmed();
        like.replace(QLatin1Char('\\'), QLatin1String("\\\\")).replace(QLatin1Char('%'), QLatin1String("\\%")).replace(QLatin1Char('_'), QLatin1String("\\_"));
        q.addBindValue(QLatin1Char('%') + like + QLatin1Char('%'));
        q.addBindValue(terms.join(QLatin1Char(' ')));
    } else {
        q.prepare(sql + QStringLiteral(" ORDER BY pinned DESC, updated_at DESC, id DESC"));
    }
    if (!q.exec()) {
        m_error = q.lastError().text();
        return out;
    }
    while (q.next()) out.push_back(readConversation(q));
    return out;
}

bool ChatStore::conversation(qint64 id, ConversationRow* out) const {
    QSqlQuery q(m_db);
    q.prepare(QStringLiteral("SELECT %1 FROM conversations WHERE id=?").arg(QLatin1String(kConversationColumns)));
    q.addBindValue(id);
    if (!q.exec() || !q.next()) return false;
    *out = readConversation(q);
    return true;
}

bool ChatStore::renameConversation(qint64 id, const QString& title) {
    return exec(QStringLiteral("UPDATE conversations SET title=? WHERE id=?"), {nn(title), id});
}
bool ChatStore::setPinned(qint64 id, bool pinned) {
    return exec(QStringLiteral("UPDATE conversations SET pinned=? WHERE id=?"), {pinned ? 1 : 0, id});
}
bool ChatStore::setModel(qint64 id, const QString& modelPath, const QString& fingerprint) {
    return exec(QStringLiteral("UPDATE conversations SET model_path=?, model_fingerprint=? WHERE id=?"), {modelPath, fingerprint, id});
}
bool ChatStore::setSystemPrompt(qint64 id, const QString& prompt) {
    return exec(QStringLiteral("UPDATE conversations SET system_prompt=? WHERE id=?"), {nn(prompt), id});
}
bool ChatStore::setSamplerJson(qint64 id, const QString& json) {
    return exec(QStringLiteral("UPDATE conversations SET sampler_json=? WHERE id=?"), {nn(json), id});
}
bool ChatStore::softDelete(qint64 id) {
    return exec(QStringLiteral("UPDATE conversations SET deleted_at=? WHERE id=? AND deleted_at IS NULL"), {now(), id});
}
bool ChatStore::undoDelete(qint64 id) {
    return exec(QStringLiteral("UPDATE conversations SET deleted_at=NULL WHERE id=?"), {id});
}
int ChatStore::purgeDeleted() {
    QSqlQuery q(m_db);
    // root_message_id points into messages; clear it first so the cascade has nothing to trip on.
    if (!q.exec(QStringLiteral("UPDATE conversations SET root_message_id=NULL WHERE deleted_at IS NOT NULL"))) return 0;
    if (!q.exec(QStringLiteral("DELETE FROM conversations WHERE deleted_at IS NOT NULL"))) {
        m_error = q.lastError().text();
        return 0;
    }
    return q.numRowsAffected();
}

qint64 ChatStore::addMessage(qint64 conversationId, qint64 parentId, const QString& role, const QString& content) {
    if (!m_db.transaction()) {
        m_error = m_db.lastError().text();
        return 0;
    }
    QSqlQuery q(m_db);
    q.prepare(QStringLiteral("INSERT INTO messages(conversation_id, parent_id, role, content, created_at, state) VALUES(?,?,?,?,?,?)"));
    q.addBindValue(conversationId);
    q.addBindValue(parentId ? QVariant(parentId) : QVariant());
    q.addBindValue(role);
    q.addBindValue(nn(content));
    q.addBindValue(now());
    q.addBindValue(role == QLatin1String("assistant") && content.isNull() ? QStringLiteral("streaming") : QStringLiteral("complete"));
    if (!q.exec()) {
        m_error = q.lastError().text();
        m_db.rollback();
        return 0;
    }
    const qint64 id = q.lastInsertId().toLongLong();
    const bool ok = (parentId ? exec(QStringLiteral("UPDATE messages SET active_child_id=? WHERE id=?"), {id, parentId})
                              : exec(QStringLiteral("UPDATE conversations SET root_message_id=? WHERE id=?"), {id, conversationId})) &&
                    touch(conversationId);
    if (!ok || !m_db.commit()) {
        m_db.rollback();
        return 0;
    }
    return id;
}

qint64 ChatStore::beginReply(qint64 conversationId, qint64 parentId) {
    return addMessage(conversationId, parentId, QStringLiteral("assistant"), QString());
}

bool ChatStore::checkpointReply(qint64 id, const QString& content, const QString& reasoning) {
    return exec(QStringLiteral("UPDATE messages SET content=?, reasoning=? WHERE id=? AND state='streaming'"),
                {nn(content), nn(reasoning), id});
}

bool ChatStore::finishReply(qint64 id, const QString& content, const QString& reasoning, const QString& state,
                            const GenerationStats& s) {
    return exec(QStringLiteral("UPDATE messages SET content=?, reasoning=?, state=?, decode_tok_s=?, prefill_tok_s=?, "
                               "ttft_ms=?, token_count=?, stop_reason=?, backend=?, contention=? WHERE id=?"),
                {nn(content), nn(reasoning), state, s.decodeTokS, s.prefillTokS, s.ttftMs, s.tokenCount, nn(s.stopReason), nn(s.backend),
                 nn(s.contention), id});
}

bool ChatStore::message(qint64 id, MessageRow* out) const {
    QSqlQuery q(m_db);
    q.prepare(QStringLiteral("SELECT %1 FROM messages WHERE id=?").arg(QLatin1String(kMessageColumns)));
    q.addBindValue(id);
    if (!q.exec() || !q.next()) return false;
    *out = readMessage(q);
    return true;
}

QVector<MessageRow> ChatStore::siblings(qint64 messageId) const {
    QVector<MessageRow> out;
    MessageRow m;
    if (!message(messageId, &m)) return out;
    QSqlQuery q(m_db);
    if (m.parentId) {
        q.prepare(QStringLiteral("SELECT %1 FROM messages WHERE parent_id=? ORDER BY id").arg(QLatin1String(kMessageColumns)));
        q.addBindValue(m.parentId);
    } else {
        q.prepare(QStringLiteral("SELECT %1 FROM messages WHERE conversation_id=? AND parent_id IS NULL ORDER BY id")
                      .arg(QLatin1String(kMessageColumns)));
        q.addBindValue(m.conversationId);
    }
    if (!q.exec()) return out;
    while (q.next()) out.push_back(readMessage(q));
    return out;
}

QVector<MessageRow> ChatStore::activePath(qint64 conversationId) const {
    QVector<MessageRow> path;
    QSqlQuery q(m_db);
    q.prepare(QStringLiteral("SELECT root_message_id FROM conversations WHERE id=?"));
    q.addBindValue(conversationId);
    if (!q.exec() || !q.next()) return path;
    qint64 id = q.value(0).toLongLong();
    while (id && path.size() < 100000) {
        MessageRow m;
        if (!message(id, &m)) break;
        const auto sib = siblings(id);
        m.siblingCount = sib.size();
        for (int i = 0; i < sib.size(); ++i)
            if (sib[i].id == id) m.siblingIndex = i;
        path.push_back(m);
        id = m.activeChildId;
    }
    return path;
}

bool ChatStore::activate(qint64 messageId) {
    MessageRow m;
    if (!message(messageId, &m)) return false;
    const bool ok = m.parentId
                        ? exec(QStringLiteral("UPDATE messages SET active_child_id=? WHERE id=?"), {messageId, m.parentId})
                        : exec(QStringLiteral("UPDATE conversations SET root_message_id=? WHERE id=?"), {messageId, m.conversationId});
    return ok;
}

int ChatStore::recoverInterrupted() {
    QSqlQuery q(m_db);
    if (!q.exec(QStringLiteral("UPDATE messages SET state='interrupted', stop_reason='app-exit' WHERE state='streaming'"))) return 0;
    return q.numRowsAffected();
}

}  // namespace arbor::app
