// Continuing a generation exactly. A resumable generate of 30 tokens followed by a generate of
// 50 (in the same context, or after park and wake) gives the text, the tokens and the stop
// reason of one generate of 80, also when the 30 ended at an end-of-generation token, at a
// stop string, or in the middle of a stop string; and arbor-cli `run -p X -n 30 --park F` then
// `run --wake F -p "" -n 50` prints exactly what `run -p X -n 80` prints in those cases. The
// oracle is the uninterrupted run. Also: the held-text byte form, and held text becoming
// final when tokens are appended.
#include <arbor/contexts.hpp>
#include <arbor/session.hpp>

#include "engine_test_util.hpp"
#include "session_test_util.hpp"

#include <QtTest>

using namespace arbor;
using namespace arbor::test;

namespace {


SamplerParams params(float temp, uint64_t seed) {
    SamplerParams p;
    p.temperature = temp;
    p.seed = seed;
    if (temp > 1.0f) {  // wide: random-weight models then reach their end-of-generation tokens
        p.top_k = 0;
        p.top_p = 1.0f;
        p.min_p = 0.0f;
    }
    return p;
}

// One case: a model, a prompt, sampler settings and stop strings.
struct Case {
    QString model, prompt;
    SamplerParams sp;
    std::vector<std::string> stops;
};

// The uninterrupted generation of n tokens.
Generated whole(Contexts& pool, const Case& c, int64_t n) {
    auto s = pool.create_context().value();
    const auto p = prompt_tokens(pool.model(), c.prompt.toStdString(), std::nullopt, false).value();
    if (!s->feed(p)) return {};
    Sampler sampler(c.sp, pool.model().config().n_vocab);
    sampler.accept(p);
    return generate(*s, sampler, n, false, c.stops);
}

std::shared_ptr<Contexts> pool(const QString& model) {
    SessionOptions o;
    o.threads = 1;
    o.n_ctx = 256;
    auto p = Contexts::load(modelPath(model).toStdString(), o);
    return p ? p.value() : nullptr;
}

// The first seed in [1, 400) whose uninterrupted 80 tokens end at an end-of-generation token
// after at least `lo` and fewer than `hi` tokens, or 0.
uint64_t eogSeed(Contexts& p, const QString& model, float temp, int lo, int hi) {
    for (uint64_t seed = 1; seed < 400; ++seed) {
        const Generated g = whole(p, Case{model, "Hello there", params(temp, seed), {}}, 80);
        if (g.reason == StopReason::EndOfGeneration && int(g.ids.size()) >= lo && int(g.ids.size()) < hi) return seed;
    }
    return 0;
}

// A stop string of `len` bytes starting `before` bytes (or a few more) ahead of byte `at` of
// `text` whose first occurrence is there and that has no NUL (and, for a command line, is
// valid UTF-8), or "".
std::string stopAt(const std::string& text, size_t at, size_t before, size_t len, bool commandLine) {
    for (size_t b = before; b <= before + 6 && b <= at; ++b) {
        const std::string s = text.substr(at - b, len);
        if (s.size() != len || text.find(s) != at - b || s.find('\0') != std::string::npos) continue;
        if (!commandLine || QString::fromStdString(s).toStdString() == s) return s;
    }
    return {};
}

QByteArray toBytes(const std::string& s) { return QByteArray(s.data(), qsizetype(s.size())); }

}  // namespace

class TestSessionContinue : public QObject {
    Q_OBJECT
    QTemporaryDir tmp_;

    // The cases: a model and a kind of ending (random-weight models write random bytes, which
    // a command line cannot carry as stop strings: those run in process only).
    void cases(bool commandLine) {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("kind");
        const QString stories = "models/stories260K.gguf", qwen3 = "quant/random-qwen3-Q4_K_M.gguf",
                      moe = "quant/random-qwen3moe-Q4_K_M.gguf";
        for (const char* kind : {"length", "stop before", "stop across"}) {
            QTest::newRow(qPrintable(QString("stories greedy ") + kind)) << stories << QString(kind);
            if (!commandLine || QString(kind) == "length")
                QTest::newRow(qPrintable(QString("qwen3 seeded ") + kind)) << qwen3 << QString(kind);
        }
        for (const char* kind : {"eog before", "eog after"}) {
            QTest::newRow(qPrintable(QString("qwen3 ") + kind)) << qwen3 << QString(kind);
            QTest::newRow(qPrintable(QString("qwen3moe ") + kind)) << moe << QString(kind);
        }
    }

