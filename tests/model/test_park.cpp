// Parked contexts: the park file's checksum, wake restoring cells bit for bit (the next-step
// logits equal those of a context never parked, on llama, qwen3 and qwen3moe), `run --park`
// then `run --wake` printing exactly what one longer run prints (greedy and seeded), every
// kind of bad file (truncated at many offsets, flipped bytes, another version, another model)
// detected with a reason and re-prefilled to the same logits, and a SIGKILL during park leaving
// the previous file intact.
#include <arbor/park.hpp>
#include <arbor/session.hpp>

#include "engine_test_util.hpp"

#include <QFile>
#include <QProcess>
#include <QtTest>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <sys/wait.h>
#include <unistd.h>

using namespace arbor;
using namespace arbor::test;

namespace {

std::unique_ptr<Session> newSession(const std::shared_ptr<const Model>& m) {
    SessionOptions o;
    o.threads = 1;
    o.n_ctx = 512;
    auto s = Session::create(m, o);
    return s ? std::move(s.value()) : nullptr;
}

std::vector<float> copyLogits(const Session& s) { return {s.last_logits().begin(), s.last_logits().end()}; }

QByteArray readAll(const QString& p) {
    QFile f(p);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}
void writeAll(const QString& p, const QByteArray& b) {
    QFile f(p);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(b);
}

}  // namespace

class TestPark : public QObject {
    Q_OBJECT
    QTemporaryDir tmp_;

private slots:
    void checksum() {
        std::vector<uint8_t> b(1000);
        for (size_t i = 0; i < b.size(); ++i) b[i] = uint8_t(i * 131 + 7);
        const uint64_t whole = checksum64(b.data(), b.size());
        // Any split into pieces gives the same digest.
        for (size_t cut : {size_t(0), size_t(1), size_t(31), size_t(32), size_t(33), size_t(500), size_t(999)}) {
            Checksum64 c;
            c.update(b.data(), cut);
            c.update(b.data() + cut, b.size() - cut);
            QCOMPARE(c.digest(), whole);
        }
        // Every single flipped bit and every length change is seen.
        for (size_t i = 0; i < b.size(); ++i)
            for (int bit = 0; bit < 8; bit += 3) {
                b[i] ^= uint8_t(1 << bit);
                QVERIFY(checksum64(b.data(), b.size()) != whole);
                b[i] ^= uint8_t(1 << bit);
            }
        for (size_t n = 0; n < b.size(); n += 37) QVERIFY(checksum64(b.data(), n) != whole);
        QVERIFY(checksum64("", 0) != checksum64("\0", 1));
    }

    void wakeBitExact_data() {
        addSharedModelRows();
        QTest::newRow("qwen2 (synth)") << "synth:qwen2:Q8_0";
        QTest::newRow("llama (synth Q4_K)") << "synth:llama:Q4_K";
    }
    void wakeBitExact() {
        QFETCH(QString, model);
        ARBOR_REQUIRE_PATH(modelPath(model));
        auto m = loadModel(modelPath(model));
        QVERIFY(m);
        const int64_t V = m->config().n_vocab;
        // 300 tokens: the cells straddle a page boundary.
        const auto toks = pseudoTokens(300, V, 11);
        const std::vector<TokenId> next = pseudoTokens(3, V, 12);
        const QString file = tmp_.filePath("bitexact.park");

        auto a = newSession(m);
        QVERIFY(a);
        QVERIFY(a->feed(toks));
        QVERIFY2(a->park(file.toStdString(), nullptr), "park");

        auto b = newSession(m);
        auto rep = b->wake(file.toStdString());
        QVERIFY2(rep, rep ? "" : rep.message().c_str());
        QCOMPARE(rep.value().restored_cells, int64_t(toks.size()));
        QCOMPARE(rep.value().recomputed_cells, int64_t(0));
        QVERIFY(rep.value().problem.empty());
        QVERIFY(sameBits(copyLogits(*a), copyLogits(*b)));
        QVERIFY(b->tokens() == toks);

        // Never parked: every token in one go. The next steps after the wake must match it.
        auto c = newSession(m);
        std::vector<TokenId> all = toks;
        all.insert(all.end(), next.begin(), next.end());
        QVERIFY(c->feed(all));
        for (TokenId t : next) QVERIFY(b->feed(std::vector<TokenId>{t}));
        QVERIFY2(sameBits(copyLogits(*b), copyLogits(*c)), qPrintable(firstDiff(copyLogits(*b), copyLogits(*c), V)));
    }

