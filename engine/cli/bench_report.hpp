// What `arbor-cli bench` prints: per-row statistics, the text table on stdout and the --json
// document {"model", "device", "rows": [{"row", "p50_ms", "min_ms", "max_ms", "reps", "label",
// "launches_per_pass", ...}], ...}. Park and wake rows add the park file's size and the ratio of
// the reprefill row at the same depth to them: {"file_bytes", "file_mib", "reprefill_ratio",
// "wake_check"} (null on other rows), and the document "park_dir".
#pragma once

#include "bench_floor.hpp"
#include "bench_labels.hpp"
#include "bench_runner.hpp"

#include <arbor/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace arbor::cli::bench {

struct RowStats {
    RowSpec spec;
    std::vector<double> ms;      // the timed repetitions, in run order
    double p50_ms = 0, min_ms = 0, max_ms = 0;
    RowLabel label;
    double launches_per_pass = 0;   // launches / passes over the timed repetitions
    double passes_per_rep = 0;
    std::optional<double> device_ms_p50;  // when the backend measures device time
    std::optional<double> floor_ms, ratio;  // decode rows, when a bandwidth was measured
    bool beyond_train_ctx = false;  // the row writes cells past the model's n_ctx_train
    std::optional<uint64_t> file_bytes;       // park and wake rows
    std::optional<double> reprefill_ratio;    // park and wake rows: reprefill@D's p50 over this p50
    std::optional<WakeCheck> wake_check;      // wake rows
};

// p50 (the mean of the middle two for an even count), min and max; counters; the floor.
RowStats summarize(const RowRun& run, RowLabel label, const DecodeBytes& bytes, const std::optional<Bandwidth>& bw,
                   int64_t n_ctx_train);

// Sets reprefill_ratio on the park and wake rows that have a reprefill row at their depth.
void compare_with_reprefill(std::vector<RowStats>& rows);

struct BenchInfo {
    std::string model_path, model_summary, backend, device;
    int64_t n_ctx_train = 0, max_batch_tokens = 0, reps = 0, warmup = 0;
    uint64_t seed = 0;
    DecodeBytes bytes;
    std::optional<Bandwidth> bandwidth;
    std::string bandwidth_error;  // why there is none
    double context_build_s = 0;
    uint64_t kv_cache_bytes = 0;  // the KV page budget of the run
    std::vector<std::string> notes, warnings;
    std::vector<std::string> profile;  // the profiled pass's table (--profile)
    std::string profile_row;
    std::string park_dir;  // where park and wake rows kept their files (empty: no such rows)
    bool park_kept = false;    // --keep-park: the files stay after the run
    std::vector<std::string> context_files;   // --context: context k was woken from the k-th park file
    std::vector<std::string> contexts_saved;  // --save-contexts: every context parked into these
};

std::string text_report(const BenchInfo& info, const std::vector<RowStats>& rows);
json::Value json_report(const BenchInfo& info, const std::vector<RowStats>& rows);

}  // namespace arbor::cli::bench
