// TelemetryFeed: the live readings the status bar shows come from the telemetry sampler, are
// read on this thread by polling, say why there are no GPU readings when there are none, and
// the contention label is readable from another thread (the engine worker records it).
#include "engine/TelemetryFeed.h"

#include <QSignalSpy>
#include <QThread>
#include <QtTest>

using namespace arbor::app;

class TestTelemetryFeed : public QObject {
    Q_OBJECT
private slots:
    void readsTheSampler() {
        TelemetryFeed feed;
        QSignalSpy updated(&feed, &TelemetryFeed::updated);
        QString why;
        QVERIFY2(feed.start(&why), qPrintable(why));
        QTRY_VERIFY_WITH_TIMEOUT(feed.samples() >= 3, 5000);
        const QStringList labels{"quiet", "cpu-busy", "other-gpu-process", "power-limited", "thermal-limited"};
        QVERIFY2(labels.contains(feed.contention()), qPrintable(feed.contention()));
        QVERIFY(feed.cpuBusyPct() >= 0 && feed.cpuBusyPct() <= 100);  // known from the second sample on
        QVERIFY(!feed.gpuText().isEmpty());
        if (feed.hasGpu()) {
            QVERIFY(feed.powerW() >= 0 || feed.gfxClockMhz() >= 0);
            QVERIFY(feed.gpuReason().isEmpty());
        } else {
            QCOMPARE(feed.gpuText(), QStringLiteral("GPU: no readings"));
            QVERIFY(feed.gpuReason().contains(QStringLiteral("NVML")));  // says why
            QVERIFY(feed.powerHistory().isEmpty());
        }
        QVERIFY(feed.details().startsWith(QLatin1Char('{')));  // the full snapshot, as JSON
        QVERIFY(updated.size() >= 3);

        // The worker's view: any thread, any time, even after the feed stopped.
        auto source = feed.contentionSource();
        QString fromThread;
        QThread* t = QThread::create([&] { fromThread = source(); });
        t->start();
        QVERIFY(t->wait(5000));
        delete t;
        QVERIFY(labels.contains(fromThread));
        feed.stop();
        QVERIFY(labels.contains(source()));
    }

    void pollWithoutASamplerIsHarmless() {
        TelemetryFeed feed;
        feed.poll();
        QCOMPARE(feed.samples(), 0);
        QVERIFY(feed.contentionSource()().isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestTelemetryFeed)
#include "tst_telemetry_feed.moc"
