// UI-thread stall benchmark: the real window (Main.qml) over the fake engine, rendering
// offscreen. A 1 ms timer on the UI thread measures the longest gap between its ticks (the
// longest the event loop was blocked) while a long reply streams at 1 ms a token, and while
// switching between two conversations of 300 messages. The goal is under 16 ms; the test
// prints the numbers and fails only on a gross stall (250 ms), since CI machines are shared.
#include "chat/ChatController.h"
#include "store/ChatStore.h"
#include "store/Database.h"

#include <QElapsedTimer>
#include <QGuiApplication>
#include <QQmlApplicationEngine>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTimer>
#include <QtQml/QQmlExtensionPlugin>
#include <QSqlDatabase>
#include <QtTest>

#include <algorithm>

Q_IMPORT_QML_PLUGIN(ArborPlugin)

using namespace arbor::app;

namespace {

// Records the gaps between ticks of a 1 ms timer on the thread it lives on.
class StallMeter : public QObject {
public:
    StallMeter() {
        m_timer.setTimerType(Qt::PreciseTimer);
        m_timer.setInterval(1);
        connect(&m_timer, &QTimer::timeout, this, [this] {
            const qint64 now = m_clock.nsecsElapsed();
            if (m_last >= 0) m_gaps.push_back((now - m_last) / 1e6);
            if (m_last >= 0 && (now - m_last) / 1e6 > 16 && qEnvironmentVariableIsSet("ARBOR_STALL_TRACE"))
                std::printf("  gap %.1f ms ending at %.1f ms\n", (now - m_last) / 1e6, now / 1e6);
            m_last = now;
        });
    }
    void start() {
        m_gaps.clear();
        m_last = -1;
        m_clock.start();
        m_timer.start();
    }
    void stop() { m_timer.stop(); }
    double max() const { return m_gaps.isEmpty() ? 0 : *std::max_element(m_gaps.begin(), m_gaps.end()); }
    double percentile(double p) const {
        if (m_gaps.isEmpty()) return 0;
        QVector<double> g = m_gaps;
        std::sort(g.begin(), g.end());
        return g[qMin(g.size() - 1, qsizetype(p * g.size()))];
    }
    qsizetype ticks() const { return m_gaps.size(); }
    int over(double ms) const { return int(std::count_if(m_gaps.begin(), m_gaps.end(), [ms](double g) { return g > ms; })); }

private:
    QTimer m_timer;
    QElapsedTimer m_clock;
    qint64 m_last = -1;
    QVector<double> m_gaps;
};

void report(const char* what, const StallMeter& m) {
    std::printf("ui-stall %s: longest %.1f ms, p99 %.1f ms, %d gaps over 16 ms, %lld ticks\n", what, m.max(), m.percentile(0.99),
                m.over(16), qlonglong(m.ticks()));
    std::fflush(stdout);
}

}  // namespace

class TestUiStall : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    std::unique_ptr<ChatController> m_controller;
    std::unique_ptr<QQmlApplicationEngine> m_engine;
    qint64 m_big[2] = {0, 0};

private slots:
    void initTestCase() {
        const QString data = m_dir.filePath(QStringLiteral("profile"));
        QDir().mkpath(data);
        // Two long conversations, written before the app starts.
        {
            Database db;
            QVERIFY(db.open(data + QStringLiteral("/arbor.sqlite"), QStringLiteral("setup")));
            ChatStore s(db.handle());
            for (int c = 0; c < 2; ++c) {
                m_big[c] = s.createConversation(QStringLiteral("long %1").arg(c));
                qint64 parent = 0;
                for (int i = 0; i < 150; ++i) {
                    parent = s.addMessage(m_big[c], parent, QStringLiteral("user"), QStringLiteral("Question %1: how does part %1 work?").arg(i));
                    const qint64 a = s.beginReply(m_big[c], parent);
                    s.finishReply(a, QStringLiteral("It works like this, in **%1** steps:\n\n- one\n- two\n\n```cpp\nint x = %1;\n```\nDone.").arg(i),
                                  {}, QStringLiteral("complete"), {});
                    parent = a;
                }
            }
        }
        const QString script = m_dir.filePath(QStringLiteral("script.json"));
        QFile f(script);
        QVERIFY(f.open(QIODevice::WriteOnly));
        // Paragraphs of 60 tokens with some Markdown, as replies have; 3050 tokens in all.
        QByteArray tokens;
        for (int i = 0; i < 20; ++i) tokens += R"("word ", "and **bold** ", "text, ", )";
        f.write(R"({"token_ms": 1, "default": {"tokens": [)" + tokens + R"("\n\n"], "repeat": 50}})");
        f.close();

        m_controller = std::make_unique<ChatController>(nullptr);
        ControllerOptions o;
        o.dataDir = data;
        o.fakeScriptPath = script;
        o.demoModelPath = QStringLiteral(ARBOR_DEMO_MODEL_SOURCE);
        o.demo = true;
        QString why;
        QVERIFY2(m_controller->start(o, &why), qPrintable(why));
        ChatController::setInstance(m_controller.get());
        m_engine = std::make_unique<QQmlApplicationEngine>();
        m_engine->addImportPath(QStringLiteral("qrc:/qt/qml"));
        m_engine->load(QUrl(QStringLiteral("qrc:/qt/qml/Arbor/Main.qml")));
        QVERIFY(!m_engine->rootObjects().isEmpty());
        auto* window = qobject_cast<QQuickWindow*>(m_engine->rootObjects().first());
        QVERIFY(window);
        QVERIFY(QTest::qWaitForWindowExposed(window));
        QTRY_VERIFY(m_controller->modelLoaded());
    }
    void cleanupTestCase() {
        m_engine.reset();
        ChatController::setInstance(nullptr);
        m_controller.reset();
    }

    void whileStreaming() {
        StallMeter meter;
        QSignalSpy done(m_controller.get(), &ChatController::replyFinished);
        meter.start();
        QVariantMap settings = m_controller->conversationSettings().toMap();
        settings[QStringLiteral("maxTokens")] = 4000;
        m_controller->saveConversationSettings(settings);
        QVERIFY(m_controller->send(QStringLiteral("write a long answer")));
        QVERIFY(done.wait(60000));
        QTest::qWait(100);
        meter.stop();
        QCOMPARE(m_controller->messages()->rowCount(), 2);
        QCOMPARE(m_controller->messages()->data(m_controller->messages()->index(1), ChatPathModel::TokenCountRole).toInt(), 3050);
        report("while streaming 3050 tokens (50 paragraphs) at 1 ms a token", meter);
        QVERIFY2(meter.max() < 250, "the UI thread was blocked for a quarter of a second");
    }

    void whileSwitchingConversations() {
        StallMeter meter;
        meter.start();
        for (int round = 0; round < 6; ++round) {
            QSignalSpy applied(m_controller->messages(), &ChatPathModel::pathApplied);
            m_controller->openConversation(m_big[round % 2]);
            QVERIFY(applied.wait(10000));
            QTRY_COMPARE(m_controller->messages()->rowCount(), 300);
            QTest::qWait(150);  // the view lays out and renders the new path
        }
        meter.stop();
        report("while switching between two 300-message conversations", meter);
        QVERIFY2(meter.max() < 250, "the UI thread was blocked for a quarter of a second");
    }
};

QTEST_MAIN(TestUiStall)
#include "tst_ui_stall.moc"
