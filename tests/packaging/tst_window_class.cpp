// The desktop file's StartupWMClass must match the class X11 actually gives Arbor's window,
// or docks show a second, icon-less entry for the running app. Runs the real binary on Xvfb
// and reads the top-level windows' WM_CLASS with xwininfo.
#include "shell/Application.h"
#include "shell/SingleInstance.h"

#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

namespace {

QString desktopValue(const QString& key) {
    QFile f(QStringLiteral(ARBOR_PACKAGING_DIR "/%1.desktop").arg(QLatin1String(arbor::app::kAppId)));
    if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) return {};
    for (const QByteArray& line : f.readAll().split('\n'))
        if (line.startsWith(key.toUtf8() + '=')) return QString::fromUtf8(line.mid(key.size() + 1)).trimmed();
    return {};
}

}  // namespace

class TestWindowClass : public QObject {
    Q_OBJECT
private slots:
    void x11ClassIsStartupWMClass() {
        for (const char* tool : {"xvfb-run", "xwininfo"}) {
            if (QStandardPaths::findExecutable(QString::fromLatin1(tool)).isEmpty()) {
                if (qEnvironmentVariable("CI") == QLatin1String("true")) QFAIL(tool);
                QSKIP("xvfb-run or xwininfo missing (packages xvfb, x11-utils)");
            }
        }
        QTemporaryDir tmp;
        // Start arbor on the xcb platform, wait for its main window to map, list the windows.
        const QString script = QStringLiteral(
            "\"$ARBOR\" --data-dir \"$DATA\" & pid=$!\n"
            "for i in $(seq 1 150); do\n"
            "  out=$(xwininfo -root -tree 2>/dev/null | grep '(\"')\n"
            "  [ -n \"$out\" ] && { sleep 0.3; xwininfo -root -tree | grep '(\"'; kill $pid; exit 0; }\n"
            "  kill -0 $pid 2>/dev/null || exit 3\n"
            "  sleep 0.2\n"
            "done\n"
            "kill $pid; exit 4\n");
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("xcb"));
        env.insert(QStringLiteral("ARBOR"), QStringLiteral(ARBOR_GUI_BINARY));
        env.insert(QStringLiteral("DATA"), tmp.filePath("profile"));
        env.remove(QStringLiteral("WAYLAND_DISPLAY"));
        p.setProcessEnvironment(env);
        p.start(QStringLiteral("xvfb-run"), {"-a", "-s", "-screen 0 1600x1000x24", "sh", "-c", script});
        QVERIFY(p.waitForFinished(60000));
        QLocalServer::removeServer(arbor::app::SingleInstance::socketPath(tmp.filePath("profile")));  // killed: left behind
        const QString out = QString::fromUtf8(p.readAllStandardOutput());
        QVERIFY2(p.exitCode() == 0, qPrintable(QStringLiteral("exit %1\n%2\n%3").arg(p.exitCode()).arg(out, p.readAllStandardError())));

        // Lines look like:  0x200007 "Arbor": ("arbor" "arbor")  1180x760+0+0  +0+0
        const QString wmClass = desktopValue(QStringLiteral("StartupWMClass"));
        QVERIFY(!wmClass.isEmpty());
        static const QRegularExpression re(QStringLiteral("\\(\"([^\"]*)\" \"([^\"]*)\"\\)"));
        int windows = 0;
        for (auto it = re.globalMatch(out); it.hasNext();) {
            const auto m = it.next();
            ++windows;
            QCOMPARE(m.captured(2), wmClass);  // the class part, which docks match first
            QCOMPARE(m.captured(1), QStringLiteral("arbor"));
        }
        QVERIFY2(windows >= 1, qPrintable(out));
        qInfo("%s", qPrintable(out.trimmed()));
    }
};

QTEST_GUILESS_MAIN(TestWindowClass)
#include "tst_window_class.moc"