    void cliContinuation_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("prompt");
        QTest::addColumn<QStringList>("sampling");
        const QStringList greedy{"--temp", "0"}, seeded{"--temp", "0.9", "--seed", "42"};
        QTest::newRow("stories greedy") << "models/stories260K.gguf" << "Once upon a time" << greedy;
        QTest::newRow("stories seeded") << "models/stories260K.gguf" << "Once upon a time" << seeded;
        QTest::newRow("qwen3 greedy") << "quant/random-qwen3-Q4_K_M.gguf" << "Hello there" << greedy;
        QTest::newRow("qwen3 seeded") << "quant/random-qwen3-Q4_K_M.gguf" << "Hello there" << seeded;
        QTest::newRow("qwen3moe greedy") << "quant/random-qwen3moe-Q4_K_M.gguf" << "Hello there" << greedy;
        QTest::newRow("qwen3moe seeded") << "quant/random-qwen3moe-Q4_K_M.gguf" << "Hello there" << seeded;
    }
    void cliContinuation() {
        QFETCH(QString, model);
        QFETCH(QString, prompt);
        QFETCH(QStringList, sampling);
        if (qEnvironmentVariable("ARBOR_CLI").isEmpty()) QSKIP("ARBOR_CLI is not set (run through ctest)");
        const QString m = modelPath(model);
        ARBOR_REQUIRE_PATH(m);
        const QString f = tmp_.filePath(QString("cont-%1.park").arg(QTest::currentDataTag()).replace(' ', '-'));
        const QStringList base{"run", "-m", m, "--threads", "1", "--ctx", "256"};
        const CliRun whole = cli(base + QStringList{"-p", prompt, "-n", "80"} + sampling);
        QCOMPARE(whole.code, 0);
        const CliRun first = cli(base + QStringList{"-p", prompt, "-n", "30", "--park", f} + sampling);
        QCOMPARE(first.code, 0);
        const CliRun second = cli(base + QStringList{"--wake", f, "-p", "", "-n", "50"});
        QVERIFY2(second.code == 0, second.err.constData());
        QVERIFY2(second.err.contains("wake: restored "), second.err.constData());
        QVERIFY2(second.err.contains(", recomputed 0\n"), second.err.constData());
        QVERIFY2(whole.out.size() > first.out.size(), "the whole run must go on past the park point");
        QCOMPARE(first.out + second.out, whole.out);

        // A corrupt KV cell: the reason is named, the tokens are re-prefilled, the text is the same.
        QByteArray bytes = readAll(f);
        bytes[bytes.size() - 200] = char(bytes[bytes.size() - 200] ^ 0x40);
        writeAll(f, bytes);
        const CliRun fallback = cli(base + QStringList{"--wake", f, "-p", "", "-n", "50"});
        QCOMPARE(fallback.code, 0);
        QVERIFY2(fallback.err.contains("checksum mismatch in section 'KVCL'"), fallback.err.constData());
        QVERIFY2(fallback.err.contains("restored 0 cells, recomputed "), fallback.err.constData());
        QCOMPARE(fallback.out, second.out);

        // Unreadable tokens: an error, exit 1.
        writeAll(f, bytes.left(40));
        const CliRun broken = cli(base + QStringList{"--wake", f, "-p", "", "-n", "5"});
        QCOMPARE(broken.code, 1);
        QVERIFY2(broken.err.contains("the tokens cannot be read"), broken.err.constData());
    }

    // Truncations and flipped bytes anywhere: never restored cells from a bad file, always a
    // reason, and whenever the tokens survive, the re-prefilled logits equal the parked ones.
    void badFiles() {
        const QString mp = modelPath("models/stories260K.gguf");
        ARBOR_REQUIRE_PATH(mp);
        auto m = loadModel(mp);
        auto a = newSession(m);
        const auto toks = pseudoTokens(40, m->config().n_vocab, 3);
        QVERIFY(a->feed(toks));
        const QString good = tmp_.filePath("good.park"), bad = tmp_.filePath("bad.park");
        QVERIFY(a->park(good.toStdString(), nullptr));
        const QByteArray bytes = readAll(good);
        QVERIFY(bytes.size() > 2000);
        const auto ref = copyLogits(*a);

        auto check = [&](const QByteArray& content, const QString& what) -> QString {
            writeAll(bad, content);
            auto s = newSession(m);
            auto rep = s->wake(bad.toStdString());
            if (!rep) return QString::fromStdString(rep.message());  // the tokens were unreadable: an error
            if (rep.value().problem.empty()) {
                qWarning("%s: accepted", qPrintable(what));
                return {};
            }
            if (rep.value().restored_cells != 0 || rep.value().recomputed_cells != int64_t(toks.size()) ||
                !sameBits(copyLogits(*s), ref)) {
                qWarning("%s: bad fallback", qPrintable(what));
                return {};
            }
            return QString::fromStdString(rep.value().problem);
        };
        int errors = 0, fallbacks = 0;
        for (qsizetype cut = 0; cut < bytes.size(); cut += (cut < 256 ? 2 : 331)) {
            const QString why = check(bytes.left(cut), QString("truncated at %1").arg(cut));
            QVERIFY2(!why.isEmpty(), qPrintable(QString("truncated at %1").arg(cut)));
            (why.contains("tokens cannot be read") || why.contains("header") ? errors : fallbacks) += 1;
        }
        QVERIFY(errors > 0 && fallbacks > 0);
        for (qsizetype at = 0; at < bytes.size(); at += (at < 256 ? 3 : 263)) {
            QByteArray c = bytes;
            c[at] = char(c[at] ^ 0x10);
            QVERIFY2(!check(c, QString("flipped byte %1").arg(at)).isEmpty(), qPrintable(QString("flipped byte %1").arg(at)));
        }
        // Another format version, older and newer, with a valid header checksum.
        for (uint32_t v : {kParkVersion - 1, kParkVersion + 1}) {
            QByteArray c = bytes;
            std::memcpy(c.data() + 8, &v, 4);
            const uint64_t sum = checksum64(c.constData(), 16);
            std::memcpy(c.data() + 16, &sum, 8);
            const QString why = check(c, "version");
            QVERIFY2(why.contains(QString("format version %1").arg(v)), qPrintable(why));
        }
        // Another model with the same vocabulary; another KV type.
        writeAll(bad, bytes);
        const QString other = modelPath("quant/random-qwen3-Q4_K_M.gguf"), other2 = modelPath("quant/random-qwen3-Q8_0.gguf");
        ARBOR_REQUIRE_PATH(other2);
        auto q = loadModel(other), q8 = loadModel(other2);
        auto sq = newSession(q);
        QVERIFY(sq->feed(toks));
        QVERIFY(sq->park(good.toStdString(), nullptr));
        auto s8 = newSession(q8);
        auto rep = s8->wake(good.toStdString());
        QVERIFY(rep);
        QVERIFY2(QString::fromStdString(rep.value().problem).contains("another model"), rep.value().problem.c_str());
        QCOMPARE(rep.value().recomputed_cells, int64_t(toks.size()));
        SessionOptions o;
        o.threads = 1;
        o.n_ctx = 512;
        o.kv_type = KvType::F32;
        auto f32 = Session::create(q, o);
        auto rep32 = f32.value()->wake(good.toStdString());
        QVERIFY(rep32);
        QVERIFY2(QString::fromStdString(rep32.value().problem).contains("KV type"), rep32.value().problem.c_str());
        // A park file of stories260K on qwen3: tokens exist but the model differs.
        auto sw = newSession(q);
        auto repw = sw->wake(bad.toStdString());
        QVERIFY(repw ? !repw.value().problem.empty() : !repw.message().empty());
    }

    // Poisoning makes reads an error (never NaN logits); a deep copy and an earlier fork keep
    // valid cells and continue bit-identically to a context never touched.
    void poisonAndDeepCopy_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("kv");
        QTest::newRow("stories f16") << "models/stories260K.gguf" << int(KvType::F16);
        QTest::newRow("qwen3 f32") << "quant/random-qwen3-Q4_K_M.gguf" << int(KvType::F32);
    }
    void poisonAndDeepCopy() {
        QFETCH(QString, model);
        QFETCH(int, kv);
        ARBOR_REQUIRE_PATH(modelPath(model));
        auto m = loadModel(modelPath(model));
        const int64_t V = m->config().n_vocab;
        const auto toks = pseudoTokens(300, V, 21);
        const std::vector<TokenId> next = pseudoTokens(1, V, 22);
        SessionOptions o;
        o.threads = 1;
        o.n_ctx = 2048;  // a page budget of 8: the copy and copy-on-write need their own
        o.kv_type = KvType(kv);
        auto a = Session::create(m, o).value();
        QVERIFY(a->feed(toks));
        KvSequence& seq = a->sequence();
        auto fork = seq.fork(seq.size());
        auto copy = seq.deep_copy();
        QVERIFY(copy);
        auto& d = *copy.value();
        QCOMPARE(d.size(), seq.size());
        for (size_t i = 0; i < d.pages().size(); ++i) {
            QVERIFY(d.pages()[i] != seq.pages()[i]);
            QCOMPARE(seq.cache().refcount(d.pages()[i]), 1);
            QCOMPARE(std::memcmp(d.page_data(int64_t(i)), seq.page_data(int64_t(i)), seq.cache().layout().page_bytes), 0);
        }
        QCOMPARE(seq.first_poisoned(0, seq.size()), int64_t(-1));
        QVERIFY(seq.poison(260, 270));
        QVERIFY(!seq.poison(290, 301));  // beyond the filled cells
        QCOMPARE(seq.first_poisoned(0, seq.size()), int64_t(260));
        QCOMPARE(fork->first_poisoned(0, fork->size()), int64_t(-1));
        QCOMPARE(d.first_poisoned(0, d.size()), int64_t(-1));
        auto st = a->feed(next);
        QVERIFY(!st);
        QVERIFY2(QString::fromStdString(st.message()).contains("KV cell 260 is poisoned"), st.message().c_str());
        QCOMPARE(seq.size(), int64_t(300));
        QVERIFY(!a->park(tmp_.filePath("poisoned.park").toStdString(), nullptr));
        QCOMPARE(seq.poisoned_from(), int64_t(260));
        QCOMPARE(fork->poisoned_from(), int64_t(-1));

        // The never-parked, never-poisoned reference, and the copy and the fork continued by a backend.
        auto c = Session::create(m, o).value();
        std::vector<TokenId> all = toks;
        all.insert(all.end(), next.begin(), next.end());
        QVERIFY(c->feed(all));
        const auto ref = copyLogits(*c);
        auto be = makeBackend(m, RunConfig{});
        for (KvSequence* s : {&d, fork.get()}) {
            PassLogits out;
            BatchEntry e{s, std::span<const TokenId>(next), LogitsMode::Last};
            QVERIFY(be->eval(std::span<const BatchEntry>(&e, 1), &out));
            const std::vector<float> got(out.row(0), out.row(0) + V);
            QVERIFY2(sameBits(got, ref), qPrintable(firstDiff(got, ref, V)));
        }
    }

    // LRU eviction under a disk budget, by modification time; the kept file survives.
    void budget() {
        QTemporaryDir dir;
        const auto now = std::filesystem::file_time_type::clock::now();
        auto make = [&](const QString& name, int bytes, int age_s) {
            writeAll(dir.filePath(name), QByteArray(bytes, 'x'));
            std::filesystem::last_write_time(dir.filePath(name).toStdString(), now - std::chrono::seconds(age_s));
        };
        make("a.park", 1000, 50);
        make("b.park", 1000, 40);
        make("c.park", 1000, 30);
        make("d.park", 1000, 20);
        make("notes.txt", 5000, 100);  // not a park file: never counted or removed
        QVERIFY(touch_park_file(dir.filePath("b.park").toStdString()));  // b was just used
        auto ev = enforce_park_budget(dir.path().toStdString(), 2500, dir.filePath("a.park").toStdString());
        QVERIFY(ev);
        QCOMPARE(ev.value().removed.size(), size_t(2));  // a is kept: c, then d go
        QVERIFY(QString::fromStdString(ev.value().removed[0]).endsWith("c.park"));
        QVERIFY(QString::fromStdString(ev.value().removed[1]).endsWith("d.park"));
        QCOMPARE(ev.value().bytes_after, uint64_t(2000));
        QVERIFY(QFile::exists(dir.filePath("a.park")) && QFile::exists(dir.filePath("b.park")));
        QVERIFY(QFile::exists(dir.filePath("notes.txt")));
        auto none = enforce_park_budget(dir.path().toStdString(), 1u << 20);
        QVERIFY(none && none.value().removed.empty());
        QVERIFY(!touch_park_file(dir.filePath("missing.park").toStdString()));
    }

    // A child parks in a loop; SIGKILL it at several moments. The file is always the previous
    // complete one (or a new complete one): it wakes with its cells restored.
    void killDuringPark() {
        const QString mp = modelPath("quant/random-qwen3-Q4_K_M.gguf");
        ARBOR_REQUIRE_PATH(mp);
        auto m = loadModel(mp);
        auto a = newSession(m);
        const auto toks = pseudoTokens(300, m->config().n_vocab, 9);
        QVERIFY(a->feed(toks));
        const std::string file = tmp_.filePath("kill.park").toStdString();
        QVERIFY(a->park(file, nullptr));
        const auto ref = copyLogits(*a);
        for (int round = 0; round < 6; ++round) {
            const pid_t pid = ::fork();
            QVERIFY(pid >= 0);
            if (pid == 0) {
                for (;;)
                    if (!a->park(file, nullptr)) ::_exit(3);
            }
            ::usleep(useconds_t(3000 + round * 7919));
            ::kill(pid, SIGKILL);
            int status = 0;
            ::waitpid(pid, &status, 0);
            QVERIFY(WIFSIGNALED(status));
            auto s = newSession(m);
            auto rep = s->wake(file);
            QVERIFY2(rep, rep ? "" : rep.message().c_str());
            QVERIFY2(rep.value().problem.empty(), rep.value().problem.c_str());
            QCOMPARE(rep.value().restored_cells, int64_t(toks.size()));
            QVERIFY(sameBits(copyLogits(*s), ref));
        }
    }
};

QTEST_GUILESS_MAIN(TestPark)
#include "test_park.moc"
