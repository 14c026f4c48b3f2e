// arbor-cli tokenize / detokenize: output format, -f byte for byte (checked against the
// reference vectors), -p literal, --bos, --special, --no-special, and the error contract
// (exit 1, one "error:" line, nothing on stdout).
#include "cli_run.hpp"
#include "vocab_files.hpp"

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

using namespace arbor;

namespace {

using Run = arbor::test::CliRun;

Run cli(const QStringList& args) { return arbor::test::runCli(args, 60000); }

QString vocab(const char* name) { return test::vocabDir() + "/" + name; }

}  // namespace

class TestTokenizerCli : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        if (qEnvironmentVariable("ARBOR_CLI").isEmpty()) QSKIP("ARBOR_CLI is not set (run through ctest)");
        ARBOR_REQUIRE_PATH(vocab("ggml-vocab-gpt-2.gguf"));
        ARBOR_REQUIRE_PATH(vocab("ggml-vocab-qwen3.gguf"));
        ARBOR_REQUIRE_PATH(vocab("ggml-vocab-llama-spm.gguf"));
    }

    void promptFormat() {
        Run r = cli({"tokenize", "-m", vocab("ggml-vocab-gpt-2.gguf"), "-p", "Hello world"});
        QCOMPARE(r.code, 0);
        QCOMPARE(r.out, QByteArray("15496 995\n"));
        r = cli({"tokenize", "-m", vocab("ggml-vocab-gpt-2.gguf"), "-p", ""});
        QCOMPARE(r.code, 0);
        QCOMPARE(r.out, QByteArray("\n"));
    }

    void promptIsLiteral() {
        // No escape processing: backslash-n stays two characters, and a prompt may look like a flag.
        Run lit = cli({"tokenize", "-m", vocab("ggml-vocab-gpt-2.gguf"), "-p", "a\\nb"});
        Run nl = cli({"tokenize", "-m", vocab("ggml-vocab-gpt-2.gguf"), "-p", "a\nb"});
        QCOMPARE(lit.code, 0);
        QCOMPARE(nl.code, 0);
        QVERIFY(lit.out != nl.out);
        Run flag = cli({"tokenize", "-m", vocab("ggml-vocab-gpt-2.gguf"), "-p", "--special"});
        QTemporaryDir dir;
        QFile f(dir.filePath("flag.txt"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("--special");
        f.close();
        Run file = cli({"tokenize", "-m", vocab("ggml-vocab-gpt-2.gguf"), "-f", f.fileName()});
        QCOMPARE(flag.code, 0);
        QCOMPARE(flag.out, file.out);
        QCOMPARE(flag.out.count(' '), 1);  // "--" "special": two tokens
    }

    void fileByteForByte_data() {
        QTest::addColumn<int>("index");
        for (int i : {0, 6, 10, 18, 21, 32, 45}) QTest::newRow(qPrintable(QString::number(i))) << i;
    }
    void fileByteForByte() {
        QFETCH(int, index);
        QFile inp(vocab("ggml-vocab-gpt-2.gguf.inp")), out(vocab("ggml-vocab-gpt-2.gguf.out"));
        QVERIFY(inp.open(QIODevice::ReadOnly) && out.open(QIODevice::ReadOnly));
        const QByteArray data = inp.readAll();
        const QByteArray sep("\n__ggml_vocab_test__\n");
        QList<QByteArray> cases;
        for (qsizetype pos = 0, m; (m = data.indexOf(sep, pos)) >= 0; pos = m + sep.size()) cases << data.mid(pos, m - pos);
        const QList<QByteArray> lines = out.readAll().split('\n');
        QTemporaryDir dir;
        const QString path = dir.filePath("in.txt");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(cases[index]);
        f.close();
        Run r = cli({"tokenize", "-m", vocab("ggml-vocab-gpt-2.gguf"), "-f", path});
        QCOMPARE(r.code, 0);
        QCOMPARE(r.out, lines[index].trimmed() + "\n");
    }

    void bosAndSpecial() {
        Run r = cli({"tokenize", "-m", vocab("ggml-vocab-llama-spm.gguf"), "-p", "Hello world", "--bos"});
        QCOMPARE(r.code, 0);
        QCOMPARE(r.out, QByteArray("1 15043 3186\n"));
        r = cli({"tokenize", "-m", vocab("ggml-vocab-qwen3.gguf"), "-p", "<|im_start|>user", "--special"});
        QCOMPARE(r.code, 0);
        QCOMPARE(r.out, QByteArray("151644 872\n"));
        r = cli({"tokenize", "-m", vocab("ggml-vocab-qwen3.gguf"), "-p", "<|im_start|>user"});
        QCOMPARE(r.code, 0);
        QVERIFY(!r.out.startsWith("151644"));
    }

    void detokenize() {
        Run r = cli({"detokenize", "-m", vocab("ggml-vocab-qwen3.gguf"), "151644", "872", "198"});
        QCOMPARE(r.code, 0);
        QCOMPARE(r.out, QByteArray("<|im_start|>user\n"));
        r = cli({"detokenize", "-m", vocab("ggml-vocab-qwen3.gguf"), "151644", "872", "--no-special"});
        QCOMPARE(r.code, 0);
        QCOMPARE(r.out, QByteArray("user"));
        // Round trip through both commands, bytes exact.
        const QByteArray text = "Caf\xC3\xA9 \xF0\x9F\xA6\x99\r\n\ttabs  and  spaces ";
        Run t = cli({"tokenize", "-m", vocab("ggml-vocab-gpt-2.gguf"), "-p", QString::fromUtf8(text)});
        QCOMPARE(t.code, 0);
        QStringList args{"detokenize", "-m", vocab("ggml-vocab-gpt-2.gguf")};
        args << QString::fromUtf8(t.out.trimmed()).split(' ');
        Run d = cli(args);
        QCOMPARE(d.code, 0);
        QCOMPARE(d.out, text);
        // The empty list prints nothing.
        d = cli({"detokenize", "-m", vocab("ggml-vocab-gpt-2.gguf")});
        QCOMPARE(d.code, 0);
        QCOMPARE(d.out, QByteArray());
    }

    void errors_data() {
        QTest::addColumn<QStringList>("args");
        const QString g = vocab("ggml-vocab-gpt-2.gguf");
        QTest::newRow("no model") << QStringList{"tokenize", "-p", "x"};
        QTest::newRow("no text") << QStringList{"tokenize", "-m", g};
        QTest::newRow("both texts") << QStringList{"tokenize", "-m", g, "-p", "x", "-f", g};
        QTest::newRow("missing file") << QStringList{"tokenize", "-m", g, "-f", "/nonexistent/file.txt"};
        QTest::newRow("missing model") << QStringList{"tokenize", "-m", "/nonexistent/m.gguf", "-p", "x"};
        QTest::newRow("not a gguf") << QStringList{"tokenize", "-m", vocab("ggml-vocab-gpt-2.gguf.inp"), "-p", "x"};
        QTest::newRow("unknown flag") << QStringList{"tokenize", "-m", g, "-p", "x", "--frobnicate"};
        QTest::newRow("bad id") << QStringList{"detokenize", "-m", g, "12", "abc"};
        QTest::newRow("id out of range") << QStringList{"detokenize", "-m", g, "50257"};
        QTest::newRow("negative id") << QStringList{"detokenize", "-m", g, "-1"};
        QTest::newRow("detok no model") << QStringList{"detokenize", "1"};
    }
    void errors() {
        QFETCH(QStringList, args);
        Run r = cli(args);
        QCOMPARE(r.code, 1);
        QVERIFY(r.out.isEmpty());
        QVERIFY2(r.err.startsWith("error: "), r.err.constData());
        QCOMPARE(r.err.count('\n'), 1);
    }
};

QTEST_GUILESS_MAIN(TestTokenizerCli)
#include "tst_tokenizer_cli.moc"