    // Builds the case of `kind` on the model and checks that it really is that case.
    bool makeCase(Contexts& p, const QString& model, const QString& kind, bool commandLine, Case* out) {
        Case c{model, "Once upon a time", params(model.contains("stories") ? 0.0f : 0.9f, 42), {}};
        if (kind.startsWith("eog")) {
            const bool before = kind == "eog before";
            const uint64_t seed = eogSeed(p, model, 1.5f, before ? 1 : 31, before ? 30 : 80);
            if (seed == 0) {
                qWarning("no seed in [1, 400) ends at an end-of-generation token %s 30 tokens", before ? "before" : "after");
                return false;
            }
            c.prompt = "Hello there";
            c.sp = params(1.5f, seed);
        }
        const Generated g80 = whole(p, c, 80), g30 = whole(p, c, 30);
        if (kind == "stop before") c.stops = {stopAt(g80.text, g30.text.size() / 2, 0, 4, commandLine)};
        if (kind == "stop across") c.stops = {stopAt(g80.text, g30.text.size(), 2, 5, commandLine)};
        if (!c.stops.empty() && c.stops[0].empty()) {
            qWarning("no stop string found");
            return false;
        }
        *out = c;
        const Generated check = whole(p, c, 80), first = whole(p, c, 30);
        if (kind == "length") return check.reason == StopReason::Length && first.reason == StopReason::Length;
        if (kind == "stop before") return first.reason == StopReason::StopString;
        if (kind == "stop across") return first.reason == StopReason::Length && check.reason == StopReason::StopString;
        if (kind == "eog before") return first.reason == StopReason::EndOfGeneration;
        return first.reason == StopReason::Length && check.reason == StopReason::EndOfGeneration;
    }

private slots:
    void inProcess_data() { cases(false); }
    void inProcess() {
        QFETCH(QString, model);
        QFETCH(QString, kind);
        ARBOR_REQUIRE_PATH(modelPath(model));
        auto p = pool(model);
        QVERIFY(p);
        Case c;
        QVERIFY2(makeCase(*p, model, kind, false, &c), "the case does not arise on this model");
        const Generated all = whole(*p, c, 80);

        // 30 then 50 in one context.
        auto s = p->create_context().value();
        const auto prompt = prompt_tokens(p->model(), c.prompt.toStdString(), std::nullopt, false).value();
        QVERIFY(s->feed(prompt));
        Sampler sampler(c.sp, p->model().config().n_vocab);
        sampler.accept(prompt);
        const Generated a = generate(*s, sampler, 30, true, c.stops);
        if (kind == "stop across") QVERIFY2(!s->held().text.empty(), "the start of the stop string is held");
        const QString file = tmp_.filePath(QString("%1.park").arg(QTest::currentDataTag()).replace(' ', '_'));
        QVERIFY(s->park(file.toStdString(), &sampler));
        const Generated b = generate(*s, sampler, 50, false, c.stops);
        QCOMPARE(toBytes(a.text + b.text), toBytes(all.text));
        QVERIFY(concat(a.ids, b.ids) == all.ids);
        QCOMPARE(int(b.reason), int(all.reason));

        // 30, park, wake, 50: the parked stop strings and sampler continue.
        auto w = p->wake_context(file.toStdString());
        QVERIFY2(w, w ? "" : w.message().c_str());
        Session& woken = *w.value().first;
        QCOMPARE(w.value().second.recomputed_cells, int64_t(0));
        QVERIFY(woken.held().stops == c.stops);
        Sampler ws = *w.value().second.sampler;
        const Generated bw = generate(woken, ws, 50, false, woken.held().stops);
        QCOMPARE(toBytes(a.text + bw.text), toBytes(all.text));
        QVERIFY(concat(a.ids, bw.ids) == all.ids);
        QCOMPARE(int(bw.reason), int(all.reason));

        // An ended generation stays ended; new input starts a new one after the pending token.
        if (a.reason == StopReason::EndOfGeneration || a.reason == StopReason::StopString) {
            QVERIFY(s->pending().has_value());
            if (a.reason == StopReason::EndOfGeneration) QVERIFY(p->model().tokenizer().is_eog(*s->pending()));
            const Generated again = generate(*s, sampler, 10, false, c.stops);
            QVERIFY(again.ids.empty() && again.text.empty());
            QCOMPARE(int(again.reason), int(a.reason));
            const std::vector<TokenId> expect = [&] {
                std::vector<TokenId> t = s->tokens();
                t.push_back(*s->pending());
                t.push_back(prompt.back());
                return t;
            }();
            QVERIFY(s->feed(std::vector<TokenId>{prompt.back()}));
            QVERIFY(s->tokens() == expect);
            QVERIFY(!s->pending());
            auto ref = p->create_context().value();
            QVERIFY(ref->feed(expect));
            QVERIFY(sameBits(std::vector<float>(s->last_logits().begin(), s->last_logits().end()),
                             std::vector<float>(ref->last_logits().begin(), ref->last_logits().end())));
            const Generated next = generate(*s, sampler, 5, false, {});
            QCOMPARE(int(next.reason), int(StopReason::Length));
        }
    }

