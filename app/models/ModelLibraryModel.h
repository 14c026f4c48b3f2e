// The model library: imported GGUF files with the header facts `arbor-cli info` shows. Files
// are never copied; the library records their paths and marks a moved or deleted file missing.
//
// importFiles() validates each file on the store thread (GGUF header, a language model's
// architecture and types) and reports every rejection with a readable reason.
#pragma once

#include "store/ModelRecords.h"

#include <QAbstractListModel>
#include <QHash>
#include <QStringList>
#include <QUrl>
#include <QVariantMap>
#include <QtQml/qqmlregistration.h>

namespace arbor::app {

class StoreThread;
struct StoreContext;

class ModelLibraryModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("ModelLibraryModel is provided by ChatController.library")
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
    Q_PROPERTY(QStringList lastRejected READ lastRejected NOTIFY importFinished)
    Q_PROPERTY(QString rejectedText READ rejectedText NOTIFY importFinished)  // one line per file
    Q_PROPERTY(bool importing READ importing NOTIFY importingChanged)

public:
    enum Role {
        ModelIdRole = Qt::UserRole + 1,
        ModelNameRole,
        ModelPathRole,
        ArchitectureRole,
        QuantTypeRole,
        FileSizeRole,
        SizeTextRole,         // "1.2 GB"
        ParametersRole,
        ParametersTextRole,   // "1.1 B"
        ContextLengthRole,
        MissingRole,          // the file moved or was deleted
        SummaryTextRole,      // "llama · Q4_K · 1.2 GB · 2048 ctx"
    };
    Q_ENUM(Role)

    explicit ModelLibraryModel(QObject* parent = nullptr);
    void setStore(StoreThread* store) { m_store = store; }

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    QStringList lastRejected() const { return m_lastRejected; }
    QString rejectedText() const { return m_lastRejected.join(QLatin1Char('\n')); }
    bool importing() const { return m_importing > 0; }

    // Validates and records the files (URLs from a drop or a dialog, or plain paths).
    Q_INVOKABLE void importFiles(const QList<QUrl>& urls);
    void importPaths(const QStringList& paths);
    Q_INVOKABLE void refresh();
    Q_INVOKABLE int rowOfPath(const QString& path) const;
    Q_INVOKABLE QString pathAt(int row) const;
    // Everything known about row's model, for the details pane: the record plus the
    // `arbor-cli info` facts (block count, heads, vocabulary, chat template).
    Q_INVOKABLE QVariantMap details(int row) const;
    Q_INVOKABLE void clearRejected();

    struct Entry {
        ModelRecord record;
        QVariantMap info;  // parsed info_json
    };
    void setEntries(const QVector<Entry>& entries);
    const QVector<Entry>& entries() const { return m_entries; }

    static QString sizeText(qint64 bytes);
    static QString parametersText(qint64 n);

signals:
    void countChanged();
    void importingChanged();
    // After an import: the paths recorded and a "file: reason" line per rejected file.
    void importFinished(const QStringList& accepted, const QStringList& rejected);

private:
    StoreThread* m_store = nullptr;
    QVector<Entry> m_entries;
    QStringList m_lastRejected;
    int m_importing = 0;
};

// Loads the library rows with their info JSON (runs on the store thread).
QVector<ModelLibraryModel::Entry> loadLibrary(const StoreContext& ctx);

}  // namespace arbor::app
