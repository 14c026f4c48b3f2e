// flashnext's pooled block-key cache (docs/MODEL-flashnext.md, "Cache state"):
// - every complete block's cached key equals a float64 recomputation from the stored indexer
//   keys (mean of 4, RMSNorm with k_norm, RoPE at the block's first cell), in every layer, with
//   f16 and f32 cells, and the bytes do not depend on the prefill chunking;
// - a fork shares its parent's keys and neither disturbs the other's (a partial block completed
//   differently on each side), and continues exactly like a sequence built from scratch;
// - a deep copy holds the same keys and continues identically;
// - poisoning a cell writes NaN into its block's key (and its indexer keys) in every layer, and
//   a fork taken before keeps valid keys;
// - parking writes no pooled key: keys garbled before parking come back rebuilt at wake, and the
//   woken context continues with the same bits as one never parked.
#include <arbor/park.hpp>

#include "model/cpu_pass.hpp"
#include "quant/quant_blocks.hpp"
#include "test_flashnext_util.hpp"

#include <QtTest>

#include <cmath>

using namespace arbor;
using namespace arbor::test;

namespace {

const float* pooledKey(const KvSequence& s, int layer, int64_t block) {
    const KvLayout& L = s.cache().layout();
    const int64_t cell = block * 4;
    return reinterpret_cast<const float*>(s.page_data(cell / kKvPageCells) + L.pool_offset(layer) +
                                          size_t((cell % kKvPageCells) / 4) * size_t(L.index_dim) * 4);
}

double indexKey(const KvSequence& s, int layer, int64_t cell, int64_t e) {
    const KvLayout& L = s.cache().layout();
    const uint8_t* row = s.page_data(cell / kKvPageCells) + L.index_offset(layer) +
                         size_t((cell % kKvPageCells) * L.index_dim * L.elem_bytes);
    if (L.type == KvType::F32) {
        float f;
        std::memcpy(&f, row + e * 4, 4);
        return f;
    }
    uint16_t h;
    std::memcpy(&h, row + e * 2, 2);
    return quant::blocks::fp16_to_f32(h);
}

// All pooled keys of blocks [0, n_blocks), every layer, as bytes.
QByteArray pooledBytes(const KvSequence& s, int64_t n_blocks) {
    const KvLayout& L = s.cache().layout();
    QByteArray b;
    for (int l = 0; l < int(L.n_layer); ++l)
        for (int64_t k = 0; k < n_blocks; ++k)
            b.append(reinterpret_cast<const char*>(pooledKey(s, l, k)), qsizetype(L.index_dim * 4));
    return b;
}

std::unique_ptr<Backend> backend(const std::shared_ptr<const Model>& m) {
    BackendOptions o;
    o.threads = 2;
    return std::move(make_cpu_backend(m, o).value());
}

}  // namespace

