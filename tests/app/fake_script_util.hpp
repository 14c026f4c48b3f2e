// A fake-engine script from JSON for the app tests; a script that does not parse is a bug in
// the test, so it stops the run with the parser's reason.
#pragma once

#include "engine/FakeScript.h"

#include <QByteArray>
#include <QString>
#include <QtGlobal>

inline arbor::app::FakeScript script(const QByteArray& json) {
    arbor::app::FakeScript s;
    QString why;
    if (!arbor::app::FakeScript::parse(json, QStringLiteral("test.json"), &s, &why)) qFatal("bad test script: %s", qPrintable(why));
    return s;
}
