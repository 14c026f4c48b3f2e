// Differential tests of the chat-template engine against Python's jinja2 set up as Hugging Face
// transformers sets it up (jinja_oracle.py): every shared template x every conversation of
// conversations.json, plus a set of snippets covering the built-ins, must render byte-identically
// (or fail in both). Also: error positions, bounds, hostile input, the ChatML fallback and the CLI.
#include <arbor/chat_template.hpp>
#include <arbor/gguf.hpp>
#include <arbor/json.hpp>

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QtTest>

#include <map>
#include <optional>
#include <set>
#include <string>

using arbor::ChatTemplate;
using arbor::ChatTemplateOptions;
namespace json = arbor::json;

namespace {

const char* kNow = "2026-11-29T12:00:00";

QString source_dir() { return qEnvironmentVariable("ARBOR_SOURCE_DIR"); }
QString templates_dir() { return qEnvironmentVariable("ARBOR_SHARED_DATA") + "/templates"; }
QString python() { return qEnvironmentVariable("ARBOR_PYTHON", "/usr/bin/python3"); }
QString oracle() { return source_dir() + "/tests/template/jinja_oracle.py"; }
QString conversations_path() { return source_dir() + "/tests/template/conversations.json"; }
bool in_ci() { return qEnvironmentVariable("CI") == "true"; }

std::string read_all(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return f.readAll().toStdString();
}

// Runs the oracle; returns stdout, or an empty string (with the reason in err) on failure.
QByteArray run_python(const QStringList& args, QString& err) {
    QProcess p;
    p.start(python(), args);
    if (!p.waitForFinished(120000)) {
        err = "oracle timed out or did not start";
        return {};
    }
    if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        err = QString::fromUtf8(p.readAllStandardError());
        return {};
    }
    return p.readAllStandardOutput();
}

// Where two strings first differ, with some context, for a readable failure message.
std::string describe_diff(const std::string& ours, const std::string& ref) {
    size_t k = 0;
    while (k < ours.size() && k < ref.size() && ours[k] == ref[k]) ++k;
    size_t from = k > 60 ? k - 60 : 0;
    return "first difference at byte " + std::to_string(k) + "\n    ours:  " +
           json::quote(ours.substr(from, 160)) + "\n    jinja: " + json::quote(ref.substr(from, 160));
}

ChatTemplateOptions options_for(const json::Value& conv, const json::Value* vars) {
    ChatTemplateOptions o;
    o.bos_token = "<s>";
    o.eos_token = "</s>";
    o.now_iso = kNow;
    if (const json::Value* g = conv.find("add_generation_prompt")) o.add_generation_prompt = g->as_bool();
    if (vars)
        for (const auto& m : vars->as_object()) o.extra_vars.emplace_back(m.first, m.second);
    return o;
}

}  // namespace

class TestChatTemplate : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void differential_corpus();
    void differential_snippets();
    void syntax_errors_data();
    void syntax_errors();
    void runtime_errors_data();
    void runtime_errors();
    void bounds_data();
    void bounds();
    void hostile_templates_never_crash();
    void chatml_fallback();
    void cli_renders_like_jinja();
    void cli_errors();
    void cli_model_template();

private:
    bool have_oracle_ = false;
};

void TestChatTemplate::initTestCase() {
    have_oracle_ = QFile::exists(python()) && QDir(templates_dir()).exists();
    if (!have_oracle_ && in_ci()) QFAIL("CI=true but python3 or the shared templates are missing");
}