class TestFlashnextCache : public QObject {
    Q_OBJECT
    QTemporaryDir tmp_;

private slots:
    void pooledKeys_data() {
        QTest::addColumn<bool>("f32");
        QTest::newRow("f16 cells") << false;
        QTest::newRow("f32 cells") << true;
    }
    void pooledKeys() {
        QFETCH(bool, f32);
        auto m = loadModel(flashnextPath());
        QVERIFY(m);
        const ModelConfig& c = m->config();
        auto be = backend(m);
        auto seq = newSequence(*be, f32 ? KvType::F32 : KvType::F16);
        const auto toks = pseudoTokens(299, c.n_vocab, 9);  // blocks 0..73 complete, 74 partial
        QVERIFY(!feed(*be, *seq, toks).empty());
        const int64_t dI = c.index_dim, half = dI / 2;
        double worst = 0;
        for (int l = 0; l < int(c.n_layer); ++l)
            for (int64_t b = 0; b < 74; ++b) {
                std::vector<double> v(static_cast<size_t>(dI), 0.0);
                double ss = 0;
                for (int64_t e = 0; e < dI; ++e) {
                    double sum = 0;
                    for (int i = 0; i < 4; ++i) sum += indexKey(*seq, l, 4 * b + i, e);
                    v[size_t(e)] = sum / 4;
                    ss += v[size_t(e)] * v[size_t(e)];
                }
                const double r = 1.0 / std::sqrt(ss / double(dI) + double(c.rms_eps));
                for (double& x : v) x *= r;  // k_norm is ones in the synthetic model
                for (int64_t i = 0; i < half; ++i) {
                    // The spec's angle: the float frequency times the position, rounded to float.
                    const float freq = float(std::pow(double(c.rope_freq_base), -2.0 * double(i) / double(dI)));
                    const double th = double(float(double(4 * b) * double(freq)));
                    const double a = v[size_t(i)], bb = v[size_t(i + half)];
                    v[size_t(i)] = a * std::cos(th) - bb * std::sin(th);
                    v[size_t(i + half)] = a * std::sin(th) + bb * std::cos(th);
                }
                const float* got = pooledKey(*seq, l, b);
                for (int64_t e = 0; e < dI; ++e) worst = std::max(worst, std::abs(double(got[e]) - v[size_t(e)]));
            }
        QVERIFY2(worst < 2e-6, qPrintable(QString("max |cached - float64| = %1").arg(worst)));

        // The same keys whatever the prefill chunking.
        auto seq7 = newSequence(*be, f32 ? KvType::F32 : KvType::F16);
        QVERIFY(!feed(*be, *seq7, toks, 7).empty());
        QCOMPARE(pooledBytes(*seq7, 74), pooledBytes(*seq, 74));
    }

    void fork() {
        auto m = loadModel(flashnextPath());
        QVERIFY(m);
        const int64_t V = m->config().n_vocab;
        auto be = backend(m);
        const auto prefix = pseudoTokens(150, V, 1), x = pseudoTokens(150, V, 2), y = pseudoTokens(150, V, 3);
        auto parent = newSequence(*be);
        QVERIFY(!feed(*be, *parent, prefix).empty());
        const QByteArray before = pooledBytes(*parent, 37);  // block 37 (cells 148..151) is partial
        auto child = parent->fork(150);
        QCOMPARE(child->cache().refcount(child->pages()[0]), 2);
        QCOMPARE(pooledKey(*child, 1, 36), pooledKey(*parent, 1, 36));  // shared, not copied
        const auto child_logits = feed(*be, *child, x, 64);
        const auto parent_logits = feed(*be, *parent, y, 5);
        QCOMPARE(pooledBytes(*parent, 37), before);
        QCOMPARE(pooledBytes(*child, 37), before);
        // Block 37 completed differently on each side.
        QVERIFY(std::memcmp(pooledKey(*child, 0, 37), pooledKey(*parent, 0, 37), size_t(m->config().index_dim) * 4) != 0);
        auto fresh_x = newSequence(*be), fresh_y = newSequence(*be);
        auto want_x = feed(*be, *fresh_x, concat(prefix, x));
        auto want_y = feed(*be, *fresh_y, concat(prefix, y));
        want_x.erase(want_x.begin(), want_x.begin() + 150 * V);
        want_y.erase(want_y.begin(), want_y.begin() + 150 * V);
        QVERIFY2(sameBits(child_logits, want_x), qPrintable(firstDiff(child_logits, want_x, V)));
        QVERIFY2(sameBits(parent_logits, want_y), qPrintable(firstDiff(parent_logits, want_y, V)));
        QCOMPARE(pooledBytes(*child, 75), pooledBytes(*fresh_x, 75));
        QCOMPARE(pooledBytes(*parent, 75), pooledBytes(*fresh_y, 75));
    }

