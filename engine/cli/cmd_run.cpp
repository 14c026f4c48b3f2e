// arbor-cli run: generate text from a prompt, streaming only the generated text to stdout;
// the seed, the stop reason and one final stats line go to stderr. --park F then --wake F
// continues exactly as one longer run (see "What continue means" in arbor/session.hpp).
#include "cli.hpp"

#include <arbor/chat_template.hpp>
#include <arbor/json.hpp>
#include <arbor/session.hpp>

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <functional>
#include <random>

namespace arbor::cli {
namespace {

constexpr const char* kUsage =
    "-m M.gguf -p TEXT [-n N] [--seed S] [--temp T] [--top-k K] [--top-p P] [--min-p P] "
    "[--repeat-penalty X] [--frequency-penalty X] [--presence-penalty X] [--stop STR]... "
    "[--threads N] [--backend cpu|gpu] [--chat] [--ctx N] [--bos|--no-bos] [--kv-type f16|f32] "
    "[--park FILE] [--wake FILE (then -p is text appended as-is, no BOS; the parked sampler and stop strings "
    "continue unless flags override them)]";

// Sets `out` from the flag when it is given; says whether it was.
bool number_in(Args& a, const std::string& flag, float& out) {
    auto v = a.number(flag);
    if (v) out = float(*v);
    return bool(v);
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
    // Applies the sampler flags given on the command line over `p` (defaults, or a parked
    // sampler's settings with --wake).
    SamplerParams sp;
    std::vector<std::pair<std::string, std::function<void(SamplerParams&)>>> given;
    for (const char* f : {"--temp", "--top-p", "--min-p", "--repeat-penalty", "--frequency-penalty", "--presence-penalty"}) {
        float v = 0;
        if (!number_in(a, f, v)) continue;
        const std::string flag = f;
        given.emplace_back(flag, [flag, v](SamplerParams& p) {
            if (flag == "--temp") p.temperature = v;
            if (flag == "--top-p") p.top_p = v;
            if (flag == "--min-p") p.min_p = v;
            if (flag == "--repeat-penalty") p.repeat_penalty = v;
            if (flag == "--frequency-penalty") p.frequency_penalty = v;
            if (flag == "--presence-penalty") p.presence_penalty = v;
        });
    }
    if (auto k = a.integer("--top-k")) given.emplace_back("--top-k", [k](SamplerParams& p) { p.top_k = int32_t(*k); });
    for (auto& g : given) g.second(sp);
    const std::vector<std::string> stops = a.values("--stop");
    const auto threads = a.integer("--threads");
    const std::string backend = a.value("--backend").value_or("cpu");
    const bool chat = a.flag("--chat");
    const auto ctx = a.integer("--ctx");
    const bool bos = a.flag("--bos"), no_bos = a.flag("--no-bos");
    const std::string kv = a.value("--kv-type").value_or("f16");
    const auto park = a.value("--park");
    const auto wake = a.value("--wake");
    a.finish();
    if (wake && (chat || bos || no_bos)) throw UsageError("--wake appends -p as-is: --chat, --bos and --no-bos do not apply");
    if (wake && seed) throw UsageError("--seed does not combine with --wake (the parked RNG state continues)");

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
    if (!wake) std::fprintf(stderr, "seed: %" PRIu64 "\n", sp.seed);

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
    std::fprintf(stderr, "device: %s\n", s.backend().device().c_str());

    std::optional<Sampler> woken;
    std::vector<TokenId> more;
    std::vector<std::string> stop_strings = stops;
    if (wake) {
        const auto t0 = std::chrono::steady_clock::now();
        auto rep = s.wake(*wake);
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (!rep) throw InputError(rep.message());
        if (!rep.value().problem.empty())
            std::fprintf(stderr, "wake: %s; re-prefilling the parked tokens\n", rep.value().problem.c_str());
        std::fprintf(stderr, "wake: restored %" PRId64 " cells, recomputed %" PRId64 "\n", rep.value().restored_cells,
                     rep.value().recomputed_cells);
        std::fprintf(stderr, "wake: %.1f ms\n", ms);
        if (rep.value().sampler) {
            woken = std::move(rep.value().sampler);
            SamplerParams p = woken->params();
            for (auto& g : given) g.second(p);
            if (auto v = p.validate(); !v) throw UsageError(v.message());
            woken->set_params(p);
        } else {
            std::fprintf(stderr, "wake: the parked sampler state is unusable; starting a sampler from the flags\n");
        }
        // The parked generation's stop strings continue too, unless --stop gives others.
        if (stop_strings.empty()) stop_strings = s.held().stops;
        more = model.value()->tokenizer().tokenize(*prompt, TokenizeOptions{});
        if (int64_t(s.tokens().size() + more.size()) + 1 > s.n_ctx())
            throw InputError("the woken context and -p do not fit the context of " + std::to_string(s.n_ctx()) + " (see --ctx)");
        if (!more.empty())
            if (auto st = s.feed(more); !st) throw RuntimeFailure(st.message());
    }
    if (wake) std::fprintf(stderr, "seed: %" PRIu64 "\n", woken ? woken->params().seed : sp.seed);

    const std::string text = wake ? std::string() : chat ? chat_prompt(*model.value(), *prompt) : *prompt;
    std::optional<bool> want_bos;
    if (bos) want_bos = true;
    if (no_bos) want_bos = false;
    std::vector<TokenId> ids;
    if (!wake) {
        auto r = prompt_tokens(*model.value(), text, want_bos, chat);
        if (!r) throw InputError(r.message());
        ids = std::move(r.value());
        if (int64_t(ids.size()) > s.n_ctx())
            throw InputError("the prompt is " + std::to_string(ids.size()) + " tokens, longer than the context of " +
                             std::to_string(s.n_ctx()) + " (see --ctx)");
        if (auto st = s.feed(ids); !st) throw RuntimeFailure(st.message());
    } else if (!woken) {
        ids = s.tokens();
        if (s.pending()) ids.push_back(*s.pending());
    }
    if (wake) ids.insert(ids.end(), more.begin(), more.end());

    Sampler sampler = woken ? std::move(*woken) : Sampler(sp, model.value()->config().n_vocab);
    sampler.accept(ids);
    GenerateOptions go;
    go.max_tokens = n;
    go.stop = stop_strings;
    // With --park the text that is not final yet (a partial UTF-8 character, a possible start
    // of a stop string) stays in the context, so the woken run continues it exactly.
    go.resumable = bool(park);
    auto reason = s.generate(sampler, go, [](std::string_view piece) {
        write_stdout(std::string(piece));
        std::fflush(stdout);
        return true;
    });
    if (!reason) throw RuntimeFailure(reason.message());
    if (park) {
        const auto t0 = std::chrono::steady_clock::now();
        if (auto st = s.park(*park, &sampler); !st) throw RuntimeFailure(st.message());
        std::fprintf(stderr, "park: %zu cells in %.1f ms\n", s.tokens().size(),
                     std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::fprintf(stderr, "stop: %s\n", std::string(stop_reason_name(reason.value())).c_str());
    const SessionStats st = s.stats();
    const double prefill = st.prefill_tok_s();
    const double decode = st.decode_tok_s();
    std::fprintf(stderr, "stats: prompt_tokens=%" PRId64 " prefill_tok_s=%.2f decode_tok_s=%.2f ttft_ms=%.2f backend=%s\n",
                 st.prompt_tokens, prefill, decode, st.ttft_seconds * 1000.0, std::string(s.backend().name()).c_str());
    return 0;
}

const Command kRun("run", "generate text from a prompt (streams the text; stats on stderr)", kUsage, run);

}  // namespace
}  // namespace arbor::cli
