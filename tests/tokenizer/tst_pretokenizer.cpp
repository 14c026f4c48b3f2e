// The hand-written pre-tokenizer matchers against an independent oracle: the models' regular
// expressions run by Python's `re` with the Unicode classes spelled out (pretok_oracle.py), on
// random strings drawn from every character class the expressions care about. One family per
// row; all rows share one Python run.
#include "test_data.hpp"

#include "tokenizer/pretokenizer.hpp"
#include "tokenizer/unicode_props.hpp"
#include "tokenizer/utf8.hpp"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QtTest>
#include <random>

using namespace arbor;

namespace {

const QStringList kFamilies{"gpt-2",  "llama3", "qwen2",  "starcoder",  "falcon",     "default",
                            "gpt-4o", "deepseek-v3", "deepseek-coder", "tekken", "qwen35", "seed-coder",
                            "bailingmoe", "ufakzeka", "minicpm5", "bloom", "viking"};
constexpr int kStringsPerFamily = 300;

std::string random_text(std::mt19937& rng) {
    static const std::vector<std::string> kPieces = {
        "a", "b", "z", "A", "Q", "Z", "hello", "World", "HTTPServer", "iPhone", "0", "7", "42", "12345", "3.14",
        " ", " ", "  ", "\t", "\n", "\r\n", "\n\n", "\v", "\f", "'", "'s", "'T", "'re", "'LL", "'ve", "'d", "'m",
        "!", "?", ".", ",", "...", "-", "_", "/", "\\", "~", "$", "+", "<", "=", ">", "^", "`", "|", "@", "#", "%",
        "&", "*", "(", ")", "[", "]", "{", "}", "\"", ":", ";",
        "\xC3\xA9", "\xC3\x84", "\xC3\x9F", "\xC5\xBF", "\xCE\xA9", "\xCF\x89", "\xD0\x96", "\xD0\xB6",
        "e\xCC\x81", "\xCC\x88", "\xE0\xA4\x95\xE0\xA4\xBF", "\xD8\xB9\xD8\xB1\xD8\xA8",
        "\xE4\xB8\xAD", "\xE6\x96\x87", "\xE3\x81\x82", "\xE3\x82\xA2", "\xED\x95\x9C", "\xEF\xBC\x81", "\xEF\xBC\xA1",
        "\xD9\xA3", "\xC2\xB2", "\xE2\x85\xAB", "\xE2\x82\xAC", "\xC2\xA9", "\xC2\xBD", "\xF0\x9F\xA6\x99",
        "\xF0\x9F\x98\x81", "\xC2\xA0", "\xE3\x80\x80", "\xE2\x80\x83", "\xC2\x85", "\xE2\x80\xA8", "\xE2\x80\x8D",
        "\xEE\x80\x80", "\xE2\x80\x9C", "\xE3\x80\x82", "\x01", "\x7F"};
    std::uniform_int_distribution<int> len(0, 24);
    std::uniform_int_distribution<size_t> pick(0, kPieces.size() - 1);
    std::string s;
    for (int n = len(rng); n > 0; --n) s += kPieces[pick(rng)];
    return s;
}

std::vector<std::string> split_cpp(const std::string& family, const std::string& text) {
    auto pt = tok::pre_tokenizer_for(family);
    if (!pt) return {"<error: " + pt.message() + ">"};
    const auto cps = tok::utf8_to_cpts(text);
    std::vector<uint8_t> props(cps.size());
    for (size_t i = 0; i < cps.size(); ++i) props[i] = tok::cpt_props(cps[i]);
    std::vector<uint32_t> ends;
    tok::pre_tokenize(*pt, tok::CpText{cps.data(), props.data()}, cps.size(), ends);
    std::vector<std::string> out;
    size_t b = 0;
    for (uint32_t e : ends) {
        std::string piece;
        for (size_t i = b; i < e; ++i) tok::utf8_append(piece, cps[i]);
        out.push_back(piece);
        b = e;
    }
    return out;
}

QString show(const std::vector<std::string>& v) {
    QStringList parts;
    for (const auto& s : v) parts << "[" + QString::fromUtf8(s.data(), qsizetype(s.size())).toHtmlEscaped() + "]";
    return parts.join(' ');
}

}  // namespace

class TestPreTokenizer : public QObject {
    Q_OBJECT
    std::map<QString, std::vector<std::string>> inputs_;
    QJsonObject oracle_;
    QString oracle_error_;

private slots:
    void initTestCase() {
        std::mt19937 rng(20261129);
        QJsonObject req;
        for (const QString& f : kFamilies) {
            auto& texts = inputs_[f];
            // Fixed cases first: the edges each expression is about.
            texts = {"", " ", "Hello world", "HELLOworld helloWORLD I'm", "a  b", "x \n\n y  ", "'S 'sO",
                     "\xC3\xA9" "AB", "1234567 \xD9\xA3\xD9\xA3", "~~abc ~", "\xE4\xB8\xAD\xE6\x96\x87" "abc"};
            while (int(texts.size()) < kStringsPerFamily) texts.push_back(random_text(rng));
            QJsonArray arr;
            for (const auto& t : texts) arr.append(QString::fromUtf8(t.data(), qsizetype(t.size())));
            req[f] = arr;
        }
        QString python = qEnvironmentVariable("ARBOR_PYTHON");
        if (python.isEmpty()) python = "/usr/bin/python3";
        QProcess p;
        p.start(python, {test::sourceDir() + "/tests/tokenizer/pretok_oracle.py"});
        p.write(QJsonDocument(req).toJson(QJsonDocument::Compact));
        p.closeWriteChannel();
        if (!p.waitForFinished(120000) || p.exitCode() != 0) {
            oracle_error_ = "pretok_oracle.py failed: " + QString::fromUtf8(p.readAllStandardError());
            return;
        }
        oracle_ = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
    }

    void matchesOracle_data() {
        QTest::addColumn<QString>("family");
        for (const QString& f : kFamilies) QTest::newRow(qPrintable(f)) << f;
    }

    void matchesOracle() {
        QFETCH(QString, family);
        QVERIFY2(oracle_error_.isEmpty(), qPrintable(oracle_error_));
        const QJsonArray want = oracle_.value(family).toArray();
        const auto& texts = inputs_[family];
        QCOMPARE(want.size(), qsizetype(texts.size()));
        for (size_t i = 0; i < texts.size(); ++i) {
            std::vector<std::string> expected;
            for (const auto& v : want[qsizetype(i)].toArray()) expected.push_back(v.toString().toStdString());
            const auto got = split_cpp(family.toStdString(), texts[i]);
            if (got != expected) {
                QFAIL(qPrintable(QString("string %1 %2\n  oracle: %3\n  ours:   %4")
                                     .arg(i)
                                     .arg(show({texts[i]}))
                                     .arg(show(expected))
                                     .arg(show(got))));
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestPreTokenizer)
#include "tst_pretokenizer.moc"
