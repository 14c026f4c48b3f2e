// One Arbor per data folder (shell/SingleInstance): the hand-off message survives a round trip
// and every malformed one is refused; the socket is keyed by the data folder; and with real
// processes a second `arbor FILE.gguf` gives the file to the running one and exits, while
// --screenshot and --fake-engine runs, other data folders and a crashed primary do not hand off.
#include "packaging_support.hpp"
#include "shell/SingleInstance.h"

#include <QDir>
#include <QFile>
#include <QLocalSocket>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>
#include <QtEndian>
#include <QtTest>

#include <memory>

using arbor::app::SingleInstance;
using arbor::test::importedModelPaths;

namespace {

QString demoModel() { return qEnvironmentVariable("ARBOR_SOURCE_DIR") + QStringLiteral("/resources/models/stories260K.gguf"); }

QProcessEnvironment offscreen() {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    return env;
}

// A running `arbor` that the test owns; killed at the end of the test function, and the
// socket it leaves behind (a killed process cannot remove it) removed.
struct Arbor {
    std::unique_ptr<QProcess> p = std::make_unique<QProcess>();
    QByteArray err;
    QString dataDir;

    void start(const QStringList& args) {
        dataDir = args.value(args.indexOf("--data-dir") + 1);
        p->setProcessEnvironment(offscreen());
        p->start(QStringLiteral(ARBOR_GUI_BINARY), args);
    }
    QByteArray stderrText() {
        QCoreApplication::processEvents();
        err += p->readAllStandardError();
        return err;
    }
    bool running() const { return p->state() == QProcess::Running; }
    ~Arbor() {
        if (p->state() != QProcess::NotRunning) {
            p->kill();
            p->waitForFinished(5000);
        }
        if (!dataDir.isEmpty()) QLocalServer::removeServer(SingleInstance::socketPath(dataDir));
    }
};

bool waitForListener(const QString& dataDir, int ms = 20000) {
    QDeadlineTimer t(ms);
    while (!t.hasExpired()) {
        if (QFile::exists(SingleInstance::socketPath(dataDir))) return true;
        QThread::msleep(50);
    }
    return false;
}

}  // namespace

class TestSingleInstance : public QObject {
    Q_OBJECT

private slots:
    // ---- the message
    void roundTrip_data() {
        QTest::addColumn<QStringList>("files");
        QTest::addColumn<bool>("newChat");
        QTest::addColumn<QByteArray>("token");
        QTest::newRow("nothing") << QStringList{} << false << QByteArray();
        QTest::newRow("new chat") << QStringList{} << true << QByteArray("tok-123");
        QTest::newRow("files") << QStringList{"/m/a.gguf", "/m/b c.gguf"} << false << QByteArray();
        QTest::newRow("odd names") << QStringList{QString::fromUtf8("/m/ünï cødé.gguf"), "/m/line\nbreak.gguf", "/m/;%F"}
                                   << true << QByteArray(300, 'x');
    }
    void roundTrip() {
        QFETCH(QStringList, files);
        QFETCH(bool, newChat);
        QFETCH(QByteArray, token);
        const QByteArray frame = SingleInstance::encode({files, newChat, token});
        QVERIFY(frame.size() >= 4);
        QCOMPARE(qFromBigEndian<quint32>(frame.constData()), quint32(frame.size() - 4));
        SingleInstance::Request r;
        QString why;
        QVERIFY2(SingleInstance::decode(frame.mid(4), &r, &why), qPrintable(why));
        QCOMPARE(r.files, files);
        QCOMPARE(r.newChat, newChat);
        QCOMPARE(r.activationToken, token);
    }

    void relativePathsBecomeAbsolute() {
        const QByteArray frame = SingleInstance::encode({{"model.gguf"}, false, {}});
        SingleInstance::Request r;
        QString why;
        QVERIFY2(SingleInstance::decode(frame.mid(4), &r, &why), qPrintable(why));
        QCOMPARE(r.files, QStringList{QDir::current().absoluteFilePath("model.gguf")});
    }

