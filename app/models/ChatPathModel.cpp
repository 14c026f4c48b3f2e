#include "models/ChatPathModel.h"

#include "chat/StoreThread.h"

namespace arbor::app {
namespace {

QString statsText(const MessageRow& m) {
    if (m.role != QLatin1String("assistant") || m.state == QLatin1String("streaming")) return {};
    QStringList parts;
    const GenerationStats& s = m.stats;
    if (s.decodeTokS > 0) parts << QStringLiteral("%1 tok/s").arg(s.decodeTokS, 0, 'f', 1);
    if (s.ttftMs > 0) parts << QStringLiteral("%1 ms to first token").arg(qRound(s.ttftMs));
    if (s.tokenCount > 0) parts << QStringLiteral("%1 tokens").arg(s.tokenCount);
    if (!s.backend.isEmpty()) parts << s.backend;
    if (!s.contention.isEmpty() && s.contention != QLatin1String("quiet")) parts << s.contention;
    return parts.join(QStringLiteral(" · "));
}

bool sameRow(const MessageRow& a, const MessageRow& b) {
    return a.id == b.id && a.content == b.content && a.reasoning == b.reasoning && a.state == b.state &&
           a.siblingIndex == b.siblingIndex && a.siblingCount == b.siblingCount && a.stats.tokenCount == b.stats.tokenCount &&
           a.stats.decodeTokS == b.stats.decodeTokS && a.stats.stopReason == b.stats.stopReason;
}

}  // namespace

ChatPathModel::ChatPathModel(QObject* parent) : QAbstractListModel(parent) {}

int ChatPathModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_rows.size()); }

QHash<int, QByteArray> ChatPathModel::roleNames() const {
    return {{MessageIdRole, "messageId"},         {MessageRoleRole, "messageRole"}, {MessageTextRole, "messageText"},
            {ReasoningTextRole, "reasoningText"}, {SegmentModelRole, "segmentModel"},       {SiblingIndexRole, "siblingIndex"},
            {SiblingCountRole, "siblingCount"},   {MessageStateRole, "messageState"}, {StreamingRole, "streaming"},
            {StatsTextRole, "statsText"},         {DecodeTokSRole, "decodeTokS"},   {TtftMsRole, "ttftMs"},
            {TokenCountRole, "tokenCount"},       {StopReasonRole, "stopReason"},   {ContentionRole, "contention"},
            {CreatedAtRole, "createdAt"}};
}

QVariant ChatPathModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const MessageRow& m = m_rows[index.row()];
    switch (role) {
    case MessageIdRole: return m.id;
    case MessageRoleRole: return m.role;
    case MessageTextRole: return m.content;
    case ReasoningTextRole: return m.reasoning;
    case SegmentModelRole: return QVariant::fromValue<QObject*>(m_segments[index.row()]);
    case SiblingIndexRole: return m.siblingIndex;
    case SiblingCountRole: return m.siblingCount;
    case MessageStateRole: return m.state;
    case StreamingRole: return m.state == QLatin1String("streaming");
    case StatsTextRole: return statsText(m);
    case DecodeTokSRole: return m.stats.decodeTokS;
    case TtftMsRole: return m.stats.ttftMs;
    case TokenCountRole: return m.stats.tokenCount;
    case StopReasonRole: return m.stats.stopReason;
    case ContentionRole: return m.stats.contention;
    case CreatedAtRole: return m.createdAt;
    default: return {};
    }
}

int ChatPathModel::lastBranchRow() const {
    for (int i = int(m_rows.size()) - 1; i >= 0; --i)
        if (m_rows[i].siblingCount > 1) return i;
    return -1;
}

int ChatPathModel::rowOf(qint64 messageId) const {
    for (int i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].id == messageId) return i;
    return -1;
}

QString ChatPathModel::messageTextAt(int row) const { return row >= 0 && row < m_rows.size() ? m_rows[row].content : QString(); }

void ChatPathModel::setLoading(bool l) {
    if (l == m_loading) return;
    m_loading = l;
    emit loadingChanged();
}

void ChatPathModel::setOpening(bool o) {
    if (o == m_opening) return;
    m_opening = o;
    emit openingChanged();
}

void ChatPathModel::open(qint64 conversationId) {
    if (conversationId != m_conversationId) {
        m_conversationId = conversationId;
        setOpening(true);
        emit conversationIdChanged();
        if (conversationId == 0) {
            applyPath(0, {});
            return;
        }
    }
    reload();
}

void ChatPathModel::reload() {
    if (!m_store || m_conversationId == 0) return;
    const quint64 serial = ++m_serial;
    const qint64 conv = m_conversationId;
    setLoading(true);
    m_store->query([conv](StoreContext& s) { return s.chats.activePath(conv); }, this,
                   [this, serial, conv](QVector<MessageRow> rows) {
                       if (serial != m_serial) return;  // a newer load is on its way
                       setLoading(false);
                       applyPath(conv, rows);
                   });
}

