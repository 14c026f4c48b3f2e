#include "engine/EngineChatBackend.h"

#include "store/ModelRecords.h"

#include <arbor/gguf.hpp>
#include <arbor/json.hpp>
#include <arbor/sampling.hpp>
#include <arbor/session.hpp>
#include <arbor/tokenizer.hpp>

#include <QElapsedTimer>
#include <QFileInfo>

#include <algorithm>
#include <cctype>
#include <climits>

namespace arbor::app {
namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

// The longest suffix of `text` that is a proper prefix of one of `stops`.
size_t heldBack(const std::string& text, const std::vector<std::string>& stops) {
    size_t keep = 0;
    for (const std::string& s : stops)
        for (size_t k = std::min(text.size(), s.size() - 1); k > keep; --k)
            if (text.compare(text.size() - k, k, s, 0, k) == 0) {
                keep = k;
                break;
            }
    return keep;
}

}  // namespace

bool EngineChatBackend::load(const QString& path, BackendInfo* info, QString* why) {
    if (m_model && path == m_path) {  // loaded once, shared by every conversation that uses it
        *info = m_info;
        return true;
    }
    m_backend.reset();
    m_seq.reset();
    m_cache.reset();
    m_model.reset();
    m_tokens.clear();
    m_logitsFor = 0;
    m_template.reset();
    m_fingerprint.clear();

    auto model = Model::load(path.toStdString());
    if (!model) {
        *why = q(model.message());
        return false;
    }
    BackendOptions bo;
    bo.threads = m_threads;
    QString gpuNote;
    std::unique_ptr<Backend> backend;
    if (m_preference != QLatin1String("cpu")) {
        auto gpu = make_backend("gpu", model.value(), bo);
        if (gpu) {
            backend = std::move(gpu.value());
        } else {
            gpuNote = q(gpu.message());
            if (m_preference == QLatin1String("gpu")) gpuNote = QStringLiteral("GPU asked for, but: %1; using the CPU").arg(gpuNote);
        }
    } else {
        gpuNote = QStringLiteral("the CPU backend is chosen in the settings");
    }
    if (!backend) {
        auto cpu = make_backend("cpu", model.value(), bo);
        if (!cpu) {
            *why = q(cpu.message());
            return false;
        }
        backend = std::move(cpu.value());
    }
    const Model& m = *model.value();
    SessionOptions so;
    m_nCtx = default_context(m, so);
    m_kvType = so.kv_type;
    m_cache = backend->make_kv_cache(so.kv_type, (m_nCtx + kKvPageCells - 1) / kKvPageCells);
    m_seq = std::make_unique<KvSequence>(m_cache, m_nCtx);

    // The model's chat template, or ChatML when it has none or it does not parse.
    std::string source;
    if (const GgufValue* t = m.gguf().find("tokenizer.chat_template"); t && t->type == GgufValueType::STRING) source = std::string(t->str);
    m_chatmlFallback = source.empty();
    if (!source.empty()) {
        auto parsed = ChatTemplate::parse(source);
        if (parsed) {
            m_template = std::move(parsed.value());
        } else {
            m_chatmlFallback = true;
        }
    }
    if (m_chatmlFallback) m_template = ChatTemplate::parse(chatml_fallback_template()).value();
    m_thinking = !m_chatmlFallback && source.find("enable_thinking") != std::string::npos;

    m_backend = std::move(backend);
    m_model = model.value();
    m_path = path;
    m_fingerprint = arbor::app::modelFingerprint(path, nullptr);
    m_info = {};
    m_info.modelPath = path;
    const GgufValue* name = m.gguf().find("general.name");
    m_info.modelName = name && name->type == GgufValueType::STRING && !name->str.empty() ? q(std::string(name->str))
                                                                                        : QFileInfo(path).completeBaseName();
    m_info.architecture = q(m.config().arch_name);
    m_info.backend = q(std::string(m_backend->name()));
    m_info.device = q(m_backend->device());
    m_info.gpuNote = gpuNote;
    m_info.contextLength = int(m_nCtx);
    m_info.thinkingSupported = m_thinking;
    *info = m_info;
    return true;
}