    void deepCopy() {
        auto m = loadModel(flashnextPath());
        QVERIFY(m);
        const int64_t V = m->config().n_vocab;
        auto be = backend(m);
        auto a = newSequence(*be);
        QVERIFY(!feed(*be, *a, pseudoTokens(181, V, 4)).empty());
        auto b = a->deep_copy();
        QVERIFY(b);
        QVERIFY(b.value()->pages()[0] != a->pages()[0]);
        QCOMPARE(b.value()->cache().refcount(b.value()->pages()[0]), 1);
        QCOMPARE(pooledBytes(*b.value(), 45), pooledBytes(*a, 45));
        const auto more = pseudoTokens(120, V, 5);
        const auto la = feed(*be, *a, more), lb = feed(*be, *b.value(), more);
        QVERIFY2(sameBits(la, lb), qPrintable(firstDiff(la, lb, V)));
        QCOMPARE(pooledBytes(*b.value(), 75), pooledBytes(*a, 75));
    }

    void poison() {
        auto m = loadModel(flashnextPath());
        QVERIFY(m);
        const ModelConfig& c = m->config();
        auto be = backend(m);
        auto seq = newSequence(*be);
        QVERIFY(!feed(*be, *seq, pseudoTokens(200, c.n_vocab, 6)).empty());
        auto earlier = seq->fork(200);
        const QByteArray before = pooledBytes(*seq, 50);
        QVERIFY(seq->poison(101, 103));
        QCOMPARE(seq->poisoned_from(), 101);
        for (int l = 0; l < int(c.n_layer); ++l) {
            for (int64_t b = 0; b < 50; ++b) {
                const float* k = pooledKey(*seq, l, b);
                for (int64_t e = 0; e < c.index_dim; ++e)
                    QVERIFY2(std::isnan(k[e]) == (b == 25), qPrintable(QString("layer %1 block %2").arg(l).arg(b)));
            }
            for (int64_t cell : {100, 101, 102, 103})
                QCOMPARE(std::isnan(indexKey(*seq, l, cell, 0)), cell == 101 || cell == 102);
        }
        QCOMPARE(seq->first_poisoned(0, 200), 101);
        QCOMPARE(pooledBytes(*earlier, 50), before);  // the fork kept its own valid keys
        QCOMPARE(earlier->poisoned_from(), -1);
    }

    void parkWake() {
        auto m = loadModel(flashnextPath());
        QVERIFY(m);
        const ModelConfig& c = m->config();
        const int64_t V = c.n_vocab;
        auto be = backend(m);
        const auto toks = pseudoTokens(203, V, 8), next = pseudoTokens(90, V, 10);
        auto seq = newSequence(*be);
        const auto first = feed(*be, *seq, toks);
        QVERIFY(!first.empty());
        const QByteArray keys = pooledBytes(*seq, 50);
        // Garble every pooled key of the parked sequence: none of it may reach the file.
        const KvLayout& L = seq->cache().layout();
        for (int l = 0; l < int(c.n_layer); ++l)
            std::memset(seq->page_data(0) + L.pool_offset(l), 0x5a, size_t(64 * L.index_dim * 4));
        QVERIFY(pooledBytes(*seq, 50) != keys);
        ParkContents pc;
        pc.tokens = toks;
        pc.logits.assign(first.end() - V, first.end());
        const std::string path = tmp_.filePath("fn.park").toStdString();
        QVERIFY(write_park_file(path, *m, *seq, pc));
        auto woken = newSequence(*be);
        auto r = read_park_file(path, *m, KvType::F16, *woken);
        QVERIFY(r);
        QVERIFY2(r.value().cells_restored, r.value().problem.c_str());
        QCOMPARE(woken->size(), 203);
        QCOMPARE(pooledBytes(*woken, 50), keys);
        // The woken context continues exactly like one never parked.
        auto fresh = newSequence(*be);
        auto want = feed(*be, *fresh, concat(toks, next));
        want.erase(want.begin(), want.begin() + 203 * V);
        const auto got = feed(*be, *woken, next, 13);
        QVERIFY2(sameBits(got, want), qPrintable(firstDiff(got, want, V)));
    }
};

QTEST_GUILESS_MAIN(TestFlashnextCache)
#include "test_flashnext_cache.moc"
