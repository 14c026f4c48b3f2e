#include "engine/ReasoningSplitter.h"

namespace arbor::app {

void ReasoningSplitter::emitText(const QString& text, Delta* d) {
    if (text.isEmpty()) return;
    bool& started = m_inReasoning ? m_reasoningStarted : m_contentStarted;
    QString t = text;
    if (!started) {
        qsizetype i = 0;
        while (i < t.size() && t[i].isSpace()) ++i;
        t = t.mid(i);
        if (t.isEmpty()) return;
        started = true;
    }
    (m_inReasoning ? d->reasoning : d->content) += t;
}

ReasoningSplitter::Delta ReasoningSplitter::feed(const QString& piece) {
    Delta d;
    m_held += piece;
    for (;;) {
        const QString& marker = m_inReasoning ? m_close : m_open;
        const qsizetype at = m_held.indexOf(marker);
        if (at >= 0) {
            emitText(m_held.left(at), &d);
            m_held.remove(0, at + marker.size());
            m_inReasoning = !m_inReasoning;
            continue;
        }
        // Hold back the longest tail that is a proper prefix of the marker.
        qsizetype keep = std::min<qsizetype>(marker.size() - 1, m_held.size());
        while (keep > 0 && !marker.startsWith(QStringView(m_held).right(keep))) --keep;
        emitText(m_held.left(m_held.size() - keep), &d);
        m_held.remove(0, m_held.size() - keep);
        return d;
    }
}

ReasoningSplitter::Delta ReasoningSplitter::finish() {
    Delta d;
    emitText(m_held, &d);
    m_held.clear();
    return d;
}

}  // namespace arbor::app