std::optional<std::string> EngineChatBackend::renderPrompt(const QVector<ChatTurn>& turns, const GenerationParams& params, QString* why,
                                                          bool generationPrompt) {
    if (!m_model || !m_template) {
        *why = QStringLiteral("no model is loaded");
        return std::nullopt;
    }
    json::Value messages = json::Value::array();
    for (const ChatTurn& t : turns) {
        json::Value m = json::Value::object();
        m["role"] = t.role.toStdString();
        m["content"] = t.content.toStdString();
        messages.push_back(std::move(m));
    }
    ChatTemplateOptions opt;
    opt.add_generation_prompt = generationPrompt;
    const Tokenizer& tok = m_model->tokenizer();
    if (tok.bos() != kNoToken) opt.bos_token = tok.token_text(tok.bos());
    if (tok.eos() != kNoToken) opt.eos_token = tok.token_text(tok.eos());
    if (m_thinking) opt.extra_vars.push_back({"enable_thinking", json::Value(params.enableThinking)});
    auto text = m_template->render(messages, json::Value(nullptr), opt);
    if (!text && !m_chatmlFallback) {
        // The model's own template failed on this conversation: ChatML still gets a reply.
        auto chatml = ChatTemplate::parse(chatml_fallback_template());
        if (chatml) text = chatml.value().render(messages, json::Value(nullptr), opt);
    }
    if (!text) {
        *why = QStringLiteral("the chat template failed to render: %1").arg(q(text.message()));
        return std::nullopt;
    }
    return text.value();
}

std::optional<std::vector<TokenId>> EngineChatBackend::tokenize(const QVector<ChatTurn>& turns, const GenerationParams& params,
                                                                 std::string* textOut, QString* why, bool generationPrompt) {
    auto text = renderPrompt(turns, params, why, generationPrompt);
    if (!text) return std::nullopt;
    // The template writes BOS itself where the model wants it; add it only when it did not.
    auto ids = prompt_tokens(*m_model, *text, std::nullopt, true);
    if (!ids) {
        *why = q(ids.message());
        return std::nullopt;
    }
    if (textOut) *textOut = std::move(*text);
    return std::move(ids.value());
}

int EngineChatBackend::promptTokens(const QVector<ChatTurn>& turns, const GenerationParams& params, QString* why) {
    auto ids = tokenize(turns, params, nullptr, why);
    return ids ? int(ids->size()) : -1;
}

bool EngineChatBackend::feed(const std::vector<TokenId>& ids, size_t from, size_t to, const std::atomic<bool>& stop, QString* why) {
    const size_t chunk = 256;
    for (size_t at = from; at < to; at += chunk) {
        if (stop.load()) return false;
        const size_t n = std::min(chunk, to - at);
        const bool last = at + n == to;
        BatchEntry e{m_seq.get(), std::span<const TokenId>(ids.data() + at, n), last ? LogitsMode::Last : LogitsMode::None};
        if (auto st = m_backend->eval(std::span<const BatchEntry>(&e, 1), &m_pass); !st) {
            m_tokens.resize(size_t(m_seq->size()));
            *why = q(st.message());
            return false;
        }
        m_tokens.insert(m_tokens.end(), ids.begin() + qsizetype(at), ids.begin() + qsizetype(at + n));
        if (last) m_logitsFor = m_tokens.size();
    }
    return true;
}