    // Every strict prefix of a valid message, and every single-byte change to its header, is
    // either refused with a reason or decodes to something well-formed: never a crash.
    void truncatedAndCorruptAreRefused() {
        const QByteArray payload = SingleInstance::encode({{"/m/a.gguf", "/m/b.gguf"}, true, "tok"}).mid(4);
        for (int n = 0; n < payload.size(); ++n) {
            SingleInstance::Request r;
            QString why;
            QVERIFY2(!SingleInstance::decode(payload.left(n), &r, &why), qPrintable(QString::number(n)));
            QVERIFY(!why.isEmpty());
        }
        for (int i = 0; i < 12; ++i) {
            QByteArray bad = payload;
            bad[i] = char(bad[i] ^ 0xA5);
            SingleInstance::Request r;
            QString why;
            if (SingleInstance::decode(bad, &r, &why)) {
                for (const QString& f : r.files) QVERIFY(QDir::isAbsolutePath(f));
            } else {
                QVERIFY(!why.isEmpty());
            }
        }
    }

    void malformedIsRefused_data() {
        QTest::addColumn<QByteArray>("payload");
        QTest::addColumn<QString>("reason");
        auto build = [](quint32 magic, quint32 count, const QStringList& files, bool trailing) {
            QByteArray b;
            QDataStream out(&b, QIODevice::WriteOnly);
            out.setVersion(QDataStream::Qt_6_4);
            out << magic << count;
            for (const QString& f : files) out << f;
            out << false << QByteArray();
            if (trailing) out << quint8(7);
            return b;
        };
        QTest::newRow("bad magic") << build(0x12345678, 0, {}, false) << "bad magic";
        QTest::newRow("relative path") << build(0x41524231, 1, {"a.gguf"}, false) << "not an absolute path";
        QTest::newRow("empty path") << build(0x41524231, 1, {""}, false) << "not an absolute path";
        QTest::newRow("huge count") << build(0x41524231, 0xFFFFFFF0u, {}, false) << "over";
        QTest::newRow("count past data") << build(0x41524231, 3, {"/a"}, false) << "truncated";
        QTest::newRow("trailing bytes") << build(0x41524231, 0, {}, true) << "unexpected bytes";
        QTest::newRow("over the limit") << QByteArray(SingleInstance::kMaxMessage + 1, 'A') << "limit";
    }
    void malformedIsRefused() {
        QFETCH(QByteArray, payload);
        QFETCH(QString, reason);
        SingleInstance::Request r;
        QString why;
        QVERIFY(!SingleInstance::decode(payload, &r, &why));
        QVERIFY2(why.contains(reason), qPrintable(why));
    }

    // ---- the key
    void socketIsKeyedByDataDir() {
        QTemporaryDir tmp;
        QVERIFY(QDir().mkpath(tmp.filePath("a")) && QDir().mkpath(tmp.filePath("b")));
        QVERIFY(QFile::link(tmp.filePath("a"), tmp.filePath("link-to-a")));
        const QString a = SingleInstance::socketPath(tmp.filePath("a"));
        QCOMPARE(SingleInstance::socketPath(tmp.filePath("a/")), a);
        QCOMPARE(SingleInstance::socketPath(tmp.filePath("b/../a")), a);
        QCOMPARE(SingleInstance::socketPath(tmp.filePath("link-to-a")), a);
        QVERIFY(SingleInstance::socketPath(tmp.filePath("b")) != a);
        QVERIFY(a.size() <= 100);  // fits a sockaddr_un
        QCOMPARE(SingleInstance::lockPath(tmp.filePath("link-to-a")), QFileInfo(tmp.filePath("a")).canonicalFilePath() + "/instance.lock");
    }

