// Helpers shared by the engine's suites: loading shared-data models, running prompts through a
// backend with given threads/chunking, and comparing logits bit for bit.
#pragma once

#include "cli_run.hpp"
#include <arbor/backend.hpp>
#include <arbor/kv_cache.hpp>
#include <arbor/model.hpp>
#include <arbor/synth.hpp>

#include "test_data.hpp"

#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>
#include <memory>
#include <vector>

namespace arbor::test {

// A shared-data model ("quant/random-qwen3-Q4_K_M.gguf"), or "synth:ARCH:TYPE": a tiny model of
// that architecture written by arbor::synthesize_model (once per process, into a temporary
// folder removed when the process exits).
// One arbor-cli run (cli_run.hpp).
inline CliRun cli(const QStringList& args) { return runCli(args); }

// The "model" column with the three shared-data models every architecture suite starts from
// (stories260K and the random qwen3 / qwen3moe Q4_K_M files); callers may add rows after it.
inline void addSharedModelRows() {
    QTest::addColumn<QString>("model");
    QTest::newRow("stories260K") << "models/stories260K.gguf";
    QTest::newRow("qwen3") << "quant/random-qwen3-Q4_K_M.gguf";
    QTest::newRow("qwen3moe") << "quant/random-qwen3moe-Q4_K_M.gguf";
}

inline QString modelPath(const QString& rel) {
    if (!rel.startsWith("synth:")) return sharedData() + "/" + rel;
    static QTemporaryDir dir;
    const QStringList parts = rel.split(':');
    const QString path = dir.filePath(QString("%1-%2.gguf").arg(parts[1], parts[2]));
    if (!QFileInfo::exists(path)) {
        SynthOptions o;
        o.arch = parts[1].toStdString();
        o.shape = "tiny";
        o.type = tensor_type_by_name(parts[2].toStdString())->type;
        o.seed = 5;
        auto s = synthesize_model(o, path.toStdString());
        if (!s) qWarning("synthesize_model: %s", s.message().c_str());
    }
    return path;
}

inline std::shared_ptr<const Model> loadModel(const QString& path) {
    auto m = Model::load(path.toStdString());
    if (!m) qWarning("%s", m.message().c_str());
    return m ? m.value() : nullptr;
}

// n pseudo-random token ids in [first, vocab) (a fixed LCG: the same everywhere).
inline std::vector<TokenId> pseudoTokens(int n, int64_t vocab, uint32_t seed, int first = 3) {
    std::vector<TokenId> v;
    uint32_t s = seed * 2654435761u + 12345u;
    for (int i = 0; i < n; ++i) {
        s = s * 1664525u + 1013904223u;
        v.push_back(TokenId(first + (s >> 8) % uint32_t(vocab - first)));
    }
    return v;
}

struct RunConfig {
    int threads = 1;
    int64_t chunk = 256;      // tokens per eval call
    int64_t max_batch = 256;  // the backend's pass size
    KvType kv = KvType::F16;
    bool scalar = false;
};

inline std::unique_ptr<Backend> makeBackend(const std::shared_ptr<const Model>& m, const RunConfig& rc) {
    BackendOptions o;
    o.threads = rc.threads;
    o.max_batch_tokens = rc.max_batch;
    o.scalar = rc.scalar;
    auto b = make_cpu_backend(m, o);
    return b ? std::move(b.value()) : nullptr;
}

// Logits of every position of `toks`, evaluated in eval calls of rc.chunk tokens.
inline std::vector<float> promptLogits(const std::shared_ptr<const Model>& m, const std::vector<TokenId>& toks,
                                       const RunConfig& rc, QString* err = nullptr) {
    auto be = makeBackend(m, rc);
    auto cache = std::make_shared<KvCache>(m->config(), rc.kv, 64);
    KvSequence seq(cache, int64_t(toks.size()) + 16);
    std::vector<float> all;
    PassLogits out;
    for (size_t at = 0; at < toks.size(); at += size_t(rc.chunk)) {
        const size_t n = std::min(toks.size() - at, size_t(rc.chunk));
        BatchEntry e{&seq, std::span<const TokenId>(toks).subspan(at, n), LogitsMode::All};
        auto s = be->eval(std::span<const BatchEntry>(&e, 1), &out);
        if (!s) {
            if (err) *err = QString::fromStdString(s.message());
            return {};
        }
        all.insert(all.end(), out.data.begin(), out.data.end());
    }
    return all;
}

inline bool sameBits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && !a.empty() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Where two logit vectors first differ, for failure messages.
inline QString firstDiff(const std::vector<float>& a, const std::vector<float>& b, int64_t n_vocab) {
    if (a.size() != b.size()) return QString("sizes %1 and %2").arg(a.size()).arg(b.size());
    for (size_t i = 0; i < a.size(); ++i)
        if (std::memcmp(&a[i], &b[i], 4) != 0)
            return QString("position %1 id %2: %3 vs %4").arg(int64_t(i) / n_vocab).arg(int64_t(i) % n_vocab)
                .arg(double(a[i]), 0, 'g', 9).arg(double(b[i]), 0, 'g', 9);
    return "equal";
}

}  // namespace arbor::test
