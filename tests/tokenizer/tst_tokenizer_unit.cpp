// Tokenizer behaviour beyond the reference vectors: special tokens parsed or refused, BOS/EOS,
// end-of-generation tokens, metadata errors, detokenize options and the stream detokenizer.
// Small vocabularies are built in memory where the expected result follows from the rules;
// real ones from ../shared/data/vocab where the expectation is a published id.
#include "vocab_files.hpp"

#include <QtTest>

using namespace arbor;

namespace {

// The GPT-2 byte alphabet character of a byte, as UTF-8.
std::string byte_char(uint8_t b) {
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

// Byte-level BPE over the 256 byte tokens (ids 0..255), with merges building "hello" and
// " world", and three special tokens.
TokenizerData tiny_bpe() {
    TokenizerData d;
    d.model = "gpt2";
    d.pre = "gpt-2";
    for (int b = 0; b < 256; ++b) d.tokens.push_back(byte_char(uint8_t(b)));
    const std::string sp = byte_char(' ');
    d.merges = {"h e", "l l", "he ll", "hell o", sp + " w", "o r", sp + "w or", "l d", sp + "wor ld"};
    const std::vector<std::string> merged = {"he", "ll", "hell", "hello", sp + "w", "or", sp + "wor", "ld", sp + "world"};
    d.tokens.insert(d.tokens.end(), merged.begin(), merged.end());
    d.tokens.push_back("<|im_start|>");  // 265, control
    d.tokens.push_back("<|im_end|>");    // 266, control
    d.tokens.push_back("<think>");       // 267, user-defined
    d.token_types.assign(d.tokens.size(), int32_t(TokenType::Normal));
    d.token_types[265] = d.token_types[266] = int32_t(TokenType::Control);
    d.token_types[267] = int32_t(TokenType::UserDefined);
    d.bos_id = 265;
    d.eos_id = 266;
    return d;
}

const Tokenizer* open_vocab(test::TokenizerCache& cache, const QString& name) {
    const QString path = test::vocabDir() + "/" + name;
    if (!QFile::exists(path)) return nullptr;
    QString err;
    return cache.get(path, &err);
}

}  // namespace

class TestTokenizerUnit : public QObject {
    Q_OBJECT
    test::TokenizerCache cache_;

private slots:
    void bpeMerges() {
        auto t = Tokenizer::build(tiny_bpe());
        QVERIFY2(t.ok(), t.ok() ? "" : t.message().c_str());
        QCOMPARE(t->tokenize("hello world"), (std::vector<TokenId>{259, 264}));
        QCOMPARE(t->tokenize("hellohello"), (std::vector<TokenId>{259, 259}));
        // No merge for "x": single bytes.
        QCOMPARE(t->tokenize("xyz"), (std::vector<TokenId>{'x', 'y', 'z'}));
        QCOMPARE(t->detokenize(t->tokenize("hello world, xyz")), std::string("hello world, xyz"));
    }

    void specialTokensParsedOnlyWhenAsked() {
        auto t = Tokenizer::build(tiny_bpe());
        QVERIFY(t.ok());
        const std::string text = "<|im_start|>hello<think><|im_end|>";
        const auto plain = t->tokenize(text);
        const auto parsed = t->tokenize(text, {false, true});
        // Refused in plain text: never the control ids, but the user-defined token always.
        QVERIFY(std::find(plain.begin(), plain.end(), 265) == plain.end());
        QVERIFY(std::find(plain.begin(), plain.end(), 266) == plain.end());
        QVERIFY(std::find(plain.begin(), plain.end(), 267) != plain.end());
        QCOMPARE(parsed, (std::vector<TokenId>{265, 259, 267, 266}));
        QCOMPARE(t->detokenize(plain), text);
        QCOMPARE(t->detokenize(parsed), text);
        DetokenizeOptions quiet;
        quiet.render_special = false;
        QCOMPARE(t->detokenize(parsed, quiet), std::string("hello<think>"));
        QVERIFY(t->is_special(265));
        QVERIFY(!t->is_special(267));
    }

    void bosEos() {
        TokenizerData d = tiny_bpe();
        d.add_bos = true;
        d.add_eos = true;
        auto t = Tokenizer::build(d);
        QVERIFY(t.ok());
        QCOMPARE(t->tokenize("hello", {true, false}), (std::vector<TokenId>{265, 259, 266}));
        QCOMPARE(t->tokenize("hello"), (std::vector<TokenId>{259}));
        DetokenizeOptions strip;
        strip.remove_special = true;
        QCOMPARE(t->detokenize(std::vector<TokenId>{265, 259, 266}, strip), std::string("hello"));
        // add_bos without a BOS id is refused, naming the keys.
        TokenizerData bad = tiny_bpe();
        bad.bos_id.reset();
        bad.pre = "glm4";  // the one family without a default BOS
        bad.add_bos = true;
        auto e = Tokenizer::build(bad);
        QVERIFY(!e.ok());
        QVERIFY(e.message().find("add_bos_token") != std::string::npos);
    }

