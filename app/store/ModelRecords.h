// The model library's rows in the database: imported GGUF files, recorded by path (never
// copied) with the header facts that `arbor-cli info` shows.
#pragma once

#include <QSqlDatabase>
#include <QString>
#include <QVector>

namespace arbor::app {

struct ModelRecord {
    qint64 id = 0;
    QString path, fingerprint, name, architecture, mainType;
    qint64 fileSize = 0, parameters = 0, contextLength = 0;
    bool missing = false;
};

class ModelRecords {
public:
    explicit ModelRecords(QSqlDatabase db) : m_db(std::move(db)) {}

    // Validates the file (GGUF header, known architecture metadata) and records it. Returns
    // the row id, or 0 with `why` set to a readable reason.
    qint64 importFile(const QString& path, QString* why);
    QVector<ModelRecord> all() const;
    // Marks rows whose file disappeared (moved or deleted) as missing; returns how many changed.
    int refreshMissing();

private:
    QSqlDatabase m_db;
};

// A cheap identity for a model file: size plus a hash of its header and tensor table.
QString modelFingerprint(const QString& path, QString* why);

}  // namespace arbor::app
