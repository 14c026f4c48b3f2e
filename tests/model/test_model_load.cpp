// Model::load on files built here: a valid tiny llama loads, its hyperparameters take the
// documented defaults, it evaluates to finite logits; and each broken variant (missing tensor,
// wrong shape, unsupported architecture, bad head counts, a tensor type the engine cannot
// compute with, bad metadata, truncated file) is refused with a message naming what is wrong, never a crash.
#include <arbor/backend.hpp>
#include <arbor/gguf.hpp>
#include <arbor/model.hpp>
#include <arbor/quant.hpp>

#include "model/model_weights.hpp"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>

using namespace arbor;

namespace {

struct Tiny {
    std::string arch = "llama";
    int64_t n_embd = 32, n_ff = 48, n_vocab = 40, n_head = 4, n_head_kv = 2;
    std::map<std::string, std::vector<int64_t>> shape_override;
    std::map<std::string, TensorType> type_override;
    std::vector<std::string> drop;
    std::function<void(GgufWriter&)> extra_meta;
};

// f encoded as t; types the writer's quantizer lacks come out as zero blocks of the right size.
std::vector<uint8_t> encode(TensorType t, const std::vector<float>& f) {
    const auto info = tensor_type_info(uint32_t(t));
    std::vector<uint8_t> out(f.size() / info->block_size * info->type_size);
    (void)quant::quantize(t, f.data(), out.data(), int64_t(f.size()));
    return out;
}

Status write_tiny(const Tiny& m, const std::string& path) {
    GgufWriter w;
    w.set("general.architecture", GgufWriteValue::string(m.arch));
    const std::string a = m.arch + ".";
    w.set(a + "embedding_length", GgufWriteValue::u32(uint32_t(m.n_embd)));
    w.set(a + "block_count", GgufWriteValue::u32(1));
    w.set(a + "feed_forward_length", GgufWriteValue::u32(uint32_t(m.n_ff)));
    w.set(a + "attention.head_count", GgufWriteValue::u32(uint32_t(m.n_head)));
    w.set(a + "attention.head_count_kv", GgufWriteValue::u32(uint32_t(m.n_head_kv)));
    if (m.extra_meta) m.extra_meta(w);
    // A SentencePiece vocabulary: <unk> <s> </s>, then single letters.
    std::vector<std::string> toks = {"<unk>", "<s>", "</s>"};
    std::vector<float> scores = {0, 0, 0};
    std::vector<int32_t> types = {2, 3, 3};
    for (int64_t i = 3; i < m.n_vocab; ++i) {
        toks.push_back(i == 3 ? "\xe2\x96\x81" : std::string(1, char('a' + (i - 4) % 26)) + (i >= 30 ? "x" : ""));
        scores.push_back(-float(i));
        types.push_back(1);
    }
    w.set("tokenizer.ggml.model", GgufWriteValue::string("llama"));
    w.set("tokenizer.ggml.tokens", GgufWriteValue::string_array(toks));
    w.set("tokenizer.ggml.scores", GgufWriteValue::f32_array(scores));
    w.set("tokenizer.ggml.token_type", GgufWriteValue::i32_array(types));
    w.set("tokenizer.ggml.bos_token_id", GgufWriteValue::u32(1));
    w.set("tokenizer.ggml.eos_token_id", GgufWriteValue::u32(2));
    const int64_t hd = m.n_embd / m.n_head;
    std::vector<std::pair<std::string, std::vector<int64_t>>> tensors = {
        {"token_embd.weight", {m.n_embd, m.n_vocab}},
        {"output_norm.weight", {m.n_embd}},
        {"blk.0.attn_norm.weight", {m.n_embd}},
        {"blk.0.attn_q.weight", {m.n_embd, m.n_head * hd}},
        {"blk.0.attn_k.weight", {m.n_embd, m.n_head_kv * hd}},
        {"blk.0.attn_v.weight", {m.n_embd, m.n_head_kv * hd}},
        {"blk.0.attn_output.weight", {m.n_head * hd, m.n_embd}},
        {"blk.0.ffn_norm.weight", {m.n_embd}},
        {"blk.0.ffn_gate.weight", {m.n_embd, m.n_ff}},
        {"blk.0.ffn_up.weight", {m.n_embd, m.n_ff}},
        {"blk.0.ffn_down.weight", {m.n_ff, m.n_embd}},
    };
    uint32_t seed = 1;
    for (auto [name, shape] : tensors) {
        if (std::find(m.drop.begin(), m.drop.end(), name) != m.drop.end()) continue;
        if (m.shape_override.count(name)) shape = m.shape_override.at(name);
        TensorType t = m.type_override.count(name) ? m.type_override.at(name) : TensorType::F32;
        int64_t n = 1;
        for (int64_t d : shape) n *= d;
        std::vector<float> f(static_cast<size_t>(n));
        for (float& x : f) {
            seed = seed * 1664525u + 1013904223u;
            x = shape.size() == 1 ? 1.0f : (float(seed >> 8) / float(1 << 24) - 0.5f) * 0.4f;
        }
        auto bytes = t == TensorType::F32 ? std::vector<uint8_t>(reinterpret_cast<uint8_t*>(f.data()),
                                                                reinterpret_cast<uint8_t*>(f.data()) + f.size() * 4)
                                          : encode(t, f);
        if (auto s = w.add_tensor(name, shape, t, std::move(bytes)); !s) return s;
    }
    return w.write(path);
}

}  // namespace

