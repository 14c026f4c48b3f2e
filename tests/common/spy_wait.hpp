// Waiting for a signal that another thread emits. QSignalSpy connects directly, so a signal
// emitted before QSignalSpy::wait() starts is already counted and wait() then times out waiting
// for a further one. Waiting for a count has no such window.
#pragma once

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTest>

namespace arbor::test {

// True once `spy` holds at least n signals; false after timeout_ms.
inline bool waitForCount(QSignalSpy& spy, qsizetype n, int timeout_ms) {
    QElapsedTimer t;
    t.start();
    while (spy.size() < n) {
        if (t.elapsed() >= timeout_ms) return false;
        QTest::qWait(1);
    }
    return true;
}

}  // namespace arbor::test
