// The `arbor` command line: parsed once, before anything else starts.
#pragma once

#include <QString>
#include <QStringList>

namespace arbor::app {

struct StartupOptions {
    QString dataDir;         // --data-dir DIR (default: the XDG data dir)
    QString screenshotPath;  // --screenshot FILE.png: render once loaded, save, exit
    QString fakeEngineScript;// --fake-engine SCRIPT.json
    bool demo = false;       // --demo: open with the bundled model selected
    bool newChat = false;    // --new-chat: start a new chat (the desktop file's "New Chat" action)
    QStringList files;       // GGUF files to import
    QString error;           // non-empty: bad usage, exit 1 with this message
    bool exitNow = false;    // --help / --version handled
};

StartupOptions parseStartupOptions(const QStringList& arguments);

}  // namespace arbor::app
