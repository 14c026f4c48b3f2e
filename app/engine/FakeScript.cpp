#include "engine/FakeScript.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace arbor::app {
namespace {

// Reads an optional non-negative integer field; false with a message when it is of another kind.
bool readInt(const QJsonObject& o, const char* key, const QString& where, int* out, QString* why, int max = 1000000) {
    const QJsonValue v = o.value(QLatin1String(key));
    if (v.isUndefined()) return true;
    if (!v.isDouble() || v.toDouble() < 0 || v.toDouble() > max || v.toDouble() != double(qint64(v.toDouble()))) {
        *why = QStringLiteral("%1.%2: expected an integer from 0 to %3").arg(where, QLatin1String(key)).arg(max);
        return false;
    }
    *out = v.toInt();
    return true;
}

bool readString(const QJsonObject& o, const char* key, const QString& where, QString* out, QString* why) {
    const QJsonValue v = o.value(QLatin1String(key));
    if (v.isUndefined()) return true;
    if (!v.isString()) {
        *why = QStringLiteral("%1.%2: expected a string").arg(where, QLatin1String(key));
        return false;
    }
    *out = v.toString();
    return true;
}

bool readReply(const QJsonValue& v, const QString& where, FakeReply* r, QString* why) {
    if (!v.isObject()) {
        *why = QStringLiteral("%1: expected an object").arg(where);
        return false;
    }
    const QJsonObject o = v.toObject();
    const QJsonValue tokens = o.value(QLatin1String("tokens"));
    if (!tokens.isArray()) {
        *why = QStringLiteral("%1.tokens: expected an array of strings").arg(where);
        return false;
    }
    const QJsonArray arr = tokens.toArray();
    for (int i = 0; i < arr.size(); ++i) {
        if (!arr[i].isString()) {
            *why = QStringLiteral("%1.tokens[%2]: expected a string").arg(where).arg(i);
            return false;
        }
        r->tokens << arr[i].toString();
    }
    return readString(o, "when", where, &r->when, why) && readInt(o, "repeat", where, &r->repeat, why, 100000) &&
           readInt(o, "token_ms", where, &r->tokenMs, why, 60000) && readString(o, "error", where, &r->error, why) &&
           readString(o, "stop_reason", where, &r->stopReason, why);
}

}  // namespace

bool FakeScript::parse(const QByteArray& json, const QString& source, FakeScript* out, QString* why) {
    QJsonParseError err{};
    const QJsonDocument doc = QJsonDocument::fromJson(json, &err);
    if (err.error != QJsonParseError::NoError) {
        *why = QStringLiteral("%1: byte %2: %3").arg(source).arg(err.offset).arg(err.errorString());
        return false;
    }
    if (!doc.isObject()) {
        *why = QStringLiteral("%1: the script must be a JSON object").arg(source);
        return false;
    }
    FakeScript s;
    const QJsonObject o = doc.object();
    QString reason;
    bool ok = true;
    if (o.contains(QLatin1String("model"))) {
        const QJsonValue m = o.value(QLatin1String("model"));
        if (!m.isObject()) {
            reason = QStringLiteral("model: expected an object");
            ok = false;
        } else {
            const QJsonObject mo = m.toObject();
            const QString w = QStringLiteral("model");
            ok = readString(mo, "name", w, &s.modelName, &reason) && readString(mo, "architecture", w, &s.architecture, &reason) &&
                 readString(mo, "backend", w, &s.backend, &reason) && readString(mo, "device", w, &s.device, &reason) &&
                 readInt(mo, "context_length", w, &s.contextLength, &reason, 1 << 24);
            if (ok && mo.contains(QLatin1String("thinking"))) {
                if (!mo.value(QLatin1String("thinking")).isBool()) {
                    reason = QStringLiteral("model.thinking: expected true or false");
                    ok = false;
                } else {
                    s.thinking = mo.value(QLatin1String("thinking")).toBool();
                }
            }
        }
    }
    const QString top = QStringLiteral("script");
    ok = ok && readInt(o, "token_ms", top, &s.tokenMs, &reason, 60000) && readInt(o, "prefill_ms", top, &s.prefillMs, &reason, 60000) &&
         readInt(o, "load_ms", top, &s.loadMs, &reason, 60000) && readString(o, "load_error", top, &s.loadError, &reason);
    if (ok && o.contains(QLatin1String("replies"))) {
        const QJsonValue r = o.value(QLatin1String("replies"));
        if (!r.isArray()) {
            reason = QStringLiteral("replies: expected an array");
            ok = false;
        }
        const QJsonArray arr = r.toArray();
        for (int i = 0; ok && i < arr.size(); ++i) {
            FakeReply reply;
            ok = readReply(arr[i], QStringLiteral("replies[%1]").arg(i), &reply, &reason);
            if (ok) s.replies.push_back(reply);
        }
    }
    if (ok && o.contains(QLatin1String("default"))) ok = readReply(o.value(QLatin1String("default")), QStringLiteral("default"), &s.fallback, &reason);
    if (ok && s.fallback.tokens.isEmpty())
        s.fallback.tokens = QStringList{QStringLiteral("Hello"), QStringLiteral(" from"), QStringLiteral(" the"),
                                        QStringLiteral(" fake"), QStringLiteral(" engine"), QStringLiteral(".")};
    if (ok && s.contextLength < 16) {
        reason = QStringLiteral("model.context_length: must be at least 16");
        ok = false;
    }
    if (!ok) {
        *why = QStringLiteral("%1: %2").arg(source, reason);
        return false;
    }
    *out = s;
    return true;
}

bool FakeScript::load(const QString& path, FakeScript* out, QString* why) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        *why = QStringLiteral("%1: cannot read the fake-engine script: %2").arg(path, f.errorString());
        return false;
    }
    return parse(f.readAll(), path, out, why);
}

const FakeReply& FakeScript::replyFor(const QString& lastUser) const {
    for (const FakeReply& r : replies)
        if (r.when.isEmpty() || lastUser.contains(r.when)) return r;
    return fallback;
}

}  // namespace arbor::app
