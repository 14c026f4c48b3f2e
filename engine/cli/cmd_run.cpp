// arbor-cli run: generate text from a prompt, streaming only the generated text to stdout;
// the seed and one final stats line go to stderr.
#include "cli.hpp"

#include <arbor/chat_template.hpp>
#include <arbor/json.hpp>
#include <arbor/session.hpp>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <random>

namespace arbor::cli {
namespace {

constexpr const char* kUsage =
    "-m M.gguf -p TEXT [-n N] [--seed S] [--temp T] [--top-k K] [--top-p P] [--min-p P] "
    "[--repeat-penalty X] [--frequency-penalty X] [--presence-penalty X] [--stop STR]... "
    "[--threads N] [--backend cpu|gpu] [--chat] [--ctx N] [--bos|--no-bos] [--kv-type f16|f32]";

float number_in(Args& a, const std::string& flag, float def) {
    auto v = a.number(flag);
    return v ? float(*v) : def;
}

std::string chat_prompt(const Model& model, const std::string& user) {
    const GgufValue* src = model.gguf().find("tokenizer.chat_template");
    std::string source;
    if (src && src->type == GgufValueType::STRING && !src->str.empty()) {
        source = std::string(src->str);
    } else {
        std::fprintf(stderr, "note: the model has no chat template; using ChatML\n");
        source = chatml_fallback_template();
    }
    auto tmpl = ChatTemplate::parse(source);
    if (!tmpl) throw InputError("the model's chat template does not parse: " + tmpl.message());
    json::Value msg = json::Value::object();
    msg["role"] = "user";
    msg["content"] = user;
    json::Value messages = json::Value::array();
    messages.push_back(std::move(msg));
    ChatTemplateOptions opt;
    opt.add_generation_prompt = true;
    const Tokenizer& tok = model.tokenizer();
    if (tok.bos() != kNoToken) opt.bos_token = tok.token_text(tok.bos());
    if (tok.eos() != kNoToken) opt.eos_token = tok.token_text(tok.eos());
    auto text = tmpl.value().render(messages, json::Value(nullptr), opt);
    if (!text) throw InputError("the model's chat template failed to render: " + text.message());
    return text.value();
}

int run(std::vector<std::string> argv) {
    Args a(std::move(argv));
    const auto prompt = a.value("-p", "--prompt");
    const auto model_path = a.value("-m", "--model");
    const int64_t n = a.integer("-n", "--n-predict").value_or(256);
    const auto seed = a.value("--seed");
    SamplerParams sp;
    sp.temperature = number_in(a, "--temp", sp.temperature);
    sp.top_k = int32_t(a.integer("--top-k").value_or(sp.top_k));
    sp.top_p = number_in(a, "--top-p", sp.top_p);
    sp.min_p = number_in(a, "--min-p", sp.min_p);
    sp.repeat_penalty = number_in(a, "--repeat-penalty", sp.repeat_penalty);
    sp.frequency_penalty = number_in(a, "--frequency-penalty", sp.frequency_penalty);
    sp.presence_penalty = number_in(a, "--presence-penalty", sp.presence_penalty);
    const std::vector<std::string> stops = a.values("--stop");
    const auto threads = a.integer("--threads");
    const std::string backend = a.value("--backend").value_or("cpu");
    const bool chat = a.flag("--chat");
    const auto ctx = a.integer("--ctx");
    const bool bos = a.flag("--bos"), no_bos = a.flag("--no-bos");
    const std::string kv = a.value("--kv-type").value_or("f16");
    a.finish();

    if (!model_path) throw UsageError("missing -m MODEL.gguf");
    if (!prompt) throw UsageError("missing -p TEXT (use -p \"\" to start from BOS alone)");
    if (n < 0) throw UsageError("-n must be >= 0");
    if (bos && no_bos) throw UsageError("--bos and --no-bos exclude each other");
    if (threads && (*threads < 1 || *threads > 256)) throw UsageError("--threads must be between 1 and 256");
    if (ctx && *ctx < 1) throw UsageError("--ctx must be at least 1");
    if (backend != "cpu" && backend != "gpu") throw UsageError("--backend must be cpu or gpu");
    if (kv != "f16" && kv != "f32") throw UsageError("--kv-type must be f16 or f32");
    if (auto v = sp.validate(); !v) throw UsageError(v.message());
    if (seed) {
        errno = 0;
        char* end = nullptr;
        sp.seed = std::strtoull(seed->c_str(), &end, 10);
        if (seed->empty() || *end != '\0' || errno != 0 || (*seed)[0] == '-')
            throw UsageError("--seed needs an unsigned integer, got '" + *seed + "'");
    } else {
        std::random_device rd;
        sp.seed = (uint64_t(rd()) << 32) | rd();
    }
    std::fprintf(stderr, "seed: %" PRIu64 "\n", sp.seed);

    auto model = Model::load(*model_path);
    if (!model) throw InputError(model.message());
    SessionOptions so;
    so.backend = backend;
    so.threads = int(threads.value_or(0));
    so.n_ctx = ctx.value_or(0);
    so.kv_type = kv == "f32" ? KvType::F32 : KvType::F16;
    auto session = Session::create(model.value(), so);
    if (!session) throw RuntimeFailure(session.message());
    Session& s = *session.value();

    const std::string text = chat ? chat_prompt(*model.value(), *prompt) : *prompt;
    std::optional<bool> want_bos;
    if (bos) want_bos = true;
    if (no_bos) want_bos = false;
    auto ids = prompt_tokens(*model.value(), text, want_bos, chat);
    if (!ids) throw InputError(ids.message());
    if (int64_t(ids.value().size()) > s.n_ctx())
        throw InputError("the prompt is " + std::to_string(ids.value().size()) + " tokens, longer than the context of " +
                         std::to_string(s.n_ctx()) + " (see --ctx)");
    if (auto st = s.feed(ids.value()); !st) throw RuntimeFailure(st.message());

    Sampler sampler(sp, model.value()->config().n_vocab);
    sampler.accept(ids.value());
    GenerateOptions go;
    go.max_tokens = n;
    go.stop = stops;
    auto reason = s.generate(sampler, go, [](std::string_view piece) {
        write_stdout(std::string(piece));
        std::fflush(stdout);
        return true;
    });
    if (!reason) throw RuntimeFailure(reason.message());
    const SessionStats& st = s.stats();
    const double prefill = st.prefill_seconds > 0 ? double(st.prompt_tokens) / st.prefill_seconds : 0.0;
    const double decode = st.decode_seconds > 0 ? double(st.decode_evals) / st.decode_seconds : 0.0;
    std::fprintf(stderr, "stats: prompt_tokens=%" PRId64 " prefill_tok_s=%.2f decode_tok_s=%.2f ttft_ms=%.2f backend=%s\n",
                 st.prompt_tokens, prefill, decode, st.ttft_seconds * 1000.0, std::string(s.backend().name()).c_str());
    return 0;
}

const Command kRun("run", "generate text from a prompt (streams the text; stats on stderr)", kUsage, run);

}  // namespace
}  // namespace arbor::cli