void TestChatTemplate::differential_corpus() {
    if (!have_oracle_) QSKIP("python3 (with jinja2) or the shared templates are missing");
    QElapsedTimer timer;
    timer.start();
    QString err;
    QByteArray out = run_python({oracle(), "corpus", templates_dir(), conversations_path()}, err);
    QVERIFY2(!out.isEmpty(), qPrintable("oracle failed: " + err));
    const qint64 oracle_ms = timer.elapsed();
    auto cases = json::parse(out.toStdString());
    QVERIFY2(cases.ok(), cases.ok() ? "" : cases.message().c_str());
    auto convs = json::parse(read_all(conversations_path()));
    QVERIFY(convs.ok());
    std::map<std::string, const json::Value*> by_name;
    for (const auto& c : convs->as_array()) by_name[c.find("name")->as_string()] = &c;

    std::map<std::string, std::optional<ChatTemplate>> compiled;
    std::map<std::string, std::string> compile_errors;
    int identical = 0, both_failed = 0, mismatched = 0;
    std::set<std::string> templates;
    std::string report;
    // ARBOR_TEMPLATE_VERBOSE=1 lists the cases that fail in both engines, with both errors.
    const bool verbose = qEnvironmentVariable("ARBOR_TEMPLATE_VERBOSE") == "1";
    timer.restart();
    for (const auto& c : cases->as_array()) {
        const std::string name = c.find("template")->as_string();
        const std::string conv_name = c.find("conversation")->as_string();
        templates.insert(name);
        if (!compiled.count(name)) {
            auto t = ChatTemplate::parse(read_all(templates_dir() + "/" + QString::fromStdString(name)));
            if (t) compiled[name] = std::move(*t);
            else {
                compiled[name] = std::nullopt;
                compile_errors[name] = t.message();
            }
        }
        const json::Value& conv = *by_name.at(conv_name);
        const json::Value* tools = conv.find("tools");
        ChatTemplateOptions o = options_for(conv, c.find("vars"));
        arbor::Result<std::string> ours = compiled[name]
                                              ? compiled[name]->render(*conv.find("messages"), tools ? *tools : json::Value(), o)
                                              : arbor::Result<std::string>(arbor::make_error(compile_errors[name]));
        const bool ref_ok = c.find("ok")->as_bool();
        const std::string label = name + " x " + conv_name + " vars=" + json::dump(*c.find("vars"));
        if (ref_ok && ours.ok() && *ours == c.find("output")->as_string()) {
            ++identical;
        } else if (!ref_ok && !ours.ok()) {
            ++both_failed;
            if (verbose) qInfo("both failed: %s\n    jinja: %s\n    ours:  %s", label.c_str(), c.find("error")->as_string().c_str(), ours.message().c_str());
        } else {
            ++mismatched;
            if (mismatched <= 25) {
                report += "\n  " + label + ": ";
                if (!ref_ok) report += "jinja2 failed (" + c.find("error")->as_string() + ") but ours rendered";
                else if (!ours.ok()) report += "ours failed: " + ours.message();
                else report += describe_diff(*ours, c.find("output")->as_string());
            }
        }
    }
    qInfo("corpus: %d cases over %d templates: %d identical, %d failed in both, %d mismatched "
          "(oracle %lld ms, ours %lld ms)",
          int(cases->size()), int(templates.size()), identical, both_failed, mismatched, oracle_ms,
          timer.elapsed());
    QVERIFY2(mismatched == 0, report.c_str());
    QVERIFY(templates.size() >= 65);
    QVERIFY(cases->size() >= 65 * 6);
}

