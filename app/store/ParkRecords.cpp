#include "store/ParkRecords.h"

#include <QDateTime>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

namespace arbor::app {
namespace {

// The parent of `id`, or 0 (a root, or no such message).
qint64 parentOf(const QSqlDatabase& db, qint64 id) {
    QSqlQuery q(db);
    q.prepare(QStringLiteral("SELECT parent_id FROM messages WHERE id=?"));
    q.addBindValue(id);
    return q.exec() && q.next() ? q.value(0).toLongLong() : 0;
}

}  // namespace

bool ParkRecords::record(qint64 messageId, const QString& path, const QString& fingerprint, qint64 bytes, QStringList* superseded) {
    superseded->clear();
    if (!m_db.transaction()) {
        m_error = m_db.lastError().text();
        return false;
    }
    QSqlQuery q(m_db);
    q.prepare(QStringLiteral("INSERT INTO park_files(message_id, path, model_fingerprint, bytes, last_used_at) VALUES(?,?,?,?,?) "
                             "ON CONFLICT(message_id) DO UPDATE SET path=excluded.path, model_fingerprint=excluded.model_fingerprint, "
                             "bytes=excluded.bytes, last_used_at=excluded.last_used_at"));
    q.addBindValue(messageId);
    q.addBindValue(path);
    q.addBindValue(fingerprint);
    q.addBindValue(bytes);
    q.addBindValue(QDateTime::currentMSecsSinceEpoch());
    if (!q.exec()) {
        m_error = q.lastError().text();
        m_db.rollback();
        return false;
    }
    QSqlQuery find(m_db), drop(m_db);
    find.prepare(QStringLiteral("SELECT path FROM park_files WHERE message_id=?"));
    drop.prepare(QStringLiteral("DELETE FROM park_files WHERE message_id=?"));
    int depth = 0;
    for (qint64 id = parentOf(m_db, messageId); id && depth < 100000; id = parentOf(m_db, id), ++depth) {
        find.bindValue(0, id);
        if (!find.exec() || !find.next()) continue;
        const QString old = find.value(0).toString();
        find.finish();
        drop.bindValue(0, id);
        if (!drop.exec()) continue;
        if (old != path) *superseded << old;
    }
    if (!m_db.commit()) {
        m_error = m_db.lastError().text();
        m_db.rollback();
        superseded->clear();
        return false;
    }
    return true;
}

ParkRef ParkRecords::findOnPath(qint64 leafId, const QString& fingerprint) const {
    QSqlQuery q(m_db);
    q.prepare(QStringLiteral("SELECT path, bytes FROM park_files WHERE message_id=? AND model_fingerprint=?"));
    int depth = 0;
    for (qint64 id = leafId; id && depth < 100000; id = parentOf(m_db, id), ++depth) {
        q.bindValue(0, id);
        q.bindValue(1, fingerprint);
        if (q.exec() && q.next()) return ParkRef{id, q.value(0).toString(), q.value(1).toLongLong()};
    }
    return {};
}

bool ParkRecords::touch(qint64 messageId) {
    QSqlQuery q(m_db);
    q.prepare(QStringLiteral("UPDATE park_files SET last_used_at=? WHERE message_id=?"));
    q.addBindValue(QDateTime::currentMSecsSinceEpoch());
    q.addBindValue(messageId);
    if (q.exec()) return true;
    m_error = q.lastError().text();
    return false;
}

int ParkRecords::forget(const QStringList& paths) {
    int n = 0;
    QSqlQuery q(m_db);
    q.prepare(QStringLiteral("DELETE FROM park_files WHERE path=?"));
    for (const QString& p : paths) {
        q.bindValue(0, p);
        if (q.exec()) n += q.numRowsAffected();
    }
    return n;
}

QList<ParkRef> ParkRecords::all() const {
    QList<ParkRef> out;
    QSqlQuery q(m_db);
    if (!q.exec(QStringLiteral("SELECT message_id, path, bytes FROM park_files ORDER BY message_id"))) return out;
    while (q.next()) out.push_back(ParkRef{q.value(0).toLongLong(), q.value(1).toString(), q.value(2).toLongLong()});
    return out;
}

}  // namespace arbor::app
