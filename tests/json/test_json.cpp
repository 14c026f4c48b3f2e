// Tests for arbor::json: parse/dump against Python's json module (random documents), float32
// shortest digits against numpy, strict-RFC rejections with line:column, and robustness.
#include <arbor/json.hpp>

#include <QElapsedTimer>
#include <QProcess>
#include <QRandomGenerator>
#include <QtTest>

#include <cstring>
#include <string>

using arbor::json::Value;
namespace json = arbor::json;

namespace {

QString oracle_script() {
    return qEnvironmentVariable("ARBOR_SOURCE_DIR") + "/tests/json/json_oracle.py";
}

QByteArray run_oracle(const QStringList& args) {
    QProcess p;
    p.start(qEnvironmentVariable("ARBOR_PYTHON", "/usr/bin/python3"), QStringList{oracle_script()} + args);
    if (!p.waitForFinished(60000) || p.exitCode() != 0) return {};
    return p.readAllStandardOutput();
}

bool python_missing() { return !QFile::exists(qEnvironmentVariable("ARBOR_PYTHON", "/usr/bin/python3")); }

}  // namespace

class TestJson : public QObject {
    Q_OBJECT
private slots:
    void valid_data();
    void valid();
    void invalid_data();
    void invalid();
    void python_oracle_docs();
    void python_oracle_float32();
    void accessors();
    void doubles_python_repr_data();
    void doubles_python_repr();
    void depth_bound();
    void random_bytes_never_crash();
    void large_document_speed();
};

void TestJson::valid_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QByteArray>("compact");
    QTest::newRow("object") << QByteArray(" { \"a\" : 1 , \"b\" : [ 1 , 2 ] } ") << QByteArray("{\"a\":1,\"b\":[1,2]}");
    QTest::newRow("scalars") << QByteArray("[true,false,null,0,-0,1.5,-2e3,1E2]")
                             << QByteArray("[true,false,null,0,0,1.5,-2000.0,100.0]");
    QTest::newRow("big int -> float") << QByteArray("[9223372036854775807,9223372036854775808,-9223372036854775809]")
                                      << QByteArray("[9223372036854775807,9.223372036854776e+18,-9.223372036854776e+18]");
    QTest::newRow("escapes") << QByteArray(R"(["\"\\\/\b\f\n\r\t\u0041\u00e9\ud83d\ude00\u0000"])")
                             << QByteArray("[\"\\\"\\\\/\\b\\f\\n\\r\\t" "A\xc3\xa9\xf0\x9f\x98\x80\\u0000\"]");
    QTest::newRow("utf8 kept") << QByteArray("\"\xe4\xb8\xad\xf0\x9f\x8c\x8d\"") << QByteArray("\"\xe4\xb8\xad\xf0\x9f\x8c\x8d\"");
    QTest::newRow("duplicate key: first position, last value")
        << QByteArray(R"({"a":1,"b":2,"a":3})") << QByteArray(R"({"a":3,"b":2})");
    QTest::newRow("empty containers") << QByteArray("[{},[],\"\"]") << QByteArray("[{},[],\"\"]");
    QTest::newRow("overflow to inf prints null") << QByteArray("[1e400,-1e400,1e-400]") << QByteArray("[null,null,0.0]");
    QTest::newRow("scalar top level") << QByteArray("\t42\r\n") << QByteArray("42");
}

void TestJson::valid() {
    QFETCH(QByteArray, text);
    QFETCH(QByteArray, compact);
    auto r = json::parse(std::string_view(text.constData(), size_t(text.size())));
    QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
    QCOMPARE(QByteArray::fromStdString(json::dump(*r)), compact);
}

void TestJson::invalid_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("where");  // expected "line L, column C"
    QTest::newRow("empty") << QByteArray("") << "line 1, column 1";
    QTest::newRow("trailing comma array") << QByteArray("[1,2,]") << "line 1, column 6";
    QTest::newRow("trailing comma object") << QByteArray("{\"a\":1,}") << "line 1, column 8";
    QTest::newRow("leading zero") << QByteArray("[01]") << "line 1, column 3";
    QTest::newRow("bare dot") << QByteArray("[1.]") << "line 1, column 4";
    QTest::newRow("plus sign") << QByteArray("+1") << "line 1, column 1";
    QTest::newRow("nan") << QByteArray("NaN") << "line 1, column 1";
    QTest::newRow("single quotes") << QByteArray("['a']") << "line 1, column 2";
    QTest::newRow("comment") << QByteArray("[1]\n// c") << "line 2, column 1";
    QTest::newRow("second line") << QByteArray("{\n  \"a\": tru\n}") << "line 2, column 8";
    QTest::newRow("control char in string") << QByteArray("\"a\tb\"") << "line 1, column 3";
    QTest::newRow("bad escape") << QByteArray(R"("\x")") << "line 1, column 3";
    QTest::newRow("lone high surrogate") << QByteArray(R"("\ud800x")") << "line 1, column 2";
    QTest::newRow("lone low surrogate") << QByteArray(R"("\udc00")") << "line 1, column 2";
    QTest::newRow("bad hex") << QByteArray(R"("\u12g4")") << "line 1, column 6";
    QTest::newRow("invalid utf8") << QByteArray("\"\xc3\x28\"") << "line 1, column 2";
    QTest::newRow("overlong utf8") << QByteArray("\"\xc0\xaf\"") << "line 1, column 2";
    QTest::newRow("utf8 surrogate") << QByteArray("\"\xed\xa0\x80\"") << "line 1, column 2";
    QTest::newRow("unterminated string") << QByteArray("[\"abc") << "line 1, column 2";
    QTest::newRow("unclosed array") << QByteArray("[1") << "line 1, column 3";
    QTest::newRow("two values") << QByteArray("1 2") << "line 1, column 3";
    QTest::newRow("missing colon") << QByteArray("{\"a\" 1}") << "line 1, column 6";
    QTest::newRow("non-string key") << QByteArray("{1:2}") << "line 1, column 2";
}

