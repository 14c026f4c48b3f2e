// Helpers of the flashnext suites: synthetic tiny models (optionally with a metadata value or
// a tensor name patched in place), sequences in a backend's cache, and runs of tokens.
#pragma once

#include <arbor/backend.hpp>
#include <arbor/model.hpp>
#include <arbor/synth.hpp>

#include "engine_test_util.hpp"

#include <QFile>
#include <QTemporaryDir>

#include <cstring>
#include <memory>
#include <vector>

namespace arbor::test {

// The tiny flashnext model of weight type `type` ("" for the default mix), written once per
// process. tiny: budget 64, so tokens from position 67 on attend to selected blocks.
inline QString flashnextPath(const QString& type = "") {
    static QTemporaryDir dir;
    const QString path = dir.filePath(QString("flashnext-tiny-%1.gguf").arg(type.isEmpty() ? "mix" : type));
    if (!QFileInfo::exists(path)) {
        SynthOptions o;
        o.arch = "flashnext";
        o.shape = "tiny";
        if (!type.isEmpty()) o.type = tensor_type_by_name(type.toStdString())->type;
        o.seed = 7;
        o.threads = 1;
        if (auto s = synthesize_model(o, path.toStdString()); !s) qWarning("synthesize_model: %s", s.message().c_str());
    }
    return path;
}

// A copy of `src` with the first occurrence of `from` replaced by `to` (same length), or with
// the u32 value of metadata key `from` set to `value` when `to` is empty.
inline QString patchedCopy(const QString& src, const QString& name, const QByteArray& from, const QByteArray& to,
                           uint32_t value = 0) {
    static QTemporaryDir dir;
    QFile in(src);
    if (!in.open(QIODevice::ReadOnly)) return {};
    QByteArray b = in.readAll();
    const qsizetype at = b.indexOf(from);
    if (at < 0) return {};
    if (!to.isEmpty()) {
        b.replace(at, from.size(), to);
    } else {
        // key string, then u32 value type (4), then the value
        const qsizetype v = at + from.size() + 4;
        std::memcpy(b.data() + v, &value, 4);
    }
    const QString path = dir.filePath(name);
    QFile out(path);
    if (!out.open(QIODevice::WriteOnly | QIODevice::Truncate)) return {};
    out.write(b);
    return path;
}

inline std::unique_ptr<KvSequence> newSequence(const Backend& be, KvType kv = KvType::F16, int64_t n_ctx = 1024) {
    auto cache = be.make_kv_cache(kv, 64);
    return std::make_unique<KvSequence>(cache, n_ctx);
}

// Appends toks to seq in eval calls of `chunk` tokens; returns the logits of every token.
inline std::vector<float> feed(Backend& be, KvSequence& seq, const std::vector<TokenId>& toks, size_t chunk = 256,
                               QString* err = nullptr) {
    std::vector<float> all;
    PassLogits out;
    for (size_t at = 0; at < toks.size(); at += chunk) {
        const size_t n = std::min(toks.size() - at, chunk);
        BatchEntry e{&seq, std::span<const TokenId>(toks).subspan(at, n), LogitsMode::All};
        if (auto s = be.eval(std::span<const BatchEntry>(&e, 1), &out); !s) {
            if (err) *err = QString::fromStdString(s.message());
            return {};
        }
        all.insert(all.end(), out.data.begin(), out.data.end());
    }
    return all;
}

inline std::vector<TokenId> concat(std::vector<TokenId> a, const std::vector<TokenId>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

}  // namespace arbor::test
