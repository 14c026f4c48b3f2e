// arbor-cli template (-m MODEL.gguf | -t TEMPLATE_FILE) --messages FILE.json
//                    [--add-generation-prompt] [--var key=JSON]... [--now 2026-11-29T12:00:00]
// Renders a chat template and prints the prompt exactly, with no added newline. The messages
// file is {"messages": [...], "tools": [...]} in the OpenAI chat format (an absent or null
// "tools" renders as none). Each --var value is parsed as JSON; a value that is not valid JSON
// is taken as a plain string. --now pins what strftime_now() sees. With -m the template comes
// from tokenizer.chat_template and bos_token/eos_token from the model's vocabulary.
// On any error nothing is printed on stdout and the exit status is 1.
#include "cli.hpp"

#include <arbor/chat_template.hpp>
#include <arbor/gguf.hpp>
#include <arbor/json.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace arbor::cli {
namespace {

std::string read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw InputError("cannot open '" + path + "': " + std::strerror(errno));
    std::ostringstream ss;
    ss << f.rdbuf();
    if (f.bad()) throw RuntimeFailure("cannot read '" + path + "'");
    return ss.str();
}

// The text of token tokenizer.ggml.<which>_token_id, or "" when the model has none.
std::string special_token_text(const GgufFile& gguf, const std::string& path, const char* which) {
    const std::string key = std::string("tokenizer.ggml.") + which + "_token_id";
    auto id = gguf.get_uint(key);
    if (!id) throw InputError(path + ": " + id.message());
    if (!id->has_value()) return "";
    const GgufValue* tokens = gguf.find("tokenizer.ggml.tokens");
    if (!tokens || !tokens->is_array() || tokens->elem_type != GgufValueType::STRING)
        throw InputError(path + ": tokenizer.ggml.tokens is missing or not a string array");
    if (**id >= tokens->strings.size())
        throw InputError(path + ": " + key + " = " + std::to_string(**id) + " is out of range (" +
                         std::to_string(tokens->strings.size()) + " tokens)");
    return std::string(tokens->strings[size_t(**id)]);
}

int run_template(std::vector<std::string> argv) {
    Args args(std::move(argv));
    const auto model = args.value("-m", "--model");
    const auto template_file = args.value("-t", "--template");
    const auto messages_file = args.value("--messages");
    const auto now = args.value("--now");
    const auto vars = args.values("--var");
    const bool add_generation_prompt = args.flag("--add-generation-prompt");
    args.finish();
    if (model.has_value() == template_file.has_value()) throw UsageError("give exactly one of -m MODEL.gguf or -t TEMPLATE_FILE");
    if (!messages_file) throw UsageError("--messages FILE.json is required");

    ChatTemplateOptions opts;
    opts.add_generation_prompt = add_generation_prompt;
    opts.now_iso = now;
    std::string source;
    if (model) {
        auto gguf = GgufFile::open(*model);
        if (!gguf) throw InputError(gguf.message());
        auto tmpl = (*gguf)->get_string("tokenizer.chat_template");
        if (!tmpl) throw InputError(*model + ": " + tmpl.message());
        if (!tmpl->has_value()) throw InputError(*model + ": the model has no tokenizer.chat_template");
        source = **tmpl;
        opts.bos_token = special_token_text(**gguf, *model, "bos");
        opts.eos_token = special_token_text(**gguf, *model, "eos");
    } else {
        source = read_file(*template_file);
    }

    auto doc = json::parse(read_file(*messages_file));
    if (!doc) throw InputError(*messages_file + ": " + doc.message());
    json::Value messages, tools;
    if (doc->is_array()) {
        messages = *doc;
    } else if (doc->is_object()) {
        const json::Value* m = doc->find("messages");
        if (!m || !m->is_array()) throw InputError(*messages_file + ": \"messages\" must be an array");
        messages = *m;
        if (const json::Value* t = doc->find("tools")) {
            if (!t->is_null() && !t->is_array()) throw InputError(*messages_file + ": \"tools\" must be an array or null");
            tools = *t;
        }
    } else {
        throw InputError(*messages_file + ": expected {\"messages\": [...], \"tools\": [...]}");
    }

    for (const std::string& v : vars) {
        size_t eq = v.find('=');
        if (eq == std::string::npos || eq == 0) throw UsageError("--var needs key=JSON, got '" + v + "'");
        std::string key = v.substr(0, eq), text = v.substr(eq + 1);
        auto parsed = json::parse(text);
        opts.extra_vars.emplace_back(key, parsed ? std::move(*parsed) : json::Value(text));
    }

    auto tmpl = ChatTemplate::parse(source);
    if (!tmpl) throw InputError(tmpl.message());
    auto out = tmpl->render(messages, tools, opts);
    if (!out) throw InputError(out.message());
    write_stdout(*out);
    return 0;
}

const Command kTemplate("template", "render a chat template for a conversation",
                        "(-m MODEL.gguf | -t TEMPLATE_FILE) --messages FILE.json [--add-generation-prompt] "
                        "[--var key=JSON]... [--now 2026-11-29T12:00:00]",
                        run_template);

}  // namespace
}  // namespace arbor::cli
