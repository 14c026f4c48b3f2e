// Splits a streamed reply into reasoning and answer: text between the open and close markers
// (<think> and </think> by default) is reasoning, the rest is the answer. Markers may arrive
// cut across pieces; a piece that could be the start of a marker is held back until the next
// piece decides. Whitespace at the start of each part is dropped (models write "<think>\n").
#pragma once

#include <QString>

namespace arbor::app {

class ReasoningSplitter {
public:
    explicit ReasoningSplitter(QString open = QStringLiteral("<think>"), QString close = QStringLiteral("</think>"))
        : m_open(std::move(open)), m_close(std::move(close)) {}

    struct Delta {
        QString content;
        QString reasoning;
        bool isEmpty() const { return content.isEmpty() && reasoning.isEmpty(); }
    };

    // Starts inside reasoning: the prompt already opened it (templates that end with <think>).
    void startInReasoning() { m_inReasoning = true; }
    bool inReasoning() const { return m_inReasoning; }

    Delta feed(const QString& piece);
    Delta finish();  // releases what was held back

private:
    void emitText(const QString& text, Delta* d);

    QString m_open, m_close;
    QString m_held;
    bool m_inReasoning = false;
    bool m_contentStarted = false, m_reasoningStarted = false;
};

}  // namespace arbor::app