GenerationOutcome EngineChatBackend::generate(const QVector<ChatTurn>& turns, const GenerationParams& params,
                                              const std::atomic<bool>& cancel,
                                              const std::function<void(const PromptFacts&)>& onPrefilled,
                                              const std::function<bool(const QString&)>& onPiece) {
    GenerationOutcome out;
    auto fail = [&](const QString& why) {
        out.end = GenerationOutcome::End::Failed;
        out.stopReason = QStringLiteral("error");
        out.error = why;
        out.contextUsed = m_seq ? int(m_seq->size()) : 0;
        return out;
    };
    auto cancelled = [&] {
        out.end = GenerationOutcome::End::Cancelled;
        out.stopReason = QStringLiteral("cancelled");
        out.contextUsed = int(m_seq->size());
        return out;
    };
    QString why;
    std::string text;
    auto prompt = tokenize(turns, params, &text, &why);
    if (!prompt) return fail(why);
    const std::vector<TokenId>& ids = *prompt;
    out.promptTokens = int(ids.size());
    if (int64_t(ids.size()) >= m_nCtx)
        return fail(QStringLiteral("the prompt is %1 tokens, the context holds %2").arg(ids.size()).arg(m_nCtx));

    // Keep the cells of the common prefix; at least one token is fed to get fresh logits.
    size_t common = 0;
    while (common < m_tokens.size() && common < ids.size() && m_tokens[common] == ids[common]) ++common;
    common = std::min(common, ids.size() - 1);
    m_seq->truncate(int64_t(common));
    m_tokens.resize(common);
    m_logitsFor = 0;

    QElapsedTimer prefill;
    prefill.start();
    if (!feed(ids, common, ids.size(), cancel, &why)) {
        if (why.isEmpty()) return cancelled();
        return fail(why);
    }
    out.prefillSeconds = std::max(prefill.nsecsElapsed() * 1e-9, 1e-9);
    PromptFacts facts;
    facts.promptTokens = int(ids.size());
    facts.reusedTokens = int(common);
    {
        std::string tail = text;
        while (!tail.empty() && std::isspace(static_cast<unsigned char>(tail.back()))) tail.pop_back();
        facts.opensReasoning = tail.size() >= 7 && tail.compare(tail.size() - 7, 7, "<think>") == 0;
    }
    onPrefilled(facts);

    SamplerParams sp;
    sp.temperature = float(params.temperature);
    sp.top_k = params.topK;
    sp.top_p = float(params.topP);
    sp.min_p = float(params.minP);
    sp.repeat_penalty = float(params.repeatPenalty);
    sp.seed = params.seed;
    if (auto v = sp.validate(); !v) return fail(q(v.message()));
    Sampler sampler(sp, m_model->config().n_vocab);
    sampler.accept(std::span<const TokenId>(ids));
    std::vector<float> logits(m_pass.row(0), m_pass.row(0) + m_pass.n_vocab);

    const Tokenizer& tok = m_model->tokenizer();
    StreamDetokenizer detok(tok);
    std::vector<std::string> stops;
    if (m_chatmlFallback) stops = {"<|im_end|>", "<|im_start|>"};
    std::string pending;
    out.stopReason = QStringLiteral("length");
    auto deliver = [&](size_t n) {
        if (n == 0) return onPiece(QString());
        const bool more = onPiece(QString::fromUtf8(pending.data(), qsizetype(n)));
        pending.erase(0, n);
        return more;
    };
    const int maxTokens = params.maxTokens > 0 ? params.maxTokens : INT_MAX;
    for (int i = 0; i < maxTokens; ++i) {
        if (cancel.load()) return cancelled();
        const TokenId id = sampler.sample(logits);
        if (tok.is_eog(id)) {
            out.stopReason = QStringLiteral("eog");
            break;
        }
        sampler.accept(id);
        ++out.generatedTokens;
        pending += detok.push(id);
        size_t hit = std::string::npos;
        for (const std::string& s : stops) hit = std::min(hit, pending.find(s));
        if (hit != std::string::npos) {
            pending.resize(hit);
            deliver(pending.size());
            out.stopReason = QStringLiteral("eog");
            out.contextUsed = int(m_seq->size());
            return out;
        }
        if (!deliver(pending.size() - heldBack(pending, stops))) return cancelled();
        if (i + 1 == maxTokens) break;
        if (m_seq->size() + 1 > m_seq->capacity()) {
            out.stopReason = QStringLiteral("context-full");
            break;
        }
        BatchEntry e{m_seq.get(), std::span<const TokenId>(&id, 1), LogitsMode::Last};
        if (auto st = m_backend->eval(std::span<const BatchEntry>(&e, 1), &m_pass); !st) return fail(q(st.message()));
        m_tokens.push_back(id);
        m_logitsFor = m_tokens.size();
        logits.assign(m_pass.row(0), m_pass.row(0) + m_pass.n_vocab);
    }
    pending += detok.finish();
    if (!pending.empty()) deliver(pending.size());
    out.contextUsed = int(m_seq->size());
    return out;
}

}  // namespace arbor::app
