// Shared by the packaging suites: running a tool, the files an install must contain, and
// reading back what a data folder's database recorded.
#pragma once

#include "shell/Application.h"

#include <QCoreApplication>
#include <QProcess>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QStringList>
#include <QVariant>

namespace arbor::test {

struct ToolRun {
    int code = -1;  // -1: did not start, crashed or timed out
    QByteArray out, err;
};

inline ToolRun runTool(const QString& program, const QStringList& args, const QString& cwd = {}, int timeoutMs = 120000) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    p.setProcessEnvironment(env);
    if (!cwd.isEmpty()) p.setWorkingDirectory(cwd);
    p.start(program, args);
    ToolRun r;
    if (!p.waitForStarted(10000)) {
        r.err = QStringLiteral("%1 did not start: %2").arg(program, p.errorString()).toUtf8();
        return r;
    }
    if (!p.waitForFinished(timeoutMs)) p.kill();
    p.waitForFinished(5000);
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

// Every file an install puts under its prefix (and the .deb under /usr), relative to it.
inline QStringList installedFiles() {
    const QString id = QString::fromLatin1(arbor::app::kAppId);
    QStringList files = {
        QStringLiteral("bin/arbor"),
        QStringLiteral("bin/arbor-cli"),
        QStringLiteral("share/applications/%1.desktop").arg(id),
        QStringLiteral("share/metainfo/%1.metainfo.xml").arg(id),
        QStringLiteral("share/mime/packages/%1.xml").arg(id),
        QStringLiteral("share/icons/hicolor/scalable/apps/%1.svg").arg(id),
        QStringLiteral("share/arbor/models/stories260K.gguf"),
        QStringLiteral("share/arbor/models/README.md"),
    };
    for (const QString& size : QStringLiteral(ARBOR_ICON_SIZES).split(QLatin1Char(','), Qt::SkipEmptyParts))
        files << QStringLiteral("share/icons/hicolor/%1x%1/apps/%2.png").arg(size, id);
    return files;
}

inline QStringList iconSizes() { return QStringLiteral(ARBOR_ICON_SIZES).split(QLatin1Char(','), Qt::SkipEmptyParts); }

// The model paths a data folder's database holds (readable while Arbor has it open).
inline QStringList importedModelPaths(const QString& dataDir) {
    static int serial = 0;
    const QString name = QStringLiteral("packaging-peek-%1").arg(++serial);
    QStringList paths;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
        db.setDatabaseName(dataDir + QStringLiteral("/arbor.sqlite"));
        db.setConnectOptions(QStringLiteral("QSQLITE_OPEN_READONLY;QSQLITE_BUSY_TIMEOUT=2000"));
        if (db.open()) {
            QSqlQuery q(db);
            if (q.exec(QStringLiteral("SELECT path FROM models ORDER BY path")))
                while (q.next()) paths << q.value(0).toString();
        }
    }
    QSqlDatabase::removeDatabase(name);
    return paths;
}

}  // namespace arbor::test
