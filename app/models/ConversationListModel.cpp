#include "models/ConversationListModel.h"

#include "chat/StoreThread.h"

#include <QSet>

namespace arbor::app {

ConversationListModel::ConversationListModel(QObject* parent) : QAbstractListModel(parent) {}

int ConversationListModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_rows.size()); }

QHash<int, QByteArray> ConversationListModel::roleNames() const {
    return {{ConversationIdRole, "conversationId"}, {ConversationTitleRole, "conversationTitle"}, {UpdatedAtRole, "updatedAt"},
            {PinnedRole, "pinned"},                 {GroupRole, "group"},                         {ModelPathRole, "modelPath"}};
}

QString ConversationListModel::groupFor(const ConversationRow& c, const QDateTime& now) {
    if (c.pinned) return QStringLiteral("Pinned");
    const QDate day = QDateTime::fromMSecsSinceEpoch(c.updatedAt).date();
    const QDate today = now.date();
    if (day >= today) return QStringLiteral("Today");
    if (day > today.addDays(-7)) return QStringLiteral("This week");
    return QStringLiteral("Older");
}

QVariant ConversationListModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const ConversationRow& c = m_rows[index.row()];
    switch (role) {
    case ConversationIdRole: return c.id;
    case ConversationTitleRole: return c.title.isEmpty() ? tr("New chat") : c.title;
    case UpdatedAtRole: return c.updatedAt;
    case PinnedRole: return c.pinned;
    case GroupRole: return groupFor(c, m_now.isValid() ? m_now : QDateTime::currentDateTime());
    case ModelPathRole: return c.modelPath;
    default: return {};
    }
}

void ConversationListModel::setSearch(const QString& s) {
    if (s == m_search) return;
    m_search = s;
    emit searchChanged();
    refresh();
}

void ConversationListModel::refresh() {
    if (!m_store) return;
    const quint64 serial = ++m_serial;
    const QString search = m_search;
    m_store->query([search](StoreContext& s) { return s.chats.conversations(search); }, this,
                   [this, serial](QVector<ConversationRow> rows) {
                       if (serial != m_serial) return;  // typed on: a newer search is coming
                       setRows(rows);
                       emit refreshed();
                   });
}

void ConversationListModel::setRows(const QVector<ConversationRow>& rows) {
    // A small diff (removes, moves, inserts, updates), so views keep their place and selection.
    const int before = int(m_rows.size());
    QSet<qint64> wanted;
    for (const ConversationRow& r : rows) wanted.insert(r.id);
    for (int i = int(m_rows.size()) - 1; i >= 0; --i) {
        if (wanted.contains(m_rows[i].id)) continue;
        beginRemoveRows({}, i, i);
        m_rows.remove(i);
        endRemoveRows();
    }
    for (int i = 0; i < rows.size(); ++i) {
        if (i < m_rows.size() && m_rows[i].id == rows[i].id) {
            const ConversationRow& a = m_rows[i];
            const ConversationRow& b = rows[i];
            if (a.title != b.title || a.updatedAt != b.updatedAt || a.pinned != b.pinned || a.modelPath != b.modelPath) {
                m_rows[i] = b;
                emit dataChanged(index(i), index(i));
            }
            continue;
        }
        int j = i + 1;
        while (j < m_rows.size() && m_rows[j].id != rows[i].id) ++j;
        if (j < m_rows.size()) {
            beginMoveRows({}, j, j, {}, i);
            m_rows.move(j, i);
            endMoveRows();
            m_rows[i] = rows[i];
            emit dataChanged(index(i), index(i));
        } else {
            beginInsertRows({}, i, i);
            m_rows.insert(i, rows[i]);
            endInsertRows();
        }
    }
    if (before != m_rows.size()) emit countChanged();
}

int ConversationListModel::rowOf(qint64 conversationId) const {
    for (int i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].id == conversationId) return i;
    return -1;
}

qint64 ConversationListModel::idAt(int row) const { return row >= 0 && row < m_rows.size() ? m_rows[row].id : 0; }

}  // namespace arbor::app
