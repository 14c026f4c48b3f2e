// Live GPU and CPU readings for the status bar: a telemetry sampler on its own thread (4 Hz),
// read by a timer on the UI thread (a copy of the latest snapshot; no I/O on the UI thread).
// Power in W, gfx clock in MHz, the contention label, a tooltip with the full snapshot, and
// the power over the last minute for a sparkline. contentionSource() is thread-safe and is what
// the engine worker records with each reply.
#pragma once

#include <QList>
#include <QObject>
#include <QString>
#include <QTimer>
#include <QtQml/qqmlregistration.h>

#include <functional>
#include <memory>

namespace arbor::telemetry {
class Sampler;
}

namespace arbor::app {

class TelemetryFeed : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("TelemetryFeed is provided by ChatController.telemetry")
    Q_PROPERTY(bool hasGpu READ hasGpu NOTIFY updated)
    Q_PROPERTY(double powerW READ powerW NOTIFY updated)          // -1: no reading
    Q_PROPERTY(int gfxClockMhz READ gfxClockMhz NOTIFY updated)   // -1: no reading
    Q_PROPERTY(QString contention READ contention NOTIFY updated)
    Q_PROPERTY(double cpuBusyPct READ cpuBusyPct NOTIFY updated)  // -1: not yet known
    Q_PROPERTY(QString gpuText READ gpuText NOTIFY updated)       // "38 W · 2900 MHz" or "GPU: no readings"
    Q_PROPERTY(QString gpuReason READ gpuReason NOTIFY updated)   // why there are no readings
    Q_PROPERTY(QString details READ details NOTIFY updated)       // the full snapshot (tooltip)
    Q_PROPERTY(QList<qreal> powerHistory READ powerHistory NOTIFY updated)  // last minute, oldest first
    Q_PROPERTY(int samples READ samples NOTIFY updated)

public:
    explicit TelemetryFeed(QObject* parent = nullptr);
    ~TelemetryFeed() override;

    // Starts the sampler thread and the UI timer; false with `why` when it cannot.
    bool start(QString* why = nullptr);
    void stop();

    bool hasGpu() const { return m_hasGpu; }
    double powerW() const { return m_powerW; }
    int gfxClockMhz() const { return m_gfxClockMhz; }
    QString contention() const { return m_contention; }
    double cpuBusyPct() const { return m_cpuBusyPct; }
    QString gpuText() const { return m_gpuText; }
    QString gpuReason() const { return m_gpuReason; }
    QString details() const { return m_details; }
    QList<qreal> powerHistory() const { return m_powerHistory; }
    int samples() const { return m_samples; }

    // A function giving the latest contention label ("" before the first snapshot), safe to
    // call from any thread, for as long as it is kept (it holds the sampler).
    std::function<QString()> contentionSource() const;
    // Reads the sampler now (the timer does this every 250 ms).
    Q_INVOKABLE void poll();

signals:
    void updated();

private:
    std::shared_ptr<telemetry::Sampler> m_sampler;
    QTimer m_timer;
    quint64 m_lastSequence = 0;
    bool m_hasGpu = false;
    double m_powerW = -1;
    int m_gfxClockMhz = -1;
    QString m_contention;
    double m_cpuBusyPct = -1;
    QString m_gpuText = tr("GPU: no readings yet");
    QString m_details;
    QString m_gpuReason;
    QList<qreal> m_powerHistory;
    QList<qint64> m_powerTimes;  // steady ms of each history point
    int m_samples = 0;
};

}  // namespace arbor::app
