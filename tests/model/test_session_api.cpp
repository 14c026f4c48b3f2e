// The session API (arbor/contexts.hpp, arbor/session.hpp): fork shares the parent's pages and
// its next logits equal a never-forked context's bit for bit while the parent is unaffected;
// a deep copy owns its pages and continues bit-identically; cancellation from another thread
// stops at a token boundary and a later generate continues exactly; stats read from another
// thread while a worker generates are consistent; park and wake through the API restore the
// cells (next logits bit-identical, nothing recomputed) and a bad file falls back with a
// reason. Oracles: contexts fed the same tokens in one go, never forked, parked or cancelled.
#include <arbor/contexts.hpp>
#include <arbor/session.hpp>

#include "engine_test_util.hpp"
#include "session_test_util.hpp"

#include <QFile>
#include <QtTest>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>

using namespace arbor;
using namespace arbor::test;

namespace {

std::shared_ptr<Contexts> newPool(const QString& model, int64_t n_ctx = 1024, int threads = 1) {
    SessionOptions o;
    o.threads = threads;
    o.n_ctx = n_ctx;
    auto p = Contexts::load(modelPath(model).toStdString(), o);
    if (!p) qWarning("%s", p.message().c_str());
    return p ? p.value() : nullptr;
}

std::unique_ptr<Session> fresh(Contexts& pool) {
    auto s = pool.create_context();
    return s ? std::move(s.value()) : nullptr;
}

std::vector<float> logitsOf(const Session& s) { return {s.last_logits().begin(), s.last_logits().end()}; }

// A never-forked reference: `toks` fed in one go into a new context of the pool.
std::vector<float> reference(Contexts& pool, const std::vector<TokenId>& toks) {
    auto s = fresh(pool);
    if (!s || !s->feed(toks)) return {};
    return logitsOf(*s);
}

std::vector<TokenId> concat(std::vector<TokenId> a, const std::vector<TokenId>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

Sampler seeded(const Model& m, float temp, uint64_t seed) {
    SamplerParams p;
    p.temperature = temp;
    p.seed = seed;
    return Sampler(p, m.config().n_vocab);
}

}  // namespace

class TestSessionApi : public QObject {
    Q_OBJECT
    QTemporaryDir tmp_;

private slots:
    void fork_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("at");
        for (const char* m : {"models/stories260K.gguf", "quant/random-qwen3-Q4_K_M.gguf", "quant/random-qwen3moe-Q4_K_M.gguf"}) {
            const QString name = QFileInfo(m).baseName();
            for (int at : {300, 257, 256, 100, 1, 0})
                QTest::newRow(qPrintable(QString("%1 at %2").arg(name).arg(at))) << QString(m) << at;
        }
    }
    // 300 tokens fill two pages; forks at the end, just past and at a page boundary, inside
    // the first page, after one token and empty.
    void fork() {
        QFETCH(QString, model);
        QFETCH(int, at);
        ARBOR_REQUIRE_PATH(modelPath(model));
        auto pool = newPool(model);
        QVERIFY(pool);
        const int64_t V = pool->model().config().n_vocab;
        const auto toks = pseudoTokens(300, V, 31);
        const auto next = pseudoTokens(5, V, 32), other = pseudoTokens(5, V, 33);
        auto parent = fresh(*pool);
        QVERIFY(parent->feed(toks));
        const auto parentLogits = logitsOf(*parent);
        const std::vector<int32_t> parentPages = parent->sequence().pages();
        const int64_t pagesBefore = pool->pages_in_use();

        auto f = parent->fork(at);
        QVERIFY2(f, f ? "" : f.message().c_str());
        Session& child = *f.value();
        const std::vector<TokenId> prefix(toks.begin(), toks.begin() + at);
        QVERIFY(child.tokens() == prefix);
        QCOMPARE(child.sequence().size(), int64_t(at));
        // Shared, not copied: every page before the one holding cell at-1 is the parent's; at
        // most that one page is new (copy-on-write of the re-fed last cell).
        const int64_t sharedPages = at == 300 ? 2 : at == 0 ? 0 : (at - 1) / kKvPageCells;
        for (int64_t i = 0; i < sharedPages; ++i) {
            QCOMPARE(child.sequence().pages()[size_t(i)], parentPages[size_t(i)]);
            QVERIFY(pool->cache()->refcount(parentPages[size_t(i)]) >= 2);
        }
        QVERIFY(pool->pages_in_use() <= pagesBefore + 1);
        if (at == 0) {
            QVERIFY(child.last_logits().empty());
        } else {
            // The fork's logits are those of a context fed the prefix only.
            const auto ref = reference(*pool, prefix);
            QVERIFY2(sameBits(logitsOf(child), ref), qPrintable(firstDiff(logitsOf(child), ref, V)));
        }
        // Both continue independently; each equals a context never forked.
        QVERIFY(child.feed(next));
        QVERIFY(parent->sequence().pages() == parentPages);
        QVERIFY(sameBits(logitsOf(*parent), parentLogits));
        QVERIFY(parent->feed(other));
        const auto childRef = reference(*pool, concat(prefix, next)), parentRef = reference(*pool, concat(toks, other));
        QVERIFY2(sameBits(logitsOf(child), childRef), qPrintable(firstDiff(logitsOf(child), childRef, V)));
        QVERIFY2(sameBits(logitsOf(*parent), parentRef), qPrintable(firstDiff(logitsOf(*parent), parentRef, V)));
        // Destroying the parent leaves the fork whole.
        parent.reset();
        QVERIFY(child.feed(other));
        const auto afterRef = reference(*pool, concat(concat(prefix, next), other));
        QVERIFY(sameBits(logitsOf(child), afterRef));
        QVERIFY(!child.fork(int64_t(child.tokens().size()) + 1));
        QVERIFY(!child.fork(-1));
    }

