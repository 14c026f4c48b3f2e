// A list model shown in reverse order: row 0 is the source's last row. The chat view lays its
// messages out bottom to top over this, so opening a long conversation starts at the newest
// message and makes only the delegates that will be seen, instead of laying out the top of
// the list and then jumping to its end.
//
// Every change of the source is forwarded with the rows mapped (an append to the source is an
// insert at row 0 here). The extra role "sourceRow" gives each row's index in the source, for
// actions that name a source row (edit, regenerate, switch branch).
#pragma once

#include <QAbstractListModel>
#include <QPointer>
#include <QtQml/qqmlregistration.h>

namespace arbor::app {

class ReversedListModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("ReversedListModel is provided by ChatController.messagesNewestFirst")
    Q_PROPERTY(int count READ count NOTIFY countChanged)

public:
    static constexpr int SourceRowRole = Qt::UserRole + 1000;  // above the source's own roles

    explicit ReversedListModel(QObject* parent = nullptr) : QAbstractListModel(parent) {}

    QAbstractItemModel* sourceModel() const { return m_source; }
    void setSourceModel(QAbstractItemModel* source);
    int count() const { return rowCount(); }

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    // The source row of `row` and back (the mapping is its own inverse).
    int sourceRow(int row) const { return rowCount() - 1 - row; }

signals:
    void countChanged();

private:
    void connectSource();

    QPointer<QAbstractItemModel> m_source;
    QList<QMetaObject::Connection> m_connections;
    int m_count = 0;  // rows as last announced (the source's count before a pending change)
};

}  // namespace arbor::app
