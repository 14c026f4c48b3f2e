// ChatStore: export of a whole conversation tree as JSON, import with full validation first and
// an all-or-nothing write, and Markdown of the active path.
#include "store/ChatStore.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

namespace arbor::app {
namespace {
constexpr const char* kFormat = "arbor-conversation";
constexpr int kVersion = 1;
}  // namespace

QJsonObject ChatStore::exportConversation(qint64 id) const {
    ConversationRow c;
    if (!conversation(id, &c)) return {};
    QJsonObject doc;
    doc["format"] = kFormat;
    doc["version"] = kVersion;
    doc["title"] = c.title;
    doc["created_at"] = double(c.createdAt);
    doc["updated_at"] = double(c.updatedAt);
    doc["system_prompt"] = c.systemPrompt;
    doc["sampler"] = QJsonDocument::fromJson(c.samplerJson.toUtf8()).object();
    doc["model_path"] = c.modelPath;
    doc["pinned"] = c.pinned;
    QSqlQuery q(m_db);
    q.prepare(QStringLiteral("SELECT root_message_id FROM conversations WHERE id=?"));
    q.addBindValue(id);
    if (q.exec() && q.next() && !q.value(0).isNull()) doc["active_root"] = double(q.value(0).toLongLong());
    q.prepare(QStringLiteral("SELECT id FROM messages WHERE conversation_id=? ORDER BY id"));
    q.addBindValue(id);
    QJsonArray msgs;
    if (q.exec()) {
        while (q.next()) {
            MessageRow m;
            if (!message(q.value(0).toLongLong(), &m)) continue;
            QJsonObject o;
            o["id"] = double(m.id);
            o["parent"] = m.parentId ? QJsonValue(double(m.parentId)) : QJsonValue();
            o["active_child"] = m.activeChildId ? QJsonValue(double(m.activeChildId)) : QJsonValue();
            o["role"] = m.role;
            o["content"] = m.content;
            o["reasoning"] = m.reasoning;
            o["state"] = m.state;
            o["created_at"] = double(m.createdAt);
            QJsonObject st;
            st["decode_tok_s"] = m.stats.decodeTokS;
            st["prefill_tok_s"] = m.stats.prefillTokS;
            st["ttft_ms"] = m.stats.ttftMs;
            st["token_count"] = m.stats.tokenCount;
            st["stop_reason"] = m.stats.stopReason;
            st["backend"] = m.stats.backend;
            st["contention"] = m.stats.contention;
            o["stats"] = st;
            msgs.append(o);
        }
    }
    doc["messages"] = msgs;
    return doc;
}

qint64 ChatStore::importConversation(const QJsonObject& doc, QString* why) {
    auto fail = [&](const QString& w) {
        *why = w;
        return qint64(0);
    };
    if (doc.value("format").toString() != QLatin1String(kFormat)) return fail(QStringLiteral("not an Arbor conversation export (format)"));
    if (doc.value("version").toInt(-1) != kVersion)
        return fail(QStringLiteral("unsupported export version %1").arg(doc.value("version").toVariant().toString()));
    if (!doc.value("messages").isArray()) return fail(QStringLiteral("'messages' must be an array"));
    const QJsonArray msgs = doc.value("messages").toArray();
    // Validate everything before writing anything.
    QHash<qint64, int> index;
    static const QStringList roles{"system", "user", "assistant", "tool"};
    static const QStringList states{"complete", "streaming", "interrupted", "error"};
    for (int i = 0; i < msgs.size(); ++i) {
        if (!msgs[i].isObject()) return fail(QStringLiteral("message %1 is not an object").arg(i));
        const QJsonObject m = msgs[i].toObject();
        if (!m.value("id").isDouble()) return fail(QStringLiteral("message %1 has no numeric id").arg(i));
        const qint64 id = qint64(m.value("id").toDouble());
        if (index.contains(id)) return fail(QStringLiteral("message %1 repeats id %2").arg(i).arg(id));
        if (!roles.contains(m.value("role").toString())) return fail(QStringLiteral("message %1 has an invalid role").arg(i));
        if (!m.value("content").isString()) return fail(QStringLiteral("message %1 has no text content").arg(i));
        if (m.contains("state") && !states.contains(m.value("state").toString()))
            return fail(QStringLiteral("message %1 has an invalid state").arg(i));
        const QJsonValue p = m.value("parent");
        if (!p.isNull() && !p.isUndefined() && !index.contains(qint64(p.toDouble())))
            return fail(QStringLiteral("message %1's parent does not come before it").arg(i));
        index.insert(id, i);
    }
    for (int i = 0; i < msgs.size(); ++i) {
        const QJsonValue ac = msgs[i].toObject().value("active_child");
        if (!ac.isNull() && !ac.isUndefined() && !index.contains(qint64(ac.toDouble())))
            return fail(QStringLiteral("message %1's active child does not exist").arg(i));
    }
    if (!m_db.transaction()) return fail(m_db.lastError().text());
    const qint64 conv = createConversation(doc.value("title").toString(), doc.value("model_path").toString(),
                                           doc.value("system_prompt").toString());
    QHash<qint64, qint64> newId;
    bool ok = conv != 0 &&
              exec(QStringLiteral("UPDATE conversations SET sampler_json=?, pinned=? WHERE id=?"),
                   {QString::fromUtf8(QJsonDocument(doc.value("sampler").toObject()).toJson(QJsonDocument::Compact)),
                    doc.value("pinned").toBool() ? 1 : 0, conv});
    for (int i = 0; ok && i < msgs.size(); ++i) {
        const QJsonObject m = msgs[i].toObject();
        const QJsonObject st = m.value("stats").toObject();
        QSqlQuery q(m_db);
        q.prepare(QStringLiteral("INSERT INTO messages(conversation_id, parent_id, role, content, reasoning, state, created_at, "
                                 "decode_tok_s, prefill_tok_s, ttft_ms, token_count, stop_reason, backend, contention) "
                                 "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)"));
        const QJsonValue p = m.value("parent");
        q.addBindValue(conv);
        q.addBindValue(p.isNull() || p.isUndefined() ? QVariant() : QVariant(newId.value(qint64(p.toDouble()))));
        q.addBindValue(m.value("role").toString());
        q.addBindValue(m.value("content").toString());
        q.addBindValue(m.value("reasoning").toString(QStringLiteral("")));
        q.addBindValue(m.value("state").toString(QStringLiteral("complete")));
        q.addBindValue(qint64(m.value("created_at").toDouble()));
        q.addBindValue(st.value("decode_tok_s").toDouble());
        q.addBindValue(st.value("prefill_tok_s").toDouble());
        q.addBindValue(st.value("ttft_ms").toDouble());
        q.addBindValue(st.value("token_count").toInt());
        q.addBindValue(st.value("stop_reason").toString(QStringLiteral("")));
        q.addBindValue(st.value("backend").toString(QStringLiteral("")));
        q.addBindValue(st.value("contention").toString(QStringLiteral("")));
        ok = q.exec();
        if (!ok) m_error = q.lastError().text();
        newId.insert(qint64(m.value("id").toDouble()), q.lastInsertId().toLongLong());
    }
    for (int i = 0; ok && i < msgs.size(); ++i) {
        const QJsonObject m = msgs[i].toObject();
        const QJsonValue ac = m.value("active_child");
        if (!ac.isNull() && !ac.isUndefined())
            ok = exec(QStringLiteral("UPDATE messages SET active_child_id=? WHERE id=?"),
                      {newId.value(qint64(ac.toDouble())), newId.value(qint64(m.value("id").toDouble()))});
    }
    if (ok && doc.contains("active_root"))
        ok = exec(QStringLiteral("UPDATE conversations SET root_message_id=? WHERE id=?"),
                  {newId.value(qint64(doc.value("active_root").toDouble())), conv});
    if (!ok || !m_db.commit()) {
        m_db.rollback();
        return fail(QStringLiteral("import failed, nothing was written: %1").arg(m_error));
    }
    return conv;
}

QString ChatStore::exportMarkdown(qint64 id) const {
    ConversationRow c;
    if (!conversation(id, &c)) return {};
    QString md = QStringLiteral("# %1\n\n").arg(c.title.isEmpty() ? QStringLiteral("Conversation") : c.title);
    if (!c.systemPrompt.isEmpty()) md += QStringLiteral("> **System:** %1\n\n").arg(c.systemPrompt);
    for (const auto& m : activePath(id)) {
        QString who = m.role;
        if (!who.isEmpty()) who[0] = who[0].toUpper();
        md += QStringLiteral("### %1\n\n").arg(who);
        if (!m.reasoning.isEmpty()) md += QStringLiteral("<details><summary>Reasoning</summary>\n\n%1\n\n</details>\n\n").arg(m.reasoning);
        md += m.content + QStringLiteral("\n\n");
    }
    return md;
}

}  // namespace arbor::app
