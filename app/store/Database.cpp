#include "store/Database.h"

#include <QFile>
#include <QFileInfo>
#include <QSqlError>
#include <QSqlQuery>

namespace arbor::app {

Database::~Database() { close(); }

void Database::close() {
    if (m_connection.isEmpty()) return;
    m_db.close();
    m_db = QSqlDatabase();
    QSqlDatabase::removeDatabase(m_connection);
    m_connection.clear();
}

bool Database::exec(const QString& sql) {
    QSqlQuery q(m_db);
    if (!q.exec(sql)) {
        m_error = QStringLiteral("%1: %2 (while running: %3)").arg(m_path, q.lastError().text(), sql.simplified().left(120));
        return false;
    }
    return true;
}

bool Database::open(const QString& path, const QString& connection) {
    close();
    m_path = path;
    m_connection = connection;
    m_db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), connection);
    if (!m_db.isValid()) {
        m_error = QStringLiteral("the Qt SQLite driver is not installed (package libqt6sql6-sqlite)");
        return false;
    }
    m_db.setDatabaseName(path);
    m_db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=5000"));
    if (!m_db.open()) {
        m_error = QStringLiteral("%1: cannot open database: %2").arg(path, m_db.lastError().text());
        return false;
    }
    return configureConnection() && migrate();
}

bool Database::configureConnection() {
    return exec(QStringLiteral("PRAGMA journal_mode=WAL")) && exec(QStringLiteral("PRAGMA synchronous=NORMAL")) &&
           exec(QStringLiteral("PRAGMA foreign_keys=ON"));
}

int Database::schemaVersion() const {
    QSqlQuery q(m_db);
    if (!q.exec(QStringLiteral("PRAGMA user_version")) || !q.next()) return -1;
    return q.value(0).toInt();
}

bool Database::migrate() {
    const int have = schemaVersion();
    if (have < 0) {
        m_error = QStringLiteral("%1: cannot read the schema version: not an SQLite database?").arg(m_path);
        return false;
    }
    if (have > kSchemaVersion) {
        m_error = QStringLiteral("%1 was written by a newer Arbor (schema %2, this build knows up to %3); "
                                 "refusing to open it so nothing is lost. Update Arbor or use --data-dir.")
                      .arg(m_path)
                      .arg(have)
                      .arg(kSchemaVersion);
        return false;
    }
    if (have == kSchemaVersion) return true;
    if (have > 0) {
        // Back up before touching an existing database.
        exec(QStringLiteral("PRAGMA wal_checkpoint(TRUNCATE)"));
        m_backup = QStringLiteral("%1.bak-v%2").arg(m_path).arg(have);
        QFile::remove(m_backup);
        if (!QFile::copy(m_path, m_backup)) {
            m_error = QStringLiteral("%1: cannot write the backup %2 before migrating").arg(m_path, m_backup);
            return false;
        }
    }
    using Step = bool (Database::*)();
    const Step steps[] = {&Database::migrateTo1};
    for (int v = have + 1; v <= kSchemaVersion; ++v)
        if (!runStep(v, steps[v - 1])) return false;
    return true;
}

bool Database::runStep(int version, bool (Database::*step)()) {
    if (!exec(QStringLiteral("BEGIN IMMEDIATE"))) return false;
    if (!(this->*step)() || !exec(QStringLiteral("PRAGMA user_version=%1").arg(version))) {
        const QString why = m_error;
        exec(QStringLiteral("ROLLBACK"));
        m_error = QStringLiteral("migration to schema %1 failed: %2").arg(version).arg(why);
        return false;
    }
    return exec(QStringLiteral("COMMIT"));
}

bool Database::migrateTo1() {
    const char* statements[] = {
        R"(CREATE TABLE models (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            fingerprint TEXT NOT NULL,
            name TEXT NOT NULL,
            architecture TEXT NOT NULL,
            main_type TEXT,
            file_size INTEGER NOT NULL,
            parameters INTEGER,
            context_length INTEGER,
            info_json TEXT NOT NULL,
            imported_at INTEGER NOT NULL,
            missing INTEGER NOT NULL DEFAULT 0))",
        R"(CREATE TABLE conversations (
            id INTEGER PRIMARY KEY,
            title TEXT NOT NULL DEFAULT '',
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL,
            model_path TEXT,
            model_fingerprint TEXT,
            system_prompt TEXT NOT NULL DEFAULT '',
            sampler_json TEXT NOT NULL DEFAULT '{}',
            pinned INTEGER NOT NULL DEFAULT 0,
            archived INTEGER NOT NULL DEFAULT 0,
            deleted_at INTEGER,
            root_message_id INTEGER REFERENCES messages(id) ON DELETE SET NULL))",
        R"(CREATE TABLE messages (
            id INTEGER PRIMARY KEY,
            conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            parent_id INTEGER REFERENCES messages(id) ON DELETE CASCADE,
            role TEXT NOT NULL CHECK (role IN ('system','user','assistant','tool')),
            content TEXT NOT NULL DEFAULT '',
            reasoning TEXT NOT NULL DEFAULT '',
            created_at INTEGER NOT NULL,
            token_count INTEGER,
            state TEXT NOT NULL DEFAULT 'complete' CHECK (state IN ('complete','streaming','interrupted','error')),
            active_child_id INTEGER REFERENCES messages(id) ON DELETE SET NULL,
            decode_tok_s REAL,
            prefill_tok_s REAL,
            ttft_ms REAL,
            stop_reason TEXT,
            backend TEXT,
            contention TEXT))",
        "CREATE INDEX messages_by_parent ON messages(parent_id)",
        "CREATE INDEX messages_by_conversation ON messages(conversation_id)",
        R"(CREATE TABLE park_files (
            message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
            path TEXT NOT NULL,
            model_fingerprint TEXT NOT NULL,
            bytes INTEGER NOT NULL,
            last_used_at INTEGER NOT NULL))",
        R"(CREATE VIRTUAL TABLE messages_fts USING fts5(content, reasoning, content='messages', content_rowid='id'))",
        R"(CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN
            INSERT INTO messages_fts(rowid, content, reasoning) VALUES (new.id, new.content, new.reasoning); END)",
        R"(CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN
            INSERT INTO messages_fts(messages_fts, rowid, content, reasoning) VALUES ('delete', old.id, old.content, old.reasoning); END)",
        R"(CREATE TRIGGER messages_au AFTER UPDATE OF content, reasoning ON messages BEGIN
            INSERT INTO messages_fts(messages_fts, rowid, content, reasoning) VALUES ('delete', old.id, old.content, old.reasoning);
            INSERT INTO messages_fts(rowid, content, reasoning) VALUES (new.id, new.content, new.reasoning); END)",
    };
    for (const char* s : statements)
        if (!exec(QString::fromUtf8(s))) return false;
    return true;
}

}  // namespace arbor::app
