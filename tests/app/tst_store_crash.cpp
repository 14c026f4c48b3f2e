// Kill -9 at random moments: a writer child (this binary with --writer) commits turns and
// acknowledges each commit on stdout; the parent SIGKILLs it, reopens the database and checks
// that it is intact, that every acknowledged commit is there, and that the only partial turns
// are marked interrupted.
#include "store/ChatStore.h"
#include "store/Database.h"

#include <QCoreApplication>
#include <QProcess>
#include <QRandomGenerator>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>
#include <cstdio>

using namespace arbor::app;

namespace {

// The writer: endless turns, each step acknowledged after its commit returns.
int runWriter(const QString& path) {
    Database db;
    if (!db.open(path)) return 3;
    ChatStore s(db.handle());
    for (int turn = 0;; ++turn) {
        const qint64 c = s.createConversation(QStringLiteral("turn %1").arg(turn));
        const qint64 u = s.addMessage(c, 0, "user", QStringLiteral("question %1").arg(turn));
        if (!u) return 4;
        std::printf("user %lld\n", static_cast<long long>(u));
        std::fflush(stdout);
        const qint64 a = s.beginReply(c, u);
        QString text;
        for (int k = 0; k < 5; ++k) {
            text += QStringLiteral("word%1 ").arg(k);
            if (!s.checkpointReply(a, text, {})) return 5;
            std::printf("checkpoint %lld %lld\n", static_cast<long long>(a), static_cast<long long>(text.size()));
            std::fflush(stdout);
        }
        GenerationStats st;
        st.stopReason = "eog";
        if (!s.finishReply(a, text, {}, "complete", st)) return 6;
        std::printf("done %lld %lld\n", static_cast<long long>(a), static_cast<long long>(text.size()));
        std::fflush(stdout);
    }
}

}  // namespace

class TestStoreCrash : public QObject {
    Q_OBJECT
private slots:
    void killNineRounds() {
        QTemporaryDir dir;
        const QString path = dir.filePath("arbor.sqlite");
        auto* rng = QRandomGenerator::global();
        QHash<qint64, int> acked;  // message id -> content length at least acknowledged
        QSet<qint64> done;
        QSet<qint64> users;
        for (int round = 0; round < 24; ++round) {
            QProcess child;
            child.start(QCoreApplication::applicationFilePath(), {"--writer", path});
            QVERIFY(child.waitForStarted());
            QTest::qWait(20 + rng->bounded(180));
            ::kill(static_cast<pid_t>(child.processId()), SIGKILL);
            QVERIFY(child.waitForFinished(10000));
            for (const QByteArray& line : child.readAllStandardOutput().split('\n')) {
                const auto f = line.split(' ');
                if (f.size() == 2 && f[0] == "user") users.insert(f[1].toLongLong());
                if (f.size() == 3) {
                    const qint64 id = f[1].toLongLong();
                    acked[id] = std::max(acked.value(id), f[2].toInt());
                    if (f[0] == "done") done.insert(id);
                }
            }
            // Reopen as the app would at start-up.
            Database db;
            QVERIFY2(db.open(path, QStringLiteral("check%1").arg(round)), qPrintable(db.error()));
            ChatStore s(db.handle());
            s.recoverInterrupted();
            QSqlQuery q(db.handle());
            QVERIFY(q.exec("PRAGMA integrity_check") && q.next());
            QCOMPARE(q.value(0).toString(), QStringLiteral("ok"));
            QVERIFY(q.exec("PRAGMA foreign_key_check"));
            QVERIFY2(!q.next(), "foreign key violations after a crash");
            for (qint64 id : users) {
                MessageRow m;
                QVERIFY2(s.message(id, &m), "an acknowledged user message is missing");
            }
            for (auto it = acked.cbegin(); it != acked.cend(); ++it) {
                MessageRow m;
                QVERIFY2(s.message(it.key(), &m), "an acknowledged reply is missing");
                QVERIFY(m.content.size() >= it.value());
                if (done.contains(it.key())) QCOMPARE(m.state, QStringLiteral("complete"));
            }
            QVERIFY(q.exec("SELECT count(*) FROM messages WHERE state NOT IN ('complete','interrupted')") && q.next());
            QCOMPARE(q.value(0).toInt(), 0);
        }
        QVERIFY2(users.size() > 5, "the writer made too little progress to test anything");
    }
};

int main(int argc, char** argv) {
    if (argc == 3 && qstrcmp(argv[1], "--writer") == 0) {
        QCoreApplication app(argc, argv);
        return runWriter(QString::fromLocal8Bit(argv[2]));
    }
    QCoreApplication app(argc, argv);
    TestStoreCrash t;
    return QTest::qExec(&t, argc, argv);
}
#include "tst_store_crash.moc"
