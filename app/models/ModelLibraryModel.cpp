#include "models/ModelLibraryModel.h"

#include "chat/StoreThread.h"
#include "store/Database.h"

#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSqlQuery>
#include <QVariant>

namespace arbor::app {

QVector<ModelLibraryModel::Entry> loadLibrary(const StoreContext& ctx) {
    QVector<ModelLibraryModel::Entry> out;
    QHash<qint64, QVariantMap> infos;
    QSqlQuery q(ctx.db.handle());
    if (q.exec(QStringLiteral("SELECT id, info_json FROM models")))
        while (q.next()) infos[q.value(0).toLongLong()] = QJsonDocument::fromJson(q.value(1).toString().toUtf8()).object().toVariantMap();
    for (const ModelRecord& r : ctx.models.all()) out.push_back({r, infos.value(r.id)});
    return out;
}

ModelLibraryModel::ModelLibraryModel(QObject* parent) : QAbstractListModel(parent) {}

int ModelLibraryModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_entries.size()); }

QHash<int, QByteArray> ModelLibraryModel::roleNames() const {
    return {{ModelIdRole, "modelId"},
            {ModelNameRole, "modelName"},
            {ModelPathRole, "modelPath"},
            {ArchitectureRole, "architecture"},
            {QuantTypeRole, "quantType"},
            {FileSizeRole, "fileSize"},
            {SizeTextRole, "sizeText"},
            {ParametersRole, "parameters"},
            {ParametersTextRole, "parametersText"},
            {ContextLengthRole, "contextLength"},
            {MissingRole, "missing"},
            {SummaryTextRole, "summaryText"}};
}

QString ModelLibraryModel::sizeText(qint64 bytes) {
    const double b = double(bytes);
    if (b >= 1e9) return QStringLiteral("%1 GB").arg(b / 1e9, 0, 'f', 1);
    if (b >= 1e6) return QStringLiteral("%1 MB").arg(b / 1e6, 0, 'f', 1);
    if (b >= 1e3) return QStringLiteral("%1 kB").arg(b / 1e3, 0, 'f', 1);
    return QStringLiteral("%1 B").arg(bytes);
}

QString ModelLibraryModel::parametersText(qint64 n) {
    const double v = double(n);
    if (v >= 1e9) return QStringLiteral("%1 B").arg(v / 1e9, 0, 'f', 1);
    if (v >= 1e6) return QStringLiteral("%1 M").arg(v / 1e6, 0, 'f', 1);
    if (v >= 1e3) return QStringLiteral("%1 K").arg(v / 1e3, 0, 'f', 0);
    return QString::number(n);
}

QVariant ModelLibraryModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const ModelRecord& r = m_entries[index.row()].record;
    switch (role) {
    case ModelIdRole: return r.id;
    case ModelNameRole: return r.name;
    case ModelPathRole: return r.path;
    case ArchitectureRole: return r.architecture;
    case QuantTypeRole: return r.mainType;
    case FileSizeRole: return r.fileSize;
    case SizeTextRole: return sizeText(r.fileSize);
    case ParametersRole: return r.parameters;
    case ParametersTextRole: return parametersText(r.parameters);
    case ContextLengthRole: return r.contextLength;
    case MissingRole: return r.missing;
    case SummaryTextRole: {
        QStringList parts{r.architecture};
        if (!r.mainType.isEmpty()) parts << r.mainType;
        parts << sizeText(r.fileSize);
        if (r.contextLength > 0) parts << tr("%1 ctx").arg(r.contextLength);
        if (r.missing) parts << tr("file missing");
        return parts.join(QStringLiteral(" · "));
    }
    default: return {};
    }
}

void ModelLibraryModel::setEntries(const QVector<Entry>& entries) {
    const int before = int(m_entries.size());
    beginResetModel();
    m_entries = entries;
    endResetModel();
    if (before != m_entries.size()) emit countChanged();
}

void ModelLibraryModel::refresh() {
    if (!m_store) return;
    m_store->query([](StoreContext& s) { return loadLibrary(s); }, this, [this](QVector<Entry> e) { setEntries(e); });
}

void ModelLibraryModel::importFiles(const QList<QUrl>& urls) {
    QStringList paths;
    for (const QUrl& u : urls) paths << (u.isLocalFile() ? u.toLocalFile() : u.toString());
    importPaths(paths);
}

void ModelLibraryModel::importPaths(const QStringList& paths) {
    if (!m_store || paths.isEmpty()) return;
    ++m_importing;
    emit importingChanged();
    struct Outcome {
        QStringList accepted, rejected;
        QVector<Entry> entries;
    };
    m_store->query(
        [paths](StoreContext& s) {
            Outcome o;
            for (const QString& p : paths) {
                const QFileInfo fi(p);
                QString why;
                if (p.isEmpty() || (!fi.isAbsolute() && p.contains(QStringLiteral("://")))) {
                    o.rejected << tr("%1: only local files can be imported").arg(p);
                } else if (!fi.exists()) {
                    o.rejected << tr("%1: the file does not exist").arg(fi.fileName());
                } else if (fi.isDir()) {
                    o.rejected << tr("%1: is a folder, not a GGUF model file").arg(fi.fileName());
                } else if (s.models.importFile(fi.absoluteFilePath(), &why)) {
                    o.accepted << fi.absoluteFilePath();
                } else {
                    o.rejected << tr("%1 is not a usable GGUF model: %2").arg(fi.fileName(), why);
                }
            }
            o.entries = loadLibrary(s);
            return o;
        },
        this, [this](Outcome o) {
            setEntries(o.entries);
            m_lastRejected = o.rejected;
            --m_importing;
            emit importingChanged();
            emit importFinished(o.accepted, o.rejected);
        });
}

void ModelLibraryModel::clearRejected() {
    if (m_lastRejected.isEmpty()) return;
    m_lastRejected.clear();
    emit importFinished({}, {});
}

int ModelLibraryModel::rowOfPath(const QString& path) const {
    for (int i = 0; i < m_entries.size(); ++i)
        if (m_entries[i].record.path == path) return i;
    return -1;
}

QString ModelLibraryModel::pathAt(int row) const { return row >= 0 && row < m_entries.size() ? m_entries[row].record.path : QString(); }

QVariantMap ModelLibraryModel::details(int row) const {
    if (row < 0 || row >= m_entries.size()) return {};
    const Entry& e = m_entries[row];
    QVariantMap m = e.info;
    m[QStringLiteral("name")] = e.record.name;
    m[QStringLiteral("path")] = e.record.path;
    m[QStringLiteral("fingerprint")] = e.record.fingerprint;
    m[QStringLiteral("architecture")] = e.record.architecture;
    m[QStringLiteral("quant_type")] = e.record.mainType;
    m[QStringLiteral("file_size")] = sizeText(e.record.fileSize);
    m[QStringLiteral("parameters")] = parametersText(e.record.parameters);
    m[QStringLiteral("context_length")] = e.record.contextLength;
    m[QStringLiteral("missing")] = e.record.missing;
    return m;
}

}  // namespace arbor::app
