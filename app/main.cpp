// The `arbor` executable: everything lives in the arbor_app library (see shell/Application).
#include "shell/Application.h"

#include <QtQml/QQmlExtensionPlugin>

Q_IMPORT_QML_PLUGIN(ArborPlugin)

int main(int argc, char** argv) { return arbor::app::runApplication(argc, argv); }