    // ---- in one process: the primary answers a second claim made from another thread
    void inProcessHandOff() {
        QTemporaryDir tmp;
        SingleInstance primary(tmp.path());
        QString why;
        QCOMPARE(primary.claim({}, &why), SingleInstance::Role::Primary);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        QList<SingleInstance::Request> got;
        connect(&primary, &SingleInstance::requestReceived, this, [&](const SingleInstance::Request& r) { got << r; });

        SingleInstance::Role role = SingleInstance::Role::Primary;
        QString whySecond;
        QThread* t = QThread::create([&] {
            SingleInstance second(tmp.path());
            role = second.claim({{"/x/model.gguf"}, true, "token-1"}, &whySecond);
        });
        t->start();
        QTRY_VERIFY_WITH_TIMEOUT(t->isFinished(), 10000);
        delete t;
        QCOMPARE(role, SingleInstance::Role::HandedOff);
        QCOMPARE(got.size(), 1);
        QCOMPARE(got[0].files, QStringList{"/x/model.gguf"});
        QVERIFY(got[0].newChat);
        QCOMPARE(got[0].activationToken, QByteArray("token-1"));
    }

    // A peer that sends garbage is dropped; the primary keeps serving.
    void garbageDoesNotStopThePrimary() {
        QTemporaryDir tmp;
        SingleInstance primary(tmp.path());
        QString why;
        QCOMPARE(primary.claim({}, &why), SingleInstance::Role::Primary);
        int received = 0;
        connect(&primary, &SingleInstance::requestReceived, this, [&] { ++received; });
        QLocalSocket s;
        s.connectToServer(SingleInstance::socketPath(tmp.path()));
        QVERIFY(s.waitForConnected(2000));
        s.write(QByteArray("\x00\x00\x00\x08garbage!", 12));
        s.flush();
        QTRY_COMPARE_WITH_TIMEOUT(s.state(), QLocalSocket::UnconnectedState, 5000);
        QCOMPARE(received, 0);

        SingleInstance::Role role = SingleInstance::Role::Primary;
        QThread* t = QThread::create([&] { role = SingleInstance(tmp.path()).claim({{"/y.gguf"}, false, {}}, nullptr); });
        t->start();
        QTRY_VERIFY_WITH_TIMEOUT(t->isFinished(), 10000);
        delete t;
        QCOMPARE(role, SingleInstance::Role::HandedOff);
        QCOMPARE(received, 1);
    }

    // ---- real processes
    void secondStartHandsFilesToTheFirst() {
        QTemporaryDir tmp;
        const QString data = tmp.filePath("profile");
        QVERIFY(QFile::copy(demoModel(), tmp.filePath("handed.gguf")));
        QVERIFY(QFile::copy(demoModel(), tmp.filePath("relative.gguf")));

        Arbor first;
        first.start({"--data-dir", data});
        QVERIFY2(waitForListener(data), first.stderrText().constData());
        QVERIFY(importedModelPaths(data).isEmpty());

        QProcess second;
        second.setProcessEnvironment(offscreen());
        QElapsedTimer clock;
        clock.start();
        second.start(QStringLiteral(ARBOR_GUI_BINARY), {"--data-dir", data, tmp.filePath("handed.gguf")});
        QVERIFY(second.waitForFinished(20000));
        QVERIFY2(second.exitCode() == 0, second.readAllStandardError().constData());
        qInfo("hand-off took %lld ms", clock.elapsed());
        QVERIFY2(first.running(), first.stderrText().constData());
        // The first instance imports it (on its store thread).
        QTRY_COMPARE_WITH_TIMEOUT(importedModelPaths(data), QStringList{tmp.filePath("handed.gguf")}, 10000);
        QTRY_VERIFY_WITH_TIMEOUT(first.stderrText().contains("handed over"), 5000);

        // A relative name is resolved against the second start's working folder.
        QProcess third;
        third.setProcessEnvironment(offscreen());
        third.setWorkingDirectory(tmp.path());
        third.start(QStringLiteral(ARBOR_GUI_BINARY), {"--data-dir", data, "relative.gguf"});
        QVERIFY(third.waitForFinished(20000));
        QCOMPARE(third.exitCode(), 0);
        QTRY_COMPARE_WITH_TIMEOUT(importedModelPaths(data), (QStringList{tmp.filePath("handed.gguf"), tmp.filePath("relative.gguf")}), 10000);
        QVERIFY(first.running());
    }

