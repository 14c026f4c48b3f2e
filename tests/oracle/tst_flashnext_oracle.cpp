// Our logits against the independent float64 oracle tests/oracle/flashnext_oracle.py (numpy,
// written from docs/MODEL-flashnext.md alone), at every position of a prompt:
//   per position p: max_v |ours - ref| / max_v |ref| < 1e-3, with f32 KV cells; and with the
//   default f16 cells, the oracle rounding K, V and k_I to half where the cells store them
//   (otherwise the half keys move index scores enough to flip near-tied block selections).
// Rows:
//  - the oracle's self-check: the published random qwen3moe file and a synthesized tiny qwen3moe
//    (the oracle's shared core: reader, RMSNorm, NEOX RoPE, GQA attention, router and experts);
//  - `arbor-cli synth --arch flashnext --shape tiny` with F32 and BF16 weights, on a prompt
//    longer than budget + 3 tokens, so the indexer's block selection runs. The oracle also
//    reports how far dense attention would be from the selected one; the row requires that to
//    be far above the bound, so a comparison that passes proves the selection matches.
//  - the same on a copy whose norm weights are random and whose eps_hc differs from eps_rms, so a
//    skipped norm weight or a misplaced epsilon cannot agree by accident.
#include "test_data.hpp"

#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

namespace {

struct Run {
    int code = -1;
    QByteArray out, err;
};

Run run(const QString& program, const QStringList& args, int timeout_ms = 120000) {
    QProcess p;
    p.start(program, args);
    Run r;
    if (!p.waitForFinished(timeout_ms)) {
        p.kill();
        p.waitForFinished();
        r.err = "timed out: " + program.toUtf8();
        return r;
    }
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

QString python() { return qEnvironmentVariable("ARBOR_PYTHON", "/usr/bin/python3"); }

// The value of "name=<number>" in the oracle's output, or NaN.
double reported(const QString& out, const QString& name) {
    const auto m = QRegularExpression(name + QStringLiteral("=([0-9.eE+-]+|nan)")).match(out);
    return m.hasMatch() ? m.captured(1).toDouble() : qQNaN();
}

// 326 tokens with the synth models' byte-level BPE vocabulary (1024 entries): well past budget + 3
// (67 for `tiny`), and across the 256-cell chunk boundary of the attention contract.
const char* kPrompt =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. "
    "One day, she saw a big, red ball under a tall tree. She ran to it and kicked it as hard as she "
    "could. The ball flew over the fence and into the garden of an old man who grew tomatoes. He came "
    "out holding the ball, frowned at the broken stems, and then he laughed. \"You have a strong leg,\" "
    "he said. \"Help me tie these plants back up, and you can have it.\" Lily worked with him until "
    "sunset, learning the names of seven kinds of beans, three herbs and one very patient cat.";

}  // namespace

class TestFlashnextOracle : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        if (qEnvironmentVariable("ARBOR_CLI").isEmpty()) QSKIP("ARBOR_CLI is not set (run through ctest)");
    }

    void compare_data() {
        // A shared-data path, or "synth:ARCH:SHAPE:TYPE[:perturbed]" (perturbed: perturb_gguf.py
        // randomises the norm weights and sets eps_hc = 1e-2, away from eps_rms = 1e-6).
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("kv");     // the cells' element type: f32, or f16 (rounding emulated)
        QTest::addColumn<double>("bound");
        QTest::newRow("qwen3moe bf16 (oracle self-check)") << "quant/random-qwen3moe-bf16.gguf" << "f32" << 1e-3;
        QTest::newRow("qwen3moe tiny F32 (oracle self-check)") << "synth:qwen3moe:tiny:F32" << "f32" << 1e-3;
        QTest::newRow("flashnext tiny F32") << "synth:flashnext:tiny:F32" << "f32" << 1e-3;
        QTest::newRow("flashnext tiny BF16") << "synth:flashnext:tiny:BF16" << "f32" << 1e-3;
        QTest::newRow("flashnext tiny BF16, f16 kv") << "synth:flashnext:tiny:BF16" << "f16" << 1e-3;
        QTest::newRow("flashnext tiny F32, norms and eps_hc perturbed")
            << "synth:flashnext:tiny:F32:perturbed" << "f32" << 1e-3;
    }

    void compare() {
        QFETCH(QString, model);
        QFETCH(QString, kv);
        QFETCH(double, bound);
        const QString cli = qEnvironmentVariable("ARBOR_CLI");
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QString path;
        const bool synth = model.startsWith("synth:");
        if (synth) {
            const QStringList part = model.split(':');
            path = dir.filePath("model.gguf");
            const Run s = run(cli, {"synth", "--arch", part[1], "--shape", part[2], "--type", part[3], "--seed", "7",
                                    "--threads", "2", "-o", path});
            QVERIFY2(s.code == 0, qPrintable("arbor-cli synth failed: " + QString::fromUtf8(s.err)));
            if (part.value(4) == "perturbed") {
                const QString perturbed = dir.filePath("perturbed.gguf");
                const Run p = run(python(), {QString(ARBOR_ORACLE_DIR) + "/perturb_gguf.py", path, perturbed, "--seed", "3",
                                             "--set-f32", part[1] + ".hyper_connection.epsilon=0.01"});
                QVERIFY2(p.code == 0, qPrintable("perturb_gguf.py failed: " + QString::fromUtf8(p.out + p.err)));
                path = perturbed;
            }
        } else {
            path = arbor::test::sharedData() + "/" + model;
            ARBOR_REQUIRE_PATH(path);
        }
        const Run l = run(cli, {"logits", "-m", path, "-p", kPrompt, "--all", "--kv-type", kv, "-n", "0",
                                "--threads", "2"});
        QVERIFY2(l.code == 0, qPrintable("arbor-cli logits failed: " + QString::fromUtf8(l.err)));
        const QString ours = dir.filePath("ours.json");
        {
            QFile f(ours);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(l.out);
        }
        QStringList oracle_args{QString(ARBOR_ORACLE_DIR) + "/flashnext_oracle.py", "--model", path, "--ours", ours,
                                "--bound", QString::number(bound)};
        if (kv == "f16") oracle_args << "--kv-f16";
        const Run py = run(python(), oracle_args, 240000);
        const QString out = QString::fromUtf8(py.out + py.err).trimmed();
        const QStringList lines = out.split('\n');
        for (const QString& line : lines)
            if (line.startsWith("max_rel_err=") || line.startsWith("selecting_positions=")) qInfo("%s", qPrintable(line));
        QVERIFY2(py.code == 0, qPrintable(out));
        const double rel = reported(out, "max_rel_err");
        QVERIFY2(rel < bound, qPrintable(out));
        if (model.startsWith("synth:flashnext")) {
            // Selection really ran, and it matters far more than the bound.
            QVERIFY2(reported(out, "selecting_positions") > 0, qPrintable(out));
            QVERIFY2(reported(out, "selection_effect") > 10 * bound, qPrintable(out));
        }
    }
};

QTEST_GUILESS_MAIN(TestFlashnextOracle)
#include "tst_flashnext_oracle.moc"
