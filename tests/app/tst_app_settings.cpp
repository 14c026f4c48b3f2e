// AppSettings: the global settings live in settings.ini in the data folder (read back with a
// plain QSettings, the oracle), take their defaults when unset, and refuse values they do not
// know; without a data folder they are kept in memory.
#include "settings/AppSettings.h"

#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace arbor::app;

class TestAppSettings : public QObject {
    Q_OBJECT
private slots:
    void defaultsStorageAndValidation() {
        QTemporaryDir dir;
        {
            AppSettings s(dir.path());
            QCOMPARE(s.dataDir(), dir.path());
            QCOMPARE(s.contextPolicy(), QStringLiteral("keep-newest"));
            QCOMPARE(s.backendPreference(), QStringLiteral("auto"));
            QCOMPARE(s.theme(), QStringLiteral("system"));
            QCOMPARE(s.threads(), 0);
            QSignalSpy changed(&s, &AppSettings::changed);
            s.setContextPolicy(QStringLiteral("refuse"));
            s.setContextPolicy(QStringLiteral("drop-everything"));  // unknown: ignored
            s.setBackendPreference(QStringLiteral("cpu"));
            s.setBackendPreference(QStringLiteral("tpu"));
            s.setTheme(QStringLiteral("dark"));
            s.setThreads(-4);  // clamped
            s.setParkBudgetMb(512);
            s.setDefaultModel(QStringLiteral("/models/x.gguf"));
            s.setDefaultModel(QStringLiteral("/models/x.gguf"));  // unchanged: no signal
            QCOMPARE(changed.size(), 6);
            QCOMPARE(s.contextPolicy(), QStringLiteral("refuse"));
            QCOMPARE(s.backendPreference(), QStringLiteral("cpu"));
        }
        QSettings ini(dir.filePath(QStringLiteral("settings.ini")), QSettings::IniFormat);
        QCOMPARE(ini.value(QStringLiteral("chat/contextPolicy")).toString(), QStringLiteral("refuse"));
        QCOMPARE(ini.value(QStringLiteral("engine/backend")).toString(), QStringLiteral("cpu"));
        QCOMPARE(ini.value(QStringLiteral("ui/theme")).toString(), QStringLiteral("dark"));
        QCOMPARE(ini.value(QStringLiteral("engine/threads")).toInt(), 0);
        QCOMPARE(ini.value(QStringLiteral("engine/parkBudgetMb")).toInt(), 512);
        QCOMPARE(ini.value(QStringLiteral("models/default")).toString(), QStringLiteral("/models/x.gguf"));
        AppSettings again(dir.path());
        QCOMPARE(again.theme(), QStringLiteral("dark"));
    }

    void inMemoryWithoutAFolder() {
        AppSettings s;
        s.setTheme(QStringLiteral("light"));
        QCOMPARE(s.theme(), QStringLiteral("light"));
        QVERIFY(s.dataDir().isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestAppSettings)
#include "tst_app_settings.moc"
