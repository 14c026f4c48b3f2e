// Markdown cut into prose and fenced code blocks.
#include "models/MarkdownSegments.h"

#include <QtTest>

using namespace arbor::app;

class TestMarkdownSegments : public QObject {
    Q_OBJECT
private slots:
    void splits_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QStringList>("expect");  // "kind|language|body" per segment
        QTest::newRow("prose paragraphs") << "Hello *there*\n\n- a\n- b\n\n\nEnd" << QStringList{"prose||Hello *there*", "prose||- a\n- b", "prose||End"};
        QTest::newRow("one paragraph") << "line one\nline two" << QStringList{"prose||line one\nline two"};
        QTest::newRow("code with language") << "Look:\n```cpp\nint x;\n```\nDone."
                                            << QStringList{"prose||Look:", "code|cpp|int x;", "prose||Done."};
        QTest::newRow("tilde fence, longer close") << "~~~\na\n~~~~\n" << QStringList{"code||a"};
        QTest::newRow("unclosed while streaming") << "Sure:\n```py\nprint(1)\nprint(2" << QStringList{"prose||Sure:", "code|py|print(1)\nprint(2"};
        QTest::newRow("inline backticks are not fences") << "use ```x``` inline" << QStringList{"prose||use ```x``` inline"};
        QTest::newRow("shorter close does not close") << "````\n```\nstill code\n````" << QStringList{"code||```\nstill code"};
        QTest::newRow("indented fence") << "   ```\nx\n   ```" << QStringList{"code||x"};
        QTest::newRow("blank prose dropped") << "```\nx\n```\n\n\n```\ny\n```" << QStringList{"code||x", "code||y"};
        QTest::newRow("empty") << "" << QStringList{};
    }
    void splits() {
        QFETCH(QString, text);
        QFETCH(QStringList, expect);
        QStringList got;
        for (const MarkdownSegment& s : splitMarkdown(text))
            got << QStringLiteral("%1|%2|%3").arg(s.kind == MarkdownSegment::Kind::Code ? "code" : "prose", s.language, s.body);
        QCOMPARE(got, expect);
    }
};

QTEST_GUILESS_MAIN(TestMarkdownSegments)
#include "tst_markdown_segments.moc"
