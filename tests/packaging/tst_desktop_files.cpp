// The desktop integration files in packaging/: the freedesktop validators accept them, they
// agree with the app's id and the requirements, the icon renders, the Flatpak manifest
// parses, and the MIME XML, compiled by update-mime-database, makes Qt's own MIME database
// name GGUF files application/x-gguf by glob and by magic.
#include "shell/Application.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMimeDatabase>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

namespace {

const QString kAppId = QString::fromLatin1(arbor::app::kAppId);

QString packagingFile(const QString& name) { return QStringLiteral(ARBOR_PACKAGING_DIR "/") + name; }

struct Run {
    int code = -1;
    QString out;
};

Run run(const QString& program, const QStringList& args, const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
    QProcess p;
    p.setProcessEnvironment(env);
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(program, args);
    Run r;
    if (!p.waitForStarted(10000)) {
        r.out = QStringLiteral("%1 did not start: %2").arg(program, p.errorString());
        return r;
    }
    p.waitForFinished(60000);
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAll());
    return r;
}

// Desktop Entry files: [Group] headers and Key=Value lines (no localised keys needed here).
QHash<QString, QHash<QString, QString>> readDesktopFile(const QString& path) {
    QHash<QString, QHash<QString, QString>> groups;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) return groups;
    QString group;
    for (const QString& raw : QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'))) {
        const QString line = raw.trimmed();
        if (line.isEmpty() || line.startsWith(QLatin1Char('#'))) continue;
        if (line.startsWith(QLatin1Char('[')) && line.endsWith(QLatin1Char(']'))) {
            group = line.mid(1, line.size() - 2);
            continue;
        }
        const int eq = line.indexOf(QLatin1Char('='));
        if (eq > 0) groups[group].insert(line.left(eq).trimmed(), line.mid(eq + 1).trimmed());
    }
    return groups;
}

QStringList listValue(const QString& v) { return v.split(QLatin1Char(';'), Qt::SkipEmptyParts); }

QString xpath(const QString& file, const QString& expr) {
    const Run r = run(QStringLiteral("xmllint"), {QStringLiteral("--xpath"), expr, file});
    return r.code == 0 ? r.out.trimmed() : QStringLiteral("<xmllint failed: %1>").arg(r.out);
}

QByteArray ggufHeader() {
    QByteArray h("GGUF");
    h.append("\x03\x00\x00\x00", 4);                  // version 3
    h.append(QByteArray(8, '\0'));                      // tensor count
    h.append(QByteArray("\x01\0\0\0\0\0\0\0", 8));     // one metadata pair follows
    return h + QByteArray(64, '\x11');
}

}  // namespace

class TestDesktopFiles : public QObject {
    Q_OBJECT

    QTemporaryDir m_xdg;

private slots:
    void initTestCase() {
        QVERIFY(m_xdg.isValid());
        for (const char* tool : {"desktop-file-validate", "appstreamcli", "xmllint", "update-mime-database", "rsvg-convert", "flatpak-builder"})
            QVERIFY2(!QStandardPaths::findExecutable(QString::fromLatin1(tool)).isEmpty(),
                     qPrintable(QStringLiteral("%1 is missing (scripts/packages.txt lists its package)").arg(QLatin1String(tool))));
    }

    void validatorsRunClean_data() {
        QTest::addColumn<QString>("program");
        QTest::addColumn<QStringList>("args");
        QTest::newRow("desktop-file-validate") << "desktop-file-validate" << QStringList{packagingFile(kAppId + ".desktop")};
        QTest::newRow("appstreamcli validate") << "appstreamcli"
                                               << QStringList{"validate", "--no-net", "--no-color", packagingFile(kAppId + ".metainfo.xml")};
        QTest::newRow("xmllint mime") << "xmllint" << QStringList{"--noout", packagingFile(kAppId + ".mime.xml")};
        QTest::newRow("xmllint svg") << "xmllint" << QStringList{"--noout", packagingFile(kAppId + ".svg")};
    }
    void validatorsRunClean() {
        QFETCH(QString, program);
        QFETCH(QStringList, args);
        const Run r = run(program, args);
        QVERIFY2(r.code == 0, qPrintable(QStringLiteral("exit %1:\n%2").arg(r.code).arg(r.out)));
        // Clean means no errors, warnings or hints, not merely exit 0.
        static const QRegularExpression complaint(QStringLiteral("(^|\\n)\\s*(E|W|I):|error|warning|hint"),
                                                  QRegularExpression::CaseInsensitiveOption);
        QVERIFY2(!complaint.match(r.out).hasMatch(), qPrintable(r.out));
    }

