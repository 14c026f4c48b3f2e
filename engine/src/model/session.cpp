// The generation loop of arbor/session.hpp.
#include <arbor/session.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace arbor {
namespace {

double now_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Length of the longest suffix of `text` that is a proper prefix of some stop string.
size_t held_back(std::string_view text, const std::vector<std::string>& stops) {
    size_t keep = 0;
    for (const std::string& s : stops) {
        for (size_t k = std::min(text.size(), s.size() - 1); k > keep; --k)
            if (text.substr(text.size() - k) == std::string_view(s).substr(0, k)) {
                keep = k;
                break;
            }
    }
    return keep;
}

}  // namespace

std::string_view stop_reason_name(StopReason r) {
    switch (r) {
    case StopReason::Length: return "length";
    case StopReason::EndOfGeneration: return "eog";
    case StopReason::StopString: return "stop";
    case StopReason::Callback: return "callback";
    case StopReason::ContextFull: return "context_full";
    }
    return "?";
}

Result<std::vector<TokenId>> prompt_tokens(const Model& model, std::string_view text, std::optional<bool> bos,
                                           bool parse_special) {
    const Tokenizer& tok = model.tokenizer();
    TokenizeOptions to;
    to.parse_special = parse_special;
    std::vector<TokenId> ids = tok.tokenize(text, to);
    const bool want_bos = bos.value_or(tok.add_bos());
    if (want_bos) {
        if (tok.bos() == kNoToken) return make_error("the model has no BOS token, so --bos cannot add one");
        if (ids.empty() || ids.front() != tok.bos()) ids.insert(ids.begin(), tok.bos());
    }
    if (ids.empty()) return make_error("the prompt is empty and no BOS token is added: nothing to start from");
    return ids;
}

int64_t default_context(const Model& model, const SessionOptions& opts) {
    if (opts.n_ctx > 0) return opts.n_ctx;
    const int64_t per_cell = model.kv_bytes_per_cell(kv_type_bytes(opts.kv_type));
    int64_t cap = per_cell > 0 ? opts.kv_budget_bytes / per_cell : model.config().n_ctx_train;
    cap = std::max<int64_t>(kKvPageCells, cap / kKvPageCells * kKvPageCells);
    return std::min(model.config().n_ctx_train, cap);
}

Result<std::unique_ptr<Session>> Session::create(std::shared_ptr<const Model> model, const SessionOptions& opts) {
    if (!model) return make_error("no model");
    if (opts.prefill_chunk < 1) return make_error("the prefill chunk must be at least 1 token");
    std::unique_ptr<Session> s(new Session());
    BackendOptions bo;
    bo.threads = opts.threads;
    bo.max_batch_tokens = opts.prefill_chunk;
    auto be = make_backend(opts.backend, model, bo);
    if (!be) return be.error();
    const int64_t n_ctx = default_context(*model, opts);
    s->backend_ = std::move(be.value());
    s->cache_ = s->backend_->make_kv_cache(opts.kv_type, (n_ctx + kKvPageCells - 1) / kKvPageCells);
    s->seq_ = std::make_unique<KvSequence>(s->cache_, n_ctx);
    s->chunk_ = opts.prefill_chunk;
    s->kv_type_ = opts.kv_type;
    s->model_ = std::move(model);
    return s;
}

Status Session::feed(std::span<const TokenId> tokens) {
    if (pending_) {
        std::vector<TokenId> all{*pending_};
        all.insert(all.end(), tokens.begin(), tokens.end());
        const TokenId p = *pending_;
        pending_.reset();
        auto st = eval_tokens(all);
        if (!st) pending_ = p;
        return st;
    }
    return eval_tokens(tokens);
}

Status Session::eval_tokens(std::span<const TokenId> tokens) {
    if (tokens.empty()) return {};
    const double t0 = now_seconds();
    if (tokens_.empty()) prompt_started_ = t0;
    if (seq_->size() + int64_t(tokens.size()) > seq_->capacity())
        return make_error("the prompt needs " + std::to_string(seq_->size() + int64_t(tokens.size())) +
                          " tokens but the context holds " + std::to_string(seq_->capacity()));
    if (auto st = check_cells(); !st) return st;
    const int64_t size_before = seq_->size();
    for (size_t at = 0; at < tokens.size(); at += size_t(chunk_)) {
        const size_t n = std::min(tokens.size() - at, size_t(chunk_));
        const bool last = at + n == tokens.size();
        BatchEntry e{seq_.get(), tokens.subspan(at, n), last ? LogitsMode::Last : LogitsMode::None};
        if (auto st = backend_->eval(std::span<const BatchEntry>(&e, 1), &pass_); !st) return st;
    }
    if (auto st = check_logits(size_before); !st) return st;
    logits_.assign(pass_.row(0), pass_.row(0) + pass_.n_vocab);
    tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
    stats_.prompt_tokens += int64_t(tokens.size());
    stats_.prefill_seconds += now_seconds() - t0;
    return {};
}