    void eogTokens() {
        auto t = Tokenizer::build(tiny_bpe());
        QVERIFY(t.ok());
        QVERIFY(t->is_eog(266));  // <|im_end|> by its text, and it is the EOS
        QVERIFY(!t->is_eog(265));
        QCOMPARE(t->eot(), TokenId(266));

        if (const Tokenizer* q = open_vocab(cache_, "ggml-vocab-qwen3.gguf")) {
            QVERIFY(q->is_eog(151645));   // <|im_end|>
            QVERIFY(q->is_eog(151643));   // <|endoftext|>
            QVERIFY(!q->is_eog(151644));  // <|im_start|>
            QCOMPARE(q->eos(), TokenId(151645));
            QVERIFY(!q->add_bos());
            // <|im_start|> as text, and as a special token.
            QCOMPARE(q->tokenize("<|im_start|>", {false, true}), (std::vector<TokenId>{151644}));
            const auto plain = q->tokenize("<|im_start|>");
            QVERIFY(plain.size() > 1);
        } else if (test::inCi()) {
            QFAIL("missing ggml-vocab-qwen3.gguf");
        }
        if (const Tokenizer* g = open_vocab(cache_, "ggml-vocab-gpt-2.gguf")) {
            QVERIFY(g->is_eog(50256));
            QCOMPARE(g->tokenize("<|endoftext|>", {false, true}), (std::vector<TokenId>{50256}));
        }
        if (const Tokenizer* s = open_vocab(cache_, "ggml-vocab-llama-spm.gguf")) {
            QVERIFY(s->is_eog(2));
            QVERIFY(s->add_bos());
            // BOS first, then the leading-space rule.
            QCOMPARE(s->tokenize("Hello world", {true, false}), (std::vector<TokenId>{1, 15043, 3186}));
            QCOMPARE(s->tokenize("Hello world"), (std::vector<TokenId>{15043, 3186}));
            // After a special token the text gets the leading space again.
            QCOMPARE(s->tokenize("<s>Hello", {false, true}), (std::vector<TokenId>{1, 15043}));
            QCOMPARE(s->detokenize(std::vector<TokenId>{15043, 3186}), std::string("Hello world"));
            // Control-token text in plain text stays text, even where merges could spell it.
            for (const char* text : {"<s>", "</s>", "<unk>", "a<s>b</s>"}) {
                const auto ids = s->tokenize(text);
                for (TokenId id : ids) QVERIFY2(!s->is_special(id), text);
                QCOMPARE(s->detokenize(ids), std::string(text));
            }
        }
        if (QFile::exists(test::llamaBpePath())) {
            QString err;
            const Tokenizer* l = cache_.get(test::llamaBpePath(), &err);
            QVERIFY2(l, qPrintable(err));
            QVERIFY(l->add_bos());
            QCOMPARE(l->tokenize("Hello", {true, false}).front(), TokenId(128000));
            QCOMPARE(l->eot(), TokenId(128009));  // <|eot_id|>, by its text
            QCOMPARE(l->eom(), kNoToken);  // Llama 3.0 has no <|eom_id|> (128008 is reserved)
            for (TokenId id : {128001, 128009}) QVERIFY(l->is_eog(id));
            QVERIFY(!l->is_eog(128008));
            QVERIFY(!l->is_eog(128000));
            QVERIFY(!l->is_eog(128006));  // <|start_header_id|>
        }
    }

    void missingAndUnknownPre() {
        TokenizerData d = tiny_bpe();
        d.pre = "no-such-pre";
        auto bad = Tokenizer::build(d);
        QVERIFY(!bad.ok());
        QVERIFY2(bad.message().find("'no-such-pre'") != std::string::npos, bad.message().c_str());
        d.pre.reset();
        auto def = Tokenizer::build(d);
        QVERIFY(def.ok());
        QCOMPARE(def->pre(), std::string("default"));
        QCOMPARE(def->warnings().size(), size_t(1));
        QVERIFY(def->warnings()[0].find("tokenizer.ggml.pre") != std::string::npos);
        // The real file without the key (gpt-neox) opens the same way.
        if (const Tokenizer* n = open_vocab(cache_, "ggml-vocab-gpt-neox.gguf")) {
            QCOMPARE(n->pre(), std::string("default"));
            QVERIFY(!n->warnings().empty());
        }
    }

