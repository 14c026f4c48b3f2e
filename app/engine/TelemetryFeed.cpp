#include "engine/TelemetryFeed.h"

#include <arbor/telemetry.hpp>

namespace arbor::app {

TelemetryFeed::TelemetryFeed(QObject* parent) : QObject(parent) {
    m_timer.setInterval(250);
    connect(&m_timer, &QTimer::timeout, this, &TelemetryFeed::poll);
}

TelemetryFeed::~TelemetryFeed() { stop(); }

bool TelemetryFeed::start(QString* why) {
    if (m_sampler) return true;
    telemetry::SamplerOptions opt;
    opt.interval = std::chrono::milliseconds(250);
    auto s = std::make_shared<telemetry::Sampler>(opt);
    const Status st = s->start();
    if (!st) {
        if (why) *why = QString::fromStdString(st.message());
        m_gpuText = tr("GPU: no readings");
        m_gpuReason = tr("the telemetry sampler did not start: %1").arg(QString::fromStdString(st.message()));
        emit updated();
        return false;
    }
    m_sampler = std::move(s);
    m_timer.start();
    return true;
}

void TelemetryFeed::stop() {
    m_timer.stop();
    if (m_sampler) m_sampler->stop();
    m_sampler.reset();
}

std::function<QString()> TelemetryFeed::contentionSource() const {
    return [sampler = m_sampler]() -> QString {
        if (!sampler) return {};
        const auto s = sampler->latest();
        return s ? QString::fromLatin1(telemetry::contention_name(s->contention)) : QString();
    };
}

void TelemetryFeed::poll() {
    if (!m_sampler) return;
    const auto snap = m_sampler->latest();
    if (!snap || snap->sequence == m_lastSequence) return;
    m_lastSequence = snap->sequence;
    ++m_samples;
    const telemetry::Snapshot& s = *snap;

    std::optional<double> power;
    std::optional<uint32_t> clock;
    QString device;
    for (const auto& g : s.amd) {
        if (!g.metrics) continue;
        power = g.metrics->socket_power_w ? g.metrics->socket_power_w : g.metrics->gfx_power_w;
        clock = g.metrics->gfxclk_mhz;
        device = QStringLiteral("AMD");
        break;
    }
    if (!power && !clock) {
        for (const auto& g : s.nvidia) {
            power = g.power_w;
            clock = g.sm_clock_mhz;
            device = QString::fromStdString(g.name);
            break;
        }
    }
    m_hasGpu = power.has_value() || clock.has_value();
    m_powerW = power ? *power : -1;
    m_gfxClockMhz = clock ? int(*clock) : -1;
    m_contention = QString::fromLatin1(telemetry::contention_name(s.contention));
    m_cpuBusyPct = s.cpu ? s.cpu->busy * 100.0 : -1;
    if (m_hasGpu) {
        QStringList parts;
        if (power) parts << QStringLiteral("%1 W").arg(*power, 0, 'f', 1);
        if (clock) parts << QStringLiteral("%1 MHz").arg(*clock);
        m_gpuText = parts.join(QStringLiteral(" · "));
        m_gpuReason.clear();
    } else {
        m_gpuText = tr("GPU: no readings");
        m_gpuReason = (s.amd.empty() ? tr("No AMD gpu_metrics file under /sys/class/drm.") : tr("The AMD gpu_metrics could not be decoded.")) +
                      QLatin1Char(' ') + tr("NVIDIA NVML: %1.").arg(QString::fromStdString(s.nvml_status));
    }
    m_details = QString::fromStdString(json::dump(telemetry::to_json(s), 2));

    const qint64 nowMs = s.steady_ns / 1000000;
    if (power) {
        m_powerHistory << *power;
        m_powerTimes << nowMs;
    }
    while (!m_powerTimes.isEmpty() && m_powerTimes.first() < nowMs - 60000) {
        m_powerTimes.removeFirst();
        m_powerHistory.removeFirst();
    }
    emit updated();
}

}  // namespace arbor::app
