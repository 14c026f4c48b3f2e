// Small valid GGUF images for the reader's suites, written by our own GgufWriter: every
// metadata value type, string and numeric arrays, tensors of several types and shapes.
#pragma once

#include <arbor/gguf.hpp>

#include <QByteArray>
#include <QFile>
#include <QString>
#include <QTemporaryDir>

#include <cstring>
#include <random>
#include <vector>

namespace arbor::test {

inline GgufWriter fixture_writer(uint32_t alignment = 32) {
    GgufWriter w(alignment);
    w.set("general.architecture", GgufWriteValue::string("llama"));
    w.set("general.name", GgufWriteValue::string("fixture"));
    w.set("llama.context_length", GgufWriteValue::u32(4096));
    w.set("llama.block_count", GgufWriteValue::u32(1));
    w.set("llama.rope.freq_base", GgufWriteValue::f32(10000.0f));
    w.set("test.i32", GgufWriteValue::i32(-7));
    w.set("test.u64", GgufWriteValue::u64(1ull << 40));
    w.set("test.bool", GgufWriteValue::boolean(true));
    w.set("tokenizer.ggml.tokens", GgufWriteValue::string_array({"<s>", "</s>", "a", "b", "héllo", ""}));
    w.set("tokenizer.ggml.scores", GgufWriteValue::f32_array({0.f, 0.f, -1.f, -2.f, -3.f, -4.f}));
    w.set("tokenizer.ggml.token_type", GgufWriteValue::i32_array({3, 3, 1, 1, 1, 1}));
    std::mt19937 rng(42);
    auto bytes = [&](size_t n) {
        std::vector<uint8_t> b(n);
        for (auto& x : b) x = static_cast<uint8_t>(rng());
        return b;
    };
    (void)w.add_tensor("token_embd.weight", {64, 6}, TensorType::F32, bytes(64 * 6 * 4));
    (void)w.add_tensor("blk.0.attn_q.weight", {256, 2}, TensorType::Q4_K, bytes(144 * 2));
    (void)w.add_tensor("blk.0.attn_k.weight", {32, 3}, TensorType::Q8_0, bytes(34 * 3));
    (void)w.add_tensor("output_norm.weight", {64}, TensorType::F32, bytes(64 * 4));
    return w;
}

inline std::vector<uint8_t> read_all(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    const QByteArray b = f.readAll();
    return std::vector<uint8_t>(b.begin(), b.end());
}

inline std::vector<uint8_t> fixture_bytes(uint32_t alignment = 32) {
    QTemporaryDir dir;
    const QString p = dir.filePath("fixture.gguf");
    if (!fixture_writer(alignment).write(p.toStdString())) return {};
    return read_all(p);
}

}  // namespace arbor::test
