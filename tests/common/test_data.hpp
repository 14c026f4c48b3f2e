// Where the suites find their inputs. Shared data (../shared/data) must be present when CI=true:
// a missing folder then fails the test instead of skipping it.
#pragma once

#include <QDir>
#include <QString>
#include <QtTest>

namespace arbor::test {

inline QString sharedData() {
    QString d = qEnvironmentVariable("ARBOR_SHARED_DATA");
    if (d.isEmpty()) d = QStringLiteral(ARBOR_TEST_DEFAULT_SHARED);
    return QDir(d).absolutePath();
}

inline QString sourceDir() { return qEnvironmentVariable("ARBOR_SOURCE_DIR"); }
inline bool inCi() { return qEnvironmentVariable("CI") == QLatin1String("true"); }

}  // namespace arbor::test

// Use inside a test function: fails under CI, skips elsewhere.
#define ARBOR_REQUIRE_PATH(path)                                                        \
    do {                                                                                \
        if (!QFileInfo::exists(path)) {                                                 \
            if (arbor::test::inCi()) QFAIL(qPrintable(QStringLiteral("missing test data: ") + (path))); \
            QSKIP(qPrintable(QStringLiteral("missing test data: ") + (path)));          \
        }                                                                               \
    } while (0)
