// ReasoningSplitter: a reply streamed in pieces of every size comes out split exactly as the
// whole text split at once (the oracle: a plain search for the markers over the whole text).
#include "engine/ReasoningSplitter.h"

#include <QtTest>

using namespace arbor::app;

namespace {

// Whole-text oracle: alternate between answer and reasoning at each marker, then drop the
// leading whitespace of each part.
QPair<QString, QString> splitWhole(const QString& text, bool startInReasoning) {
    QString content, reasoning;
    bool inR = startInReasoning;
    qsizetype at = 0;
    for (;;) {
        const QString marker = inR ? QStringLiteral("</think>") : QStringLiteral("<think>");
        const qsizetype next = text.indexOf(marker, at);
        (inR ? reasoning : content) += text.mid(at, next < 0 ? -1 : next - at);
        if (next < 0) break;
        at = next + marker.size();
        inR = !inR;
    }
    auto lstrip = [](QString s) {
        qsizetype i = 0;
        while (i < s.size() && s[i].isSpace()) ++i;
        return s.mid(i);
    };
    return {lstrip(content), lstrip(reasoning)};
}

}  // namespace

class TestReasoningSplitter : public QObject {
    Q_OBJECT
private slots:
    void matchesWholeTextSplit_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("startInReasoning");
        QTest::newRow("plain answer") << "Just an answer, no thinking." << false;
        QTest::newRow("think then answer") << "<think>\nLet me see: 2+2.\n</think>\n\nIt is 4." << false;
        QTest::newRow("opened by the prompt") << "\nweighing options</think>The answer." << true;
        QTest::newRow("unclosed (still thinking)") << "<think>step one, step two" << false;
        QTest::newRow("two blocks") << "<think>a</think>b<think>c</think>d" << false;
        QTest::newRow("marker-like text") << "use <thin> and </thinking> and <t" << false;
        QTest::newRow("lone close") << "answer </think> more" << false;
        QTest::newRow("unicode") << "<think>ünïcödé ✓</think>日本語の答え" << false;
        QTest::newRow("empty reasoning") << "<think></think>\n\nok" << false;
        QTest::newRow("trailing partial marker") << "the end <think" << false;
    }
    void matchesWholeTextSplit() {
        QFETCH(QString, text);
        QFETCH(bool, startInReasoning);
        const auto expect = splitWhole(text, startInReasoning);
        for (int piece : {1, 2, 3, 5, 7, 1000}) {
            ReasoningSplitter s;
            if (startInReasoning) s.startInReasoning();
            QString content, reasoning;
            for (qsizetype i = 0; i < text.size(); i += piece) {
                const auto d = s.feed(text.mid(i, piece));
                content += d.content;
                reasoning += d.reasoning;
            }
            const auto d = s.finish();
            content += d.content;
            reasoning += d.reasoning;
            // A trailing partial marker is text after all.
            QCOMPARE(content, expect.first);
            QCOMPARE(reasoning, expect.second);
        }
    }

    void holdsBackOnlyWhatCouldBeAMarker() {
        ReasoningSplitter s;
        auto d = s.feed(QStringLiteral("Hello <th"));
        QCOMPARE(d.content, QStringLiteral("Hello "));  // "<th" might open reasoning
        d = s.feed(QStringLiteral("ere"));
        QCOMPARE(d.content, QStringLiteral("<there"));
        QVERIFY(!s.inReasoning());
    }

    void customMarkers() {
        ReasoningSplitter s(QStringLiteral("<|begin_of_thought|>"), QStringLiteral("<|end_of_thought|>"));
        auto d = s.feed(QStringLiteral("<|begin_of_thought|>hmm<|end_of_thought|>yes"));
        QCOMPARE(d.reasoning, QStringLiteral("hmm"));
        QCOMPARE(d.content, QStringLiteral("yes"));
    }
};

QTEST_GUILESS_MAIN(TestReasoningSplitter)
#include "tst_reasoning_splitter.moc"