    // A fork at the end takes the pending token and the held text: both generate the same
    // continuation, which equals one longer generation.
    void forkContinuesGeneration() {
        const QString model = "models/stories260K.gguf";
        ARBOR_REQUIRE_PATH(modelPath(model));
        auto pool = newPool(model);
        auto s = fresh(*pool);
        const Model& m = pool->model();
        QVERIFY(s->feed(prompt_tokens(m, "Once upon a time", std::nullopt, false).value()));
        auto whole = fresh(*pool);
        QVERIFY(whole->feed(s->tokens()));
        Sampler sw = seeded(m, 0.9f, 77), sa = sw;
        const Generated all = generate(*whole, sw, 60);
        const Generated head = generate(*s, sa, 25, true);
        QVERIFY(s->pending().has_value());
        auto f = s->fork(int64_t(s->tokens().size()));
        QVERIFY(f);
        Sampler sb = sa;
        const Generated tailA = generate(*s, sa, 35), tailB = generate(*f.value(), sb, 35);
        QVERIFY(all.ok && head.ok && tailA.ok && tailB.ok);
        QCOMPARE(tailA.text, tailB.text);
        QVERIFY(tailA.ids == tailB.ids);
        QCOMPARE(head.text + tailA.text, all.text);
        QVERIFY(concat(head.ids, tailA.ids) == all.ids);
        QVERIFY(sameBits(logitsOf(*s), logitsOf(*f.value())));
    }

    void deepCopy_data() {
        addSharedModelRows();
    }
    void deepCopy() {
        QFETCH(QString, model);
        ARBOR_REQUIRE_PATH(modelPath(model));
        auto pool = newPool(model);
        const int64_t V = pool->model().config().n_vocab;
        const auto toks = pseudoTokens(280, V, 41), next = pseudoTokens(3, V, 42), other = pseudoTokens(4, V, 43);
        auto a = fresh(*pool);
        QVERIFY(a->feed(toks));
        auto c = a->deep_copy();
        QVERIFY(c);
        Session& copy = *c.value();
        QVERIFY(copy.tokens() == a->tokens());
        QVERIFY(sameBits(logitsOf(copy), logitsOf(*a)));
        const size_t used = size_t((int64_t(toks.size()) + kKvPageCells - 1) / kKvPageCells);
        for (size_t i = 0; i < used; ++i) {
            QVERIFY(copy.sequence().pages()[i] != a->sequence().pages()[i]);
            QCOMPARE(pool->cache()->refcount(copy.sequence().pages()[i]), 1);
        }
        QVERIFY(a->feed(other));
        a.reset();  // the copy does not depend on the original
        QVERIFY(copy.feed(next));
        const auto ref = reference(*pool, concat(toks, next));
        QVERIFY2(sameBits(logitsOf(copy), ref), qPrintable(firstDiff(logitsOf(copy), ref, V)));
    }

