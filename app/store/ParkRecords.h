// The park_files table: which park file holds the context that ends at a message (a context
// node), written for which model. A conversation's context is found by walking up from the
// leaf of its active path to the deepest message with a park file for the loaded model, so
// a branch switch or an edit still wakes the longest context that the new path starts with.
//
// The files themselves are the engine worker's (it writes, wakes and evicts them); this only
// keeps the references. A reference whose file is gone costs a re-prefill, nothing more.
#pragma once

#include <QSqlDatabase>
#include <QString>
#include <QStringList>

namespace arbor::app {

struct ParkRef {
    qint64 messageId = 0;  // 0: none found
    QString path;
    qint64 bytes = 0;
};

class ParkRecords {
public:
    explicit ParkRecords(QSqlDatabase db) : m_db(std::move(db)) {}
    QString lastError() const { return m_error; }

    // Records `path` as the park file of the context ending at `messageId`. `superseded` gets
    // the files of that message's ancestors (their contexts are prefixes of this one): their
    // references are dropped, and the caller deletes the files. False when the message is gone.
    bool record(qint64 messageId, const QString& path, const QString& fingerprint, qint64 bytes, QStringList* superseded);
    // The deepest message from `leafId` up to the root with a park file for `fingerprint`.
    ParkRef findOnPath(qint64 leafId, const QString& fingerprint) const;
    // Marks a reference used now (the least recently used files are evicted first).
    bool touch(qint64 messageId);
    // Drops the references to these files (evicted, or found bad).
    int forget(const QStringList& paths);
    // Every reference, for tests: message id -> path.
    QList<ParkRef> all() const;

private:
    QSqlDatabase m_db;
    mutable QString m_error;
};

}  // namespace arbor::app
