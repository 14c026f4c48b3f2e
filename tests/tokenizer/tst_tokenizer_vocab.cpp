// The reference test vectors: every .inp/.out pair in ../shared/data/vocab (both variants)
// whose vocabulary is present must give exactly the expected ids (add_special = false,
// parse_special = false), 46 strings of 46. The qwen2 pair runs on ggml-vocab-qwen3.gguf and
// the llama-bpe pair on the vocabulary built from the Llama-3 tokenizer.json (vocab_files.hpp).
// Each string also round-trips: detokenize(tokenize(s)) == s (not for WordPiece, which
// lowercases and drops accents).
#include "vocab_files.hpp"

#include <QtTest>
#include <sstream>

using namespace arbor;

namespace {

const char* kSeparator = "\n__ggml_vocab_test__\n";

std::vector<std::string> read_inputs(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    const std::string all = f.readAll().toStdString();
    std::vector<std::string> out;
    size_t pos = 0;
    for (size_t m; (m = all.find(kSeparator, pos)) != std::string::npos; pos = m + std::strlen(kSeparator)) {
        out.push_back(all.substr(pos, m - pos));
    }
    return out;
}

std::vector<std::vector<TokenId>> read_outputs(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    std::vector<std::vector<TokenId>> out;
    std::istringstream in(f.readAll().toStdString());
    for (std::string line; std::getline(in, line);) {
        std::istringstream ls(line);
        std::vector<TokenId> ids;
        for (long v; ls >> v;) ids.push_back(static_cast<TokenId>(v));
        out.push_back(std::move(ids));
    }
    return out;
}

std::string join(const std::vector<TokenId>& ids) {
    std::string s;
    for (TokenId id : ids) {
        if (!s.empty()) s += ' ';
        s += std::to_string(id);
    }
    return s;
}

bool valid_utf8(const std::string& s) { return QString::fromUtf8(s.data(), qsizetype(s.size())).toUtf8().toStdString() == s; }

}  // namespace

class TestTokenizerVocab : public QObject {
    Q_OBJECT
    test::TokenizerCache cache_;
    int pairs_ = 0;

private slots:
    void pairs_data() {
        QTest::addColumn<QString>("inp");
        QTest::addColumn<QString>("gguf");
        const QString dir = test::vocabDir();
        const QStringList variants{"", "inp-out-2025-07-apfel"};
        for (const QString& v : variants) {
            const QString vdir = v.isEmpty() ? dir : dir + "/" + v;
            for (const QString& inp : QDir(vdir).entryList({"*.gguf.inp"}, QDir::Files, QDir::Name)) {
                const QString name = inp.chopped(4);  // ggml-vocab-X.gguf
                QString gguf = dir + "/" + name;
                if (name == "ggml-vocab-qwen2.gguf") gguf = dir + "/ggml-vocab-qwen3.gguf";
                if (name == "ggml-vocab-llama-bpe.gguf") gguf = test::llamaBpePath();
                else if (!QFile::exists(gguf)) continue;  // its vocabulary is not in the shared data
                const QString tag = name.mid(11).chopped(5) + (v.isEmpty() ? "/2025-02" : "/2025-07");
                QTest::newRow(qPrintable(tag)) << vdir + "/" + inp << gguf;
            }
        }
        if (QDir(dir).entryList({"*.gguf.inp"}).isEmpty()) {
            QTest::newRow("missing") << dir + "/ggml-vocab-gpt-2.gguf.inp" << dir + "/ggml-vocab-gpt-2.gguf";
        }
    }

    void pairs() {
        QFETCH(QString, inp);
        QFETCH(QString, gguf);
        ARBOR_REQUIRE_PATH(inp);
        if (gguf == test::llamaBpePath()) {
            bool unavailable = false;
            const QString why = test::ensureLlamaBpe(&unavailable);
            if (!why.isEmpty()) {
                if (unavailable) QSKIP(qPrintable("Llama-3 vocabulary not available: " + why));
                QFAIL(qPrintable(why));
            }
        }
        ARBOR_REQUIRE_PATH(gguf);
        QString error;
        const Tokenizer* tok = cache_.get(gguf, &error);
        QVERIFY2(tok, qPrintable(error));

        const auto inputs = read_inputs(inp);
        const auto expected = read_outputs(QString(inp).replace(".inp", ".out"));
        QCOMPARE(inputs.size(), size_t(46));
        QCOMPARE(expected.size(), inputs.size());
        int pass = 0;
        QString first_failure;
        for (size_t i = 0; i < inputs.size(); ++i) {
            const auto got = tok->tokenize(inputs[i]);
            if (got == expected[i]) {
                ++pass;
            } else if (first_failure.isEmpty()) {
                first_failure = QString("string %1 %2:\n  expected %3\n  got      %4")
                                    .arg(i)
                                    .arg(QString::fromStdString(inputs[i]).toHtmlEscaped().left(60))
                                    .arg(QString::fromStdString(join(expected[i])))
                                    .arg(QString::fromStdString(join(got)));
            }
        }
        qInfo("%s: %d/%zu", qPrintable(QFileInfo(inp).fileName()), pass, inputs.size());
        QVERIFY2(pass == int(inputs.size()), qPrintable(first_failure));
        ++pairs_;

        if (tok->model() == TokenizerModel::WordPiece) return;
        for (const std::string& s : inputs) {
            if (!valid_utf8(s)) continue;
            const auto ids = tok->tokenize(s);
            QCOMPARE(tok->detokenize(ids), s);
        }
    }

    void cleanupTestCase() { qInfo("vocabulary pairs passing: %d", pairs_); }
};

QTEST_GUILESS_MAIN(TestTokenizerVocab)
#include "tst_tokenizer_vocab.moc"
