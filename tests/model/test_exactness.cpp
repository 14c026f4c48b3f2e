// The exactness contract of the CPU engine, checked bit for bit on real and random models of
// every architecture and several quant types:
// - thread counts 1, 2 and 7 give the same logits, and so do the scalar reference kernels;
// - prefill in one 256-token chunk equals 5 x 50 + 6, token by token, and a backend whose pass
//   size forces it to split internally;
// - a sequence decoded alone equals the same sequence inside a batch of 8 (mixed prompt lengths,
//   a late joiner prefilling while the others decode, entry order changing every step), with
//   decode crossing the 256-cell attention chunk;
// - two runs in fresh backends are identical, with f16 and f32 KV cells;
// - a forked sequence (shared pages, copy-on-write) equals a sequence built from scratch.
#include "engine_test_util.hpp"

#include <QtTest>

#include <algorithm>

using namespace arbor;
using namespace arbor::test;

namespace {

const char* const kModels[] = {
    "models/stories260K.gguf",          "quant/random-qwen3-Q4_K_M.gguf",   "quant/random-qwen3-Q8_0.gguf",
    "quant/random-qwen3-IQ4_XS.gguf",   "quant/random-qwen3-Q5_0.gguf",     "quant/random-qwen3-bf16.gguf",
    "quant/random-qwen3moe-Q4_K_M.gguf", "quant/random-qwen3moe-MXFP4_MOE.gguf", "quant/random-qwen3moe-Q3_K_M.gguf",
    "quant/random-llama-bf16.gguf",     "synth:qwen2:Q4_K",                 "synth:llama:Q8_0",
};

}  // namespace

// In a data-driven slot: the row's model, loaded (fails under CI when the data is missing).
#define LOAD_MODEL(m)                 \
    QFETCH(QString, path);            \
    ARBOR_REQUIRE_PATH(path);         \
    auto m = loadModel(path);         \
    QVERIFY2(m, "the model failed to load")

class TestExactness : public QObject {
    Q_OBJECT

    void models() {
        QTest::addColumn<QString>("path");
        for (const char* m : kModels) QTest::newRow(m) << modelPath(m);
    }


private slots:
    void threads_data() { models(); }
    void threads() {
        LOAD_MODEL(m);
        const auto toks = pseudoTokens(64, m->config().n_vocab, 1);
        const auto ref = promptLogits(m, toks, {.threads = 1});
        QVERIFY(!ref.empty());
        for (int t : {2, 7}) {
            const auto got = promptLogits(m, toks, {.threads = t});
            QVERIFY2(sameBits(ref, got), qPrintable(QString("threads %1: %2").arg(t).arg(firstDiff(ref, got, m->config().n_vocab))));
        }
        const auto scalar = promptLogits(m, toks, {.threads = 2, .scalar = true});
        QVERIFY2(sameBits(ref, scalar), qPrintable("scalar kernels: " + firstDiff(ref, scalar, m->config().n_vocab)));
    }

    void chunking_data() { models(); }
    void chunking() {
        LOAD_MODEL(m);
        const auto toks = pseudoTokens(256, m->config().n_vocab, 2);
        const int64_t V = m->config().n_vocab;
        const auto ref = promptLogits(m, toks, {.threads = 2, .chunk = 256});
        QVERIFY(!ref.empty());
        const auto c50 = promptLogits(m, toks, {.threads = 2, .chunk = 50});
        QVERIFY2(sameBits(ref, c50), qPrintable("5x50+6: " + firstDiff(ref, c50, V)));
        const auto split = promptLogits(m, toks, {.threads = 2, .chunk = 256, .max_batch = 37});
        QVERIFY2(sameBits(ref, split), qPrintable("pass size 37: " + firstDiff(ref, split, V)));
        const auto c1 = promptLogits(m, toks, {.threads = 1, .chunk = 1});
        QVERIFY2(sameBits(ref, c1), qPrintable("token by token: " + firstDiff(ref, c1, V)));
    }