    void newChatActionIsHandedOff() {
        QTemporaryDir tmp;
        const QString data = tmp.filePath("profile");
        Arbor first;
        first.start({"--data-dir", data});
        QVERIFY2(waitForListener(data), first.stderrText().constData());
        QProcess second;
        second.setProcessEnvironment(offscreen());
        second.start(QStringLiteral(ARBOR_GUI_BINARY), {"--data-dir", data, "--new-chat"});
        QVERIFY(second.waitForFinished(20000));
        QVERIFY2(second.exitCode() == 0, second.readAllStandardError().constData());
        QTRY_VERIFY_WITH_TIMEOUT(first.stderrText().contains("new chat"), 5000);
    }

    // --screenshot and --fake-engine runs are tests: they never hand off, so they run (and,
    // for --screenshot, render) even while an Arbor holds the same data folder.
    void testRunsNeverHandOff() {
        QTemporaryDir tmp;
        const QString data = tmp.filePath("profile");
        Arbor first;
        first.start({"--data-dir", data});
        QVERIFY2(waitForListener(data), first.stderrText().constData());

        QProcess shot;
        shot.setProcessEnvironment(offscreen());
        shot.start(QStringLiteral(ARBOR_GUI_BINARY), {"--data-dir", data, "--screenshot", tmp.filePath("s.png")});
        QVERIFY(shot.waitForFinished(60000));
        QVERIFY2(shot.exitCode() == 0, shot.readAllStandardError().constData());
        QVERIFY(QImage(tmp.filePath("s.png")).width() > 100);

        Arbor fake;
        fake.start({"--data-dir", data, "--fake-engine", tmp.filePath("no-script.json")});
        // A handing-off start would have exited within a second; this one must not have asked.
        fake.p->waitForFinished(3000);
        QTest::qWait(300);
        QVERIFY(first.running());
        QVERIFY2(!first.stderrText().contains("handed over"), first.stderrText().constData());
        QVERIFY(!first.stderrText().contains("new chat"));
    }

    void otherDataDirsAndCrashedPrimaries() {
        QTemporaryDir tmp;
        const QString a = tmp.filePath("a"), b = tmp.filePath("b");
        Arbor first;
        first.start({"--data-dir", a});
        QVERIFY2(waitForListener(a), first.stderrText().constData());

        // Another data folder: its own primary, which keeps running.
        Arbor other;
        other.start({"--data-dir", b});
        QVERIFY2(waitForListener(b), other.stderrText().constData());
        QVERIFY(!other.p->waitForFinished(1000));
        QVERIFY(first.running() && other.running());

        // The first crashes (SIGKILL: lock and socket files stay behind); the next start must
        // take over the folder instead of handing off to nobody or waiting.
        first.p->kill();
        QVERIFY(first.p->waitForFinished(5000));
        QVERIFY(QFile::exists(SingleInstance::lockPath(a)));
        QVERIFY(QFile::copy(demoModel(), tmp.filePath("after-crash.gguf")));
        Arbor next;
        next.start({"--data-dir", a, tmp.filePath("after-crash.gguf")});
        QVERIFY(!next.p->waitForFinished(3000));
        QVERIFY2(next.running(), next.stderrText().constData());
        QTRY_COMPARE_WITH_TIMEOUT(importedModelPaths(a), QStringList{tmp.filePath("after-crash.gguf")}, 10000);
        QLocalSocket s;
        s.connectToServer(SingleInstance::socketPath(a));
        QVERIFY2(s.waitForConnected(2000), qPrintable(s.errorString()));
    }
};

QTEST_GUILESS_MAIN(TestSingleInstance)
#include "tst_single_instance.moc"
