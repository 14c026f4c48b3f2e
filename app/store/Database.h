// The conversation database: one SQLite file (WAL) under the data dir.
//
// Schema changes are steps migrateTo1() ... migrateToN(), keyed on PRAGMA user_version, each
// inside BEGIN IMMEDIATE ... COMMIT. A file newer than this code is refused; an existing file
// is copied aside before any migration. PRAGMA foreign_keys=ON is run as a query on every
// connection (Qt's connect option for it is silently ignored).
#pragma once

#include <QSqlDatabase>
#include <QString>

namespace arbor::app {

class Database {
public:
    static constexpr int kSchemaVersion = 1;

    // Opens (creating if needed) `path` under the connection name `connection`. On failure
    // returns false and sets error() to a readable reason.
    bool open(const QString& path, const QString& connection = QStringLiteral("arbor"));
    void close();
    ~Database();

    QSqlDatabase handle() const { return m_db; }
    QString error() const { return m_error; }
    QString path() const { return m_path; }
    int schemaVersion() const;
    // The backup written before the last migration, if any.
    QString lastBackupPath() const { return m_backup; }

private:
    bool configureConnection();
    bool migrate();
    bool runStep(int version, bool (Database::*step)());
    bool exec(const QString& sql);
    bool migrateTo1();

    QSqlDatabase m_db;
    QString m_connection;
    QString m_path;
    QString m_error;
    QString m_backup;
};

}  // namespace arbor::app
