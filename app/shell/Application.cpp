#include "shell/Application.h"

#include "shell/AppState.h"
#include "shell/StartupOptions.h"
#include "store/Database.h"
#include "store/ModelRecords.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QGuiApplication>
#include <QImage>
#include <QQmlApplicationEngine>
#include <QQuickWindow>
#include <QSettings>
#include <QStandardPaths>
#include <QTimer>
#include <arbor/version.hpp>

#include <cstdio>

namespace arbor::app {
namespace {

int fail(int code, const QString& what) {
    std::fprintf(stderr, "error: %s\n", qPrintable(QString(what).replace(QLatin1Char('\n'), QLatin1Char(' '))));
    return code;
}

QString defaultDataDir() {
    QString base = QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation);
    if (base.isEmpty()) base = QDir::homePath() + QStringLiteral("/.local/share");
    return base + QStringLiteral("/arbor");
}

// The bundled demo model: installed under share/arbor/models, or the source tree in a build.
QString demoModelPath() {
    const QString installed =
        QCoreApplication::applicationDirPath() + QStringLiteral("/../share/arbor/models/stories260K.gguf");
    if (QFileInfo::exists(installed)) return QFileInfo(installed).canonicalFilePath();
    return QStringLiteral(ARBOR_DEMO_MODEL_SOURCE);
}

// Renders the window once it has drawn a frame, saves it and quits.
void armScreenshot(QQuickWindow* window, const QString& path) {
    auto* done = new bool(false);
    QObject::connect(window, &QQuickWindow::frameSwapped, window, [window, path, done] {
        if (*done) return;
        *done = true;
        QTimer::singleShot(50, window, [window, path] {
            const QImage img = window->grabWindow();
            if (img.isNull()) {
                fail(2, QStringLiteral("could not grab the window for the screenshot"));
                QCoreApplication::exit(2);
                return;
            }
            if (!img.save(path, "PNG")) {
                fail(2, QStringLiteral("cannot write screenshot to %1").arg(path));
                QCoreApplication::exit(2);
                return;
            }
            std::printf("%s\n", qPrintable(path));
            QCoreApplication::exit(0);
        });
    });
    QTimer::singleShot(30000, window, [] {
        fail(2, QStringLiteral("the window did not render within 30 s"));
        QCoreApplication::exit(2);
    });
}

}  // namespace

int runApplication(int argc, char** argv) {
    // Decide the renderer before the application object exists: offscreen screenshots use the
    // software scene graph, which needs no GPU or display.
    bool wantsShot = false;
    for (int i = 1; i < argc; ++i)
        if (QByteArray(argv[i]).startsWith("--screenshot")) wantsShot = true;
    if (wantsShot && qEnvironmentVariable("QT_QPA_PLATFORM") == QLatin1String("offscreen"))
        QQuickWindow::setGraphicsApi(QSGRendererInterface::Software);

    // Options first: bad usage ends here, before any platform plugin prints anything.
    QStringList arguments;
    for (int i = 0; i < argc; ++i) arguments << QString::fromLocal8Bit(argv[i]);
    QCoreApplication::setApplicationName(QStringLiteral("arbor"));
    QCoreApplication::setApplicationVersion(QString::fromLatin1(ARBOR_VERSION_STRING));
    const StartupOptions opt = parseStartupOptions(arguments);
    if (!opt.error.isEmpty()) return fail(1, opt.error + QStringLiteral(" (see arbor --help)"));
    if (opt.exitNow) return 0;

    QGuiApplication app(argc, argv);
    QGuiApplication::setApplicationDisplayName(QStringLiteral("Arbor"));
    QGuiApplication::setDesktopFileName(QString::fromLatin1(kAppId));

    // Data folder, database, settings, model library: the complete start-up, also for --screenshot.
    const QString dataDir = opt.dataDir.isEmpty() ? defaultDataDir() : QDir(opt.dataDir).absolutePath();
    if (!QDir().mkpath(dataDir)) return fail(2, QStringLiteral("cannot create the data folder %1").arg(dataDir));
    Database db;
    const QString dbPath = dataDir + QStringLiteral("/arbor.sqlite");
    if (!db.open(dbPath)) return fail(2, db.error());
    QSettings settings(dataDir + QStringLiteral("/settings.ini"), QSettings::IniFormat);
    settings.setValue(QStringLiteral("app/lastVersion"), QString::fromLatin1(ARBOR_VERSION_STRING));
    ModelRecords models(db.handle());
    models.refreshMissing();
    QStringList imports = opt.files;
    if (opt.demo) imports.prepend(demoModelPath());
    for (const QString& f : imports) {
        QString why;
        if (!models.importFile(f, &why)) std::fprintf(stderr, "warning: not imported: %s\n", qPrintable(why));
    }

    AppState state;
    state.setDataDir(dataDir);
    state.setDatabasePath(dbPath);
    state.setDemoRequested(opt.demo);
    AppState::setInstance(&state);

    QQmlApplicationEngine engine;
    engine.addImportPath(QStringLiteral("qrc:/qt/qml"));
    int loadFailures = 0;
    QObject::connect(&engine, &QQmlApplicationEngine::objectCreationFailed, &app, [&] { ++loadFailures; });
    engine.load(QUrl(QStringLiteral("qrc:/qt/qml/Arbor/Main.qml")));
    if (loadFailures || engine.rootObjects().isEmpty()) return fail(2, QStringLiteral("the user interface failed to load"));
    auto* window = qobject_cast<QQuickWindow*>(engine.rootObjects().constFirst());
    if (!window) return fail(2, QStringLiteral("the main QML object is not a window"));
    if (!opt.screenshotPath.isEmpty()) armScreenshot(window, opt.screenshotPath);
    const int rc = app.exec();
    AppState::setInstance(nullptr);
    return rc;
}

}  // namespace arbor::app