    void batch_data() { models(); }
    void batch() {
        LOAD_MODEL(m);
        const int64_t V = m->config().n_vocab;
        const int kSeqs = 8, kSteps = 12;
        const int lens[kSeqs] = {250, 1, 17, 64, 3, 100, 33, 40};
        std::vector<std::vector<TokenId>> prompts, steps;
        for (int i = 0; i < kSeqs; ++i) {
            prompts.push_back(pseudoTokens(lens[i], V, 100 + uint32_t(i)));
            steps.push_back(pseudoTokens(kSteps, V, 200 + uint32_t(i)));
        }
        // Alone: prompt (all logits), then one token per step.
        std::vector<std::vector<float>> alone(kSeqs);
        for (int i = 0; i < kSeqs; ++i) {
            auto be = makeBackend(m, {.threads = 2});
            auto cache = std::make_shared<KvCache>(m->config(), KvType::F16, 8);
            KvSequence seq(cache, 512);
            PassLogits out;
            BatchEntry e{&seq, prompts[size_t(i)], LogitsMode::All};
            QVERIFY(be->eval(std::span<const BatchEntry>(&e, 1), &out).ok());
            alone[size_t(i)] = out.data;
            for (int s = 0; s < kSteps; ++s) {
                BatchEntry d{&seq, std::span<const TokenId>(&steps[size_t(i)][size_t(s)], 1), LogitsMode::Last};
                QVERIFY(be->eval(std::span<const BatchEntry>(&d, 1), &out).ok());
                alone[size_t(i)].insert(alone[size_t(i)].end(), out.data.begin(), out.data.end());
            }
        }
        // Together: sequences 0..6 prefill in one pass; 7 joins at step 3 (prefilling while the
        // others decode); the entry order rotates every pass.
        auto be = makeBackend(m, {.threads = 2, .max_batch = 512});
        auto cache = std::make_shared<KvCache>(m->config(), KvType::F16, 64);
        std::vector<std::unique_ptr<KvSequence>> seqs;
        for (int i = 0; i < kSeqs; ++i) seqs.push_back(std::make_unique<KvSequence>(cache, 512));
        std::vector<std::vector<float>> together(kSeqs);
        std::vector<int> next_step(kSeqs, -1);  // -1: prompt not yet fed
        for (int pass = 0; pass < kSteps + 4; ++pass) {
            std::vector<int> order;
            for (int i = 0; i < kSeqs; ++i) {
                if (i == 7 && pass < 3) continue;
                if (next_step[size_t(i)] >= kSteps) continue;
                order.push_back(i);
            }
            std::rotate(order.begin(), order.begin() + (order.empty() ? 0 : pass % int(order.size())), order.end());
            std::vector<BatchEntry> entries;
            for (int i : order) {
                if (next_step[size_t(i)] < 0)
                    entries.push_back({seqs[size_t(i)].get(), prompts[size_t(i)], LogitsMode::All});
                else
                    entries.push_back({seqs[size_t(i)].get(),
                                       std::span<const TokenId>(&steps[size_t(i)][size_t(next_step[size_t(i)])], 1),
                                       LogitsMode::Last});
            }
            if (entries.empty()) break;
            PassLogits out;
            QVERIFY(be->eval(entries, &out).ok());
            for (size_t r = 0; r < out.size(); ++r) {
                const int i = order[size_t(out.rows[r].entry)];
                together[size_t(i)].insert(together[size_t(i)].end(), out.row(r), out.row(r) + V);
            }
            for (int i : order) ++next_step[size_t(i)];
        }
        for (int i = 0; i < kSeqs; ++i)
            QVERIFY2(sameBits(alone[size_t(i)], together[size_t(i)]),
                     qPrintable(QString("sequence %1: %2").arg(i).arg(firstDiff(alone[size_t(i)], together[size_t(i)], V))));
    }

    void runs_data() { models(); }
    void runs() {
        LOAD_MODEL(m);
        const auto toks = pseudoTokens(40, m->config().n_vocab, 3);
        for (KvType kv : {KvType::F16, KvType::F32}) {
            const auto a = promptLogits(m, toks, {.threads = 2, .kv = kv});
            const auto b = promptLogits(m, toks, {.threads = 2, .kv = kv});
            QVERIFY(sameBits(a, b));
            for (float x : a) QVERIFY(std::isfinite(x));
        }
    }

