// Start-up facts the QML reads: where data lives, what failed, what was asked on the command
// line. One instance per QML engine (a QML singleton); runApplication() fills it in.
#pragma once

#include <QObject>
#include <QString>
#include <QtQml/qqmlregistration.h>

class QQmlEngine;
class QJSEngine;

namespace arbor::app {

class AppState : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_SINGLETON
    Q_PROPERTY(QString dataDir READ dataDir CONSTANT)
    Q_PROPERTY(QString databasePath READ databasePath CONSTANT)
    Q_PROPERTY(QString version READ version CONSTANT)
    Q_PROPERTY(bool demoRequested READ demoRequested CONSTANT)
    Q_PROPERTY(QString backendDescription READ backendDescription NOTIFY backendDescriptionChanged)

public:
    // No default argument: Qt 6.4 builds a QML singleton with the default constructor whenever
    // there is one, and would then never call create().
    explicit AppState(QObject* parent) : QObject(parent) {}
    static AppState* create(QQmlEngine*, QJSEngine*);
    // The instance runApplication() prepared; the QML singleton returns it.
    static void setInstance(AppState* s);

    QString dataDir() const { return m_dataDir; }
    QString databasePath() const { return m_databasePath; }
    QString version() const;
    bool demoRequested() const { return m_demo; }
    QString backendDescription() const { return m_backend; }

    void setDataDir(const QString& d) { m_dataDir = d; }
    void setDatabasePath(const QString& p) { m_databasePath = p; }
    void setDemoRequested(bool d) { m_demo = d; }
    void setBackendDescription(const QString& b);

signals:
    void backendDescriptionChanged();

private:
    QString m_dataDir;
    QString m_databasePath;
    QString m_backend = QStringLiteral("CPU · no GPU backend in this build");
    bool m_demo = false;
};

}  // namespace arbor::app