class TestModelLoad : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    QString load_error(const Tiny& m) {
        const std::string path = dir_.filePath("m.gguf").toStdString();
        auto s = write_tiny(m, path);
        if (!s) return "WRITE FAILED: " + QString::fromStdString(s.message());
        auto r = Model::load(path);
        return r ? QString() : QString::fromStdString(r.message());
    }

private slots:
    void validTiny() {
        const std::string path = dir_.filePath("ok.gguf").toStdString();
        QVERIFY(write_tiny(Tiny{}, path).ok());
        auto r = Model::load(path);
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        const ModelConfig& c = r.value()->config();
        QCOMPARE(c.arch, Architecture::Llama);
        QCOMPARE(c.head_dim_k, 8);        // n_embd / n_head
        QCOMPARE(c.n_rot, 8);             // = key length
        QCOMPARE(c.rope_freq_base, 10000.0f);
        QCOMPARE(c.rms_eps, 1e-5f);
        QCOMPARE(c.n_ctx_train, 2048);
        QVERIFY(c.tied_embeddings);       // no output.weight
        QCOMPARE(c.rope_style, RopeStyle::Normal);
        auto be = make_cpu_backend(r.value(), {.threads = 2});
        QVERIFY(be.ok());
        auto cache = std::make_shared<KvCache>(c, KvType::F16, 1);
        KvSequence seq(cache, 64);
        const std::vector<TokenId> toks = {1, 5, 6, 7};
        BatchEntry e{&seq, toks, LogitsMode::All};
        PassLogits out;
        QVERIFY(be.value()->eval(std::span<const BatchEntry>(&e, 1), &out).ok());
        QCOMPARE(out.size(), size_t(4));
        for (float x : out.data) QVERIFY(std::isfinite(x));
    }

    // RoPE scaling from metadata: the per-pair frequency table and the magnitude factor.
    void ropeScaling() {
        auto freqs = [&](std::function<void(GgufWriter&)> meta, float* mscale) {
            Tiny m;
            m.n_embd = 64;
            m.n_head = 2;  // head_dim 32: 16 pairs
            m.n_head_kv = 2;
            m.extra_meta = std::move(meta);
            const std::string path = dir_.filePath("r.gguf").toStdString();
            if (!write_tiny(m, path).ok()) return std::vector<float>{};
            auto r = Model::load(path);
            if (!r) return std::vector<float>{};
            *mscale = r.value()->weights().rope_mscale;
            return r.value()->weights().rope_freq;
        };
        float ms = 0;
        const auto plain = freqs([](GgufWriter& w) { w.set("llama.rope.freq_base", GgufWriteValue::f32(10000.0f)); }, &ms);
        QCOMPARE(plain.size(), size_t(16));
        QCOMPARE(ms, 1.0f);
        for (size_t i = 0; i < 16; ++i) QCOMPARE(plain[i], float(std::pow(10000.0, -2.0 * double(i) / 32.0)));
        const auto linear = freqs([](GgufWriter& w) {
            w.set("llama.rope.scaling.type", GgufWriteValue::string("linear"));
            w.set("llama.rope.scaling.factor", GgufWriteValue::f32(4.0f));
        }, &ms);
        QCOMPARE(ms, 1.0f);
        for (size_t i = 0; i < 16; ++i) QCOMPARE(linear[i], float(std::pow(10000.0, -2.0 * double(i) / 32.0) / 4.0));
        const auto yarn = freqs([](GgufWriter& w) {
            w.set("llama.rope.scaling.type", GgufWriteValue::string("yarn"));
            w.set("llama.rope.scaling.factor", GgufWriteValue::f32(4.0f));
            w.set("llama.rope.scaling.original_context_length", GgufWriteValue::u32(4096));
        }, &ms);
        QVERIFY(std::fabs(ms - (1.0 + 0.1 * std::log(4.0))) < 1e-6);
        QCOMPARE(yarn[0], plain[0]);                // high frequencies extrapolate (unchanged)
        QCOMPARE(yarn[15], linear[15]);             // low frequencies interpolate (divided)
        for (size_t i = 0; i < 16; ++i) QVERIFY(yarn[i] <= plain[i] && yarn[i] >= linear[i]);
    }

    void broken_data() {
        QTest::addColumn<int>("which");
        QTest::addColumn<QString>("needle");
        QTest::newRow("missing tensor") << 0 << "blk.0.ffn_up.weight";
        QTest::newRow("wrong shape") << 1 << "blk.0.attn_k.weight";
        QTest::newRow("unsupported arch") << 2 << "gpt-neox";
        QTest::newRow("heads not a multiple") << 3 << "head_count_kv";
        QTest::newRow("missing norm") << 4 << "output_norm.weight";
        QTest::newRow("wrong norm length") << 5 << "blk.0.ffn_norm.weight";
        QTest::newRow("type the engine cannot compute with") << 6 << "IQ2_XXS";
        QTest::newRow("bad rope scaling") << 7 << "rope scaling";
        QTest::newRow("negative count") << 8 << "context_length";
    }
    void broken() {
        QFETCH(int, which);
        QFETCH(QString, needle);
        Tiny m;
        switch (which) {
        case 0: m.drop = {"blk.0.ffn_up.weight"}; break;
        case 1: m.shape_override["blk.0.attn_k.weight"] = {32, 12}; break;
        case 2: m.arch = "gpt-neox"; break;
        case 3: m.n_head_kv = 3; break;
        case 4: m.drop = {"output_norm.weight"}; break;
        case 5: m.shape_override["blk.0.ffn_norm.weight"] = {31}; break;
        case 6:
            m.n_ff = 256;
            m.type_override["blk.0.ffn_down.weight"] = TensorType::IQ2_XXS;
            break;
        case 7:
            m.extra_meta = [](GgufWriter& w) { w.set("llama.rope.scaling.type", GgufWriteValue::string("wobbly")); };
            break;
        case 8: m.extra_meta = [](GgufWriter& w) { w.set("llama.context_length", GgufWriteValue::i32(-5)); }; break;
        }
        const QString err = load_error(m);
        QVERIFY2(!err.isEmpty(), "the broken model loaded");
        QVERIFY2(!err.startsWith("WRITE FAILED"), qPrintable(err));
        QVERIFY2(err.contains(needle), qPrintable(err));
    }

    void truncated() {
        const QString path = dir_.filePath("t.gguf");
        QVERIFY(write_tiny(Tiny{}, path.toStdString()).ok());
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadWrite));
        QVERIFY(f.resize(f.size() / 2));
        f.close();
        auto r = Model::load(path.toStdString());
        QVERIFY(!r.ok());
        QVERIFY(!Model::load(dir_.filePath("absent.gguf").toStdString()).ok());
    }
};

QTEST_GUILESS_MAIN(TestModelLoad)
#include "test_model_load.moc"
