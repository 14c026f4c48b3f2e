#include "settings/AppSettings.h"

namespace arbor::app {

AppSettings::AppSettings(const QString& dataDir, QObject* parent) : QObject(parent), m_dataDir(dataDir) {
    if (!dataDir.isEmpty())
        m_settings = std::make_unique<QSettings>(dataDir + QStringLiteral("/settings.ini"), QSettings::IniFormat);
}

QVariant AppSettings::value(const char* key, const QVariant& fallback) const {
    const QString k = QString::fromLatin1(key);
    if (m_settings) return m_settings->value(k, fallback);
    return m_memory.value(k, fallback);
}

void AppSettings::set(const char* key, const QVariant& v) {
    if (value(key) == v) return;
    const QString k = QString::fromLatin1(key);
    if (m_settings)
        m_settings->setValue(k, v);
    else
        m_memory[k] = v;
    emit changed();
}

void AppSettings::setContextPolicy(const QString& v) {
    if (v == QLatin1String("keep-newest") || v == QLatin1String("refuse")) set("chat/contextPolicy", v);
}

void AppSettings::setBackendPreference(const QString& v) {
    if (v == QLatin1String("auto") || v == QLatin1String("cpu") || v == QLatin1String("gpu")) set("engine/backend", v);
}

void AppSettings::setTheme(const QString& v) {
    if (v == QLatin1String("system") || v == QLatin1String("light") || v == QLatin1String("dark")) set("ui/theme", v);
}

}  // namespace arbor::app
