#include "models/ReversedListModel.h"

namespace arbor::app {

void ReversedListModel::setSourceModel(QAbstractItemModel* source) {
    if (source == m_source) return;
    beginResetModel();
    for (const auto& c : m_connections) disconnect(c);
    m_connections.clear();
    m_source = source;
    m_count = m_source ? m_source->rowCount() : 0;
    if (m_source) connectSource();
    endResetModel();
    emit countChanged();
}

void ReversedListModel::connectSource() {
    QAbstractItemModel* s = m_source;
    auto on = [&](auto signal, auto slot) { m_connections << connect(s, signal, this, slot); };
    // Source rows [first, last] of a source with n rows are rows [n-1-last, n-1-first] here; an
    // insert before source row `first` is an insert at row n-first here.
    on(&QAbstractItemModel::rowsAboutToBeInserted, [this](const QModelIndex& p, int first, int last) {
        if (p.isValid()) return;
        beginInsertRows({}, m_count - first, m_count - first + (last - first));
    });
    on(&QAbstractItemModel::rowsInserted, [this](const QModelIndex& p, int first, int last) {
        if (p.isValid()) return;
        m_count += last - first + 1;
        endInsertRows();
        emit countChanged();
    });
    on(&QAbstractItemModel::rowsAboutToBeRemoved, [this](const QModelIndex& p, int first, int last) {
        if (p.isValid()) return;
        beginRemoveRows({}, m_count - 1 - last, m_count - 1 - first);
    });
    on(&QAbstractItemModel::rowsRemoved, [this](const QModelIndex& p, int first, int last) {
        if (p.isValid()) return;
        m_count -= last - first + 1;
        endRemoveRows();
        emit countChanged();
    });
    on(&QAbstractItemModel::dataChanged, [this](const QModelIndex& tl, const QModelIndex& br, const QList<int>& roles) {
        if (tl.parent().isValid()) return;
        emit dataChanged(index(m_count - 1 - br.row()), index(m_count - 1 - tl.row()), roles);
    });
    // Anything that reorders the source is forwarded as a reset.
    auto begin = [this] { beginResetModel(); };
    auto end = [this] {
        m_count = m_source ? m_source->rowCount() : 0;
        endResetModel();
        emit countChanged();
    };
    on(&QAbstractItemModel::modelAboutToBeReset, begin);
    on(&QAbstractItemModel::modelReset, end);
    on(&QAbstractItemModel::layoutAboutToBeChanged, begin);
    on(&QAbstractItemModel::layoutChanged, end);
    on(&QAbstractItemModel::rowsAboutToBeMoved, begin);
    on(&QAbstractItemModel::rowsMoved, end);
    on(&QObject::destroyed, [this] {
        beginResetModel();
        m_connections.clear();
        m_count = 0;
        endResetModel();
        emit countChanged();
    });
}

int ReversedListModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : m_count; }

QVariant ReversedListModel::data(const QModelIndex& index, int role) const {
    if (!m_source || !checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const int row = sourceRow(index.row());
    if (role == SourceRowRole) return row;
    return m_source->data(m_source->index(row, 0), role);
}

QHash<int, QByteArray> ReversedListModel::roleNames() const {
    QHash<int, QByteArray> names = m_source ? m_source->roleNames() : QHash<int, QByteArray>{};
    names.insert(SourceRowRole, "sourceRow");
    return names;
}

}  // namespace arbor::app
