// `arbor --screenshot FILE.png` runs the whole start-up, renders the window and saves it.
#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

class TestScreenshot : public QObject {
    Q_OBJECT
private slots:
    void writesWindowPng() {
        QTemporaryDir dir;
        const QString png = dir.filePath("shot.png");
        const QString data = dir.filePath("profile");
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("QT_QPA_PLATFORM", "offscreen");
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(ARBOR_GUI_BINARY), {"--data-dir", data, "--screenshot", png});
        QVERIFY(p.waitForFinished(60000));
        QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0, p.readAllStandardError().constData());

        QImage img(png);
        QVERIFY2(!img.isNull(), "screenshot is not a readable PNG");
        QCOMPARE(img.size(), QSize(1180, 760));  // the window's size
        QSet<QRgb> colours;
        for (int y = 0; y < img.height(); y += 7)
            for (int x = 0; x < img.width(); x += 7) colours.insert(img.pixel(x, y));
        QVERIFY2(colours.size() > 5, "the screenshot is (nearly) one colour");
        // The complete start-up ran: the database exists in the data dir.
        QVERIFY(QFile::exists(data + "/arbor.sqlite"));
        QVERIFY(QFile::exists(data + "/settings.ini"));

        const QString keep = qEnvironmentVariable("ARBOR_SCREENSHOT_DIR");
        if (!keep.isEmpty()) {
            QDir().mkpath(keep);
            QFile::remove(keep + "/empty-first-run.png");
            QFile::copy(png, keep + "/empty-first-run.png");
        }
    }

    void badUsageExitsOne() {
        QProcess p;
        p.start(QStringLiteral(ARBOR_GUI_BINARY), {"--no-such-flag"});
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 1);
        QVERIFY(p.readAllStandardError().startsWith("error: "));
    }

    void versionPrints() {
        QProcess p;
        p.start(QStringLiteral(ARBOR_GUI_BINARY), {"--version"});
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 0);
        QVERIFY(p.readAllStandardOutput().startsWith("arbor "));
    }
};

QTEST_GUILESS_MAIN(TestScreenshot)
#include "tst_screenshot.moc"
