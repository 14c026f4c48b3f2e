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
//
// Park, wake and reprefill rows (bench_park_rows.cpp) work on whole contexts; their repetition
// is the operation itself, in ms:
//   park@D:      untimed once (prepare): a park file of context 0 at D cells is written into the
//                park directory (one file per depth, shared with wake@D, removed when the runner
//                goes). Timed: write_park_file from a fork of context 0 at D, over that file:
//                the real atomic write (temp file, fsync, rename, fsync of the directory).
//   wake@D:      untimed: the previous repetition's sequence is dropped and a fresh empty one
//                made in the backend's KV cache. Timed: read_park_file into it (read, verify the
//                checksums, allocate the pages and restore the cells). Untimed afterwards: the
//                restored cells must be D with none recomputed; after the first repetition, one
//                decode step of the woken sequence must give logits bit-identical (memcmp) to
//                the same step of the never-parked context 0, else the run fails.
//   reprefill@D: untimed: a fresh empty sequence. Timed: context 0's first D token ids in eval
//                calls of max_batch_tokens, no logits but the last call's (what a wake that
//                falls back to re-prefilling computes).
//
// Deep rows take long: at 32k cells the context build and the reprefill row are two full
// prefills, and read50x8@16384 builds eight 16k contexts. Three options split such work over
// runs (device calls, for instance):
//   keep_park:     park files are kept at exit, named by depth only (arbor-bench-D.park);
//   save_contexts: after they are built (or woken), every context k is parked into
//                  DIR/arbor-bench-cK-D.park (K from 1, D its cells);
//   context_files: context k is woken from the k-th file instead of being built (its tokens
//                  become context k's ids; the file must hold exactly the cells of context k,
//                  the deepest row reading it). wake@D's check then compares with the woken
//                  context 0, not with a never-parked one.
#pragma once

#include "bench_rows.hpp"

#include <arbor/backend.hpp>
#include <arbor/park.hpp>
#include <arbor/result.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace arbor::cli::bench {

struct RepSample {
    double ms = 0;            // decode: ms per token; append: ms for the call
    double device_ms = 0;     // the backend's device time, same unit (0 on the CPU)
    int64_t passes = 0, launches = 0;
    int64_t begin_ns = 0, end_ns = 0;  // steady_clock, first call's start to last call's end
};

// What a wake row checked after its first repetition.
struct WakeCheck {
    int64_t restored_cells = 0, recomputed_cells = 0;
    bool logits_identical = false;
    double first_step_ms = 0;               // one decode step of the woken sequence
    double first_step_ms_never_parked = 0;  // the same step of the never-parked context
    std::string reference;                  // non-empty: context 0 was woken from this file instead
};

struct RowRun {
    RowSpec spec;
    std::vector<RepSample> reps;  // timed repetitions only
    uint64_t file_bytes = 0;      // park and wake rows: the park file's size
    std::optional<WakeCheck> wake_check;
};

// Steady-clock nanoseconds, the bench's timestamps.
inline int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

class BenchRunner {
public:
    // max_batch_tokens: what the backend was made with (context-building passes use it).
    // park_dir: where park and wake rows keep their park files.
    BenchRunner(Backend& backend, std::vector<RowSpec> rows, int64_t max_batch_tokens, uint64_t seed,
                std::string park_dir = {});
    ~BenchRunner();  // removes the park files (unless kept)

    // See the header comment; both before prepare().
    void keep_park_files(bool keep) { keep_park_ = keep; }
    void wake_contexts_from(std::vector<std::string> paths) { context_files_ = std::move(paths); }
    void save_contexts_to(std::string dir) { save_dir_ = std::move(dir); }
    // The park files written (kept at exit when keep_park_files(true)).
    std::vector<std::string> park_paths() const;
    // prepare() failed because a context file cannot serve as its context (bad input).
    bool context_file_bad() const { return context_file_bad_; }
    // The contexts' park files written by prepare() (save_contexts_to).
    const std::vector<std::string>& saved_contexts() const { return saved_; }

    // Makes the KV cache, builds the contexts and forks each row's sequences. `progress` gets one
    // line per context built.
    Status prepare(const std::function<void(const std::string&)>& progress);
    // One repetition of row i; recorded into rows()[i].reps when `record`.
    Status run_rep(size_t i, bool record);
    // Row i's work with the backend's profiler on: a decode row's first step, or an append row's
    // eval call (its last pass, when the call takes several). The backend writes its trace to
    // trace_path and the per-stage table is returned.
    Result<std::vector<std::string>> profile_pass(size_t i, const std::string& trace_path);

    const std::vector<RowRun>& rows() const { return runs_; }
    int64_t contexts_built() const { return int64_t(contexts_.size()); }
    // The KV cache's page budget (kKvPageCells cells each), known before prepare() allocates.
    int64_t kv_pages() const { return kv_pages_; }

private:
    // A park file of context 0 at `depth` cells, and what it holds besides the cells.
    struct ParkSlot {
        int64_t depth = 0;
        std::string path;
        ParkContents contents;
    };

    Status reset_row(size_t i, int64_t n_new);
    // Context k from context_files_[k] (which must hold exactly `depth` cells) into seq; sets
    // ids_[k] to the file's tokens.
    Status wake_context(size_t k, KvSequence& seq, int64_t depth);
    // What a bench park file of these tokens holds besides the cells: the tokens, a sampler that
    // accepted them, and n_vocab zero logits (the contexts are built without logits; the size is
    // what counts).
    ParkContents park_contents(std::vector<TokenId> tokens) const;
    // Parks every context into save_dir_ (atomically, as Session::park does).
    Status save_contexts();
    // read_park_file of a file of exactly `depth` cells into the empty seq, every cell restored
    // (bench_park_rows.cpp): a fallback to re-prefilling is an error here.
    Result<ParkRead> restore(const std::string& path, KvSequence& seq, int64_t depth);
    // Evaluates ids into seq in passes of max_batch_ tokens, logits (into out_) only for the
    // last token of the last pass when `logits`; after_pass(cells done) follows each pass.
    Status prefill(KvSequence& seq, std::span<const TokenId> ids, bool logits,
                   const std::function<void(int64_t)>& after_pass = {});
    // bench_park_rows.cpp:
    Status prepare_park_files();
    Status park_rep(size_t i, RepSample& rep);
    Status wake_rep(size_t i, RepSample& rep);
    Status reprefill_rep(size_t i, RepSample& rep);
    Status check_wake(size_t i);
    void remove_park_files();

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
    std::string park_dir_;
    std::vector<std::vector<TokenId>> ids_;  // per context: its token ids
    std::vector<ParkSlot> park_files_;   // one per depth of a park or wake row
    std::vector<size_t> slot_;           // per row: its park file (park and wake rows)
    bool keep_park_ = false;
    std::vector<std::string> context_files_;  // context k woken from the k-th, when given
    bool context_file_bad_ = false;
    std::string save_dir_;                    // contexts parked here after prepare() when set
    std::vector<std::string> saved_;
};

}  // namespace arbor::cli::bench