void TestJson::invalid() {
    QFETCH(QByteArray, text);
    QFETCH(QString, where);
    auto r = json::parse(std::string_view(text.constData(), size_t(text.size())));
    QVERIFY(!r.ok());
    QVERIFY2(QString::fromStdString(r.message()).contains(where), r.message().c_str());
}

void TestJson::python_oracle_docs() {
    if (python_missing()) QSKIP("no /usr/bin/python3");
    QByteArray out = run_oracle({"docs", "400", "20261129"});
    QVERIFY2(!out.isEmpty(), "oracle failed");
    qsizetype pos = 0;
    auto next = [&](QByteArray& rec) {
        qsizetype nl = out.indexOf('\n', pos);
        if (nl < 0) return false;
        qsizetype len = out.mid(pos, nl - pos).toLongLong();
        rec = out.mid(nl + 1, len);
        pos = nl + 1 + len;
        return true;
    };
    int n = 0;
    QByteArray src, compact, pretty;
    while (next(src) && next(compact) && next(pretty)) {
        auto r = json::parse(src.toStdString());
        QVERIFY2(r.ok(), (r.ok() ? std::string() : r.message() + " in: " + src.toStdString()).c_str());
        QCOMPARE(QByteArray::fromStdString(json::dump(*r)), compact);
        QCOMPARE(QByteArray::fromStdString(json::dump(*r, 2)), pretty);
        // Re-parsing our own output gives an equal value.
        auto again = json::parse(json::dump(*r));
        QVERIFY(again.ok());
        QVERIFY(*again == *r);
        ++n;
    }
    QCOMPARE(n, 400);
}

void TestJson::python_oracle_float32() {
    if (python_missing()) QSKIP("no /usr/bin/python3");
    QByteArray out = run_oracle({"float32", "3000", "7"});
    QVERIFY2(!out.isEmpty(), "oracle failed (needs numpy)");
    int n = 0;
    for (const QByteArray& line : out.split('\n')) {
        if (line.isEmpty()) continue;
        auto parts = line.split(' ');
        QCOMPARE(parts.size(), 2);
        uint32_t bits = parts[0].toUInt(nullptr, 16);
        float f;
        std::memcpy(&f, &bits, 4);
        QCOMPARE(QByteArray::fromStdString(json::dump(Value::from_float32(f))), parts[1]);
        ++n;
    }
    QVERIFY(n > 2900);
}

void TestJson::accessors() {
    Value v;
    QVERIFY(v.is_null());
    v["name"] = "arbor";
    v["n"] = 3;
    v["list"].push_back(1.5);
    v["list"].push_back(Value());
    v["big"] = uint64_t(1) << 63;
    QVERIFY(v.is_object());
    QCOMPARE(v.size(), size_t(4));
    QCOMPARE(QByteArray::fromStdString(json::dump(v)),
             QByteArray(R"({"name":"arbor","n":3,"list":[1.5,null],"big":9.223372036854776e+18})"));
    QCOMPARE(QByteArray::fromStdString(json::dump(v, 1)),
             QByteArray("{\n \"name\": \"arbor\",\n \"n\": 3,\n \"list\": [\n  1.5,\n  null\n ],\n \"big\": 9.223372036854776e+18\n}"));
    QVERIFY(v.find("missing") == nullptr);
    QVERIFY(Value(3).find("x") == nullptr);
    QCOMPARE(v.find("n")->as_int(), int64_t(3));
    QCOMPARE(v.find("name")->as_int(), int64_t(0));       // wrong kind: neutral value
    QCOMPARE(v.find("n")->as_string(), std::string());
    QVERIFY(v.find("n")->as_array().empty());
    QVERIFY(Value(1) == Value(1.0));
    QVERIFY(!(Value("1") == Value(1)));
    QCOMPARE(json::quote("a\"b\\\x01\x7f\xc3\xa9"), std::string("\"a\\\"b\\\\\\u0001\x7f\xc3\xa9\""));
    QCOMPARE(json::dump(Value(std::nan(""))), std::string("null"));
}

