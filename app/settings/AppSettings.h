// Global settings, kept in settings.ini in the data folder: the default model, what to do when
// a conversation outgrows the context, threads, backend preference, park-file disk budget and
// theme. The data folder itself is chosen with --data-dir (shown here, read-only).
#pragma once

#include <QObject>
#include <QSettings>
#include <QString>
#include <QtQml/qqmlregistration.h>

#include <memory>

namespace arbor::app {

class AppSettings : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("AppSettings is provided by ChatController.settings")
    Q_PROPERTY(QString dataDir READ dataDir CONSTANT)
    Q_PROPERTY(QString defaultModel READ defaultModel WRITE setDefaultModel NOTIFY changed)
    Q_PROPERTY(QString contextPolicy READ contextPolicy WRITE setContextPolicy NOTIFY changed)
    Q_PROPERTY(int threads READ threads WRITE setThreads NOTIFY changed)
    Q_PROPERTY(QString backendPreference READ backendPreference WRITE setBackendPreference NOTIFY changed)
    Q_PROPERTY(int parkBudgetMb READ parkBudgetMb WRITE setParkBudgetMb NOTIFY changed)
    Q_PROPERTY(QString theme READ theme WRITE setTheme NOTIFY changed)

public:
    // `path` empty: nothing is stored (QML tests without a data folder).
    explicit AppSettings(const QString& dataDir = {}, QObject* parent = nullptr);

    QString dataDir() const { return m_dataDir; }
    QString defaultModel() const { return value("models/default").toString(); }
    QString contextPolicy() const { return value("chat/contextPolicy", QStringLiteral("keep-newest")).toString(); }
    int threads() const { return value("engine/threads", 0).toInt(); }
    QString backendPreference() const { return value("engine/backend", QStringLiteral("auto")).toString(); }
    int parkBudgetMb() const { return value("engine/parkBudgetMb", 2048).toInt(); }
    QString theme() const { return value("ui/theme", QStringLiteral("system")).toString(); }

    void setDefaultModel(const QString& v) { set("models/default", v); }
    void setContextPolicy(const QString& v);
    void setThreads(int v) { set("engine/threads", qBound(0, v, 1024)); }
    void setBackendPreference(const QString& v);
    void setParkBudgetMb(int v) { set("engine/parkBudgetMb", qBound(0, v, 1 << 20)); }
    void setTheme(const QString& v);

signals:
    void changed();

private:
    QVariant value(const char* key, const QVariant& fallback = {}) const;
    void set(const char* key, const QVariant& v);

    QString m_dataDir;
    std::unique_ptr<QSettings> m_settings;
    QVariantMap m_memory;  // without a data folder
};

}  // namespace arbor::app
