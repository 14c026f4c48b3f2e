// The context overflow policy: keep-newest keeps the system prompt and the newest turns and
// drops the fewest oldest exchanges that make the prompt fit (checked against a brute-force
// search over every cut); refuse says so; a last message too long for the context is reported.
#include "engine/ContextWindow.h"

#include <QRandomGenerator>
#include <QtTest>

using namespace arbor::app;

namespace {

int words(const QVector<ChatTurn>& turns, QString*) {
    int n = 2;
    for (const ChatTurn& t : turns) n += 2 + int(t.content.split(QLatin1Char(' '), Qt::SkipEmptyParts).size());
    return n;
}

QVector<ChatTurn> conversation(QRandomGenerator& rng, bool system, int exchanges) {
    QVector<ChatTurn> t;
    auto text = [&](int n) {
        QStringList w;
        for (int i = 0; i < n; ++i) w << QStringLiteral("w%1").arg(i);
        return w.join(QLatin1Char(' '));
    };
    if (system) t.push_back({QStringLiteral("system"), text(rng.bounded(1, 30))});
    for (int e = 0; e < exchanges; ++e) {
        t.push_back({QStringLiteral("user"), text(rng.bounded(1, 60))});
        if (e + 1 < exchanges || rng.bounded(2)) t.push_back({QStringLiteral("assistant"), text(rng.bounded(1, 80))});
    }
    if (t.back().role != QLatin1String("user")) t.push_back({QStringLiteral("user"), text(rng.bounded(1, 40))});
    return t;
}

}  // namespace

class TestContextWindow : public QObject {
    Q_OBJECT
private slots:
    void keepNewestMatchesBruteForce() {
        QRandomGenerator rng(7);
        int trimmed = 0;
        for (int round = 0; round < 300; ++round) {
            const bool system = rng.bounded(2);
            const auto turns = conversation(rng, system, rng.bounded(1, 12));
            const int ctx = rng.bounded(40, 600), reserve = replyReserve(ctx, 128);
            const ContextFit fit = fitContext(turns, ctx, reserve, ContextPolicy::KeepNewest, words);
            // Oracle: try every cut at a user turn after the system prompt, fewest dropped first.
            const int head = system ? 1 : 0;
            int expectDropped = -1;
            for (int cut = head; cut < turns.size(); ++cut) {
                if (cut > head && turns[cut].role != QLatin1String("user")) continue;
                QVector<ChatTurn> kept = turns.mid(0, head) + turns.mid(cut);
                if (words(kept, nullptr) <= ctx - reserve) {
                    expectDropped = cut - head;
                    break;
                }
            }
            QCOMPARE(fit.ok, expectDropped >= 0);
            if (!fit.ok) {
                QVERIFY(fit.why.contains(QStringLiteral("last message")));
                continue;
            }
            QCOMPARE(fit.droppedTurns, expectDropped);
            QCOMPARE(fit.promptTokens, words(fit.turns, nullptr));
            QVERIFY(fit.promptTokens <= ctx - reserve);
            if (system) QCOMPARE(fit.turns.first().role, QStringLiteral("system"));
            QCOMPARE(fit.turns.last().content, turns.last().content);  // the newest turn is always there
            if (fit.droppedTurns) {
                ++trimmed;
                QCOMPARE(fit.turns[head].role, QStringLiteral("user"));  // cut at an exchange start
            }
        }
        QVERIFY2(trimmed > 30, "the random cases exercise trimming");
    }

    void refuseExplains() {
        QRandomGenerator rng(3);
        const auto turns = conversation(rng, true, 10);
        const ContextFit fit = fitContext(turns, 64, 16, ContextPolicy::Refuse, words);
        QVERIFY(!fit.ok);
        QVERIFY(fit.why.contains(QStringLiteral("64")));
        const ContextFit roomy = fitContext(turns, 100000, 16, ContextPolicy::Refuse, words);
        QVERIFY(roomy.ok);
        QCOMPARE(roomy.droppedTurns, 0);
    }

    void countErrorsPropagate() {
        const ContextFit fit = fitContext({{QStringLiteral("user"), QStringLiteral("hi")}}, 100, 10, ContextPolicy::KeepNewest,
                                          [](const QVector<ChatTurn>&, QString* why) {
                                              *why = QStringLiteral("template failed at 3:7");
                                              return -1;
                                          });
        QVERIFY(!fit.ok);
        QCOMPARE(fit.why, QStringLiteral("template failed at 3:7"));
    }

    void policyNames() {
        QCOMPARE(contextPolicyName(contextPolicyFromName(QStringLiteral("refuse"))), QStringLiteral("refuse"));
        QCOMPARE(contextPolicyFromName(QStringLiteral("nonsense")), ContextPolicy::KeepNewest);
        QCOMPARE(replyReserve(4096, 512), 512);
        QCOMPARE(replyReserve(512, 512), 128);
    }
};

QTEST_GUILESS_MAIN(TestContextWindow)
#include "tst_context_window.moc"
