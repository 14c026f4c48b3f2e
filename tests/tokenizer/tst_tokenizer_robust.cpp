// Robustness on every vocabulary in ../shared/data/vocab (and the generated Llama-3 one):
// random bytes (including broken UTF-8 and pieces of special-token text) never crash, never
// hang and give in-range ids; random valid UTF-8 round-trips through detokenize and the stream
// detokenizer; long runs of one character class finish quickly.
#include "robust_checks.hpp"
#include "vocab_files.hpp"

#include <QElapsedTimer>
#include <QtTest>

using namespace arbor;

class TestTokenizerRobust : public QObject {
    Q_OBJECT
    test::TokenizerCache cache_;

private slots:
    void vocabularies_data() {
        QTest::addColumn<QString>("gguf");
        const QString dir = test::vocabDir();
        for (const QString& f : QDir(dir).entryList({"*.gguf"}, QDir::Files, QDir::Name)) {
            QTest::newRow(qPrintable(f.mid(11).chopped(5))) << dir + "/" + f;
        }
        if (QDir(dir).entryList({"*.gguf"}).isEmpty()) QTest::newRow("missing") << dir + "/ggml-vocab-gpt-2.gguf";
        if (QFile::exists(test::llamaBpePath())) QTest::newRow("llama-bpe") << test::llamaBpePath();
    }

    void vocabularies() {
        QFETCH(QString, gguf);
        ARBOR_REQUIRE_PATH(gguf);
        QString err;
        const Tokenizer* t = cache_.get(gguf, &err);
        QVERIFY2(t, qPrintable(err));
        QElapsedTimer timer;
        timer.start();
        test::check_robust(t);
        if (QTest::currentTestFailed()) return;
        qInfo("%s: %lld ms", qPrintable(QFileInfo(gguf).fileName()), static_cast<long long>(timer.elapsed()));
        QVERIFY2(timer.elapsed() < 20000, "took too long");
    }
};

QTEST_GUILESS_MAIN(TestTokenizerRobust)
#include "tst_tokenizer_robust.moc"
