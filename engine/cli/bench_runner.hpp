// Runs the rows of `arbor-cli bench` on a backend.
//
// Contexts: context k (k = 0 .. the largest row's K - 1) is built once by evaluating seeded
// random token ids (seed + k) in eval calls of max_batch_tokens with no logits, up to the
// deepest row that uses it. Context 0 serves every row; contexts 1.. serve the K-context rows,
// so their K entries read K different contexts. Each row then forks the contexts it reads at its
// depth (copy-on-write, nothing recomputed) into sequences it keeps for the whole run.
//
// One repetition of a row, with only the row's work inside the timed region:
//   untimed: truncate the row's sequences back to the depth and make the cells it will write
//            writable (prepare_write: new pages, the copy of a shared page);
//   timed:   decode: 64 eval calls of one token each, each fed the argmax of the one before
//            (the argmax is outside the timed calls); the repetition's time is the sum of the
//            calls over 64, in ms per token. Append: the one eval call, in ms.
// Backend counters (passes, launches, device time) are differenced around each repetition.
#pragma once

#include "bench_rows.hpp"

#include <arbor/backend.hpp>
#include <arbor/result.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace arbor::cli::bench {

struct RepSample {
    double ms = 0;            // decode: ms per token; append: ms for the call
    double device_ms = 0;     // the backend's device time, same unit (0 on the CPU)
    int64_t passes = 0, launches = 0;
    int64_t begin_ns = 0, end_ns = 0;  // steady_clock, first call's start to last call's end
};

struct RowRun {
    RowSpec spec;
    std::vector<RepSample> reps;  // timed repetitions only
};

class BenchRunner {
public:
    // max_batch_tokens: what the backend was made with (context-building passes use it).
    BenchRunner(Backend& backend, std::vector<RowSpec> rows, int64_t max_batch_tokens, uint64_t seed);
    ~BenchRunner();

    // Makes the KV cache, builds the contexts and forks each row's sequences. `progress` gets one
    // line per context built.
    Status prepare(const std::function<void(const std::string&)>& progress);
    // One repetition of row i; recorded into rows()[i].reps when `record`.
    Status run_rep(size_t i, bool record);
    // One decode pass of row i (its first context at its depth) with the backend's profiler on;
    // the backend writes its trace to trace_path and the per-stage table is returned.
    Result<std::vector<std::string>> profile_pass(size_t i, const std::string& trace_path);

    const std::vector<RowRun>& rows() const { return runs_; }
    int64_t contexts_built() const { return int64_t(contexts_.size()); }
    // The KV cache's page budget (kKvPageCells cells each), known before prepare() allocates.
    int64_t kv_pages() const { return kv_pages_; }

private:
    Status reset_row(size_t i, int64_t n_new);

    Backend& backend_;
    std::vector<RowRun> runs_;
    int64_t max_batch_;
    uint64_t seed_;
    std::vector<int64_t> depth_;  // per context: cells to build
    int64_t capacity_ = 1;        // cells any sequence may reach
    int64_t kv_pages_ = 0;
    std::shared_ptr<KvCache> cache_;
    std::vector<std::unique_ptr<KvSequence>> contexts_;
    std::vector<std::vector<std::unique_ptr<KvSequence>>> seqs_;  // per row, one per context it reads
    std::vector<std::vector<std::vector<TokenId>>> tokens_;       // per row: per context, the appended ids
    PassLogits out_;
};

}  // namespace arbor::cli::bench
