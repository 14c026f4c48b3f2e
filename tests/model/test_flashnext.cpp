// flashnext on the CPU (docs/MODEL-flashnext.md): the synthetic shapes load with the pinned
// hyperparameters and tensor types; logits are bit-identical across thread counts, the scalar
// kernels, prefill chunking (1, 7, 256 tokens per call, and internal pass splits) and batch
// composition, over a prompt long enough for block selection to run and to cross the 256-cell
// chunk; selection really runs (against the same weights with a budget that keeps attention
// dense: equal bits through position budget+3, different after); the plan builds no score work
// for dense passes; bad files (missing tensor, bad block size) are refused with a reason; and
// `arbor-cli synth|info|logits` handle the architecture.
#include "core/splitmix64.hpp"
#include "model/numerics_flashnext.hpp"
#include "model/pass_plan.hpp"
#include "test_flashnext_util.hpp"

#include <arbor/gguf.hpp>

#include <QtTest>

using namespace arbor;
using namespace arbor::test;

namespace {

constexpr int kPrompt = 300;  // selection from position 67; blocks reach past cell 256

std::vector<float> rowsOf(const PassLogits& out, int32_t entry) {
    std::vector<float> v;
    for (size_t i = 0; i < out.size(); ++i)
        if (out.rows[i].entry == entry) v.insert(v.end(), out.row(i), out.row(i) + out.n_vocab);
    return v;
}

}  // namespace

class TestFlashnext : public QObject {
    Q_OBJECT

private slots:
    void loadTiny_data() {
        QTest::addColumn<QString>("type");
        QTest::newRow("default mix") << "";
        QTest::newRow("F32") << "F32";
    }
    void loadTiny() {
        QFETCH(QString, type);
        auto m = loadModel(flashnextPath(type));
        QVERIFY(m);
        const ModelConfig& c = m->config();
        QCOMPARE(c.arch, Architecture::FlashNext);
        QCOMPARE(c.n_embd, 256);
        QCOMPARE(c.n_layer, 2);
        QCOMPARE(c.n_head, 4);
        QCOMPARE(c.n_head_kv, 2);
        QCOMPARE(c.head_dim_k, 64);
        QCOMPARE(c.n_expert, 8);
        QCOMPARE(c.n_expert_used, 2);
        QCOMPARE(c.n_ff_exp, 256);
        QCOMPARE(c.n_ff_shexp, 256);
        QCOMPARE(c.n_hc, 4);
        QCOMPARE(c.hc_sinkhorn_iters, 20);
        QCOMPARE(c.hc_eps, 1e-6f);
        QCOMPARE(c.n_index_head, 4);
        QCOMPARE(c.index_dim, 64);
        QCOMPARE(c.index_top_k, 64);
        QCOMPARE(c.index_block, 4);
        QCOMPARE(c.n_vocab, 1024);
        QVERIFY(c.qk_norm);
        QCOMPARE(c.rope_style, RopeStyle::Neox);
        // Types of the pinned mix: float where the spec says so, the matrices by the mix.
        const GgufFile& f = m->gguf();
        auto type_of = [&](const char* n) { return f.tensor(n) ? f.tensor(n)->type : TensorType::F32; };
        QVERIFY(f.tensor("blk.1.hc_ffn_fn.weight") && f.tensor("output_hc_scale.weight"));
        for (const char* n : {"blk.0.hc_attn_fn.weight", "blk.1.hc_ffn_base.weight", "blk.0.indexer.proj.weight",
                              "blk.0.ffn_gate_inp_shexp.weight", "output_hc_fn.weight", "blk.1.indexer.k_norm.weight"})
            QCOMPARE(type_of(n), TensorType::F32);
        const TensorType mat = type.isEmpty() ? TensorType::IQ4_XS : TensorType::F32;
        for (const char* n : {"blk.0.indexer.attn_q_b.weight", "blk.1.indexer.attn_k.weight", "blk.0.ffn_down_shexp.weight",
                              "blk.1.ffn_gate_exps.weight", "blk.0.attn_q.weight"})
            QCOMPARE(type_of(n), mat);
        QCOMPARE(type_of("token_embd.weight"), type.isEmpty() ? TensorType::Q4_K : TensorType::F32);
        QCOMPARE(type_of("output.weight"), type.isEmpty() ? TensorType::Q6_K : TensorType::F32);
        // The KV page holds the indexer keys and the pooled keys of each layer.
        const KvLayout l = KvLayout::for_model(c, KvType::F16);
        QCOMPARE(l.index_dim, 64);
        QCOMPARE(l.layer_bytes(), size_t(2 * 256 * 128 * 2 + 256 * 64 * 2 + 64 * 64 * 4));
        QCOMPARE(l.pool_offset(1), l.layer_bytes() + l.index_offset(0) + size_t(256 * 64 * 2));
    }

