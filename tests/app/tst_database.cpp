// The conversation database: schema creation, pragmas on every connection, refusing a newer
// file, backing up before a migration.
#include "store/Database.h"
#include "store/ModelRecords.h"

#include <QSqlQuery>
#include <QTemporaryDir>
#include <QtTest>

using arbor::app::Database;

class TestDatabase : public QObject {
    Q_OBJECT
private slots:
    void createsSchemaWithPragmas() {
        QTemporaryDir dir;
        Database db;
        QVERIFY2(db.open(dir.filePath("arbor.sqlite")), qPrintable(db.error()));
        QCOMPARE(db.schemaVersion(), Database::kSchemaVersion);
        QSqlQuery q(db.handle());
        QVERIFY(q.exec("PRAGMA foreign_keys") && q.next());
        QCOMPARE(q.value(0).toInt(), 1);
        QVERIFY(q.exec("PRAGMA journal_mode") && q.next());
        QCOMPARE(q.value(0).toString(), QStringLiteral("wal"));
        for (const char* table : {"conversations", "messages", "models", "park_files", "messages_fts"}) {
            QVERIFY(q.exec(QStringLiteral("SELECT count(*) FROM sqlite_master WHERE name='%1'").arg(table)) && q.next());
            QVERIFY2(q.value(0).toInt() == 1, table);
        }
    }

    void foreignKeysAreEnforced() {
        QTemporaryDir dir;
        Database db;
        QVERIFY(db.open(dir.filePath("arbor.sqlite")));
        QSqlQuery q(db.handle());
        // A message pointing at a conversation that does not exist must be refused.
        QVERIFY(!q.exec("INSERT INTO messages(conversation_id, role, created_at) VALUES (999, 'user', 0)"));
    }

    void fullTextSearchFindsMessages() {
        QTemporaryDir dir;
        Database db;
        QVERIFY(db.open(dir.filePath("arbor.sqlite")));
        QSqlQuery q(db.handle());
        QVERIFY(q.exec("INSERT INTO conversations(title, created_at, updated_at) VALUES ('t', 1, 1)"));
        QVERIFY(q.exec("INSERT INTO messages(conversation_id, role, content, created_at) VALUES (1, 'user', 'the quick brown fox', 1)"));
        QVERIFY(q.exec("SELECT rowid FROM messages_fts WHERE messages_fts MATCH 'brown'") && q.next());
        QCOMPARE(q.value(0).toInt(), 1);
    }

    void refusesNewerDatabase() {
        QTemporaryDir dir;
        const QString path = dir.filePath("arbor.sqlite");
        {
            Database db;
            QVERIFY(db.open(path));
            QSqlQuery q(db.handle());
            QVERIFY(q.exec(QStringLiteral("PRAGMA user_version=%1").arg(Database::kSchemaVersion + 5)));
        }
        Database db;
        QVERIFY(!db.open(path));
        QVERIFY2(db.error().contains("newer Arbor"), qPrintable(db.error()));
    }

    void refusesGarbageFile() {
        QTemporaryDir dir;
        const QString path = dir.filePath("arbor.sqlite");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray(4096, 'x'));
        f.close();
        Database db;
        QVERIFY(!db.open(path));
        QVERIFY(!db.error().isEmpty());
    }

    void modelLibraryImportsAndRejects() {
        QTemporaryDir dir;
        Database db;
        QVERIFY(db.open(dir.filePath("arbor.sqlite")));
        arbor::app::ModelRecords models(db.handle());
        QString why;
        const QString demo = QString::fromLocal8Bit(qgetenv("ARBOR_SOURCE_DIR")) + "/resources/models/stories260K.gguf";
        QVERIFY2(models.importFile(demo, &why) > 0, qPrintable(why));
        const auto all = models.all();
        QCOMPARE(all.size(), 1);
        QCOMPARE(all[0].architecture, QStringLiteral("llama"));
        QCOMPARE(all[0].fileSize, 1185376);
        QCOMPARE(all[0].contextLength, 2048);
        // A text file is rejected with the reason.
        const QString bogus = dir.filePath("notes.gguf");
        QFile f(bogus);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("hello world, not a model");
        f.close();
        QCOMPARE(models.importFile(bogus, &why), 0);
        QVERIFY2(why.contains("not a GGUF file"), qPrintable(why));
    }
};

QTEST_GUILESS_MAIN(TestDatabase)
#include "tst_database.moc"