    // Cancellation asked for before a call stops it at its first boundary (deterministic); the
    // context stays usable and continues exactly.
    void cancelAtBoundaries() {
        const QString model = "quant/random-qwen3-Q4_K_M.gguf";
        ARBOR_REQUIRE_PATH(modelPath(model));
        SessionOptions o;
        o.threads = 1;
        o.n_ctx = 512;
        o.prefill_chunk = 16;
        auto pool = Contexts::load(modelPath(model).toStdString(), o).value();
        const int64_t V = pool->model().config().n_vocab;
        const auto toks = pseudoTokens(100, V, 51);
        auto s = fresh(*pool);
        s->request_cancel();
        auto fed = s->append(toks);
        QVERIFY(fed);
        QCOMPARE(fed.value(), int64_t(16));  // one pass, then the cancel is seen
        QCOMPARE(s->tokens().size(), size_t(16));
        const std::vector<TokenId> first16(toks.begin(), toks.begin() + 16);
        QVERIFY(sameBits(logitsOf(*s), reference(*pool, first16)));
        fed = s->append(std::vector<TokenId>(toks.begin() + 16, toks.end()));  // the request was consumed
        QVERIFY(fed && fed.value() == 84);
        QVERIFY(sameBits(logitsOf(*s), reference(*pool, toks)));

        Sampler sp = seeded(pool->model(), 0.8f, 5), ref = sp;
        s->request_cancel();
        const Generated none = generate(*s, sp, 10);
        QVERIFY(none.ok);
        QCOMPARE(none.reason, StopReason::Cancelled);
        QVERIFY(none.ids.empty());
        std::atomic<bool> mine{true};
        GenerateOptions go;
        go.cancel = &mine;
        auto r = s->generate(sp, go, [](std::string_view) { return true; });
        QVERIFY(r && r.value() == StopReason::Cancelled);
        QVERIFY(mine.load());  // the caller's flag is never cleared by the engine
        QVERIFY(sp == ref);    // nothing was sampled
    }

