#include "shell/Application.h"

#include "shell/AppState.h"
#include "shell/SingleInstance.h"
#include "shell/StartupOptions.h"
#include "chat/ChatController.h"

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
    // One Arbor per data folder: a later start hands its files to the running one and exits.
    // --screenshot and --fake-engine runs are tests: they never hand off and never listen.
    SingleInstance instance(dataDir);
    if (opt.screenshotPath.isEmpty() && opt.fakeEngineScript.isEmpty()) {
        SingleInstance::Request handOff{opt.files, opt.newChat, {}};
        if (opt.demo) handOff.files.prepend(demoModelPath());
        QString why;
        if (instance.claim(handOff, &why) == SingleInstance::Role::HandedOff) return 0;
        if (!why.isEmpty()) std::fprintf(stderr, "warning: %s\n", qPrintable(why));
    }
    // The store (on its own thread: the database is never touched from the UI thread), the
    // engine worker (real, or scripted with --fake-engine) and the models QML talks to.
    const QString dbPath = dataDir + QStringLiteral("/arbor.sqlite");
    ChatController controller(nullptr);
    {
        ControllerOptions co;
        co.dataDir = dataDir;
        co.fakeScriptPath = opt.fakeEngineScript;
        co.demoModelPath = demoModelPath();
        co.demo = opt.demo;
        co.importFiles = opt.files;
        QString why;
        if (!controller.start(co, &why)) return fail(2, why);
    }
    ChatController::setInstance(&controller);
    QSettings settings(dataDir + QStringLiteral("/settings.ini"), QSettings::IniFormat);
    settings.setValue(QStringLiteral("app/lastVersion"), QString::fromLatin1(ARBOR_VERSION_STRING));

    AppState state(nullptr);
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
    QObject::connect(&instance, &SingleInstance::requestReceived, window, [&controller, window](const SingleInstance::Request& r) {
        std::fprintf(stderr, "arbor: a later start handed over %lld file(s)%s\n", qlonglong(r.files.size()),
                     r.newChat ? " and asks for a new chat" : "");
        QList<QUrl> urls;
        for (const QString& f : r.files) urls << QUrl::fromLocalFile(f);
        if (!urls.isEmpty()) controller.importFiles(urls);  // validated on the store thread; rejections are shown
        if (r.newChat) controller.newChat();
        SingleInstance::raiseWindow(window, r.activationToken);
    });
    if (opt.newChat) controller.newChat();
    const int rc = app.exec();
    ChatController::setInstance(nullptr);
    AppState::setInstance(nullptr);
    return rc;
}

}  // namespace arbor::app