    void badMetadata() {
        TokenizerData d = tiny_bpe();
        d.model = "rwkv";
        QVERIFY(Tokenizer::build(d).message().find("'rwkv'") != std::string::npos);
        d = tiny_bpe();
        d.tokens.push_back("he");  // duplicate
        d.token_types.push_back(1);
        auto dup = Tokenizer::build(d);
        QVERIFY(!dup.ok());
        QVERIFY(dup.message().find("duplicate") != std::string::npos);
        d = tiny_bpe();
        d.scores = {1.0f};
        QVERIFY(Tokenizer::build(d).message().find("tokenizer.ggml.scores") != std::string::npos);
        d = tiny_bpe();
        d.tokens.clear();
        QVERIFY(!Tokenizer::build(d).ok());
    }

    void outOfRangeIdsDetokenizeToNothing() {
        auto t = Tokenizer::build(tiny_bpe());
        QVERIFY(t.ok());
        QCOMPARE(t->detokenize(std::vector<TokenId>{-5, 259, 1000000}), std::string("hello"));
        QCOMPARE(t->token_to_piece(-1), std::string());
    }

    void streamHoldsIncompleteUtf8() {
        auto t = Tokenizer::build(tiny_bpe());
        QVERIFY(t.ok());
        const std::string text = "h\xC3\xA9llo \xF0\x9F\xA6\x99!";  // é and 🦙, byte tokens each
        const auto ids = t->tokenize(text);
        StreamDetokenizer s(*t);
        std::string all;
        int held_steps = 0;
        for (TokenId id : ids) {
            const std::string part = s.push(id);
            QVERIFY(QString::fromUtf8(part.data(), qsizetype(part.size())).toUtf8().toStdString() == part);
            if (!s.state().held.empty()) ++held_steps;
            all += part;
        }
        all += s.finish();
        QCOMPARE(all, text);
        QCOMPARE(held_steps, 1 + 3);  // one byte of é held, then three of 🦙
    }

    void streamStateSurvivesSaveAndRestore() {
        auto t = Tokenizer::build(tiny_bpe());
        QVERIFY(t.ok());
        const std::string text = "\xE4\xBD\xA0\xE5\xA5\xBD hello \xF0\x9F\x98\x81";
        const auto ids = t->tokenize(text);
        for (size_t cut = 0; cut <= ids.size(); ++cut) {
            StreamDetokenizer a(*t);
            std::string out;
            for (size_t i = 0; i < cut; ++i) out += a.push(ids[i]);
            const std::string saved = StreamDetokenizer::serialize(a.state());
            auto st = StreamDetokenizer::deserialize(saved);
            QVERIFY2(st.ok(), st.ok() ? "" : st.message().c_str());
            StreamDetokenizer b(*t);
            QVERIFY(b.restore(*st).ok());
            for (size_t i = cut; i < ids.size(); ++i) out += b.push(ids[i]);
            out += b.finish();
            QCOMPARE(out, text);
        }
        // Corrupt states are refused with a message.
        QVERIFY(!StreamDetokenizer::deserialize("").ok());
        QVERIFY(!StreamDetokenizer::deserialize(std::string("\x02\x00\x00", 3)).ok());
        QVERIFY(!StreamDetokenizer::deserialize(std::string("\x01\x00\x02\xE4", 4)).ok());
        QVERIFY(!StreamDetokenizer::deserialize(std::string("\x01\x00\x01" "A", 4)).ok());
        StreamDetokenizer c(*t);
        QVERIFY(!c.restore({"\xE4\xBD\xA0", false}).ok());
    }

    void streamSentencePieceLeadingSpace() {
        const Tokenizer* s = open_vocab(cache_, "ggml-vocab-llama-spm.gguf");
        if (!s) {
            if (test::inCi()) QFAIL("missing ggml-vocab-llama-spm.gguf");
            QSKIP("missing ggml-vocab-llama-spm.gguf");
        }
        const std::string text = "Hello world \xF0\x9F\xA6\x99 \xE6\x88\x91";
        const auto ids = s->tokenize(text);
        StreamDetokenizer st(*s, true, true);
        std::string out;
        for (TokenId id : ids) out += st.push(id);
        out += st.finish();
        QCOMPARE(out, text);
        QCOMPARE(s->detokenize(ids), text);
        // Continuing a text (the default), the first piece keeps its space.
        StreamDetokenizer cont(*s);
        QCOMPARE(cont.push(ids[0]), std::string(" Hello"));
    }

    void cleanSpaces() {
        const Tokenizer* g = open_vocab(cache_, "ggml-vocab-gpt-2.gguf");
        if (!g) QSKIP("missing ggml-vocab-gpt-2.gguf");
        const auto ids = g->tokenize("Hello , world ! It 's fine .");
        DetokenizeOptions clean;
        clean.clean_spaces = true;
        QCOMPARE(g->detokenize(ids), std::string("Hello , world ! It 's fine ."));
        QCOMPARE(g->detokenize(ids, clean), std::string("Hello, world! It's fine."));
    }
};

QTEST_GUILESS_MAIN(TestTokenizerUnit)
#include "tst_tokenizer_unit.moc"