void TestChatTemplate::differential_snippets() {
    if (!have_oracle_) QSKIP("python3 (with jinja2) is missing");
    const QString path = source_dir() + "/tests/template/snippets.json";
    QString err;
    QByteArray out = run_python({oracle(), "snippets", path}, err);
    QVERIFY2(!out.isEmpty(), qPrintable("oracle failed: " + err));
    auto results = json::parse(out.toStdString());
    QVERIFY(results.ok());
    auto snippets = json::parse(read_all(path));
    QVERIFY(snippets.ok());
    QCOMPARE(results->size(), snippets->find("snippets")->size());
    const json::Value& ctx = *snippets->find("context");
    int same = 0, both_failed = 0, bad = 0;
    std::string report;
    for (size_t k = 0; k < results->size(); ++k) {
        const std::string src = snippets->find("snippets")->as_array()[k].as_string();
        const json::Value& ref = results->as_array()[k];
        ChatTemplateOptions o;
        o.now_iso = kNow;
        o.bos_token = "<s>";
        o.eos_token = "</s>";
        for (const auto& m : ctx.as_object())
            if (m.first != "messages" && m.first != "tools") o.extra_vars.emplace_back(m.first, m.second);
        auto t = ChatTemplate::parse(src);
        arbor::Result<std::string> ours =
            t ? t->render(*ctx.find("messages"), *ctx.find("tools"), o) : arbor::Result<std::string>(t.error());
        const bool ref_ok = ref.find("ok")->as_bool();
        if (ref_ok && ours.ok() && *ours == ref.find("output")->as_string()) {
            ++same;
        } else if (!ref_ok && !ours.ok()) {
            ++both_failed;
        } else {
            ++bad;
            report += "\n  snippet " + std::to_string(k) + " " + json::quote(src) + ": ";
            if (!ref_ok) report += "jinja2 failed (" + ref.find("error")->as_string() + ") but ours gave " + json::quote(*ours);
            else if (!ours.ok()) report += "ours failed: " + ours.message() + "; jinja2 gave " + json::quote(ref.find("output")->as_string());
            else report += "ours " + json::quote(*ours) + " jinja2 " + json::quote(ref.find("output")->as_string());
        }
    }
    qInfo("snippets: %d identical, %d failed in both, %d mismatched", same, both_failed, bad);
    QVERIFY2(bad == 0, report.c_str());
}

void TestChatTemplate::syntax_errors_data() {
    QTest::addColumn<QString>("source");
    QTest::addColumn<QString>("where");
    QTest::newRow("unclosed if") << "a\n{% if x %}\nb" << "line 3";
    QTest::newRow("unknown tag") << "{% for x in y %}\n  {% frobnicate %}\n{% endfor %}" << "line 2, column 6";
    QTest::newRow("bad expression") << "{{ 1 + }}" << "line 1, column 8";
    QTest::newRow("unclosed variable") << "x\n{{ a " << "line 2, column 1";
    QTest::newRow("unknown filter") << "\n\n{{ x | frob }}" << "line 3, column 8";
    QTest::newRow("unclosed string") << "{{ 'abc }}" << "line 1, column 4";
    QTest::newRow("unclosed comment") << "ok {# never" << "line 1, column 4";
    QTest::newRow("break outside loop") << "{% break %}" << "line 1, column 4";
    QTest::newRow("mismatched bracket") << "{{ (a] }}" << "line 1, column 6";
    QTest::newRow("endfor without for") << "{% endfor %}" << "line 1, column 4";
    QTest::newRow("invalid utf8") << QString::fromLatin1("{{ '\xff' }}") << "";
}

void TestChatTemplate::syntax_errors() {
    QFETCH(QString, source);
    QFETCH(QString, where);
    std::string src = source.toStdString();
    if (source.contains(QChar(0xff))) src = "{{ '\xff' }}";
    auto t = ChatTemplate::parse(src);
    QVERIFY(!t.ok());
    QVERIFY2(QString::fromStdString(t.message()).contains(where), t.message().c_str());
}

void TestChatTemplate::runtime_errors_data() {
    QTest::addColumn<QString>("source");
    QTest::addColumn<QString>("where");
    QTest::addColumn<QString>("what");
    QTest::newRow("raise_exception") << "ok\n  {{ raise_exception('Only user and assistant roles') }}"
                                     << "line 2, column 6" << "Only user and assistant roles";
    QTest::newRow("undefined attribute") << "{{ nothing.here }}" << "line 1, column 11" << "'nothing' is undefined";
    QTest::newRow("type error") << "{% set x = 1 %}\n{{ x + 'a' }}" << "line 2, column 6" << "unsupported operand";
    QTest::newRow("sandbox") << "{% set l = [1] %}{{ l.append(2) }}" << "line 1, column" << "unsafe";
    QTest::newRow("unknown filter in if runs") << "{% if true %}{{ 1 | frob }}{% endif %}" << "line 1" << "No filter named 'frob'";
    QTest::newRow("division by zero") << "{{ 1 // 0 }}" << "line 1" << "division";
}