    void desktopEntryFields() {
        const auto d = readDesktopFile(packagingFile(kAppId + ".desktop"));
        const auto e = d.value(QStringLiteral("Desktop Entry"));
        QCOMPARE(e.value("Type"), QStringLiteral("Application"));
        QCOMPARE(e.value("Exec"), QStringLiteral("arbor %F"));
        QCOMPARE(e.value("Icon"), kAppId);
        QCOMPARE(listValue(e.value("MimeType")), QStringList{"application/x-gguf"});
        // Qt's X11 window class is (argv[0] basename, application name), both "arbor";
        // tst_window_class checks the real window.
        QCOMPARE(e.value("StartupWMClass"), QStringLiteral("arbor"));
        const QStringList keywords = listValue(e.value("Keywords"));
        for (const char* k : {"LLM", "chat", "AI", "GGUF"}) QVERIFY2(keywords.contains(QLatin1String(k)), k);
        QVERIFY(!listValue(e.value("Categories")).isEmpty());
        QCOMPARE(listValue(e.value("Actions")), QStringList{"new-chat"});
        const auto action = d.value(QStringLiteral("Desktop Action new-chat"));
        QCOMPARE(action.value("Name"), QStringLiteral("New Chat"));
        QCOMPARE(action.value("Exec"), QStringLiteral("arbor --new-chat"));
    }

    void metainfoFields_data() {
        QTest::addColumn<QString>("expr");
        QTest::addColumn<QString>("expected");
        QTest::newRow("id") << "string(/component/id)" << kAppId;
        QTest::newRow("type") << "string(/component/@type)" << "desktop-application";
        QTest::newRow("launchable") << "string(/component/launchable[@type='desktop-id'])" << kAppId + ".desktop";
        QTest::newRow("mediatype") << "string(/component/provides/mediatype)" << "application/x-gguf";
        QTest::newRow("binary") << "string(/component/provides/binary[1])" << "arbor";
        QTest::newRow("content rating") << "string(/component/content_rating/@type)" << "oars-1.1";
        QTest::newRow("release") << "string(/component/releases/release[1]/@version)" << QStringLiteral(ARBOR_VERSION_EXPECTED);
        // The screenshot is the one tst_screenshot writes (ARBOR_SCREENSHOT_DIR), at its size.
        QTest::newRow("screenshot") << "substring-after(string(/component/screenshots/screenshot[1]/image), '/screenshots/')"
                                    << "empty-first-run.png";
        QTest::newRow("screenshot width") << "string(/component/screenshots/screenshot[1]/image/@width)" << "1180";
    }
    void metainfoFields() {
        QFETCH(QString, expr);
        QFETCH(QString, expected);
        QCOMPARE(xpath(packagingFile(kAppId + ".metainfo.xml"), expr), expected);
    }

    void mimeXmlDefinesGguf_data() {
        QTest::addColumn<QString>("expr");
        QTest::addColumn<QString>("expected");
        const QString t = QStringLiteral("/*[local-name()='mime-info']/*[local-name()='mime-type'][@type='application/x-gguf']");
        QTest::newRow("glob") << "string(" + t + "/*[local-name()='glob']/@pattern)" << "*.gguf";
        QTest::newRow("magic value") << "string(" + t + "//*[local-name()='match']/@value)" << "GGUF";
        QTest::newRow("magic offset") << "string(" + t + "//*[local-name()='match']/@offset)" << "0";
        QTest::newRow("magic type") << "string(" + t + "//*[local-name()='match']/@type)" << "string";
    }
    void mimeXmlDefinesGguf() {
        QFETCH(QString, expr);
        QFETCH(QString, expected);
        QCOMPARE(xpath(packagingFile(kAppId + ".mime.xml"), expr), expected);
    }