    void throughCli_data() { cases(true); }
    void throughCli() {
        QFETCH(QString, model);
        QFETCH(QString, kind);
        if (qEnvironmentVariable("ARBOR_CLI").isEmpty()) {
            if (inCi()) QFAIL("ARBOR_CLI is not set");
            QSKIP("ARBOR_CLI is not set (run through ctest)");
        }
        ARBOR_REQUIRE_PATH(modelPath(model));
        auto p = pool(model);
        Case c;
        QVERIFY2(makeCase(*p, model, kind, true, &c), "the case does not arise on this model");
        QStringList sampling{"--temp", QString::number(double(c.sp.temperature)), "--seed", QString::number(c.sp.seed)};
        if (c.sp.top_k == 0) sampling << "--top-k" << "0" << "--top-p" << "1" << "--min-p" << "0";
        for (const std::string& s : c.stops) sampling << "--stop" << QString::fromStdString(s);
        const QString f = tmp_.filePath(QString("cli-%1.park").arg(QTest::currentDataTag()).replace(' ', '_'));
        const QStringList base{"run", "-m", modelPath(model), "--threads", "1", "--ctx", "256"};
        const CliRun all = cli(base + QStringList{"-p", c.prompt, "-n", "80"} + sampling);
        QCOMPARE(all.code, 0);
        const CliRun first = cli(base + QStringList{"-p", c.prompt, "-n", "30", "--park", f} + sampling);
        QCOMPARE(first.code, 0);
        // The woken run repeats neither the sampler flags nor the stop strings.
        const CliRun second = cli(base + QStringList{"--wake", f, "-p", "", "-n", "50"});
        QVERIFY2(second.code == 0, second.err.constData());
        QVERIFY2(second.err.contains(", recomputed 0\n"), second.err.constData());
        QCOMPARE(first.out + second.out, all.out);
        auto stopOf = [](const QByteArray& err) {
            const qsizetype at = err.indexOf("\nstop: ");
            return at < 0 ? QByteArray() : err.mid(at + 7, err.indexOf('\n', at + 1) - at - 7);
        };
        QCOMPARE(stopOf(second.err), stopOf(all.err));
        if (kind == "eog before") QCOMPARE(stopOf(first.err), QByteArray("eog"));
        if (kind == "stop before") QCOMPARE(stopOf(first.err), QByteArray("stop"));
        if (kind == "stop across") {  // the first run holds the start of the stop string
            QCOMPARE(stopOf(first.err), QByteArray("length"));
            QCOMPARE(stopOf(all.err), QByteArray("stop"));
            QVERIFY(second.out.isEmpty());
        }
    }