void TestChatTemplate::runtime_errors() {
    QFETCH(QString, source);
    QFETCH(QString, where);
    QFETCH(QString, what);
    auto t = ChatTemplate::parse(source.toStdString());
    QVERIFY2(t.ok(), t.ok() ? "" : t.message().c_str());
    auto r = t->render(json::Value::array(), json::Value(), ChatTemplateOptions{});
    QVERIFY(!r.ok());
    QVERIFY2(QString::fromStdString(r.message()).contains(where), r.message().c_str());
    QVERIFY2(QString::fromStdString(r.message()).contains(what), r.message().c_str());
}

void TestChatTemplate::bounds_data() {
    QTest::addColumn<QString>("source");
    QTest::addColumn<QString>("what");
    QTest::newRow("infinite recursion") << "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}" << "deeper";
    QTest::newRow("loop iterations") << "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}"
                                     << "loop iterations";
    QTest::newRow("range too big") << "{% for a in range(1000000000) %}{% endfor %}" << "Range too big";
    QTest::newRow("output size") << "{% for a in range(100000) %}{% for b in range(1000) %}xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx{% endfor %}{% endfor %}"
                                 << "bytes";
    QTest::newRow("string doubling") << "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}"
                                     << "bytes";
    QTest::newRow("string repetition") << "{{ 'x' * 100000000000 }}" << "too large";
    QTest::newRow("deep nesting") << QString("{{ ") + QString("(").repeated(2000) + "1" + QString(")").repeated(2000) + " }}"
                                  << "nesting";
    QTest::newRow("integer overflow") << "{{ 10 ** 40 }}" << "64 bits";
    QTest::newRow("evaluation nesting") << "{% macro f(n) %}{{ " + QString("[").repeated(90) + "f(n + 1)" +
                                               QString("]").repeated(90) + " }}{% endmacro %}{{ f(0) }}"
                                        << "nested deeper than";
    QTest::newRow("value nesting") << "{% set ns = namespace(v=[]) %}{% for i in range(100000) %}{% set ns.v = [ns.v] %}{% endfor %}"
                                   << "nests deeper";
    QTest::newRow("time") << "{% for a in range(100000) %}{% for b in range(9) %}{{ 'x'|replace('x', 'y') }}{% endfor %}{% endfor %}"
                          << "longer than";
}

void TestChatTemplate::bounds() {
    QFETCH(QString, source);
    QFETCH(QString, what);
    QElapsedTimer timer;
    timer.start();
    ChatTemplateOptions o;
    const QString tag = QTest::currentDataTag();
    o.max_seconds = tag == "time" ? 0.2 : 60;
    o.max_output_bytes = 1 << 20;
    o.max_loop_iterations = tag == "time" ? 1'000'000'000 : 100'000;
    auto t = ChatTemplate::parse(source.toStdString());
    arbor::Result<std::string> r = t ? t->render(json::Value::array(), json::Value(), o)
                                     : arbor::Result<std::string>(t.error());
    QVERIFY(!r.ok());
    QVERIFY2(QString::fromStdString(r.message()).contains(what), r.message().c_str());
    QVERIFY(timer.elapsed() < 60000);
}