    // update-mime-database compiles the XML as a desktop would; Qt's MIME database then reads
    // only that folder (XDG_DATA_DIRS), so any x-gguf answer comes from our file.
    void mimeDatabaseResolves_data() {
        QTest::addColumn<QString>("fileName");
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<QString>("expected");
        QTest::newRow("gguf by glob and magic") << "model.gguf" << ggufHeader() << "application/x-gguf";
        QTest::newRow("gguf by magic alone") << "model.bin" << ggufHeader() << "application/x-gguf";
        QTest::newRow("GGUF upper-case extension") << "MODEL.GGUF" << ggufHeader() << "application/x-gguf";
        // Why the app checks the header itself: the glob claims any *.gguf.
        QTest::newRow("not gguf, but the glob") << "notes.gguf" << QByteArray("just some text\n") << "application/x-gguf";
        // Only our file is in the database here, so anything else has no type at all.
        QTest::newRow("neither") << "blob.bin" << QByteArray(256, '\x07') << "";
        QTest::newRow("magic not at offset 0") << "shifted.bin" << QByteArray("xxGGUF") + QByteArray(64, '\x07') << "";
    }
    void mimeDatabaseResolves() {
        QFETCH(QString, fileName);
        QFETCH(QByteArray, content);
        QFETCH(QString, expected);
        const QString mimeDir = m_xdg.filePath("share/mime");
        if (!QFile::exists(mimeDir + "/application/x-gguf.xml")) {
            QVERIFY(QDir().mkpath(mimeDir + "/packages"));
            QVERIFY(QFile::copy(packagingFile(kAppId + ".mime.xml"), mimeDir + "/packages/" + kAppId + ".xml"));
            const Run r = run(QStringLiteral("update-mime-database"), {QStringLiteral("-V"), mimeDir});
            QVERIFY2(r.code == 0 && !r.out.contains(QLatin1String("rror")), qPrintable(r.out));
            QVERIFY2(QFile::exists(mimeDir + "/application/x-gguf.xml"), qPrintable(r.out));
            qputenv("XDG_DATA_DIRS", QFile::encodeName(m_xdg.filePath("share")));
            qputenv("XDG_DATA_HOME", QFile::encodeName(m_xdg.filePath("home")));
        }
        QFile f(m_xdg.filePath(fileName));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(content);
        f.close();
        QMimeDatabase db;
        const QMimeType t = db.mimeTypeForFile(f.fileName());
        QCOMPARE(t.name(), expected);
        if (expected == QLatin1String("application/x-gguf")) {
            QVERIFY(t.inherits(QStringLiteral("application/octet-stream")));
            QCOMPARE(t.comment(), QStringLiteral("GGUF language model"));
        }
        // Content alone decides when there is no name to go by.
        QCOMPARE(db.mimeTypeForData(content).name() == QLatin1String("application/x-gguf"), content.startsWith("GGUF"));
    }

    // The Flatpak manifest parses without complaint and names the same app.
    void flatpakManifestParses() {
        QProcess p;
        p.start(QStringLiteral("flatpak-builder"), {"--show-manifest", packagingFile(kAppId + ".yml")});
        QVERIFY2(p.waitForFinished(30000), "flatpak-builder did not finish");
        const QByteArray err = p.readAllStandardError();
        QVERIFY2(p.exitCode() == 0 && err.trimmed().isEmpty(), err.constData());  // unknown keys only warn
        const QJsonObject m = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
        QCOMPARE(m.value("id").toString(), kAppId);
        QCOMPARE(m.value("command").toString(), QStringLiteral("arbor"));
        QCOMPARE(m.value("runtime").toString(), QStringLiteral("org.kde.Platform"));
        QCOMPARE(m.value("sdk").toString(), QStringLiteral("org.kde.Sdk"));
        const QJsonObject module = m.value("modules").toArray().first().toObject();
        QCOMPARE(module.value("buildsystem").toString(), QStringLiteral("cmake-ninja"));
        QVERIFY(module.value("config-opts").toArray().contains(QStringLiteral("-DARBOR_TESTS=OFF")));
        QVERIFY(m.value("finish-args").toArray().contains(QStringLiteral("--socket=wayland")));
    }

    void iconRendersAtEverySize_data() {
        QTest::addColumn<int>("size");
        for (int s : {16, 22, 24, 32, 48, 64, 128, 256, 512}) QTest::addRow("%dx%d", s, s) << s;
    }
    void iconRendersAtEverySize() {
        QFETCH(int, size);
        const QString png = m_xdg.filePath(QStringLiteral("icon-%1.png").arg(size));
        const Run r = run(QStringLiteral("rsvg-convert"), {"--width", QString::number(size), "--height", QString::number(size),
                                                           "--output", png, packagingFile(kAppId + ".svg")});
        QVERIFY2(r.code == 0, qPrintable(r.out));
        QImage img(png);
        QCOMPARE(img.size(), QSize(size, size));
        // Opaque plate in the middle, transparent corners (rounded square), several colours.
        QCOMPARE(qAlpha(img.pixel(size / 2, size / 2)), 255);
        QCOMPARE(qAlpha(img.pixel(0, 0)), 0);
        QSet<QRgb> colours;
        for (int y = 0; y < size; ++y)
            for (int x = 0; x < size; ++x) colours.insert(img.pixel(x, y));
        QVERIFY(colours.size() > 4);
    }
};

QTEST_GUILESS_MAIN(TestDesktopFiles)
#include "tst_desktop_files.moc"
