// The .deb: cpack builds it from the build tree; dpkg-deb then lists and unpacks it, and the
// listing, the control fields and the unpacked files are checked against what the package
// must hold: the binaries, desktop file, metainfo, MIME XML, icons and the demo model, the QML
// runtime modules that shlibdeps cannot see, and no CUDA package.
#include "packaging_support.hpp"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

using arbor::test::runTool;

namespace {

// The Depends field as package names, version constraints and alternatives dropped.
QStringList dependNames(const QString& field) {
    QStringList names;
    for (const QString& alternatives : field.split(QLatin1Char(','), Qt::SkipEmptyParts))
        for (const QString& dep : alternatives.split(QLatin1Char('|'), Qt::SkipEmptyParts))
            names << dep.trimmed().section(QLatin1Char(' '), 0, 0).section(QLatin1Char(':'), 0, 0);
    return names;
}

}  // namespace

class TestDebPackage : public QObject {
    Q_OBJECT

    QTemporaryDir m_tmp;
    QString m_deb, m_root, m_arch;
    QHash<QString, QString> m_listing;  // ./usr/... -> "mode owner"

    QString field(const QString& name) const {
        const auto r = runTool(QStringLiteral("dpkg-deb"), {"--field", m_deb, name});
        return QString::fromUtf8(r.out).trimmed();
    }

private slots:
    void initTestCase() {
        QVERIFY(m_tmp.isValid());
        QElapsedTimer clock;
        clock.start();
        const auto r = runTool(QStringLiteral(ARBOR_CPACK),
                               {"-G", "DEB", "--config", qEnvironmentVariable("ARBOR_BINARY_DIR") + "/CPackConfig.cmake", "-B", m_tmp.path()},
                               qEnvironmentVariable("ARBOR_BINARY_DIR"), 240000);
        QVERIFY2(r.code == 0, (r.out + r.err).constData());
        qInfo("cpack took %lld ms", clock.elapsed());
        const QStringList debs = QDir(m_tmp.path()).entryList({"*.deb"}, QDir::Files);
        QCOMPARE(debs.size(), 1);
        m_deb = m_tmp.filePath(debs.first());
        qInfo("%s: %lld bytes", qPrintable(debs.first()), QFileInfo(m_deb).size());

        m_arch = QString::fromUtf8(runTool(QStringLiteral("dpkg"), {"--print-architecture"}).out).trimmed();
        QVERIFY(!m_arch.isEmpty());

        const auto list = runTool(QStringLiteral("dpkg-deb"), {"--contents", m_deb});
        QVERIFY2(list.code == 0, list.err.constData());
        for (const QString& line : QString::fromUtf8(list.out).split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
            const QStringList cols = line.split(QLatin1Char(' '), Qt::SkipEmptyParts);
            if (cols.size() >= 6) m_listing.insert(cols.last(), cols[0] + QLatin1Char(' ') + cols[1]);
        }
        m_root = m_tmp.filePath("root");
        const auto x = runTool(QStringLiteral("dpkg-deb"), {"--extract", m_deb, m_root});
        QVERIFY2(x.code == 0, x.err.constData());
    }

    void fileNameAndControlFields() {
        QCOMPARE(QFileInfo(m_deb).fileName(), QStringLiteral("arbor_%1_%2.deb").arg(ARBOR_VERSION_EXPECTED, m_arch));
        QCOMPARE(field("Package"), QStringLiteral("arbor"));
        QCOMPARE(field("Version"), QStringLiteral(ARBOR_VERSION_EXPECTED));
        QCOMPARE(field("Architecture"), m_arch);
        QVERIFY(field("Maintainer").contains(QLatin1Char('@')));
        QVERIFY(!field("Description").isEmpty());
        QVERIFY(!field("Section").isEmpty());
    }

    // Loaded at run time, so shlibdeps cannot see them: they must be listed by hand.
    void dependsOnTheQmlRuntime_data() {
        QTest::addColumn<QString>("package");
        for (const char* p : {"qml6-module-qtquick", "qml6-module-qtquick-controls", "qml6-module-qtquick-templates",
                              "qml6-module-qtquick-layouts", "qml6-module-qtquick-window", "qml6-module-qtquick-dialogs",
                              "qml6-module-qtqml-workerscript", "qml6-module-qt-labs-folderlistmodel", "libqt6sql6-sqlite",
                              "qt6-qpa-plugins"})
            QTest::newRow(p) << QString::fromLatin1(p);
    }
    void dependsOnTheQmlRuntime() {
        QFETCH(QString, package);
        QVERIFY2(dependNames(field("Depends")).contains(package), qPrintable(field("Depends")));
    }

    // What dpkg-shlibdeps adds from the binaries' NEEDED entries.
    void shlibdepsRan_data() {
        QTest::addColumn<QString>("package");
        for (const char* p : {"libc6", "libstdc++6", "libqt6core6", "libqt6gui6", "libqt6qml6", "libqt6quick6", "libqt6sql6", "libqt6network6"})
            QTest::newRow(p) << QString::fromLatin1(p);
    }
    void shlibdepsRan() {
        QFETCH(QString, package);
        const QString depends = field("Depends");
        QVERIFY2(dependNames(depends).contains(package), qPrintable(depends));
        // shlibdeps entries carry a minimum version.
        QVERIFY2(QRegularExpression(QRegularExpression::escape(package) + QStringLiteral(" \\(>= [^)]+\\)")).match(depends).hasMatch(),
                 qPrintable(depends));
    }

