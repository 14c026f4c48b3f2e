#include "models/MessageSegmentsModel.h"

namespace arbor::app {

int MessageSegmentsModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_segments.size()); }

QHash<int, QByteArray> MessageSegmentsModel::roleNames() const {
    return {{SegmentKindRole, "segmentKind"},
            {SegmentBodyRole, "segmentBody"},
            {SegmentLanguageRole, "segmentLanguage"},
            {SegmentPlainRole, "segmentPlain"}};
}

QVariant MessageSegmentsModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const MarkdownSegment& s = m_segments[index.row()];
    switch (role) {
    case SegmentKindRole: return s.kind == MarkdownSegment::Kind::Code ? QStringLiteral("code") : QStringLiteral("prose");
    case SegmentBodyRole: return s.body;
    case SegmentLanguageRole: return s.language;
    case SegmentPlainRole: return plainAt(index.row());
    default: return {};
    }
}

bool MessageSegmentsModel::plainAt(int row) const {
    return m_live && row == m_segments.size() - 1 && m_segments[row].kind == MarkdownSegment::Kind::Prose &&
           m_segments[row].body.size() > kLiveMarkdownLimit;
}

void MessageSegmentsModel::setLive(bool live) {
    if (live == m_live) return;
    m_live = live;
    if (!m_segments.isEmpty()) emit dataChanged(index(int(m_segments.size()) - 1), index(int(m_segments.size()) - 1), {SegmentPlainRole});
}

void MessageSegmentsModel::setText(const QString& text) {
    if (text == m_text) return;
    m_text = text;
    const QVector<MarkdownSegment> next = splitMarkdown(text);
    // Segments that keep their kind are updated in place; the rest are inserted or removed.
    const int keep = int(std::min(next.size(), m_segments.size()));
    int same = 0;
    while (same < keep && next[same].kind == m_segments[same].kind) ++same;
    const int lastBefore = int(m_segments.size()) - 1;
    const bool grew = next.size() > m_segments.size();
    for (int i = 0; i < same; ++i) {
        const bool changed = next[i].body != m_segments[i].body || next[i].language != m_segments[i].language;
        const bool finished = m_live && grew && i == lastBefore;  // no longer the growing one: Markdown again
        if (!changed && !finished) continue;
        m_segments[i] = next[i];
        emit dataChanged(index(i), index(i));
    }
    if (same < m_segments.size()) {
        beginRemoveRows({}, same, int(m_segments.size()) - 1);
        m_segments.resize(same);
        endRemoveRows();
    }
    if (same < next.size()) {
        beginInsertRows({}, same, int(next.size()) - 1);
        for (int i = same; i < next.size(); ++i) m_segments.push_back(next[i]);
        endInsertRows();
    }
}

}  // namespace arbor::app
