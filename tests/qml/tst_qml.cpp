// QtQuickTest runner: the test QML files in this folder import the real Arbor module. Every
// file gets a fresh profile (a temporary data folder) and a ChatController driven by the fake
// engine (data/fake_engine.json), so the UI flows run deterministically, without a model.
//
// Context properties for the tests: testDataUrl (this folder's data/), screenshotDir (the
// ARBOR_SCREENSHOT_DIR environment variable, "" when unset).
#include "chat/ChatController.h"

#include <QQmlContext>
#include <QTemporaryDir>
#include <QtQml/QQmlEngine>
#include <QtQml/QQmlExtensionPlugin>
#include <QtQuickTest/quicktest.h>

#include <memory>
#include <vector>

Q_IMPORT_QML_PLUGIN(ArborPlugin)

class Setup : public QObject {
    Q_OBJECT
    std::vector<std::unique_ptr<arbor::app::ChatController>> m_controllers;
    std::vector<std::unique_ptr<QTemporaryDir>> m_dirs;

public slots:
    void qmlEngineAvailable(QQmlEngine* engine) {
        engine->addImportPath(QStringLiteral("qrc:/qt/qml"));
        auto dir = std::make_unique<QTemporaryDir>();
        auto controller = std::make_unique<arbor::app::ChatController>(nullptr);
        arbor::app::ControllerOptions o;
        o.dataDir = dir->filePath(QStringLiteral("profile"));
        o.fakeScriptPath = QStringLiteral(QUICK_TEST_SOURCE_DIR "/data/fake_engine.json");
        o.demoModelPath = QStringLiteral(ARBOR_DEMO_MODEL_SOURCE);
        QString why;
        if (!controller->start(o, &why)) qFatal("cannot start the controller: %s", qPrintable(why));
        arbor::app::ChatController::setInstance(controller.get());
        engine->rootContext()->setContextProperty(QStringLiteral("testDataUrl"),
                                                  QUrl::fromLocalFile(QStringLiteral(QUICK_TEST_SOURCE_DIR "/data/")));
        engine->rootContext()->setContextProperty(QStringLiteral("screenshotDir"), qEnvironmentVariable("ARBOR_SCREENSHOT_DIR"));
        m_controllers.push_back(std::move(controller));
        m_dirs.push_back(std::move(dir));
    }
    void cleanupTestCase() {
        arbor::app::ChatController::setInstance(nullptr);
        m_controllers.clear();
        m_dirs.clear();
    }
};

QUICK_TEST_MAIN_WITH_SETUP(arbor_qml, Setup)
#include "tst_qml.moc"
