// The conversation list of the sidebar: pinned first, then by last update, newest first, and
// filtered by the search text (titles, and message text through FTS5). Each row has a group
// for the list's sections: "Pinned", "Today", "This week", "Older".
//
// Loads through the store thread; a reload whose rows keep the same order only updates rows
// in place, so the view keeps its scroll position while a reply streams.
#pragma once

#include "store/ChatStore.h"

#include <QAbstractListModel>
#include <QDateTime>
#include <QtQml/qqmlregistration.h>

namespace arbor::app {

class StoreThread;

class ConversationListModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("ConversationListModel is provided by ChatController.conversations")
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
    Q_PROPERTY(QString search READ search WRITE setSearch NOTIFY searchChanged)

public:
    enum Role {
        ConversationIdRole = Qt::UserRole + 1,
        ConversationTitleRole,
        UpdatedAtRole,  // ms since the epoch
        PinnedRole,
        GroupRole,      // "Pinned", "Today", "This week", "Older"
        ModelPathRole,
    };
    Q_ENUM(Role)

    explicit ConversationListModel(QObject* parent = nullptr);
    void setStore(StoreThread* store) { m_store = store; }

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    QString search() const { return m_search; }
    void setSearch(const QString& s);
    Q_INVOKABLE void refresh();
    Q_INVOKABLE int rowOf(qint64 conversationId) const;
    Q_INVOKABLE qint64 idAt(int row) const;
    void setRows(const QVector<ConversationRow>& rows);
    const QVector<ConversationRow>& rows() const { return m_rows; }

    // The clock used for grouping (tests pin it).
    void setNow(const QDateTime& now) { m_now = now; }
    static QString groupFor(const ConversationRow& c, const QDateTime& now);

signals:
    void countChanged();
    void searchChanged();
    void refreshed();

private:
    StoreThread* m_store = nullptr;
    QVector<ConversationRow> m_rows;
    QString m_search;
    quint64 m_serial = 0;
    QDateTime m_now;
};

}  // namespace arbor::app
