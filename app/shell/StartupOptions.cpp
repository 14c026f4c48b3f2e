#include "shell/StartupOptions.h"

#include <QCommandLineParser>
#include <arbor/version.hpp>

#include <cstdio>

namespace arbor::app {

StartupOptions parseStartupOptions(const QStringList& arguments) {
    StartupOptions o;
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Arbor: chat with local LLMs"));
    QCommandLineOption help({QStringLiteral("h"), QStringLiteral("help")}, QStringLiteral("Show this help."));
    QCommandLineOption version(QStringLiteral("version"), QStringLiteral("Show the version."));
    QCommandLineOption dataDir(QStringLiteral("data-dir"), QStringLiteral("Keep the database, settings and park files in DIR."),
                               QStringLiteral("DIR"));
    QCommandLineOption shot(QStringLiteral("screenshot"), QStringLiteral("Render the window once loaded, save it as FILE.png, exit."),
                            QStringLiteral("FILE"));
    QCommandLineOption fake(QStringLiteral("fake-engine"), QStringLiteral("Drive the UI with a scripted fake engine."),
                            QStringLiteral("SCRIPT"));
    QCommandLineOption demo(QStringLiteral("demo"), QStringLiteral("Open with the bundled demo model."));
    QCommandLineOption newChat(QStringLiteral("new-chat"), QStringLiteral("Start a new chat, in the running Arbor if there is one."));
    p.addOptions({help, version, dataDir, shot, fake, demo, newChat});
    p.addPositionalArgument(QStringLiteral("files"), QStringLiteral("GGUF model files to import."), QStringLiteral("[FILE.gguf...]"));
    if (!p.parse(arguments)) {
        o.error = p.errorText();
        return o;
    }
    if (p.isSet(help)) {
        std::fputs(qPrintable(p.helpText()), stdout);
        o.exitNow = true;
        return o;
    }
    if (p.isSet(version)) {
        std::printf("arbor %s\n", ARBOR_VERSION_STRING);
        o.exitNow = true;
        return o;
    }
    o.dataDir = p.value(dataDir);
    o.screenshotPath = p.value(shot);
    o.fakeEngineScript = p.value(fake);
    o.demo = p.isSet(demo);
    o.newChat = p.isSet(newChat);
    o.files = p.positionalArguments();
    return o;
}

}  // namespace arbor::app
