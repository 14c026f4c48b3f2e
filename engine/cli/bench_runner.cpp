// Contexts, forks and timed repetitions of `arbor-cli bench` (see bench_runner.hpp).
#include "bench_runner.hpp"

#include "core/splitmix64.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace arbor::cli::bench {
namespace {

int64_t pages_for(int64_t cells) { return (cells + kKvPageCells - 1) / kKvPageCells; }

// `n` token ids in [0, n_vocab) from a splitmix64 stream.
std::vector<TokenId> random_tokens(uint64_t& state, int64_t n, int64_t n_vocab) {
    std::vector<TokenId> v(size_t(std::max<int64_t>(n, 0)));
    for (TokenId& t : v) t = TokenId(splitmix64(state) % uint64_t(n_vocab));
    return v;
}

TokenId argmax(const float* row, int64_t n) {
    int64_t best = 0;
    for (int64_t i = 1; i < n; ++i)
        if (row[i] > row[best]) best = i;
    return TokenId(best);
}

}  // namespace

BenchRunner::BenchRunner(Backend& backend, std::vector<RowSpec> rows, int64_t max_batch_tokens, uint64_t seed,
                         std::string park_dir)
    : backend_(backend), max_batch_(std::max<int64_t>(max_batch_tokens, 1)), seed_(seed), park_dir_(std::move(park_dir)) {
    // Depth of each context: the deepest row reading it (every row reads context 0; park, wake
    // and reprefill rows its token ids). Capacity: the furthest any row writes.
    int64_t row_pages = 0;
    for (RowSpec& r : rows) {
        if (int64_t(depth_.size()) < r.contexts) depth_.resize(size_t(r.contexts), 0);
        for (int64_t k = 0; k < r.contexts; ++k) depth_[size_t(k)] = std::max(depth_[size_t(k)], r.depth);
        capacity_ = std::max(capacity_, r.depth + std::max<int64_t>(r.tokens, r.kind == RowKind::Wake ? 1 : 0));
        switch (r.kind) {
        case RowKind::Decode:
        case RowKind::Append:
            // Private pages of a row's fork: the shared page holding its depth (copied) and the new ones.
            row_pages += r.contexts * (pages_for(r.depth % kKvPageCells + r.tokens) + 1);
            break;
        case RowKind::Park: break;  // a fork that is only read
        case RowKind::Wake:         // the woken cells and its check step, and the never-parked fork's step
            row_pages += pages_for(r.depth + 1) + pages_for(r.depth % kKvPageCells + 1) + 1;
            break;
        case RowKind::Reprefill: row_pages += pages_for(r.depth); break;
        }
        runs_.push_back(RowRun{std::move(r), {}, 0, std::nullopt});
    }
    kv_pages_ = row_pages + 2;
    for (int64_t d : depth_) kv_pages_ += pages_for(d) + 1;
}

BenchRunner::~BenchRunner() {
    seqs_.clear();  // forks release their pages before the contexts and the cache go
    contexts_.clear();
    if (!keep_park_) remove_park_files();
}