    // A worker thread generates; the main thread reads stats all the while and cancels once
    // some tokens came out. Generation stops at a token boundary with Cancelled; the tokens so
    // far, then a second generate, equal one uninterrupted generation.
    void cancelFromThread() {
        const QString model = "models/stories260K.gguf";
        ARBOR_REQUIRE_PATH(modelPath(model));
        auto pool = newPool(model, 2048);
        const Model& m = pool->model();
        const auto prompt = prompt_tokens(m, "Once upon a time", std::nullopt, false).value();
        auto s = fresh(*pool);
        QVERIFY(s->feed(prompt));
        Sampler sampler = seeded(m, 0.9f, 11), refSampler = sampler;
        Generated got;
        std::atomic<int64_t> seen{0};
        std::thread worker([&] {
            GenerateOptions go;
            go.max_tokens = 2000;
            go.resumable = true;
            auto r = s->generate(sampler, go, TokenCallback([&](const TokenEvent& e) {
                got.text += e.text;
                if (e.token != kNoToken) got.ids.push_back(e.token);
                seen.store(e.stats.generated_tokens);
                // Past 20 tokens, slow down so that the cancel lands long before the 2000th
                // however the machine schedules the threads.
                if (e.stats.generated_tokens >= 20) std::this_thread::sleep_for(std::chrono::milliseconds(1));
                return true;
            }));
            got.ok = r.ok();
            if (r) got.reason = r.value();
        });
        int64_t lastGenerated = 0;
        bool sawBusy = false, monotonic = true;
        for (int spins = 0; spins < 200000; ++spins) {
            const SessionStats st = s->stats();
            sawBusy = sawBusy || st.busy;
            monotonic = monotonic && st.generated_tokens >= lastGenerated && st.decode_evals <= st.generated_tokens;
            lastGenerated = st.generated_tokens;
            if (st.generated_tokens >= 20) break;
            std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
        s->request_cancel();
        worker.join();
        QVERIFY(got.ok);
        QVERIFY(monotonic);
        QVERIFY(sawBusy);
        QVERIFY(!s->stats().busy);
        QCOMPARE(got.reason, StopReason::Cancelled);
        QVERIFY(got.ids.size() >= 20 && got.ids.size() < 2000);
        QCOMPARE(s->stats().generated_tokens, int64_t(got.ids.size()));
        QCOMPARE(seen.load(), int64_t(got.ids.size()));
        // Continue to 120 tokens in all; compare with one uninterrupted generation.
        const Generated rest = generate(*s, sampler, 120 - int64_t(got.ids.size()));
        auto whole = fresh(*pool);
        QVERIFY(whole->feed(prompt));
        const Generated all = generate(*whole, refSampler, 120);
        QVERIFY(concat(got.ids, rest.ids) == all.ids);
        QCOMPARE(got.text + rest.text, all.text);
    }

    // Stats while another thread drives the context: a reader thread takes snapshots the whole
    // time (run under ThreadSanitizer to check the contract); every snapshot is consistent
    // and the last equals what the driver saw.
    void statsFromAnotherThread() {
        const QString model = "quant/random-qwen3-Q4_K_M.gguf";
        ARBOR_REQUIRE_PATH(modelPath(model));
        auto pool = newPool(model, 1024, 2);
        const Model& m = pool->model();
        const auto prompt = pseudoTokens(200, m.config().n_vocab, 61);
        auto s = fresh(*pool);
        std::atomic<bool> done{false};
        std::atomic<int> snapshots{0}, bad{0};
        std::thread reader([&] {
            SessionStats prev;
            while (!done.load()) {
                const SessionStats st = s->stats();
                if (st.generated_tokens < prev.generated_tokens || st.prompt_tokens < prev.prompt_tokens ||
                    st.context_tokens < prev.context_tokens || st.decode_evals > st.generated_tokens ||
                    st.context_tokens > st.prompt_tokens + st.decode_evals)
                    bad.fetch_add(1);
                prev = st;
                snapshots.fetch_add(1);
            }
        });
        QVERIFY(s->feed(prompt));
        Sampler sp = seeded(m, 0.7f, 3);
        const Generated g = generate(*s, sp, 64);
        done.store(true);
        reader.join();
        QVERIFY(g.ok);
        QCOMPARE(bad.load(), 0);
        QVERIFY(snapshots.load() > 0);
        const SessionStats st = s->stats();
        QCOMPARE(st.prompt_tokens, int64_t(200));
        QCOMPARE(st.generated_tokens, int64_t(g.ids.size()));
        // The last token stays pending (after an end-of-generation token, that token does).
        QCOMPARE(st.decode_evals, g.reason == StopReason::EndOfGeneration ? st.generated_tokens : st.generated_tokens - 1);
        QCOMPARE(st.context_tokens, int64_t(s->tokens().size()));
        QVERIFY(st.prefill_seconds > 0 && st.ttft_seconds > 0 && st.decode_tok_s() > 0);
        s->reset_stats();
        QCOMPARE(s->stats().generated_tokens, int64_t(0));
        QCOMPARE(s->stats().context_tokens, int64_t(s->tokens().size()));
    }

    void parkWake_data() {
        addSharedModelRows();
    }
    // Through the pool: a context with a pending token and held text parks and wakes into a
    // new context; the cells are restored (none recomputed), the next logits and the
    // continuation equal a context never parked. A corrupt copy falls back with a reason.
    void parkWake() {
        QFETCH(QString, model);
        ARBOR_REQUIRE_PATH(modelPath(model));
        auto pool = newPool(model);
        const Model& m = pool->model();
        const auto prompt = pseudoTokens(270, m.config().n_vocab, 71);
        auto a = fresh(*pool);
        QVERIFY(a->feed(prompt));
        Sampler sa = seeded(m, 0.9f, 8);
        const Generated head = generate(*a, sa, 20, true);
        QVERIFY(head.ok && a->pending());
        const QString file = tmp_.filePath(QString("api-%1.park").arg(QTest::currentDataTag()));
        QVERIFY(a->park(file.toStdString(), &sa));
        const auto parkedCells = int64_t(a->tokens().size());

        auto w = pool->wake_context(file.toStdString());
        QVERIFY2(w, w ? "" : w.message().c_str());
        Session& b = *w.value().first;
        const WakeReport& rep = w.value().second;
        QVERIFY2(rep.problem.empty(), rep.problem.c_str());
        QCOMPARE(rep.restored_cells, int64_t(a->tokens().size()));
        QCOMPARE(rep.recomputed_cells, int64_t(0));
        QVERIFY(rep.sampler && *rep.sampler == sa);
        QVERIFY(b.tokens() == a->tokens());
        QCOMPARE(b.pending(), a->pending());
        QCOMPARE(b.held().text, a->held().text);
        Sampler sb = *rep.sampler;
        const Generated tailA = generate(*a, sa, 30), tailB = generate(b, sb, 30);
        QCOMPARE(tailB.text, tailA.text);
        QVERIFY(tailB.ids == tailA.ids);
        QVERIFY(sameBits(logitsOf(b), logitsOf(*a)));

        // Flip one byte of the KV cells: detected, re-prefilled, the same continuation.
        QFile f(file);
        QVERIFY(f.open(QIODevice::ReadWrite));
        QByteArray bytes = f.readAll();
        const qsizetype at = bytes.size() - 100;
        bytes[at] = char(bytes[at] ^ 0x08);
        QVERIFY(f.seek(0) && f.write(bytes) == bytes.size());
        f.close();
        auto w2 = pool->wake_context(file.toStdString());
        QVERIFY(w2);
        const WakeReport& rep2 = w2.value().second;
        QVERIFY2(QString::fromStdString(rep2.problem).contains("checksum mismatch in section 'KVCL'"), rep2.problem.c_str());
        QCOMPARE(rep2.restored_cells, int64_t(0));
        QCOMPARE(rep2.recomputed_cells, parkedCells);
        Sampler sc = *rep2.sampler;
        const Generated tailC = generate(*w2.value().first, sc, 30);
        QCOMPARE(tailC.text, tailA.text);

        // Waking into a context that holds tokens is refused.
        QVERIFY(!a->wake(file.toStdString()));
    }

    // Pages come back when contexts are destroyed; the pool's budget is enforced.
    void pagesAndBudget() {
        const QString model = "models/stories260K.gguf";
        ARBOR_REQUIRE_PATH(modelPath(model));
        SessionOptions o;
        o.threads = 1;
        o.n_ctx = 512;
        o.kv_pages = 3;
        auto pool = Contexts::load(modelPath(model).toStdString(), o).value();
        QCOMPARE(pool->max_pages(), int64_t(3));
        const auto toks = pseudoTokens(300, pool->model().config().n_vocab, 81);
        auto a = fresh(*pool);
        QVERIFY(a->feed(toks));
        QCOMPARE(pool->pages_in_use(), int64_t(2));
        auto f = a->fork(300);  // shares both pages
        QVERIFY(f);
        QCOMPARE(pool->pages_in_use(), int64_t(2));
        auto c = a->deep_copy();  // needs two more: over budget, an error naming it
        QVERIFY(!c);
        QVERIFY2(QString::fromStdString(c.message()).contains("budget"), c.message().c_str());
        QCOMPARE(pool->pages_in_use(), int64_t(2));
        a.reset();
        f.value().reset();
        QCOMPARE(pool->pages_in_use(), int64_t(0));
        auto bad = Contexts::load("/nonexistent/model.gguf", o);
        QVERIFY(!bad);
    }
};

QTEST_GUILESS_MAIN(TestSessionApi)
#include "test_session_api.moc"