void TestChatTemplate::hostile_templates_never_crash() {
    // Truncations and byte mutations of every real template, plus token soup: parse and render
    // must return (never crash or hang), and any error must name a position.
    QDir dir(templates_dir());
    QStringList files = dir.entryList({"*.jinja"}, QDir::Files, QDir::Name);
    std::vector<std::string> seeds;
    for (const QString& f : files) seeds.push_back(read_all(dir.filePath(f)));
    if (seeds.empty()) {
        if (in_ci()) QFAIL("shared templates missing");
        seeds.push_back("{% for m in messages %}{{ m.role }}: {{ m.content | trim }}\n{% endfor %}");
    }
    // A conversation with tools and tool calls reaches deep into the templates.
    json::Value messages = json::Value::array(), tools;
    if (auto convs = json::parse(read_all(conversations_path())); convs && convs->size() > 3) {
        messages = *convs->as_array()[3].find("messages");
        tools = *convs->as_array()[3].find("tools");
    } else {
        json::Value m;
        m["role"] = "user";
        m["content"] = "hi";
        messages.push_back(m);
    }
    ChatTemplateOptions o;
    o.max_seconds = 1;
    o.max_output_bytes = 1 << 20;
    QRandomGenerator rng(20261129);
    const char* soup[] = {"{{", "}}", "{%", "%}", "{#", "#}", "-", "+", "(", ")", "[", "]", "{", "}", "'", "\"",
                          "if", "for", "in", "endfor", "endif", "macro", "endmacro", "set", "=", "|", ".", ",",
                          "x", "messages", "loop", "range(9)", "not", "is", "defined", "~", "*", "**", " ", "\n",
                          "raw", "endraw", "call", "caller()", "filter", "upper", "namespace(a=1)", "ns.a"};
    int parsed = 0, rendered = 0, iterations = 0;
    QElapsedTimer timer;
    timer.start();
    // ARBOR_TEMPLATE_FUZZ_ITERATIONS=N runs longer (for sanitizer builds).
    const int n_iter = qEnvironmentVariableIntValue("ARBOR_TEMPLATE_FUZZ_ITERATIONS") > 0
                           ? qEnvironmentVariableIntValue("ARBOR_TEMPLATE_FUZZ_ITERATIONS")
                           : 3000;
    for (int k = 0; k < n_iter; ++k) {
        std::string src;
        int mode = k % 3;
        if (mode == 0) {
            const std::string& s = seeds[rng.bounded(uint32_t(seeds.size()))];
            src = s.substr(0, rng.bounded(uint32_t(s.size() + 1)));
        } else if (mode == 1) {
            src = seeds[rng.bounded(uint32_t(seeds.size()))];
            int edits = 1 + int(rng.bounded(8));
            for (int e = 0; e < edits && !src.empty(); ++e) {
                size_t at = rng.bounded(uint32_t(src.size()));
                if (rng.bounded(2)) src[at] = char(rng.bounded(128));
                else src.erase(at, rng.bounded(20));
            }
        } else {
            int n = 1 + int(rng.bounded(40));
            for (int e = 0; e < n; ++e) src += soup[rng.bounded(uint32_t(std::size(soup)))];
        }
        ++iterations;
        auto t = ChatTemplate::parse(src);
        if (!t) {
            QVERIFY2(QString::fromStdString(t.message()).contains("chat template"), t.message().c_str());
            continue;
        }
        ++parsed;
        o.add_generation_prompt = k % 2;
        auto r = t->render(messages, k % 4 < 2 ? tools : json::Value(), o);
        if (r) ++rendered;
        else QVERIFY2(!r.message().empty(), "empty error message");
    }
    qInfo("hostile: %d templates, %d parsed, %d rendered, %lld ms", iterations, parsed, rendered, timer.elapsed());
}

void TestChatTemplate::chatml_fallback() {
    auto t = ChatTemplate::parse(arbor::chatml_fallback_template());
    QVERIFY2(t.ok(), t.ok() ? "" : t.message().c_str());
    auto msgs = json::parse(R"([{"role":"system","content":"S"},{"role":"user","content":[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}]},{"role":"assistant","content":null}])");
    QVERIFY(msgs.ok());
    ChatTemplateOptions o;
    o.add_generation_prompt = true;
    auto r = t->render(*msgs, json::Value(), o);
    QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
    QCOMPARE(QString::fromStdString(*r),
             QString("<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nab<|im_end|>\n"
                     "<|im_start|>assistant\n<|im_end|>\n<|im_start|>assistant\n"));
}