    // The real shape, header only: hyperparameters and the UD-IQ4_XS-like mix.
    void shape30b() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("fn30b.gguf").toStdString();
        SynthOptions o;
        o.arch = "flashnext";
        o.shape = "30b-a3b";
        o.zero_data = true;
        QVERIFY(synthesize_model(o, path));
        auto m = Model::load(path);
        QVERIFY2(m, m ? "" : m.message().c_str());
        const ModelConfig& c = m.value()->config();
        QCOMPARE(c.n_layer, 48);
        QCOMPARE(c.n_embd, 2048);
        QCOMPARE(c.n_head, 32);
        QCOMPARE(c.n_head_kv, 4);
        QCOMPARE(c.head_dim_k, 128);
        QCOMPARE(c.n_expert, 128);
        QCOMPARE(c.n_expert_used, 8);
        QCOMPARE(c.n_ff_exp, 768);
        QCOMPARE(c.n_ff_shexp, 768);
        QCOMPARE(c.n_index_head, 16);
        QCOMPARE(c.index_dim, 128);
        QCOMPARE(c.index_top_k, 2048);
        QCOMPARE(c.n_vocab, 151936);
        const GgufFile& f = m.value()->gguf();
        QCOMPARE(f.tensor("blk.47.ffn_up_exps.weight")->type, TensorType::IQ4_XS);
        QCOMPARE(f.tensor("blk.47.indexer.attn_q_b.weight")->type, TensorType::IQ4_XS);
        QCOMPARE(f.tensor("token_embd.weight")->type, TensorType::Q4_K);
        QCOMPARE(f.tensor("output.weight")->type, TensorType::Q6_K);
        QCOMPARE(f.tensor("blk.47.hc_attn_fn.weight")->type, TensorType::F32);
    }

    // No score or selection work in a pass whose tokens all attend densely.
    void planScoresOnlyWhenSparse() {
        auto m = loadModel(flashnextPath());
        QVERIFY(m);
        const ModelConfig& c = m->config();
        const plan::PassPlan p = plan::build_pass_plan(c, m->weights());
        int scores = 0;
        for (const plan::Stage& s : p.stages) {
            if (s.op != plan::Op::IndexScore && s.op != plan::Op::IndexSelect) continue;
            ++scores;
            QCOMPARE(plan::stage_items(s, c, {8, 1, 66}), 0);  // position 66 sees 67 = budget + 3 cells
            QVERIFY(plan::stage_items(s, c, {8, 1, 67}) > 0);
        }
        QCOMPARE(scores, 2 * int(c.n_layer));
        QVERIFY(!plan::index_sparse(c, 66));
        QVERIFY(plan::index_sparse(c, 67));
        QVERIFY(plan::describe(p).find("index_score layer 1") != std::string::npos);
    }

    void threads_data() {
        QTest::addColumn<QString>("type");
        QTest::newRow("default mix") << "";
        QTest::newRow("F32") << "F32";
    }
    void threads() {
        QFETCH(QString, type);
        auto m = loadModel(flashnextPath(type));
        QVERIFY(m);
        const auto toks = pseudoTokens(kPrompt, m->config().n_vocab, 3);
        const auto ref = promptLogits(m, toks, {.threads = 1});
        QCOMPARE(ref.size(), size_t(kPrompt) * size_t(m->config().n_vocab));
        for (float v : ref) QVERIFY(std::isfinite(v));
        const auto two = promptLogits(m, toks, {.threads = 2});
        QVERIFY2(sameBits(ref, two), qPrintable("threads 2: " + firstDiff(ref, two, m->config().n_vocab)));
        const auto scalar = promptLogits(m, toks, {.threads = 2, .scalar = true});
        QVERIFY2(sameBits(ref, scalar), qPrintable("scalar: " + firstDiff(ref, scalar, m->config().n_vocab)));
        const auto f32kv = promptLogits(m, toks, {.threads = 2, .kv = KvType::F32});
        QVERIFY(!sameBits(ref, f32kv));  // the cells' type is part of the definition
    }

    void chunking_data() {
        QTest::addColumn<int>("chunk");
        QTest::addColumn<int>("maxBatch");
        QTest::newRow("1") << 1 << 256;
        QTest::newRow("7") << 7 << 256;
        QTest::newRow("256") << 256 << 256;
        QTest::newRow("300 in passes of 37") << 300 << 37;
    }
    void chunking() {
        QFETCH(int, chunk);
        QFETCH(int, maxBatch);
        auto m = loadModel(flashnextPath());
        QVERIFY(m);
        const auto toks = pseudoTokens(kPrompt, m->config().n_vocab, 3);
        const auto ref = promptLogits(m, toks, {.threads = 2, .chunk = kPrompt, .max_batch = kPrompt});
        const auto got = promptLogits(m, toks, {.threads = 2, .chunk = chunk, .max_batch = maxBatch});
        QVERIFY2(sameBits(ref, got), qPrintable(firstDiff(ref, got, m->config().n_vocab)));
    }

    // A sequence alone equals the same sequence in batches with others (one dense, one sparse,
    // entry order changing), prefill and decode mixed.
    void batches() {
        auto m = loadModel(flashnextPath());
        QVERIFY(m);
        const int64_t V = m->config().n_vocab;
        const auto a = pseudoTokens(kPrompt, V, 3), b = pseudoTokens(120, V, 4), c = pseudoTokens(40, V, 5);
        const auto ref = promptLogits(m, a, {.threads = 2});
        BackendOptions o;
        o.threads = 2;
        auto be = std::move(make_cpu_backend(m, o).value());
        auto sa = newSequence(*be), sb = newSequence(*be), sc = newSequence(*be);
        std::vector<float> got;
        PassLogits out;
        auto span = [](const std::vector<TokenId>& v, size_t at, size_t n) { return std::span<const TokenId>(v).subspan(at, n); };
        // Step 1: a's first 90 with b's first 100; step 2: c, then b's rest and a up to 200 (a last);
        // then a token by token with c decoding beside it.
        {
            BatchEntry e[] = {{sa.get(), span(a, 0, 90), LogitsMode::All}, {sb.get(), span(b, 0, 100), LogitsMode::All}};
            QVERIFY(be->eval(e, &out));
            const auto r = rowsOf(out, 0);
            got.insert(got.end(), r.begin(), r.end());
        }
        {
            BatchEntry e[] = {{sc.get(), span(c, 0, 30), LogitsMode::Last}, {sb.get(), span(b, 100, 20), LogitsMode::All},
                              {sa.get(), span(a, 90, 110), LogitsMode::All}};
            QVERIFY(be->eval(e, &out));
            const auto r = rowsOf(out, 2);
            got.insert(got.end(), r.begin(), r.end());
        }
        for (size_t i = 200; i < size_t(kPrompt); ++i) {
            const size_t ci = 30 + (i % 10);
            BatchEntry e[] = {{sa.get(), span(a, i, 1), LogitsMode::Last}, {sc.get(), span(c, ci, 1), LogitsMode::Last}};
            if (i % 2) std::swap(e[0], e[1]);
            QVERIFY(be->eval(e, &out));
            const auto r = rowsOf(out, i % 2 ? 1 : 0);
            got.insert(got.end(), r.begin(), r.end());
            if (i % 10 == 9) sc->truncate(30);
        }
        QVERIFY2(sameBits(ref, got), qPrintable(firstDiff(ref, got, V)));
    }

    // Against the same weights with a budget no prompt here exceeds (dense attention only):
    // equal bits through position budget + 3 (at 67 every block is selected, which is the dense
    // computation), different logits once blocks are dropped.
    void selectionRuns() {
        const QString sparse = flashnextPath("F32");
        const QString dense = patchedCopy(sparse, "dense.gguf", "flashnext.attention.indexer.top_k", "", 4096);
        QVERIFY(!dense.isEmpty());
        auto ms = loadModel(sparse), md = loadModel(dense);
        QVERIFY(ms && md);
        QCOMPARE(md->config().index_top_k, 4096);
        const int64_t V = ms->config().n_vocab;
        const auto toks = pseudoTokens(kPrompt, V, 3);
        const auto ls = promptLogits(ms, toks, {.threads = 2}), ld = promptLogits(md, toks, {.threads = 2});
        QCOMPARE(ls.size(), ld.size());
        const size_t row = size_t(V) * sizeof(float);
        for (int p = 0; p <= 67; ++p)
            QVERIFY2(std::memcmp(ls.data() + size_t(p) * size_t(V), ld.data() + size_t(p) * size_t(V), row) == 0,
                     qPrintable(QString("position %1 differs from dense").arg(p)));
        int differ = 0;
        for (int p = 68; p < kPrompt; ++p)
            differ += std::memcmp(ls.data() + size_t(p) * size_t(V), ld.data() + size_t(p) * size_t(V), row) != 0;
        QVERIFY2(differ > (kPrompt - 68) * 9 / 10, qPrintable(QString("only %1 positions differ").arg(differ)));
    }

    void badFiles_data() {
        QTest::addColumn<QByteArray>("from");
        QTest::addColumn<QByteArray>("to");
        QTest::addColumn<uint>("value");
        QTest::addColumn<QString>("expect");
        QTest::newRow("missing indexer tensor") << QByteArray("blk.1.indexer.proj.weight") << QByteArray("blk.1.indexer.prxj.weight")
                                                << 0u << "tensor 'blk.1.indexer.proj.weight' is missing";
        QTest::newRow("missing hc tensor") << QByteArray("output_hc_base.weight") << QByteArray("output_hc_bass.weight") << 0u
                                           << "tensor 'output_hc_base.weight' is missing";
        QTest::newRow("block size 8") << QByteArray("flashnext.attention.indexer.block_size") << QByteArray() << 8u
                                      << "'flashnext.attention.indexer.block_size' is 8";
        QTest::newRow("3 streams") << QByteArray("flashnext.hyper_connection.count") << QByteArray() << 3u
                                   << "'flashnext.hyper_connection.count' is 3";
        QTest::newRow("budget not a multiple of 4") << QByteArray("flashnext.attention.indexer.top_k") << QByteArray() << 66u
                                                    << "is 66, not a multiple of the block size";
        QTest::newRow("indexer key length 0") << QByteArray("flashnext.attention.indexer.key_length") << QByteArray() << 0u
                                              << "'flashnext.attention.indexer.key_length' must be positive";
    }
    void badFiles() {
        QFETCH(QByteArray, from);
        QFETCH(QByteArray, to);
        QFETCH(uint, value);
        QFETCH(QString, expect);
        const QString path = patchedCopy(flashnextPath(), QString("bad-%1.gguf").arg(QTest::currentDataTag()).replace(' ', '_'),
                                         from, to, value);
        QVERIFY(!path.isEmpty());
        auto m = Model::load(path.toStdString());
        QVERIFY(!m);
        QVERIFY2(QString::fromStdString(m.message()).contains(expect), m.message().c_str());
        QVERIFY2(QString::fromStdString(m.message()).contains(path), "the error names the file");
    }

    // The hyper-connection mix against a float64 evaluation of the spec's formulas, and its
    // properties: columns summing to at most 1, pre in (eps, 1 + eps], post in (0, 2).
    void hcMix() {
        uint64_t st = 99;
        auto uni = [&] { return double(splitmix64(st) >> 11) * (2.0 / 9007199254740992.0) - 1.0; };
        for (int trial = 0; trial < 200; ++trial) {
            float m[24], base[24], scale[3];
            for (float& v : m) v = float(3 * uni());
            for (float& v : base) v = float(uni());
            for (float& v : scale) v = float(2 * uni());
            const float eps = 1e-6f;
            const int iters = 1 + trial % 20;
            float pre[4], post[4], comb[16];
            num::hc_mix(m, scale, base, eps, iters, pre, post, comb);
            auto sig = [](double z) { return 1 / (1 + std::exp(-z)); };
            double c[4][4];
            for (int j = 0; j < 4; ++j) {
                double mx = -1e300, sum = 0;
                for (int k = 0; k < 4; ++k) mx = std::max(mx, double(scale[2]) * m[8 + 4 * j + k] + base[8 + 4 * j + k]);
                for (int k = 0; k < 4; ++k) sum += c[j][k] = std::exp(double(scale[2]) * m[8 + 4 * j + k] + base[8 + 4 * j + k] - mx);
                for (int k = 0; k < 4; ++k) c[j][k] = c[j][k] / sum + eps;
            }
            auto cols = [&] {
                for (int k = 0; k < 4; ++k) {
                    const double s = c[0][k] + c[1][k] + c[2][k] + c[3][k] + eps;
                    for (int j = 0; j < 4; ++j) c[j][k] /= s;
                }
            };
            cols();
            for (int it = 1; it < iters; ++it) {
                for (int j = 0; j < 4; ++j) {
                    const double s = c[j][0] + c[j][1] + c[j][2] + c[j][3] + eps;
                    for (int k = 0; k < 4; ++k) c[j][k] /= s;
                }
                cols();
            }
            for (int i = 0; i < 4; ++i) {
                QVERIFY(std::abs(pre[i] - (sig(double(scale[0]) * m[i] + base[i]) + eps)) < 1e-6);
                QVERIFY(std::abs(post[i] - 2 * sig(double(scale[1]) * m[4 + i] + base[4 + i])) < 2e-6);
                QVERIFY(pre[i] > eps && pre[i] <= 1 + eps && post[i] > 0 && post[i] < 2);
            }
            for (int j = 0; j < 4; ++j)
                for (int k = 0; k < 4; ++k)
                    QVERIFY2(std::abs(comb[4 * j + k] - c[j][k]) < 1e-5,
                             qPrintable(QString("trial %1 comb[%2][%3] %4 vs %5").arg(trial).arg(j).arg(k).arg(comb[4 * j + k]).arg(c[j][k])));
            for (int k = 0; k < 4; ++k)  // columns were normalised last: sum / (sum + eps) <= 1
                QVERIFY(comb[k] + comb[4 + k] + comb[8 + k] + comb[12 + k] <= 1 + 1e-6f);
        }
    }

    void cli() {
        QTemporaryDir dir;
        const QString path = dir.filePath("fn.gguf");
        auto r = test::cli({"synth", "--arch", "flashnext", "--shape", "tiny", "-o", path});
        QVERIFY2(r.code == 0, r.err.constData());
        r = test::cli({"info", path, "--json"});
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY2(QString(r.out).remove(' ').contains("\"architecture\":\"flashnext\""), r.out.constData());
        r = test::cli({"info", path});
        QVERIFY(r.out.contains("flashnext"));
        r = test::cli({"synth", "--arch", "flashnext", "--shape", "huge", "-o", path});
        QCOMPARE(r.code, 1);
        QVERIFY(r.err.contains("tiny, 30b-a3b"));
    }
};

QTEST_GUILESS_MAIN(TestFlashnext)
#include "test_flashnext.moc"
