// One run of the built arbor-cli ($ARBOR_CLI) from a test: its exit code (-1 when it did not
// finish in time and was killed, -2 when it crashed), stdout and stderr.
#pragma once

#include <QByteArray>
#include <QProcess>
#include <QStringList>

namespace arbor::test {

struct CliRun {
    int code = -1;
    QByteArray out, err;
};

inline CliRun runCli(const QStringList& args, int timeout_ms = 120000) {
    QProcess p;
    p.start(qEnvironmentVariable("ARBOR_CLI", "arbor-cli"), args);
    CliRun r;
    if (!p.waitForFinished(timeout_ms)) {
        p.kill();
        p.waitForFinished();
        return r;
    }
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

}  // namespace arbor::test