Status BenchRunner::prepare(const std::function<void(const std::string&)>& progress) {
    const ModelConfig& c = backend_.model().config();
    const std::vector<int64_t>& depth = depth_;
    cache_ = backend_.make_kv_cache(KvType::F16, kv_pages_);
    if (!cache_) return make_error("the backend made no KV cache");

    ids_.assign(depth.size(), {});
    for (size_t k = 0; k < depth.size(); ++k) {
        auto seq = std::make_unique<KvSequence>(cache_, capacity_);
        if (k < context_files_.size()) {
            const auto t0 = std::chrono::steady_clock::now();
            if (auto s = wake_context(k, *seq, depth[k]); !s) return s;
            const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            char line[160];
            std::snprintf(line, sizeof line, "context %zu/%zu: %lld cells woken in %.2f s from ", k + 1, depth.size(),
                          (long long)depth[k], secs);
            if (progress) progress(line + context_files_[k] + " (not prefilled)");
            contexts_.push_back(std::move(seq));
            continue;
        }
        uint64_t state = seed_ ^ (0x9e3779b97f4a7c15ULL * (k + 1));
        auto ids = random_tokens(state, depth[k], c.n_vocab);
        const auto t0 = std::chrono::steady_clock::now();
        auto report = [&](int64_t done, bool final) {
            const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            char line[160];
            std::snprintf(line, sizeof line, "context %zu/%zu: %lld%s cells in %.2f s (%.0f tokens/s)", k + 1,
                          depth.size(), (long long)done, final ? "" : (" of " + std::to_string(depth[k])).c_str(), secs,
                          secs > 0 ? double(done) / secs : 0.0);
            if (progress) progress(line);
        };
        double last_report = 0;
        const Status built = prefill(*seq, ids, false, [&](int64_t done) {
            const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (secs - last_report >= 5.0 && done < depth[k]) {  // a slow build shows it is moving
                report(done, false);
                last_report = secs;
            }
        });
        if (!built) return make_error("building context " + std::to_string(k + 1) + ": " + built.message());
        report(depth[k], true);
        contexts_.push_back(std::move(seq));
        ids_[k] = std::move(ids);
    }
    if (!save_dir_.empty())
        if (auto s = save_contexts(); !s) return s;

    seqs_.resize(runs_.size());
    tokens_.resize(runs_.size());
    for (size_t i = 0; i < runs_.size(); ++i) {
        const RowSpec& r = runs_[i].spec;
        uint64_t state = seed_ ^ (0xd1b54a32d192ed03ULL * (i + 1));
        for (int64_t k = 0; k < r.contexts; ++k) {
            // Wake and reprefill rows make a fresh sequence per repetition; the others read a fork.
            const bool fresh = r.kind == RowKind::Wake || r.kind == RowKind::Reprefill;
            seqs_[i].push_back(fresh ? std::make_unique<KvSequence>(cache_, capacity_) : contexts_[size_t(k)]->fork(r.depth));
            // Decode rows start from one random token and continue greedily; a wake row's check
            // step feeds one.
            const bool one = r.kind == RowKind::Decode || r.kind == RowKind::Wake;
            tokens_[i].push_back(random_tokens(state, one ? 1 : r.tokens, c.n_vocab));
        }
    }
    return prepare_park_files();
}

Status BenchRunner::wake_context(size_t k, KvSequence& seq, int64_t depth) {
    auto read = restore(context_files_[k], seq, depth);
    if (!read) {
        context_file_bad_ = true;
        return make_error("--context " + context_files_[k] + " (context " + std::to_string(k + 1) + "): " +
                          read.message());
    }
    ids_[k] = std::move(read.value().contents.tokens);
    return {};
}


Status BenchRunner::prefill(KvSequence& seq, std::span<const TokenId> ids, bool logits,
                            const std::function<void(int64_t)>& after_pass) {
    PassLogits none;
    const int64_t total = int64_t(ids.size());
    for (int64_t at = 0; at < total; at += max_batch_) {
        const int64_t n = std::min(max_batch_, total - at);
        const bool last = logits && at + n == total;
        BatchEntry e{&seq, ids.subspan(size_t(at), size_t(n)), last ? LogitsMode::Last : LogitsMode::None};
        if (auto s = backend_.eval(std::span<const BatchEntry>(&e, 1), last ? &out_ : &none); !s)
            return make_error("at cell " + std::to_string(at) + ": " + s.message());
        if (after_pass) after_pass(at + n);
    }
    return {};
}

Status BenchRunner::reset_row(size_t i, int64_t n_new) {
    const RowSpec& r = runs_[i].spec;
    for (auto& s : seqs_[i]) {
        s->truncate(r.depth);
        if (auto st = s->prepare_write(r.depth, r.depth + n_new); !st)
            return make_error("row " + r.name + ": " + st.message());
    }
    return {};
}

