// Robustness checks shared by the tokenizer suites (see tst_tokenizer_robust.cpp).
#pragma once

#include <arbor/tokenizer.hpp>

#include <QDir>
#include <QString>
#include <QtTest>
#include <random>

namespace arbor::test {
namespace robust_detail {

inline std::string random_bytes(std::mt19937& rng, const std::vector<std::string>& specials) {
    std::uniform_int_distribution<int> len(0, 160), kind(0, 9), byte(0, 255);
    std::string s;
    for (int n = len(rng); n > 0; --n) {
        const int k = kind(rng);
        if (k == 0 && !specials.empty()) {
            const std::string& sp = specials[rng() % specials.size()];
            s += sp.substr(0, 1 + rng() % sp.size());  // whole or cut short
        } else if (k < 4) {
            s.push_back(static_cast<char>(0x20 + rng() % 95));
        } else {
            s.push_back(static_cast<char>(byte(rng)));
        }
    }
    return s;
}

// The GPT-2 byte alphabet character of a byte, as UTF-8.
inline std::string byte_char(uint8_t b) {
    uint32_t n = 0, cp = b;
    for (uint32_t x = 0; x < 256; ++x) {
        const bool self = (x >= 0x21 && x <= 0x7E) || (x >= 0xA1 && x <= 0xAC) || x >= 0xAE;
        if (!self) {
            if (x == b) cp = 256 + n;
            ++n;
        }
    }
    return QString(QChar(char16_t(cp))).toStdString();
}

// Random valid UTF-8; with `bytes_ok`, only characters whose bytes all have a token (a
// byte-level vocabulary without some byte cannot round-trip it, in the reference either).
inline std::string random_utf8(std::mt19937& rng, bool spm, const std::vector<bool>& bytes_ok) {
    static const uint32_t kRanges[][2] = {{0x20, 0x7E}, {0x09, 0x0D}, {0xA0, 0x24F}, {0x300, 0x36F}, {0x391, 0x3C9},
                                          {0x410, 0x44F}, {0x900, 0x97F}, {0x600, 0x6FF}, {0x3000, 0x30FF},
                                          {0x4E00, 0x4FFF}, {0xAC00, 0xAD00}, {0xFF01, 0xFF5E}, {0x2000, 0x206F},
                                          {0x1F300, 0x1F64F}, {0xE000, 0xE010}, {0x10000, 0x1007F}};
    std::uniform_int_distribution<int> len(0, 40);
    std::string s;
    for (int n = len(rng); n > 0; --n) {
        const auto& r = kRanges[rng() % (sizeof kRanges / sizeof *kRanges)];
        uint32_t cp = r[0] + rng() % (r[1] - r[0] + 1);
        if (spm && cp == 0x2581) cp = 'x';  // SentencePiece's space mark reads back as a space
        const std::string c = QString::fromUcs4(reinterpret_cast<const char32_t*>(&cp), 1).toUtf8().toStdString();
        bool ok = true;
        for (unsigned char b : c) ok = ok && bytes_ok[b];
        if (ok) s += c;
    }
    return s;
}

}  // namespace robust_detail

// Random bytes never crash and give in-range ids; random valid UTF-8 round-trips through
// detokenize and the stream detokenizer; long runs of one class finish. QTest macros: call
// from a test function and return if QTest::currentTestFailed().
inline void check_robust(const Tokenizer* t) {
    using namespace robust_detail;
    const size_t n = t->n_tokens();
    std::vector<std::string> specials;
    for (size_t id = 0; id < n && specials.size() < 64; ++id) {
        const TokenType ty = t->token_type(TokenId(id));
        if (ty == TokenType::Control || ty == TokenType::UserDefined) specials.push_back(t->token_text(TokenId(id)));
    }
    std::mt19937 rng(7);
    for (int i = 0; i < 150; ++i) {
        const std::string s = random_bytes(rng, specials);
        const TokenizeOptions opts{(i & 1) != 0, (i & 2) != 0};
        const auto ids = t->tokenize(s, opts);
        for (TokenId id : ids) QVERIFY2(id >= 0 && size_t(id) < n, qPrintable(QString("id %1").arg(id)));
        (void)t->detokenize(ids);
        StreamDetokenizer st(*t);
        for (TokenId id : ids) (void)st.push(id);
        (void)st.finish();
    }
    if (t->model() != TokenizerModel::WordPiece) {
        const bool spm = t->model() == TokenizerModel::SentencePiece;
        std::vector<bool> bytes_ok(256, true);
        if (!spm) {
            for (int b = 0; b < 256; ++b) bytes_ok[size_t(b)] = t->token_id(byte_char(uint8_t(b))).has_value();
        }
        for (int i = 0; i < 150; ++i) {
            const std::string s = random_utf8(rng, spm, bytes_ok);
            const auto ids = t->tokenize(s);
            const std::string back = t->detokenize(ids);
            QVERIFY2(back == s, qPrintable(QString("round trip of '%1' gave '%2'")
                                                .arg(QString::fromStdString(s), QString::fromStdString(back))));
            StreamDetokenizer st(*t, true, true);
            std::string streamed;
            for (TokenId id : ids) streamed += st.push(id);
            streamed += st.finish();
            QCOMPARE(streamed, s);
        }
    }
    // Long runs of one class: each one word or one long gap for the pre-tokenizers.
    for (const std::string unit : {"a", " ", "7", "\n", "\xC3\xA9", "\xE4\xB8\xAD", "!", "\xF0\x9F\xA6\x99", "\xFF"}) {
        std::string s;
        while (s.size() < 60000) s += unit;
        const auto ids = t->tokenize(s, {false, true});
        // WordPiece drops whitespace and U+FFFD; everything else gives tokens.
        QVERIFY(!ids.empty() || t->model() == TokenizerModel::WordPiece);
    }
}

}  // namespace arbor::test