void TestJson::doubles_python_repr_data() {
    QTest::addColumn<double>("d");
    QTest::addColumn<QString>("repr");  // what Python's repr() prints
    QTest::newRow("1") << 1.0 << "1.0";
    QTest::newRow("0.1") << 0.1 << "0.1";
    QTest::newRow("1e16") << 1e16 << "1e+16";
    QTest::newRow("1e15") << 1e15 << "1000000000000000.0";
    QTest::newRow("1e-4") << 1e-4 << "0.0001";
    QTest::newRow("1e-5") << 1e-5 << "1e-05";
    QTest::newRow("-1.5e-7") << -1.5e-7 << "-1.5e-07";
    QTest::newRow("1e100") << 1e100 << "1e+100";
    QTest::newRow("denormal") << 5e-324 << "5e-324";
    QTest::newRow("1/3") << 1.0 / 3.0 << "0.3333333333333333";
    QTest::newRow("-0") << -0.0 << "-0.0";
    QTest::newRow("123.456") << 123.456 << "123.456";
}

void TestJson::doubles_python_repr() {
    QFETCH(double, d);
    QFETCH(QString, repr);
    QCOMPARE(QString::fromStdString(json::format_double(d)), repr);
}

void TestJson::depth_bound() {
    std::string ok(json::kMaxDepth, '[');
    ok += std::string(json::kMaxDepth, ']');
    QVERIFY(json::parse(ok).ok());
    std::string deep(json::kMaxDepth + 1, '[');
    deep += std::string(json::kMaxDepth + 1, ']');
    auto r = json::parse(deep);
    QVERIFY(!r.ok());
    QVERIFY(QString::fromStdString(r.message()).contains("nesting"));
    std::string huge(1000000, '{');  // must not overflow the stack
    QVERIFY(!json::parse(huge).ok());
}

void TestJson::random_bytes_never_crash() {
    // Random bytes and random mutations of a valid document: parse must return (ok or error),
    // and whatever parses must dump and re-parse to an equal value.
    QRandomGenerator rng(12345);
    const std::string base = R"({"messages":[{"role":"user","content":"h\u00e9llo \ud83d\ude00"},{"n":-1.5e3,"b":[true,false,null]}]})";
    const char alphabet[] = "{}[]\",:\\0123456789.eE+-tnfalsrue \n\xc3\xa9\xff";
    for (int i = 0; i < 20000; ++i) {
        std::string s;
        if (i % 2) {
            s = base;
            int edits = 1 + int(rng.bounded(4));
            for (int k = 0; k < edits && !s.empty(); ++k) {
                size_t at = rng.bounded(uint32_t(s.size()));
                switch (rng.bounded(3)) {
                    case 0: s.erase(at, 1); break;
                    case 1: s.insert(at, 1, alphabet[rng.bounded(uint32_t(sizeof alphabet - 1))]); break;
                    default: s[at] = char(rng.bounded(256));
                }
            }
        } else {
            size_t n = rng.bounded(64);
            for (size_t k = 0; k < n; ++k) s += alphabet[rng.bounded(uint32_t(sizeof alphabet - 1))];
        }
        auto r = json::parse(s);
        if (r.ok()) {
            auto again = json::parse(json::dump(*r));
            QVERIFY(again.ok());
            QVERIFY(*again == *r);
        } else {
            QVERIFY(QString::fromStdString(r.message()).contains("line "));
        }
    }
}

void TestJson::large_document_speed() {
    // ~8 MB, shaped like a tokenizer.json vocabulary: one big object plus arrays of numbers.
    std::string doc = "{\"model\":{\"vocab\":{";
    for (int i = 0; i < 200000; ++i) {
        if (i) doc += ',';
        doc += "\"tok\\u00e9n_" + std::to_string(i) + "\xc4\xa0x\":" + std::to_string(i);
    }
    doc += "},\"scores\":[";
    for (int i = 0; i < 200000; ++i) {
        if (i) doc += ',';
        doc += json::format_double(-0.001 * i);
    }
    doc += "]}}";
    QElapsedTimer t;
    t.start();
    auto r = json::parse(doc);
    qint64 ms = t.elapsed();
    QVERIFY(r.ok());
    const Value* vocab = r->find("model")->find("vocab");
    QCOMPARE(vocab->size(), size_t(200000));
    QCOMPARE(vocab->as_object()[199999].second.as_int(), int64_t(199999));
    t.restart();
    std::string back = json::dump(*r);
    qint64 ms_dump = t.elapsed();
    qInfo("parsed %.1f MB in %lld ms, dumped in %lld ms", doc.size() / 1e6, ms, ms_dump);
    QVERIFY(ms < 5000);
}

QTEST_GUILESS_MAIN(TestJson)
#include "test_json.moc"