Status BenchRunner::run_rep(size_t i, bool record) {
    const RowSpec& r = runs_[i].spec;
    const int64_t n_vocab = backend_.model().config().n_vocab;
    const bool forked = r.kind == RowKind::Decode || r.kind == RowKind::Append;
    if (forked)
        if (auto s = reset_row(i, r.tokens); !s) return s;
    RepSample rep;
    const BackendCounters c0 = backend_.counters();
    if (!forked) {
        const Status s = r.kind == RowKind::Park ? park_rep(i, rep)
                         : r.kind == RowKind::Wake ? wake_rep(i, rep)
                                                   : reprefill_rep(i, rep);
        if (!s) return s;
        rep.ms = double(rep.end_ns - rep.begin_ns) / 1e6;
    } else if (r.kind == RowKind::Decode) {
        TokenId tok = tokens_[i][0][0];
        int64_t busy_ns = 0;
        for (int64_t step = 0; step < r.tokens; ++step) {
            BatchEntry e{seqs_[i][0].get(), std::span<const TokenId>(&tok, 1), LogitsMode::Last};
            const int64_t t0 = now_ns();
            const Status s = backend_.eval(std::span<const BatchEntry>(&e, 1), &out_);
            const int64_t t1 = now_ns();
            if (!s) return make_error("row " + r.name + ", step " + std::to_string(step) + ": " + s.message());
            if (step == 0) rep.begin_ns = t0;
            rep.end_ns = t1;
            busy_ns += t1 - t0;
            if (out_.size() != 1) return make_error("row " + r.name + ": the backend returned no logits");
            tok = argmax(out_.row(0), n_vocab);
        }
        rep.ms = double(busy_ns) / 1e6 / double(r.tokens);
    } else {
        std::vector<BatchEntry> batch;
        for (int64_t k = 0; k < r.contexts; ++k)
            batch.push_back(BatchEntry{seqs_[i][size_t(k)].get(), tokens_[i][size_t(k)], LogitsMode::Last});
        rep.begin_ns = now_ns();
        const Status s = backend_.eval(batch, &out_);
        rep.end_ns = now_ns();
        if (!s) return make_error("row " + r.name + ": " + s.message());
        rep.ms = double(rep.end_ns - rep.begin_ns) / 1e6;
    }
    const BackendCounters c1 = backend_.counters();
    rep.passes = c1.passes - c0.passes;
    rep.launches = c1.launches - c0.launches;
    rep.device_ms = (c1.device_ms - c0.device_ms) / (r.kind == RowKind::Decode ? double(r.tokens) : 1.0);
    if (r.kind == RowKind::Wake && !runs_[i].wake_check)  // once, outside the counters
        if (auto s = check_wake(i); !s) return s;
    if (record) runs_[i].reps.push_back(rep);
    return {};
}

Result<std::vector<std::string>> BenchRunner::profile_pass(size_t i, const std::string& trace_path) {
    const RowSpec& r = runs_[i].spec;
    const bool append = r.kind == RowKind::Append;
    if (auto s = reset_row(i, append ? r.tokens : 1); !s) return s.error();
    if (auto s = backend_.set_profiling(true, trace_path); !s) return s.error();
    TokenId tok = tokens_[i][0][0];
    std::vector<BatchEntry> batch;
    if (append) {  // the row's own eval call (the table is its last pass)
        for (int64_t k = 0; k < r.contexts; ++k)
            batch.push_back(BatchEntry{seqs_[i][size_t(k)].get(), tokens_[i][size_t(k)], LogitsMode::Last});
    } else {
        batch.push_back(BatchEntry{seqs_[i][0].get(), std::span<const TokenId>(&tok, 1), LogitsMode::Last});
    }
    const Status s = backend_.eval(batch, &out_);
    const Status off = backend_.set_profiling(false, "");
    if (!s) return make_error("profiled pass of " + r.name + ": " + s.message());
    if (!off) return off.error();
    return backend_.profile_table();
}

}  // namespace arbor::cli::bench