    void fork_data() { models(); }
    void fork() {
        LOAD_MODEL(m);
        const int64_t V = m->config().n_vocab;
        const auto base = pseudoTokens(300, V, 4), tail = pseudoTokens(30, V, 5);
        // Reference: base[0..270) + tail from scratch.
        std::vector<TokenId> want(base.begin(), base.begin() + 270);
        want.insert(want.end(), tail.begin(), tail.end());
        const auto ref = promptLogits(m, want, {.threads = 2});
        auto be = makeBackend(m, {.threads = 2});
        auto cache = std::make_shared<KvCache>(m->config(), KvType::F16, 16);
        KvSequence parent(cache, 512);
        PassLogits out;
        BatchEntry e{&parent, base, LogitsMode::None};
        QVERIFY(be->eval(std::span<const BatchEntry>(&e, 1), &out).ok());
        const int64_t pages_before = cache->pages_in_use();
        auto child = parent.fork(270);
        QCOMPARE(cache->pages_in_use(), pages_before);  // shared, not copied
        child->truncate(270);
        BatchEntry c{child.get(), tail, LogitsMode::All};
        QVERIFY(be->eval(std::span<const BatchEntry>(&c, 1), &out).ok());
        QCOMPARE(cache->pages_in_use(), pages_before + 1);  // the written page was copied
        std::vector<float> got_tail(out.data.begin(), out.data.end());
        std::vector<float> ref_tail(ref.end() - int64_t(tail.size()) * V, ref.end());
        QVERIFY2(sameBits(ref_tail, got_tail), qPrintable("fork: " + firstDiff(ref_tail, got_tail, V)));
        // The parent is untouched: its next token equals a fresh run of base + x.
        const TokenId x = tail[0];
        BatchEntry pe{&parent, std::span<const TokenId>(&x, 1), LogitsMode::Last};
        QVERIFY(be->eval(std::span<const BatchEntry>(&pe, 1), &out).ok());
        std::vector<TokenId> bx = base;
        bx.push_back(x);
        const auto ref2 = promptLogits(m, bx, {.threads = 1});
        std::vector<float> last(ref2.end() - V, ref2.end());
        QVERIFY(sameBits(last, out.data));
    }

    void errors() {
        const QString path = modelPath("models/stories260K.gguf");
        ARBOR_REQUIRE_PATH(path);
        auto m = loadModel(path);
        QVERIFY(m);
        auto be = makeBackend(m, {.threads = 2});
        auto cache = std::make_shared<KvCache>(m->config(), KvType::F16, 1);
        KvSequence seq(cache, 300);
        PassLogits out;
        const std::vector<TokenId> bad = {1, 999999};
        BatchEntry e{&seq, bad, LogitsMode::Last};
        auto s = be->eval(std::span<const BatchEntry>(&e, 1), &out);
        QVERIFY(!s.ok());
        QVERIFY(QString::fromStdString(s.message()).contains("999999"));
        QCOMPARE(seq.size(), 0);
        const auto many = pseudoTokens(301, m->config().n_vocab, 9);
        BatchEntry f{&seq, many, LogitsMode::Last};
        s = be->eval(std::span<const BatchEntry>(&f, 1), &out);
        QVERIFY(!s.ok());
        QVERIFY(QString::fromStdString(s.message()).contains("context"));
        const auto fits = pseudoTokens(260, m->config().n_vocab, 9);  // needs 2 pages, the budget is 1
        BatchEntry g{&seq, fits, LogitsMode::Last};
        s = be->eval(std::span<const BatchEntry>(&g, 1), &out);
        QVERIFY(!s.ok());
        QVERIFY(QString::fromStdString(s.message()).contains("budget"));
        QCOMPARE(seq.size(), 0);
        BatchEntry twice[2] = {{&seq, bad, LogitsMode::Last}, {&seq, bad, LogitsMode::Last}};
        QVERIFY(!be->eval(twice, &out).ok());
        QVERIFY(!make_backend("gpu", m).ok());
    }
};

QTEST_GUILESS_MAIN(TestExactness)
#include "test_exactness.moc"
