// `cmake --install` into a temporary prefix gives a working Arbor: every file in place, and the
// installed binary, away from the build tree, starts, finds the demo model under its own
// share/arbor/models and renders a screenshot.
#include "packaging_support.hpp"

#include <QDir>
#include <QFileInfo>
#include <QImage>
#include <QTemporaryDir>
#include <QtTest>

using arbor::test::runTool;

class TestInstallPrefix : public QObject {
    Q_OBJECT

    QTemporaryDir m_tmp;
    QString m_prefix;

private slots:
    void initTestCase() {
        QVERIFY(m_tmp.isValid());
        m_prefix = m_tmp.filePath("usr");
        QElapsedTimer clock;
        clock.start();
        const auto r = runTool(QStringLiteral(ARBOR_CMAKE), {"--install", qEnvironmentVariable("ARBOR_BINARY_DIR"), "--prefix", m_prefix});
        QVERIFY2(r.code == 0, (r.out + r.err).constData());
        qInfo("cmake --install took %lld ms", clock.elapsed());
    }

    void filesAreInstalled_data() {
        QTest::addColumn<QString>("path");
        for (const QString& f : arbor::test::installedFiles()) QTest::newRow(qPrintable(f)) << f;
    }
    void filesAreInstalled() {
        QFETCH(QString, path);
        const QFileInfo fi(m_prefix + QLatin1Char('/') + path);
        QVERIFY2(fi.isFile() && fi.size() > 0, qPrintable(fi.filePath()));
        if (path.startsWith(QLatin1String("bin/"))) QVERIFY(fi.isExecutable());
    }

    void versionAndHelp() {
        const auto v = runTool(m_prefix + "/bin/arbor", {"--version"});
        QCOMPARE(v.code, 0);
        QCOMPARE(v.out.trimmed(), QByteArray("arbor " ARBOR_VERSION_EXPECTED));
        const auto h = runTool(m_prefix + "/bin/arbor", {"--help"});
        QCOMPARE(h.code, 0);
        for (const char* opt : {"--data-dir", "--demo", "--screenshot", "--version"}) QVERIFY2(h.out.contains(opt), opt);
    }

    void installedBinaryRendersWithTheInstalledDemoModel() {
        const QString data = m_tmp.filePath("profile");
        const QString png = m_tmp.filePath("installed.png");
        // Run from an unrelated folder so nothing resolves against the build tree by accident.
        const auto r = runTool(m_prefix + "/bin/arbor", {"--data-dir", data, "--demo", "--screenshot", png}, QDir::rootPath());
        QVERIFY2(r.code == 0, r.err.constData());
        const QImage img(png);
        QVERIFY2(!img.isNull(), "no screenshot");
        QVERIFY(img.width() >= 720 && img.height() >= 480);
        QSet<QRgb> colours;
        for (int y = 0; y < img.height(); y += 7)
            for (int x = 0; x < img.width(); x += 7) colours.insert(img.pixel(x, y));
        QVERIFY2(colours.size() > 5, "the screenshot is (nearly) one colour");
        // --demo picked the copy under the prefix, not the source tree's.
        const QString installedModel = QFileInfo(m_prefix + "/share/arbor/models/stories260K.gguf").canonicalFilePath();
        QCOMPARE(arbor::test::importedModelPaths(data), QStringList{installedModel});
    }

    void installedCliReadsTheDemoModel() {
        const auto r = runTool(m_prefix + "/bin/arbor-cli", {"info", m_prefix + "/share/arbor/models/stories260K.gguf", "--json"});
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY(r.out.contains("\"llama\""));
    }

    // The installed binaries carry no RPATH/RUNPATH: nothing points back into the build tree,
    // and Debian policy forbids one under /usr.
    void noRunpath_data() {
        QTest::addColumn<QString>("binary");
        QTest::newRow("arbor") << "bin/arbor";
        QTest::newRow("arbor-cli") << "bin/arbor-cli";
    }
    void noRunpath() {
        QFETCH(QString, binary);
        const auto r = runTool(QStringLiteral("readelf"), {"-d", m_prefix + QLatin1Char('/') + binary});
        QCOMPARE(r.code, 0);
        QVERIFY2(!r.out.contains("RPATH") && !r.out.contains("RUNPATH"), r.out.constData());
    }
};

QTEST_GUILESS_MAIN(TestInstallPrefix)
#include "tst_install_prefix.moc"