Status Session::check_cells() const {
    if (const int64_t bad = seq_->poisoned_from(); bad >= 0)
        return make_error("KV cell " + std::to_string(bad) +
                          " is poisoned (invalidated): the context must be recomputed from there");
    return {};
}

Status Session::check_logits(int64_t size_before) {
    const float* row = pass_.row(0);
    bool nan = false;
    for (int64_t i = 0; i < pass_.n_vocab && !nan; ++i) nan = std::isnan(row[i]);
    if (!nan) return {};
    const int64_t bad = seq_->first_poisoned(0, seq_->size());
    seq_->truncate(size_before);
    if (bad >= 0)
        return make_error("KV cell " + std::to_string(bad) +
                          " is poisoned (invalidated): the context must be recomputed from there");
    return make_error("the model produced NaN logits");
}

Result<StopReason> Session::generate(Sampler& sampler, const GenerateOptions& opts,
                                     const std::function<bool(std::string_view)>& on_text) {
    if (pending_) {
        const std::vector<TokenId> one{*pending_};
        pending_.reset();
        if (seq_->size() + 1 > seq_->capacity()) return StopReason::ContextFull;
        if (auto st = check_cells(); !st) return st.error();
        const double t0 = now_seconds();
        BatchEntry e{seq_.get(), std::span<const TokenId>(one), LogitsMode::Last};
        if (auto st = backend_->eval(std::span<const BatchEntry>(&e, 1), &pass_); !st) return st.error();
        if (auto st = check_logits(seq_->size() - 1); !st) return st.error();
        logits_.assign(pass_.row(0), pass_.row(0) + pass_.n_vocab);
        tokens_.push_back(one[0]);
        stats_.decode_seconds += now_seconds() - t0;
        ++stats_.decode_evals;
    }
    if (logits_.empty()) return make_error("nothing to continue from: feed a prompt first");
    if (auto st = check_cells(); !st) return st.error();
    const Tokenizer& tok = model_->tokenizer();
    // The generated text begins a text when nothing but special tokens (BOS) came before it:
    // then SentencePiece's leading space is dropped, as a whole-sequence detokenize does.
    const bool text_start = std::all_of(tokens_.begin(), tokens_.end(), [&](TokenId t) { return tok.is_special(t); });
    StreamDetokenizer detok(tok, true, text_start);
    if (detok_) {
        if (auto st = detok.restore(*detok_); !st) return st.error();
        detok_.reset();
    }
    std::optional<TokenId> unfed;
    std::string pending;
    StopReason reason = StopReason::Length;
    bool stopped_by_string = false;
    auto emit = [&](std::string_view text) { return text.empty() || on_text(text); };
    for (int64_t i = 0; i < opts.max_tokens; ++i) {
        const TokenId id = sampler.sample(last_logits());
        if (stats_.generated_tokens == 0 && stats_.ttft_seconds == 0) stats_.ttft_seconds = now_seconds() - prompt_started_;
        if (opts.stop_at_eog && tok.is_eog(id)) {
            reason = StopReason::EndOfGeneration;
            break;
        }
        sampler.accept(id);
        unfed = id;
        ++stats_.generated_tokens;
        pending += detok.push(id);
        size_t hit = std::string::npos;
        for (const std::string& s : opts.stop)
            if (!s.empty()) hit = std::min(hit, pending.find(s));
        if (hit != std::string::npos) {
            emit(std::string_view(pending).substr(0, hit));
            pending.clear();
            reason = StopReason::StopString;
            stopped_by_string = true;
            break;
        }
        const size_t keep = held_back(pending, opts.stop);
        if (!emit(std::string_view(pending).substr(0, pending.size() - keep))) {
            pending.clear();
            reason = StopReason::Callback;
            break;
        }
        pending.erase(0, pending.size() - keep);
        if (i + 1 == opts.max_tokens) break;
        if (seq_->size() + 1 > seq_->capacity()) {
            reason = StopReason::ContextFull;
            break;
        }
        const double t0 = now_seconds();
        BatchEntry e{seq_.get(), std::span<const TokenId>(&id, 1), LogitsMode::Last};
        if (auto st = backend_->eval(std::span<const BatchEntry>(&e, 1), &pass_); !st) return st.error();
        if (auto st = check_logits(seq_->size() - 1); !st) return st.error();
        logits_.assign(pass_.row(0), pass_.row(0) + pass_.n_vocab);
        tokens_.push_back(id);
        unfed.reset();
        stats_.decode_seconds += now_seconds() - t0;
        ++stats_.decode_evals;
    }
    if (opts.resumable) {
        pending_ = unfed;
        detok_ = detok.state();
        emit(pending);
    } else if (!stopped_by_string && reason != StopReason::Callback) {
        pending += detok.finish();
        emit(pending);
    }
    return reason;
}

}  // namespace arbor