void ChatPathModel::applyPath(qint64 conversationId, const QVector<MessageRow>& loaded) {
    if (conversationId != m_conversationId) return;  // the user moved on
    QVector<MessageRow> rows = loaded;
    for (MessageRow& r : rows) {
        const auto live = m_live.constFind(r.id);
        if (live != m_live.cend() && r.state == QLatin1String("streaming")) {
            r.content = live->content;
            r.reasoning = live->reasoning;
        }
    }
    const int oldBranch = lastBranchRow();
    const int oldCount = int(m_rows.size());
    if (conversationId != m_rowsConversation) {
        // Another conversation: one reset, so a view drops its delegates once and makes only
        // the ones it shows (a remove and an insert would each lay the view out).
        beginResetModel();
        for (MessageSegmentsModel* m : std::as_const(m_segments)) m->deleteLater();
        m_segments.clear();
        m_rows = rows;
        for (const MessageRow& r : std::as_const(m_rows)) m_segments.push_back(segmentsFor(r));
        m_rowsConversation = conversationId;
        endResetModel();
        if (oldCount != m_rows.size()) emit countChanged();
        if (oldBranch != lastBranchRow() || oldCount != m_rows.size()) emit branchesChanged();
        emit pathApplied();
        return;
    }
    setOpening(false);
    int common = 0;
    while (common < m_rows.size() && common < rows.size() && m_rows[common].id == rows[common].id) ++common;
    // Rows kept in place: update those that changed.
    for (int i = 0; i < common; ++i) {
        if (sameRow(m_rows[i], rows[i])) continue;
        m_rows[i] = rows[i];
        m_segments[i]->setLive(rows[i].state == QLatin1String("streaming"));
        m_segments[i]->setText(rows[i].content);
        emit dataChanged(index(i), index(i));
    }
    if (common < m_rows.size()) {
        beginRemoveRows({}, common, int(m_rows.size()) - 1);
        m_rows.resize(common);
        for (qsizetype i = common; i < m_segments.size(); ++i) m_segments[i]->deleteLater();  // views may still hold it this frame
        m_segments.resize(common);
        endRemoveRows();
    }
    if (common < rows.size()) {
        beginInsertRows({}, common, int(rows.size()) - 1);
        for (int i = common; i < rows.size(); ++i) {
            m_rows.push_back(rows[i]);
            m_segments.push_back(segmentsFor(rows[i]));
        }
        endInsertRows();
    }
    if (oldCount != m_rows.size()) emit countChanged();
    if (oldBranch != lastBranchRow() || oldCount != m_rows.size()) emit branchesChanged();
    emit pathApplied();
}

MessageSegmentsModel* ChatPathModel::segmentsFor(const MessageRow& row) {
    auto* segments = new MessageSegmentsModel(this);
    segments->setLive(row.state == QLatin1String("streaming"));
    segments->setText(row.content);
    return segments;
}

void ChatPathModel::setLive(qint64 replyId, const QString& content, const QString& reasoning) {
    Live& live = m_live[replyId];
    live.content = content;
    live.reasoning = reasoning;
    const int row = rowOf(replyId);
    if (row < 0) return;  // not on the path shown; kept for when it is
    MessageRow& m = m_rows[row];
    m.content = content;
    m.reasoning = reasoning;
    m_segments[row]->setText(content);  // updates only the paragraphs that changed
    emit dataChanged(index(row), index(row), {MessageTextRole, ReasoningTextRole});
}

void ChatPathModel::finishLive(qint64 replyId, const QString& content, const QString& reasoning, const QString& state,
                               const GenerationStats& stats) {
    m_live.remove(replyId);
    const int row = rowOf(replyId);
    if (row < 0) return;
    MessageRow& m = m_rows[row];
    m.content = content;
    m.reasoning = reasoning;
    m.state = state;
    m.stats = stats;
    m_segments[row]->setLive(false);
    m_segments[row]->setText(content);
    emit dataChanged(index(row), index(row));
}

void ChatPathModel::switchSibling(int row, int delta) {
    if (row < 0 || row >= m_rows.size() || delta == 0 || !m_store) return;
    const MessageRow& m = m_rows[row];
    const int target = m.siblingIndex + delta;
    if (target < 0 || target >= m.siblingCount) return;
    const qint64 id = m.id, conv = m_conversationId;
    const quint64 serial = ++m_serial;
    m_store->query(
        [id, target, conv](StoreContext& s) {
            const QVector<MessageRow> sib = s.chats.siblings(id);
            if (target < sib.size()) s.chats.activate(sib[target].id);
            return s.chats.activePath(conv);
        },
        this, [this, serial, conv](QVector<MessageRow> rows) {
            if (serial != m_serial) return;
            applyPath(conv, rows);
        });
}

void ChatPathModel::editMessage(int row, const QString& text) {
    if (row < 0 || row >= m_rows.size() || text.trimmed().isEmpty()) return;
    if (m_rows[row].role != QLatin1String("user")) return;
    emit editRequested(m_rows[row].id, text);
}

void ChatPathModel::regenerate(int row) {
    if (row < 0 || row >= m_rows.size()) return;
    emit regenerateRequested(m_rows[row].id);
}

}  // namespace arbor::app
