// A context of arbor/session.hpp: making one, appending tokens, the poison checks and the
// statistics. Generation is in session_generate.cpp, fork and copy in session_fork.cpp, park
// and wake in session_park.cpp.
#include <arbor/contexts.hpp>
#include <arbor/session.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace arbor {

std::string_view stop_reason_name(StopReason r) {
    switch (r) {
    case StopReason::Length: return "length";
    case StopReason::EndOfGeneration: return "eog";
    case StopReason::StopString: return "stop";
    case StopReason::Callback: return "callback";
    case StopReason::ContextFull: return "context_full";
    case StopReason::Cancelled: return "cancelled";
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
    auto pool = Contexts::create(std::move(model), opts);
    if (!pool) return pool.error();
    return pool.value()->create_context();
}

Session::Session(std::shared_ptr<Contexts> pool, std::unique_ptr<KvSequence> seq)
    : pool_(std::move(pool)), seq_(std::move(seq)) {
    stats_.context_tokens = seq_->size();
}

Session::~Session() = default;

double Session::clock_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void Session::set_busy(bool on) {
    std::lock_guard lock(stats_mu_);
    stats_.busy = on;
}

const Model& Session::model() const { return pool_->model(); }
Backend& Session::backend() { return pool_->backend(); }

SessionStats Session::stats() const {
    std::lock_guard lock(stats_mu_);
    return stats_;
}

void Session::reset_stats() {
    std::lock_guard lock(stats_mu_);
    const bool busy = stats_.busy;
    stats_ = SessionStats{};
    stats_.busy = busy;
    stats_.context_tokens = seq_->size();
    prompt_started_ = -1;
    ttft_pending_ = true;
}

void Session::note_prompt_start() {
    if (prompt_started_ < 0) prompt_started_ = clock_seconds();
}

bool Session::cancel_requested(const GenerateOptions* opts) {
    if (opts && opts->cancel && opts->cancel->load(std::memory_order_relaxed)) return true;
    return cancel_.exchange(false, std::memory_order_relaxed);
}

Status Session::feed(std::span<const TokenId> tokens) {
    const BusyScope busy(this);
    if (!tokens.empty()) end_held_text();
    const std::optional<TokenId> p = pending_;
    if (!p) {
        auto r = eval_tokens(tokens, false);
        if (!r) return r.error();
        return {};
    }
    std::vector<TokenId> all{*p};
    all.insert(all.end(), tokens.begin(), tokens.end());
    pending_.reset();
    auto r = eval_tokens(all, false);
    if (!r) {
        pending_ = p;
        return r.error();
    }
    return {};
}

Result<int64_t> Session::append(std::span<const TokenId> tokens) {
    const BusyScope busy(this);
    if (!tokens.empty()) end_held_text();
    const std::optional<TokenId> p = pending_;
    if (!p) return eval_tokens(tokens, true);
    std::vector<TokenId> all{*p};
    all.insert(all.end(), tokens.begin(), tokens.end());
    pending_.reset();
    auto r = eval_tokens(all, true);
    if (!r || r.value() == 0) {
        pending_ = p;
        if (!r) return r.error();
        return int64_t(0);
    }
    return r.value() - 1;
}

void Session::end_held_text() {
    if (held_.detok && !held_.detok->held.empty()) {
        StreamDetokenizer d(model().tokenizer(), true, false);
        if (d.restore(*held_.detok)) held_.text += d.finish();
    }
    held_.detok.reset();
    held_.ended.reset();
    if (!held_.text.empty()) held_.text_final = true;
}

Result<int64_t> Session::eval_tokens(std::span<const TokenId> tokens, bool cancellable) {
    if (tokens.empty()) return int64_t(0);
    note_prompt_start();
    if (seq_->size() + int64_t(tokens.size()) > seq_->capacity())
        return make_error("the prompt needs " + std::to_string(seq_->size() + int64_t(tokens.size())) +
                          " tokens but the context holds " + std::to_string(seq_->capacity()));
    if (auto st = check_cells(); !st) return st.error();
    const int64_t size_before = seq_->size();
    const size_t chunk = size_t(pool_->prefill_chunk());
    size_t fed = 0;
    for (size_t at = 0; at < tokens.size(); at += chunk) {
        if (cancellable && at > 0 && cancel_requested(nullptr)) break;
        const double t0 = clock_seconds();
        const size_t n = std::min(tokens.size() - at, chunk);
        const bool last = at + n == tokens.size();
        // A cancellable append keeps what it fed, so every pass gives its last logits.
        const LogitsMode mode = last || cancellable ? LogitsMode::Last : LogitsMode::None;
        if (auto st = run_pass(tokens.subspan(at, n), mode); !st) {
            seq_->truncate(size_before);
            return st.error();
        }
        if (mode == LogitsMode::Last)
            if (auto st = check_logits(size_before); !st) return st.error();
        fed = at + n;
        std::lock_guard lock(stats_mu_);
        stats_.prompt_tokens += int64_t(n);
        stats_.prefill_seconds += clock_seconds() - t0;
        stats_.context_tokens = seq_->size();
    }
    if (fed == 0) return int64_t(0);
    logits_.assign(pass_.row(0), pass_.row(0) + pass_.n_vocab);
    tokens_.insert(tokens_.end(), tokens.begin(), tokens.begin() + std::ptrdiff_t(fed));
    return int64_t(fed);
}

Status Session::eval_one(TokenId id) {
    if (auto st = check_cells(); !st) return st;
    const double t0 = clock_seconds();
    if (auto st = run_pass(std::span<const TokenId>(&id, 1), LogitsMode::Last); !st) return st;
    if (auto st = check_logits(seq_->size() - 1); !st) return st;
    logits_.assign(pass_.row(0), pass_.row(0) + pass_.n_vocab);
    tokens_.push_back(id);
    std::lock_guard lock(stats_mu_);
    stats_.decode_seconds += clock_seconds() - t0;
    ++stats_.decode_evals;
    stats_.context_tokens = seq_->size();
    return {};
}

Status Session::run_pass(std::span<const TokenId> tokens, LogitsMode mode) {
    BatchEntry e{seq_.get(), tokens, mode};
    return pool_->backend().eval(std::span<const BatchEntry>(&e, 1), &pass_);
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

}  // namespace arbor
