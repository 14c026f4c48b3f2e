#include "shell/AppState.h"

#include <QQmlEngine>
#include <arbor/version.hpp>

namespace arbor::app {
namespace {
AppState* g_prepared = nullptr;  // set once by runApplication() before the QML engine exists
}

void AppState::setInstance(AppState* s) { g_prepared = s; }

AppState* AppState::create(QQmlEngine*, QJSEngine*) {
    if (g_prepared) {
        QQmlEngine::setObjectOwnership(g_prepared, QQmlEngine::CppOwnership);
        return g_prepared;
    }
    return new AppState(nullptr);  // QML tests: a default state, owned by the engine
}

QString AppState::version() const { return QString::fromLatin1(ARBOR_VERSION_STRING); }

void AppState::setBackendDescription(const QString& b) {
    if (b == m_backend) return;
    m_backend = b;
    emit backendDescriptionChanged();
}

}  // namespace arbor::app
