// arbor-cli bench end to end on the CPU backend, on stories260K and a tiny synthetic qwen3moe
// (written by `arbor-cli synth`), at small depths so that each run takes about a second.
//
// Oracles: the JSON contract of issue 11 (model, device, rows with row, p50_ms, min_ms, max_ms,
// reps, label, launches_per_pass); p50, min and max recomputed from the repetitions the JSON
// lists; the CPU backend's counters (no launches, one pass per decode step and one per append
// call); and the bandwidth floor recomputed from `arbor-cli info --json`'s tensor table with the
// block sizes of the GGUF spec (MoE expert tensors at n_expert_used / n_expert) and the KV cell
// size from the hyperparameters. Park, wake and reprefill rows (issue 6): the park file's size
// against the KV cells the hyperparameters give plus the stored tokens and logits, the ratios to
// the reprefill row recomputed, the wake's check (cells restored, none recomputed, logits
// bit-identical), the backend's counters (no pass in a park or wake, ceil(D / batch) in a
// reprefill) and the park directory empty afterwards. Then the usage errors: exit 1, nothing on
// stdout, one error line.
#include "cli_run.hpp"
#include "test_data.hpp"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>

using namespace arbor::test;

namespace {

using Run = CliRun;

Run cli(const QStringList& args) { return runCli(args); }

QString stories() { return sharedData() + "/models/stories260K.gguf"; }

// A bench of stories260K on two CPU threads, one repetition and no warm-up, JSON on stdout.
QStringList oneRepJson() {
    return {"bench", "-m", stories(), "--backend", "cpu", "--threads", "2", "--reps", "1", "--warmup", "0", "--json", "-"};
}

// Bytes of a tensor of `type` and `shape`, from the GGUF block sizes (elements, bytes per block).
double tensorBytes(const QString& type, const QJsonArray& shape, bool* known) {
    static const QHash<QString, QPair<int, int>> blocks = {
        {"F32", {1, 4}},      {"F16", {1, 2}},       {"BF16", {1, 2}},     {"Q8_0", {32, 34}},
        {"Q4_0", {32, 18}},   {"Q4_1", {32, 20}},    {"Q5_0", {32, 22}},   {"Q5_1", {32, 24}},
        {"Q2_K", {256, 84}},  {"Q3_K", {256, 110}},  {"Q4_K", {256, 144}}, {"Q5_K", {256, 176}},
        {"Q6_K", {256, 210}}, {"IQ4_XS", {256, 136}}, {"IQ4_NL", {32, 18}}};
    double n = 1;
    for (const auto& d : shape) n *= d.toDouble();
    if (!blocks.contains(type)) {
        *known = false;
        return 0;
    }
    return n / blocks[type].first * blocks[type].second;
}

// What one decode step must read, from `arbor-cli info --json` alone.
struct Expected {
    double weights = 0, kv_per_cell = 0;
    qint64 n_ctx_train = 0, n_vocab = 0;
};

Expected expectedBytes(const QString& model) {
    Expected e;
    const Run r = cli({"info", model, "--json"});
    if (r.code != 0) return e;
    const QJsonObject info = QJsonDocument::fromJson(r.out).object();
    const QJsonObject md = info["metadata"].toObject();
    const QString arch = info["architecture"].toString();
    auto num = [&](const QString& key, double fallback) { return md.value(arch + "." + key).toDouble(fallback); };
    const double n_embd = num("embedding_length", 0), n_head = num("attention.head_count", 1);
    const double n_head_kv = num("attention.head_count_kv", n_head);
    const double hk = num("attention.key_length", n_embd / n_head), hv = num("attention.value_length", n_embd / n_head);
    const double n_expert = num("expert_count", 0), n_used = num("expert_used_count", 0);
    e.kv_per_cell = num("block_count", 0) * n_head_kv * (hk + hv) * 2.0;  // f16 K and V
    e.n_ctx_train = qint64(num("context_length", 0));
    e.n_vocab = md.value("tokenizer.ggml.tokens").toObject()["length"].toInteger();
    bool tied = true, known = true;
    for (const auto& tv : info["tensors"].toArray())
        if (tv.toObject()["name"].toString() == "output.weight") tied = false;
    for (const auto& tv : info["tensors"].toArray()) {
        const QJsonObject t = tv.toObject();
        const QString name = t["name"].toString();
        const QJsonArray shape = t["shape"].toArray();
        const double bytes = tensorBytes(t["type"].toString(), shape, &known);
        if (name == "token_embd.weight")
            e.weights += bytes / shape.last().toDouble() + (tied ? bytes : 0.0);
        else if (name.contains("_exps."))
            e.weights += bytes * n_used / n_expert;
        else
            e.weights += bytes;
    }
    if (!known) e.weights = -1;
    return e;
}

double median(QList<double> v) {
    std::sort(v.begin(), v.end());
    const qsizetype n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

bool near(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(b)); }

QString lastLine(const QByteArray& b) { return QString::fromUtf8(b).trimmed().split('\n').last(); }

}  // namespace

