#include "store/ModelRecords.h"

#include <QDateTime>
#include <QFileInfo>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>
#include <arbor/gguf.hpp>
#include <arbor/json.hpp>
#include <arbor/model_summary.hpp>

namespace arbor::app {
namespace {

// FNV-1a over the tensor table: names, types, shapes and offsets.
QString tableHash(const GgufFile& f) {
    uint64_t h = 1469598103934665603ull;
    auto mix = [&](const void* p, size_t n) {
        const auto* b = static_cast<const unsigned char*>(p);
        for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
    };
    for (const auto& t : f.tensors()) {
        mix(t.name.data(), t.name.size());
        mix(&t.type, sizeof t.type);
        mix(t.ne, sizeof t.ne);
        mix(&t.offset, sizeof t.offset);
    }
    return QString::number(f.file_size()) + QLatin1Char('-') + QString::number(h, 16);
}

}  // namespace

QString modelFingerprint(const QString& path, QString* why) {
    auto f = GgufFile::open(path.toStdString());
    if (!f) {
        if (why) *why = QString::fromStdString(f.message());
        return {};
    }
    return tableHash(**f);
}

qint64 ModelRecords::importFile(const QString& path, QString* why) {
    const QString abs = QFileInfo(path).absoluteFilePath();
    auto f = GgufFile::open(abs.toStdString());
    if (!f) {
        *why = QString::fromStdString(f.message());
        return 0;
    }
    auto s = summarize_model(**f);
    if (!s) {
        *why = QString::fromStdString(s.message());
        return 0;
    }
    if (s->architecture.empty()) {
        *why = QStringLiteral("%1: the file has no general.architecture, so it is not a language model").arg(abs);
        return 0;
    }
    json::Value info = json::Value::object();
    info["architecture"] = s->architecture;
    info["parameters"] = static_cast<unsigned long long>(s->parameters);
    info["block_count"] = s->block_count ? json::Value(static_cast<unsigned long long>(*s->block_count)) : json::Value();
    info["head_count"] = s->head_count ? json::Value(static_cast<unsigned long long>(*s->head_count)) : json::Value();
    info["vocab_size"] = s->vocab_size ? json::Value(static_cast<unsigned long long>(*s->vocab_size)) : json::Value();
    info["has_chat_template"] = s->has_chat_template;

    QSqlQuery q(m_db);
    q.prepare(QStringLiteral(
        "INSERT INTO models(path, fingerprint, name, architecture, main_type, file_size, parameters, context_length, info_json, imported_at) "
        "VALUES(?,?,?,?,?,?,?,?,?,?) ON CONFLICT(path) DO UPDATE SET fingerprint=excluded.fingerprint, name=excluded.name, "
        "architecture=excluded.architecture, main_type=excluded.main_type, file_size=excluded.file_size, "
        "parameters=excluded.parameters, context_length=excluded.context_length, info_json=excluded.info_json, missing=0"));
    const QString name = s->name.empty() ? QFileInfo(abs).completeBaseName() : QString::fromStdString(s->name);
    q.addBindValue(abs);
    q.addBindValue(tableHash(**f));
    q.addBindValue(name);
    q.addBindValue(QString::fromStdString(s->architecture));
    q.addBindValue(QString::fromStdString(s->main_type));
    q.addBindValue(static_cast<qint64>(s->file_size));
    q.addBindValue(static_cast<qint64>(s->parameters));
    q.addBindValue(s->context_length ? QVariant(static_cast<qint64>(*s->context_length)) : QVariant());
    q.addBindValue(QString::fromStdString(json::dump(info)));
    q.addBindValue(QDateTime::currentSecsSinceEpoch());
    if (!q.exec()) {
        *why = QStringLiteral("cannot record %1: %2").arg(abs, q.lastError().text());
        return 0;
    }
    QSqlQuery id(m_db);
    id.prepare(QStringLiteral("SELECT id FROM models WHERE path=?"));
    id.addBindValue(abs);
    if (!id.exec() || !id.next()) return 0;
    return id.value(0).toLongLong();
}

QVector<ModelRecord> ModelRecords::all() const {
    QVector<ModelRecord> out;
    QSqlQuery q(m_db);
    if (!q.exec(QStringLiteral("SELECT id, path, fingerprint, name, architecture, main_type, file_size, parameters, "
                               "context_length, missing FROM models ORDER BY name COLLATE NOCASE, id")))
        return out;
    while (q.next()) {
        ModelRecord r;
        r.id = q.value(0).toLongLong();
        r.path = q.value(1).toString();
        r.fingerprint = q.value(2).toString();
        r.name = q.value(3).toString();
        r.architecture = q.value(4).toString();
        r.mainType = q.value(5).toString();
        r.fileSize = q.value(6).toLongLong();
        r.parameters = q.value(7).toLongLong();
        r.contextLength = q.value(8).toLongLong();
        r.missing = q.value(9).toBool();
        out.push_back(r);
    }
    return out;
}

int ModelRecords::refreshMissing() {
    int changed = 0;
    for (const auto& r : all()) {
        const bool gone = !QFileInfo::exists(r.path);
        if (gone == r.missing) continue;
        QSqlQuery q(m_db);
        q.prepare(QStringLiteral("UPDATE models SET missing=? WHERE id=?"));
        q.addBindValue(gone ? 1 : 0);
        q.addBindValue(r.id);
        if (q.exec()) ++changed;
    }
    return changed;
}

}  // namespace arbor::app