    // Held text of a resumable generate becomes final when tokens are appended: the next
    // generate gives it first (as a kNoToken event), never matched against stop strings.
    void heldTextBecomesFinal() {
        const QString model = "models/stories260K.gguf";
        ARBOR_REQUIRE_PATH(modelPath(model));
        auto p = pool(model);
        const Case c{model, "Once upon a time", params(0.0f, 1), {}};
        const Generated g80 = whole(*p, c, 80), g30 = whole(*p, c, 30);
        const std::string stop = stopAt(g80.text, g30.text.size(), 2, 5, false);
        QVERIFY(!stop.empty());
        auto s = p->create_context().value();
        QVERIFY(s->feed(prompt_tokens(p->model(), "Once upon a time", std::nullopt, false).value()));
        Sampler sampler(c.sp, p->model().config().n_vocab);
        const Generated a = generate(*s, sampler, 30, true, {stop});
        const std::string held = s->held().text;
        QVERIFY(!held.empty());
        QCOMPARE(a.text + held, g30.text);
        QVERIFY(s->feed(std::vector<TokenId>{p->model().tokenizer().bos()}));
        QVERIFY(s->held().text_final);
        std::vector<std::pair<TokenId, std::string>> events;
        GenerateOptions go;
        go.max_tokens = 3;
        go.stop = {held};  // would match the held text if it were still matched
        auto r = s->generate(sampler, go, TokenCallback([&](const TokenEvent& e) {
            events.emplace_back(e.token, std::string(e.text));
            return true;
        }));
        QVERIFY(r);
        QVERIFY(events.size() >= 2);
        QCOMPARE(events[0].first, kNoToken);
        QCOMPARE(events[0].second, held);
    }

    void heldBytes() {
        HeldGeneration h;
        h.detok = StreamDetokenizer::State{"\xE2\x82", false};
        h.text = "\n\nUs";
        h.stops = {"\n\nUser:", "", "###"};
        const std::string b = h.serialize();
        auto back = HeldGeneration::deserialize(b);
        QVERIFY(back);
        QCOMPARE(back.value().detok->held, h.detok->held);
        QCOMPARE(back.value().text, h.text);
        QVERIFY(back.value().stops == h.stops);
        QVERIFY(!back.value().ended && !back.value().text_final);
        HeldGeneration e;
        e.ended = StopReason::EndOfGeneration;
        e.text_final = true;
        auto eb = HeldGeneration::deserialize(e.serialize());
        QVERIFY(eb && eb.value().ended == StopReason::EndOfGeneration && eb.value().text_final && !eb.value().detok);
        // A bare detokenizer state (older park files) and nothing at all.
        auto bare = HeldGeneration::deserialize(StreamDetokenizer::serialize(*h.detok));
        QVERIFY(bare && bare.value().detok && bare.value().text.empty());
        QVERIFY(HeldGeneration::deserialize("").value().empty());
        // Every truncation and a bad magic, version or reason is an error naming the byte.
        for (size_t n = 1; n < b.size(); ++n) QVERIFY2(!HeldGeneration::deserialize(b.substr(0, n)), qPrintable(QString::number(n)));
        std::string bad = b;
        bad[0] = 'X';
        QVERIFY(QString::fromStdString(HeldGeneration::deserialize(bad).message()).contains("byte 0"));
        bad = b;
        bad[1] = 9;
        QVERIFY(QString::fromStdString(HeldGeneration::deserialize(bad).message()).contains("version 9"));
        bad = e.serialize();
        bad[3] = char(StopReason::Cancelled);
        QVERIFY(QString::fromStdString(HeldGeneration::deserialize(bad).message()).contains("byte 3"));
        QVERIFY(!HeldGeneration::deserialize(b + "x"));
    }

private:
    static std::vector<TokenId> concat(std::vector<TokenId> a, const std::vector<TokenId>& b) {
        a.insert(a.end(), b.begin(), b.end());
        return a;
    }
};

QTEST_GUILESS_MAIN(TestSessionContinue)
#include "test_session_continue.moc"
