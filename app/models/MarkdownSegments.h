// Cuts a message's Markdown into prose paragraphs and fenced code blocks, so the QML can show
// code in a monospace block with its own copy button and leave the prose to MarkdownText. Prose
// is cut at blank lines: while a reply streams only its last paragraph changes, so only that
// one is laid out again. An unclosed fence (a reply still streaming) runs to the end.
#pragma once

#include <QString>
#include <QVector>

namespace arbor::app {

struct MarkdownSegment {
    enum class Kind { Prose, Code };
    Kind kind = Kind::Prose;
    QString body;      // prose: Markdown; code: the code, without the fences
    QString language;  // code: the fence's info string ("cpp"), may be empty
    bool closed = true;
};

QVector<MarkdownSegment> splitMarkdown(const QString& text);

}  // namespace arbor::app