class TestBenchCli : public QObject {
    Q_OBJECT

    QTemporaryDir tmp_;
    QString moe_;

private slots:
    void initTestCase() {
        if (qEnvironmentVariable("ARBOR_CLI").isEmpty()) {
            if (inCi()) QFAIL("ARBOR_CLI is not set");
            QSKIP("ARBOR_CLI is not set (run through ctest)");
        }
        QVERIFY(tmp_.isValid());
        moe_ = tmp_.filePath("moe-tiny-q4k.gguf");
        const Run s = cli({"synth", "--arch", "qwen3moe", "--shape", "tiny", "--type", "Q4_K", "--threads", "1", "-o", moe_});
        QVERIFY2(s.code == 0, s.err.constData());
    }

    void report_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QStringList>("rows");
        QTest::addColumn<QList<int>>("passes");  // per repetition
        QTest::addColumn<int>("reps");
        QTest::addColumn<bool>("toFile");
        QTest::newRow("stories260K, decode and reads")
            << "stories" << QStringList{"--rows", "decode,read50@300,read20x3@40", "--depths", "8,300", "--reps", "3"}
            << QStringList{"decode@8", "decode@300", "read50@300", "read20x3@40"} << QList<int>{64, 64, 1, 1} << 3 << true;
        QTest::newRow("tiny qwen3moe, JSON on stdout")
            << "moe" << QStringList{"--rows", "decode@8,prefill30@20", "--reps", "2", "--warmup", "0"}
            << QStringList{"decode@8", "prefill30@20"} << QList<int>{64, 1} << 2 << false;
    }
    void report() {
        QFETCH(QString, model);
        QFETCH(QStringList, args);
        QFETCH(QStringList, rows);
        QFETCH(QList<int>, passes);
        QFETCH(int, reps);
        QFETCH(bool, toFile);
        const QString path = model == "stories" ? stories() : moe_;
        ARBOR_REQUIRE_PATH(path);
        const QString json = toFile ? tmp_.filePath("bench.json") : QString("-");
        const Run r = cli(QStringList{"bench", "-m", path, "--backend", "cpu", "--threads", "2", "--json", json} + args);
        QVERIFY2(r.code == 0, r.err.constData());
        QByteArray doc = r.out;
        if (toFile) {
            QFile f(json);
            QVERIFY(f.open(QIODevice::ReadOnly));
            doc = f.readAll();
            // The table: a header and one line per row, in order.
            const QStringList lines = QString::fromUtf8(r.out).split('\n');
            const auto header = std::find_if(lines.begin(), lines.end(), [](const QString& l) { return l.startsWith("row "); });
            QVERIFY2(header != lines.end(), r.out.constData());
            for (int i = 0; i < rows.size(); ++i) QVERIFY2((header + 1 + i)->startsWith(rows[i] + " "), r.out.constData());
        }
        QJsonParseError pe;
        const QJsonObject o = QJsonDocument::fromJson(doc, &pe).object();
        QVERIFY2(pe.error == QJsonParseError::NoError, qPrintable(pe.errorString()));
        QCOMPARE(o["model"].toString(), path);
        QVERIFY(o["device"].toString().startsWith("CPU, 2 threads"));
        QCOMPARE(o["backend"].toString(), QString("cpu"));

        const Expected want = expectedBytes(path);
        QVERIFY2(want.weights > 0, "the model holds a tensor type the test's table lacks");
        QCOMPARE(o["weight_bytes_per_token"].toDouble(), want.weights);
        QCOMPARE(o["kv_bytes_per_cell"].toDouble(), want.kv_per_cell);
        const double bw = o["bandwidth_bytes_per_s"].toDouble();
        QVERIFY2(bw > 1e8 && bw < 1e13, qPrintable(QString::number(bw)));

        const QJsonArray list = o["rows"].toArray();
        QCOMPARE(list.size(), rows.size());
        bool beyond_any = false;
        for (int i = 0; i < rows.size(); ++i) {
            const QJsonObject row = list[i].toObject();
            const QString name = row["row"].toString();
            QCOMPARE(name, rows[i]);
            QCOMPARE(row["reps"].toInt(), reps);
            QList<double> ms;
            for (const auto& v : row["rep_ms"].toArray()) ms.push_back(v.toDouble());
            QCOMPARE(ms.size(), qsizetype(reps));
            const double p50 = row["p50_ms"].toDouble(), lo = row["min_ms"].toDouble(), hi = row["max_ms"].toDouble();
            QVERIFY2(lo > 0 && lo <= p50 && p50 <= hi, qPrintable(name));
            QVERIFY(near(p50, median(ms)));
            QCOMPARE(lo, *std::min_element(ms.begin(), ms.end()));
            QCOMPARE(hi, *std::max_element(ms.begin(), ms.end()));
            const QString label = row["label"].toString();
            QVERIFY2(label == "clean" || label == "contended", qPrintable(name + ": " + label));
            QVERIFY(row.contains("launches_per_pass"));
            QCOMPARE(row["launches_per_pass"].toDouble(), 0.0);
            QCOMPARE(row["passes_per_rep"].toDouble(), double(passes[i]));
            const qint64 depth = row["depth"].toInteger(), tokens = row["tokens"].toInteger();
            const bool beyond = depth + tokens > want.n_ctx_train;
            QCOMPARE(row["beyond_train_ctx"].toBool(), beyond);
            beyond_any = beyond_any || beyond;
            if (name.startsWith("decode@")) {
                QCOMPARE(row["unit"].toString(), QString("ms/token"));
                const double floor = (want.weights + want.kv_per_cell * (double(depth) + 32.5)) / bw * 1000.0;
                QVERIFY2(near(row["floor_ms"].toDouble(), floor), qPrintable(name));
                QVERIFY(near(row["ratio"].toDouble(), p50 / floor));
            } else {
                QCOMPARE(row["unit"].toString(), QString("ms/call"));
                QVERIFY(row["floor_ms"].isNull());
            }
        }
        QVERIFY(!beyond_any);
        QVERIFY(o["notes"].toArray().isEmpty());
    }

    void parkWake_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QStringList>("rows");
        QTest::addColumn<int>("batch");
        QTest::addColumn<int>("reps");
        QTest::addColumn<bool>("toFile");
        QTest::newRow("stories260K at 300")
            << QStringList{"--rows", "park@300,wake@300,reprefill@300", "--reps", "2"}
            << QStringList{"park@300", "wake@300", "reprefill@300"} << 256 << 2 << true;
        // A wake at a page boundary without its park row, a park without its reprefill row, a
        // reprefill in several passes, among decode and read rows of the same contexts.
        QTest::newRow("stories260K mixed, --batch 100")
            << QStringList{"--rows", "wake@256,decode@40,park@512,read10x2@30,reprefill@256", "--batch", "100",
                           "--reps", "1", "--warmup", "0"}
            << QStringList{"wake@256", "decode@40", "park@512", "read10x2@30", "reprefill@256"} << 100 << 1 << false;
    }
    void parkWake() {
        QFETCH(QStringList, args);
        QFETCH(QStringList, rows);
        QFETCH(int, batch);
        QFETCH(int, reps);
        QFETCH(bool, toFile);
        ARBOR_REQUIRE_PATH(stories());
        const QString dir = tmp_.filePath(QString("parks-%1").arg(rows.size()));
        QVERIFY(QDir().mkpath(dir));
        const QString json = toFile ? tmp_.filePath("park.json") : QString("-");
        const Run r = cli(QStringList{"bench", "-m", stories(), "--backend", "cpu", "--threads", "2", "--json", json,
                                      "--park-dir", dir} + args);
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY2(QDir(dir).entryList(QDir::Files | QDir::Hidden).isEmpty(), "the park files were not removed");
        QByteArray doc = r.out;
        if (toFile) {
            QFile f(json);
            QVERIFY(f.open(QIODevice::ReadOnly));
            doc = f.readAll();
            QVERIFY2(r.out.contains("\npark and wake against re-prefill (park files in " + dir.toUtf8()), r.out.constData());
            QVERIFY2(r.out.contains("wake@300: restored 300 cells, recomputed 0; the next step's logits are bit-identical"),
                     r.out.constData());
        }
        QJsonParseError pe;
        const QJsonObject o = QJsonDocument::fromJson(doc, &pe).object();
        QVERIFY2(pe.error == QJsonParseError::NoError, qPrintable(pe.errorString()));
        QCOMPARE(o["park_dir"].toString(), dir);
        const Expected want = expectedBytes(stories());
        QVERIFY(want.kv_per_cell > 0 && want.n_vocab > 0);

        const QJsonArray list = o["rows"].toArray();
        QCOMPARE(list.size(), rows.size());
        QHash<QString, QJsonObject> by_name;
        for (const auto& v : list) by_name.insert(v.toObject()["row"].toString(), v.toObject());
        for (int i = 0; i < rows.size(); ++i) {
            const QJsonObject row = list[i].toObject();
            const QString name = row["row"].toString();
            QCOMPARE(name, rows[i]);
            const QString kind = name.section('@', 0, 0);
            const qint64 depth = row["depth"].toInteger();
            QCOMPARE(depth, name.section('@', 1).toLongLong());
            QCOMPARE(row["reps"].toInt(), reps);
            const double p50 = row["p50_ms"].toDouble();
            QVERIFY2(row["min_ms"].toDouble() > 0 && row["min_ms"].toDouble() <= p50 && p50 <= row["max_ms"].toDouble(),
                     qPrintable(name));
            QCOMPARE(row["launches_per_pass"].toDouble(), 0.0);
            QCOMPARE(row["floor_ms"].isNull(), kind != "decode");
            QVERIFY(!row["beyond_train_ctx"].toBool());
            const bool parked = kind == "park" || kind == "wake";
            if (kind == "park" || kind == "wake" || kind == "reprefill") {
                QCOMPARE(row["kind"].toString(), kind);
                QCOMPARE(row["unit"].toString(), "ms/" + kind);
                QCOMPARE(row["tokens"].toInteger(), qint64(0));
                // No pass parks or wakes; a reprefill is ceil(D / batch) passes.
                QCOMPARE(row["passes_per_rep"].toDouble(), parked ? 0.0 : double((depth + batch - 1) / batch));
            }
            QCOMPARE(row["file_bytes"].isNull(), !parked);
            QCOMPARE(row["wake_check"].isNull(), kind != "wake");
            if (!parked) {
                QVERIFY(row["reprefill_ratio"].isNull());
                continue;
            }
            // The file: D cells of KV, D token ids and n_vocab logits, plus framing (header,
            // sections, fingerprint, a sampler state of at most 64 tokens of history).
            const double bytes = row["file_bytes"].toDouble();
            const double payload = double(depth) * (want.kv_per_cell + 4.0) + 4.0 * double(want.n_vocab);
            QVERIFY2(bytes >= payload && bytes <= payload + 4096,
                     qPrintable(QString("%1: %2 bytes, cells, tokens and logits are %3").arg(name).arg(bytes).arg(payload)));
            QVERIFY(near(row["file_mib"].toDouble(), bytes / 1048576.0));
            const QString peer = "reprefill@" + QString::number(depth);
            if (by_name.contains(peer))
                QVERIFY(near(row["reprefill_ratio"].toDouble(), by_name[peer]["p50_ms"].toDouble() / p50));
            else
                QVERIFY(row["reprefill_ratio"].isNull());
            if (kind == "wake") {
                const QJsonObject c = row["wake_check"].toObject();
                QCOMPARE(c["restored_cells"].toInteger(), depth);
                QCOMPARE(c["recomputed_cells"].toInteger(), qint64(0));
                QVERIFY(c["logits_bit_identical"].toBool());
                QVERIFY(c["first_step_ms"].toDouble() > 0 && c["first_step_ms_never_parked"].toDouble() > 0);
                const QString park = "park@" + QString::number(depth);
                if (by_name.contains(park)) QCOMPARE(by_name[park]["file_bytes"].toDouble(), bytes);
            }
        }
    }

    // A deep park run split in two: the first run keeps its park file (named by depth), the
    // second wakes context 0 from it instead of prefilling, times the reprefill row over the
    // file's own tokens, and checks a wake against the woken context.
    void splitParkRun() {
        ARBOR_REQUIRE_PATH(stories());
        const QString dir = tmp_.filePath("split");
        QVERIFY(QDir().mkpath(dir));
        const QStringList base = oneRepJson();
        const Run first = cli(base + QStringList{"--rows", "park@300,wake@300", "--keep-park", "--park-dir", dir});
        QVERIFY2(first.code == 0, first.err.constData());
        const QString kept = dir + "/arbor-bench-300.park";
        QCOMPARE(QDir(dir).entryList(QDir::Files), QStringList{"arbor-bench-300.park"});
        QVERIFY2(first.err.contains("bench: kept park file " + kept.toUtf8()), first.err.constData());
        const QJsonObject o1 = QJsonDocument::fromJson(first.out).object();
        QCOMPARE(o1["park_files_kept"].toBool(), true);
        QVERIFY(o1["context_woken_from"].isNull());
        QVERIFY(first.err.contains("context 1/1: 300 cells in "));  // built by prefilling

        const Run second = cli(base + QStringList{"--rows", "reprefill@300,wake@300", "--context", kept, "--park-dir", dir});
        QVERIFY2(second.code == 0, second.err.constData());
        QVERIFY2(second.err.contains("context 1/1: 300 cells woken in "), second.err.constData());
        QVERIFY(second.err.contains("from " + kept.toUtf8() + " (not prefilled)"));
        const QJsonObject o2 = QJsonDocument::fromJson(second.out).object();
        QCOMPARE(o2["context_woken_from"].toString(), kept);
        QCOMPARE(o2["park_files_kept"].toBool(), false);
        QHash<QString, QJsonObject> rows;
        for (const auto& v : o2["rows"].toArray()) rows[v.toObject()["row"].toString()] = v.toObject();
        QVERIFY(rows.contains("reprefill@300") && rows.contains("wake@300"));
        QCOMPARE(rows["reprefill@300"]["passes_per_rep"].toDouble(), 2.0);  // 300 tokens in passes of 256
        const QJsonObject c = rows["wake@300"]["wake_check"].toObject();
        QCOMPARE(c["restored_cells"].toInteger(), 300);
        QCOMPARE(c["recomputed_cells"].toInteger(), 0);
        QCOMPARE(c["logits_bit_identical"].toBool(), true);
        QCOMPARE(c["reference_woken_from"].toString(), kept);
        // The second run's own park file is gone; the kept one stays.
        QCOMPARE(QDir(dir).entryList(QDir::Files), QStringList{"arbor-bench-300.park"});

        // A file of another depth, a truncated file and a file that is no park file are refused
        // before any row runs.
        const Run deeper = cli(base + QStringList{"--rows", "reprefill@200", "--context", kept});
        QCOMPARE(deeper.code, 1);
        QVERIFY2(lastLine(deeper.err).contains("it holds 300 cells, not the 200 this run needs"),
                 deeper.err.constData());
        QFile whole(kept);
        QVERIFY(whole.open(QIODevice::ReadOnly));
        const QString cut = dir + "/cut.park";
        QFile part(cut);
        QVERIFY(part.open(QIODevice::WriteOnly));
        part.write(whole.read(whole.size() / 2));
        part.close();
        const Run truncated = cli(base + QStringList{"--rows", "reprefill@300", "--context", cut});
        QCOMPARE(truncated.code, 1);
        QVERIFY2(lastLine(truncated.err).contains("its cells were not restored (truncated or corrupt"), truncated.err.constData());
        const Run notPark = cli(base + QStringList{"--rows", "reprefill@300", "--context", stories()});
        QCOMPARE(notPark.code, 1);
        QVERIFY2(lastLine(notPark.err).contains("not a park file"), notPark.err.constData());
    }

    // Many deep contexts over two runs: the first parks every context it builds
    // (--save-contexts), the second wakes contexts 1 and 2 from those files and builds only the
    // third. A woken context must have its own depth, and --context may not name more files
    // than the rows read contexts.
    void savedContexts() {
        ARBOR_REQUIRE_PATH(stories());
        const QString dir = tmp_.filePath("saved");
        QVERIFY(QDir().mkpath(dir));
        const QStringList base = oneRepJson();
        const Run first = cli(base + QStringList{"--rows", "read5x2@200", "--save-contexts", dir});
        QVERIFY2(first.code == 0, first.err.constData());
        const QString c1 = dir + "/arbor-bench-c1-200.park", c2 = dir + "/arbor-bench-c2-200.park";
        QCOMPARE(QDir(dir).entryList(QDir::Files), (QStringList{"arbor-bench-c1-200.park", "arbor-bench-c2-200.park"}));
        QVERIFY2(first.err.contains("bench: saved context to " + c2.toUtf8()), first.err.constData());
        const QJsonObject o1 = QJsonDocument::fromJson(first.out).object();
        QCOMPARE(o1["contexts_saved"].toArray().size(), 2);
        QCOMPARE(o1["contexts_saved"].toArray()[1].toString(), c2);
        QVERIFY(o1["contexts_woken_from"].toArray().isEmpty());

        const Run second = cli(base + QStringList{"--rows", "read5x3@200", "--context", c1 + "," + c2});
        QVERIFY2(second.code == 0, second.err.constData());
        QVERIFY2(second.err.contains("context 1/3: 200 cells woken in "), second.err.constData());
        QVERIFY(second.err.contains("context 2/3: 200 cells woken in "));
        QVERIFY(second.err.contains("from " + c2.toUtf8() + " (not prefilled)"));
        QVERIFY(second.err.contains("context 3/3: 200 cells in "));  // built
        const QJsonObject o2 = QJsonDocument::fromJson(second.out).object();
        QCOMPARE(o2["context_woken_from"].toString(), c1);
        QCOMPARE(o2["contexts_woken_from"].toArray().size(), 2);
        const QJsonArray rows = o2["rows"].toArray();
        QCOMPARE(rows.size(), 1);
        QCOMPARE(rows[0].toObject()["row"].toString(), QString("read5x3@200"));
        QCOMPARE(rows[0].toObject()["reps"].toInt(), 1);

        // Context 2 of another depth (its deepest row is read5x2@100) is refused, naming the file.
        const Run shallower = cli(base + QStringList{"--rows", "read5@200,read5x2@100", "--context", c1 + "," + c2});
        QCOMPARE(shallower.code, 1);
        QVERIFY2(lastLine(shallower.err).contains("--context " + c2.toUtf8() + " (context 2): it holds 200 cells, not the 100"),
                 shallower.err.constData());
        const Run tooMany = cli(base + QStringList{"--rows", "read5@200", "--context", c1 + "," + c2});
        QCOMPARE(tooMany.code, 1);
        QVERIFY2(lastLine(tooMany.err).contains("--context gives 2 park files, and the rows read 1 context"),
                 tooMany.err.constData());
        const Run gap = cli(base + QStringList{"--rows", "read5x2@200", "--context", c1 + ","});
        QCOMPARE(gap.code, 1);
        QVERIFY2(lastLine(gap.err).contains("--context needs a park file"), gap.err.constData());
        const Run noDir = cli(base + QStringList{"--rows", "read5@200", "--save-contexts", dir + "/missing"});
        QCOMPARE(noDir.code, 1);
        QVERIFY2(lastLine(noDir.err).contains("--save-contexts " + dir.toUtf8() + "/missing: No such file or directory"),
                 noDir.err.constData());
    }

    // Rows past the model's training context are allowed and noted before any work starts
    // (checked on a run that then stops at --profile, which the CPU backend refuses, so that no
    // 2048-cell context is built).
    void pastTrainingContext() {
        ARBOR_REQUIRE_PATH(stories());
        const Run r = cli({"bench", "-m", stories(), "--backend", "cpu", "--rows", "decode@100,decode@1990,read50@2000",
                           "--profile", tmp_.filePath("trace.json")});
        QCOMPARE(r.code, 1);
        const QStringList err = QString::fromUtf8(r.err).trimmed().split('\n');
        QCOMPARE(err.size(), 2);
        QCOMPARE(err[0], QString("note: rows decode@1990, read50@2000 run past the model's training context of 2048 "
                                 "cells (allowed: the cost does not depend on it)"));
        QVERIFY(err[1].startsWith("error: --profile: the cpu backend has no kernel profiler"));
    }

    void usageErrors_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("says");
        const QString m = stories();
        const QStringList cpu = {"bench", "-m", m, "--backend", "cpu"};
        QTest::newRow("unknown row") << cpu + QStringList{"--rows", "bogus@8"} << 1 << "unknown row 'bogus@8'";
        QTest::newRow("row without depth") << cpu + QStringList{"--rows", "decode8"} << 1 << "unknown row 'decode8'";
        QTest::newRow("no tokens") << cpu + QStringList{"--rows", "read0@8"} << 1 << "the token count in 'read0@8'";
        QTest::newRow("depth beyond the limit") << cpu + QStringList{"--rows", "decode@2000000"} << 1 << "outside 0..1048576";
        QTest::newRow("too many contexts") << cpu + QStringList{"--rows", "read5x65@8"} << 1 << "the context count";
        QTest::newRow("duplicate row") << cpu + QStringList{"--rows", "decode@8,decode@8"} << 1 << "listed twice";
        QTest::newRow("depths without decode") << cpu + QStringList{"--rows", "read50@8", "--depths", "8"} << 1 << "--depths";
        QTest::newRow("bad depth") << cpu + QStringList{"--depths", "8,x"} << 1 << "the depth in 'x'";
        QTest::newRow("zero reps") << cpu + QStringList{"--reps", "0"} << 1 << "--reps";
        QTest::newRow("bad backend") << QStringList{"bench", "-m", m, "--backend", "tpu"} << 1 << "--backend";
        QTest::newRow("unknown flag") << cpu + QStringList{"--bogus"} << 1 << "--bogus";
        QTest::newRow("missing model") << QStringList{"bench", "--backend", "cpu"} << 1 << "missing -m";
        QTest::newRow("bad model path") << QStringList{"bench", "-m", "/nonexistent.gguf", "--backend", "cpu"} << 1
                                        << "/nonexistent.gguf";
        QTest::newRow("profile on the cpu") << cpu + QStringList{"--rows", "decode@8", "--profile", "/tmp/x.json"} << 1
                                            << "no kernel profiler";
        QTest::newRow("park without depth") << cpu + QStringList{"--rows", "park@"} << 1
                                            << "the depth in 'park@' must be a whole number";
        QTest::newRow("wake at depth 0") << cpu + QStringList{"--rows", "wake@0"} << 1 << "outside 1..1048576";
        QTest::newRow("bare reprefill") << cpu + QStringList{"--rows", "reprefill"} << 1 << "unknown row 'reprefill'";
        QTest::newRow("park with a count") << cpu + QStringList{"--rows", "park5@8"} << 1 << "unknown row 'park5@8'";
        QTest::newRow("park dir missing") << cpu + QStringList{"--rows", "park@8", "--park-dir", "/nonexistent"} << 1
                                          << "--park-dir /nonexistent: No such file or directory";
        QTest::newRow("park dir a file") << cpu + QStringList{"--rows", "wake@8", "--park-dir", m} << 1 << "not a directory";
        QTest::newRow("park dir without park rows") << cpu + QStringList{"--rows", "reprefill@8", "--park-dir", "/tmp"}
                                                    << 1 << "--park-dir is where park@D and wake@D rows write";
        QTest::newRow("keep-park without park rows") << cpu + QStringList{"--rows", "reprefill@8", "--keep-park"} << 1
                                                     << "--keep-park keeps the files of park@D and wake@D rows";
        QTest::newRow("context missing") << cpu + QStringList{"--rows", "reprefill@8", "--context", "/nonexistent.park"}
                                         << 1 << "--context /nonexistent.park: No such file or directory";
        QTest::newRow("context a directory") << cpu + QStringList{"--rows", "reprefill@8", "--context", "/tmp"} << 1
                                             << "--context /tmp: not a file";
        QTest::newRow("profile of no decode row") << cpu + QStringList{"--rows", "wake@8", "--profile", "/tmp/x.json"}
                                                  << 1 << "--profile profiles a decode or append row";
    }
    void usageErrors() {
        QFETCH(QStringList, args);
        QFETCH(int, code);
        QFETCH(QString, says);
        if (args.contains(stories())) ARBOR_REQUIRE_PATH(stories());
        const Run r = cli(args);
        QCOMPARE(r.code, code);
        QVERIFY(r.out.isEmpty());
        QVERIFY2(lastLine(r.err).startsWith("error: "), r.err.constData());
        QVERIFY2(lastLine(r.err).contains(says), r.err.constData());
    }

    // Without a usable GPU, --backend gpu (the default) is a runtime failure that says why.
    void noGpu() {
        ARBOR_REQUIRE_PATH(stories());
        const Run g = cli({"gpu", "--json"});
        QCOMPARE(g.code, 0);
        if (!QJsonDocument::fromJson(g.out).object()["devices"].toArray().isEmpty()) QSKIP("this machine has a GPU");
        const Run r = cli({"bench", "-m", stories(), "--rows", "decode@8"});
        QCOMPARE(r.code, 2);
        QVERIFY(r.out.isEmpty());
        QVERIFY2(lastLine(r.err).startsWith("error: the GPU backend is not available"), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestBenchCli)
#include "test_bench_cli.moc"