void TestChatTemplate::cli_renders_like_jinja() {
    if (!have_oracle_) QSKIP("python3 (with jinja2) or the shared templates are missing");
    const QString cli = qEnvironmentVariable("ARBOR_CLI");
    if (!QFile::exists(cli)) QSKIP("arbor-cli not built");
    QTemporaryDir tmp;
    // The CLI takes {"messages":..., "tools":...}; conversations.json entries have that shape.
    auto convs = json::parse(read_all(conversations_path()));
    QVERIFY(convs.ok());
    const json::Value& conv = convs->as_array()[3];  // tool call and result
    const QString msgs = tmp.filePath("conv.json");
    {
        QFile f(msgs);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray::fromStdString(json::dump(conv)));
    }
    const QString tmpl = templates_dir() + "/Qwen-Qwen3-0.6B.jinja";
    QProcess p;
    p.start(cli, {"template", "-t", tmpl, "--messages", msgs, "--var", "enable_thinking=false", "--var",
                  "bos_token=<s>", "--var", "eos_token=\"</s>\"", "--now", kNow});
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitCode(), 0);
    QByteArray ours = p.readAllStandardOutput();
    QString err;
    QByteArray ref = run_python({oracle(), "one", tmpl, conversations_path(), QString::fromStdString(conv.find("name")->as_string()),
                                 R"({"enable_thinking": false})"},
                                err);
    QVERIFY2(!ref.isEmpty(), qPrintable(err));
    QCOMPARE(ours, ref);
}

void TestChatTemplate::cli_errors() {
    const QString cli = qEnvironmentVariable("ARBOR_CLI");
    if (!QFile::exists(cli)) QSKIP("arbor-cli not built");
    QTemporaryDir tmp;
    const QString msgs = tmp.filePath("m.json");
    const QString bad = tmp.filePath("bad.jinja");
    {
        QFile f(msgs);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"messages":[{"role":"user","content":"hi"}]})");
        QFile b(bad);
        QVERIFY(b.open(QIODevice::WriteOnly));
        b.write("ok\n{{ raise_exception('nope') }}");
    }
    QProcess p;
    p.start(cli, {"template", "-t", bad, "--messages", msgs});
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitCode(), 1);
    QCOMPARE(p.readAllStandardOutput(), QByteArray());
    QVERIFY(QString::fromUtf8(p.readAllStandardError()).contains("line 2"));
}

void TestChatTemplate::cli_model_template() {
    // -m reads tokenizer.chat_template, and bos_token/eos_token from the vocabulary.
    const QString cli = qEnvironmentVariable("ARBOR_CLI");
    if (!QFile::exists(cli)) QSKIP("arbor-cli not built");
    QTemporaryDir tmp;
    const QString model = tmp.filePath("tiny.gguf");
    const QString bare = tmp.filePath("bare.gguf");
    const QString msgs = tmp.filePath("m.json");
    {
        arbor::GgufWriter w;
        w.set("general.architecture", arbor::GgufWriteValue::string("llama"));
        w.set("tokenizer.ggml.tokens", arbor::GgufWriteValue::string_array({"<unk>", "<|begin|>", "<|end|>", "hi"}));
        w.set("tokenizer.ggml.bos_token_id", arbor::GgufWriteValue::u32(1));
        w.set("tokenizer.ggml.eos_token_id", arbor::GgufWriteValue::u32(2));
        w.set("tokenizer.chat_template",
              arbor::GgufWriteValue::string("{{ bos_token }}{% for m in messages %}[{{ m.role }}]{{ m.content }}{{ eos_token }}"
                                            "{% endfor %}{% if add_generation_prompt %}[assistant]{% endif %}"));
        QVERIFY(w.write(model.toStdString()).ok());
        arbor::GgufWriter b;
        b.set("general.architecture", arbor::GgufWriteValue::string("llama"));
        QVERIFY(b.write(bare.toStdString()).ok());
        QFile f(msgs);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"messages":[{"role":"user","content":"hi"}],"tools":null})");
    }
    QProcess p;
    p.start(cli, {"template", "-m", model, "--messages", msgs, "--add-generation-prompt"});
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitCode(), 0);
    QCOMPARE(p.readAllStandardOutput(), QByteArray("<|begin|>[user]hi<|end|>[assistant]"));
    p.start(cli, {"template", "-m", bare, "--messages", msgs});
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitCode(), 1);
    QCOMPARE(p.readAllStandardOutput(), QByteArray());
}

QTEST_GUILESS_MAIN(TestChatTemplate)
#include "test_chat_template.moc"