    // CUDA, when built in, is static and opens the driver at run time.
    void noCudaDependency() {
        for (const QString& f : {QStringLiteral("Depends"), QStringLiteral("Recommends"), QStringLiteral("Pre-Depends")})
            for (const QString& name : dependNames(field(f)))
                QVERIFY2(!name.contains(QLatin1String("cuda")) && !name.contains(QLatin1String("nvidia")), qPrintable(name));
        for (const QString& bin : {QStringLiteral("arbor"), QStringLiteral("arbor-cli")}) {
            const auto r = runTool(QStringLiteral("readelf"), {"-d", m_root + "/usr/bin/" + bin});
            QCOMPARE(r.code, 0);
            QVERIFY2(!r.out.contains("libcuda") && !r.out.contains("libnvidia") && !r.out.contains("libamdhip"), r.out.constData());
        }
    }

    void contents_data() {
        QTest::addColumn<QString>("path");
        for (const QString& f : arbor::test::installedFiles()) QTest::newRow(qPrintable(f)) << f;
    }
    void contents() {
        QFETCH(QString, path);
        const QString key = QStringLiteral("./usr/") + path;
        QVERIFY2(m_listing.contains(key), qPrintable(key));
        const QString modeOwner = m_listing.value(key);
        QVERIFY2(modeOwner.endsWith(QLatin1String(" root/root")), qPrintable(modeOwner));
        QCOMPARE(modeOwner.left(10), path.startsWith(QLatin1String("bin/")) ? QStringLiteral("-rwxr-xr-x") : QStringLiteral("-rw-r--r--"));
    }

    // Nothing else: no headers, static libraries, tests or build files slipped in.
    void nothingUnexpected() {
        const QStringList expected = arbor::test::installedFiles();
        for (auto it = m_listing.cbegin(); it != m_listing.cend(); ++it) {
            if (it.value().startsWith(QLatin1Char('d'))) continue;
            QVERIFY2(it.key().startsWith(QLatin1String("./usr/")) && expected.contains(it.key().mid(6)), qPrintable(it.key()));
        }
    }

    void binariesAreStripped() {
        for (const QString& bin : {QStringLiteral("arbor"), QStringLiteral("arbor-cli")}) {
            const auto r = runTool(QStringLiteral("file"), {"-b", m_root + "/usr/bin/" + bin});
            QVERIFY2(r.out.contains("ELF") && r.out.contains(", stripped"), r.out.constData());
        }
    }

    // The packaged demo model is the one its README describes (size and sha256).
    void demoModelMatchesItsReadme() {
        QFile readme(m_root + "/usr/share/arbor/models/README.md");
        QVERIFY(readme.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(readme.readAll());
        const auto sha = QRegularExpression(QStringLiteral("sha256 `([0-9a-f]{64})`")).match(text);
        QVERIFY(sha.hasMatch());
        QFile model(m_root + "/usr/share/arbor/models/stories260K.gguf");
        QVERIFY(model.open(QIODevice::ReadOnly));
        QString size = QString::number(model.size());
        for (qsizetype i = size.size() - 3; i > 0; i -= 3) size.insert(i, QLatin1Char(','));
        QVERIFY2(text.contains(size + QStringLiteral(" bytes")), qPrintable(size));
        QCOMPARE(QString::fromLatin1(QCryptographicHash::hash(model.readAll(), QCryptographicHash::Sha256).toHex()), sha.captured(1));
    }

    void iconsAreRenderedAtTheirSize_data() {
        QTest::addColumn<int>("size");
        for (const QString& s : arbor::test::iconSizes()) QTest::newRow(qPrintable(s)) << s.toInt();
    }
    void iconsAreRenderedAtTheirSize() {
        QFETCH(int, size);
        const QImage img(m_root + QStringLiteral("/usr/share/icons/hicolor/%1x%1/apps/%2.png").arg(size).arg(QLatin1String(arbor::app::kAppId)));
        QCOMPARE(img.size(), QSize(size, size));
        QCOMPARE(qAlpha(img.pixel(size / 2, size / 2)), 255);
    }

    // The packaged desktop file and metainfo are the validated ones, unchanged.
    void packagedDesktopFilesAreTheSources_data() {
        QTest::addColumn<QString>("packaged");
        QTest::addColumn<QString>("source");
        const QString id = QString::fromLatin1(arbor::app::kAppId);
        QTest::newRow("desktop") << "share/applications/" + id + ".desktop" << id + ".desktop";
        QTest::newRow("metainfo") << "share/metainfo/" + id + ".metainfo.xml" << id + ".metainfo.xml";
        QTest::newRow("mime") << "share/mime/packages/" + id + ".xml" << id + ".mime.xml";
        QTest::newRow("svg") << "share/icons/hicolor/scalable/apps/" + id + ".svg" << id + ".svg";
    }
    void packagedDesktopFilesAreTheSources() {
        QFETCH(QString, packaged);
        QFETCH(QString, source);
        QFile a(m_root + "/usr/" + packaged), b(qEnvironmentVariable("ARBOR_SOURCE_DIR") + "/packaging/" + source);
        QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
        QCOMPARE(a.readAll(), b.readAll());
    }
};

QTEST_GUILESS_MAIN(TestDebPackage)
#include "tst_deb_package.moc"
