// arbor-cli bench: the performance table of issue 11. Rows (bench_rows.hpp) run on a backend
// over contexts built once (bench_runner.hpp); repetitions are interleaved across rows (the first
// repetition of every row, then the second, ...), after `--warmup` untimed ones. Each row gets a
// p50, min and max, its telemetry label (bench_labels.hpp), its launches per pass from the
// backend's counters, and for decode rows the bandwidth floor and the ratio to it
// (bench_floor.hpp). The table goes to stdout, progress and notes to stderr, and --json FILE
// writes the same as JSON (--json - puts the JSON on stdout instead of the table).
//
// Contexts deeper than the model's training context are allowed: the rows measure cost, which
// does not depend on whether the model was trained at those positions. The bench says so in a
// note and marks those rows (beyond_train_ctx).
//
// Park, wake and reprefill rows (park@D, wake@D, reprefill@D) compare a context parked to disk
// and woken with re-prefilling it; their park files go to --park-dir (default $TMPDIR, else
// /tmp) and are removed at exit. --keep-park keeps them (named arbor-bench-D.park, replacing a
// file of that name), and
// --context FILE.park[,FILE.park...] wakes context k from the k-th file (of the depth of the
// deepest row reading that context) instead of building it. The two full prefills of a deep
// park run (building the context, the reprefill row) can then run in two invocations:
// `--rows park@D,wake@D --keep-park`, then `--rows reprefill@D --context FILE`.
// --save-contexts DIR parks every context after it is built or woken
// (DIR/arbor-bench-cK-D.park), so that many deep contexts can be built over several
// invocations: `--rows read50x4@16384 --save-contexts DIR`, then `--rows read50x8@16384
// --context DIR/arbor-bench-c1-16384.park,...,DIR/arbor-bench-c4-16384.park` builds only
// contexts 5 to 8.
//
// The whole run holds the host benchmark lock (telemetry::TimingGuard), so GPU benchmarks and
// builds that take the same lock do not overlap it.
#include "bench_floor.hpp"
#include "bench_labels.hpp"
#include "bench_report.hpp"
#include "bench_rows.hpp"
#include "bench_runner.hpp"
#include "cli.hpp"

#include <arbor/backend.hpp>
#include <arbor/json.hpp>
#include <arbor/telemetry.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace arbor::cli {
namespace {

namespace tel = arbor::telemetry;
using namespace arbor::cli::bench;

constexpr const char* kUsage =
    "-m M.gguf [--backend gpu|cpu] [--rows LIST] [--depths LIST] [--reps N] [--warmup N] [--json FILE|-] "
    "[--profile FILE] [--threads N] [--batch N] [--seed S] [--park-dir DIR] [--keep-park] [--context FILE.park[,...]] [--save-contexts DIR]";

constexpr const char* kSummary =
    "time decode, prefill, park and wake rows at given context depths (table, telemetry labels, bandwidth floor)";

std::string model_summary(const ModelConfig& c) {
    std::string s = c.arch_name + ", " + std::to_string(c.n_layer) + " layers, n_embd " + std::to_string(c.n_embd) +
                    ", vocab " + std::to_string(c.n_vocab) + ", n_ctx_train " + std::to_string(c.n_ctx_train);
    if (c.is_moe())
        s += ", " + std::to_string(c.n_expert) + " experts (" + std::to_string(c.n_expert_used) + " used)";
    return s;
}

int64_t checked(const std::optional<int64_t>& v, int64_t fallback, int64_t lo, int64_t hi, const char* flag) {
    if (!v) return fallback;
    if (*v < lo || *v > hi)
        throw UsageError(std::string(flag) + " must be between " + std::to_string(lo) + " and " + std::to_string(hi));
    return *v;
}

void write_file(const std::string& path, const std::string& bytes) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) throw RuntimeFailure("cannot write " + path + ": " + std::strerror(errno));
    const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    if (std::fclose(f) != 0 || !ok) throw RuntimeFailure("cannot write " + path + ": " + std::strerror(errno));
}

void say(const std::string& what, const std::string& line) { std::fprintf(stderr, "%s: %s\n", what.c_str(), line.c_str()); }

// --park-dir, or $TMPDIR, or /tmp: an existing directory this process may write.
// dir, checked to be a writable directory; `from` names where it came from in the messages.
std::string writable_dir(const std::string& from, const std::string& dir) {
    struct stat sb {};
    if (::stat(dir.c_str(), &sb) != 0) throw InputError(from + dir + ": " + std::strerror(errno));
    if (!S_ISDIR(sb.st_mode)) throw InputError(from + dir + ": not a directory");
    if (::access(dir.c_str(), W_OK | X_OK) != 0) throw InputError(from + dir + ": not writable: " + std::strerror(errno));
    return dir;
}

std::string park_dir(const std::optional<std::string>& flag) {
    const char* env = std::getenv("TMPDIR");
    const std::string dir = flag ? *flag : env && *env ? std::string(env) : std::string("/tmp");
    if (dir.empty()) throw UsageError("--park-dir needs a directory");
    return writable_dir(flag ? "--park-dir " : env && *env ? "$TMPDIR " : "", dir);
}

// --context's comma-separated park files, each an existing regular file.
std::vector<std::string> context_files(const std::string& flag) {
    std::vector<std::string> files;
    size_t at = 0;
    while (true) {
        const size_t comma = flag.find(',', at);
        files.push_back(flag.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
        if (comma == std::string::npos) break;
        at = comma + 1;
    }
    for (const std::string& f : files) {
        struct stat sb {};
        if (f.empty()) throw UsageError("--context needs a park file (or several, separated by commas)");
        if (::stat(f.c_str(), &sb) != 0) throw InputError("--context " + f + ": " + std::strerror(errno));
        if (!S_ISREG(sb.st_mode)) throw InputError("--context " + f + ": not a file");
    }
    return files;
}

int run_bench(std::vector<std::string> argv) {
    Args a(std::move(argv));
    const auto model_path = a.value("-m", "--model");
    const std::string backend_name = a.value("--backend").value_or("gpu");
    const auto rows_flag = a.value("--rows");
    const auto depths_flag = a.value("--depths");
    const int64_t reps = checked(a.integer("--reps"), 5, 1, 1000, "--reps");
    const int64_t warmup = checked(a.integer("--warmup"), 1, 0, 100, "--warmup");
    const auto json_path = a.value("--json");
    const auto profile_path = a.value("--profile");
    const int64_t threads = checked(a.integer("--threads"), 0, 1, 256, "--threads");
    const auto batch_flag = a.integer("--batch");
    const uint64_t seed = uint64_t(checked(a.integer("--seed"), 1, 0, INT64_MAX, "--seed"));
    const auto park_dir_flag = a.value("--park-dir");
    const bool keep_park = a.flag("--keep-park");
    const auto context_flag = a.value("--context");
    const auto save_flag = a.value("--save-contexts");
    a.finish();

    if (!model_path) throw UsageError("missing -m MODEL.gguf");
    if (backend_name != "cpu" && backend_name != "gpu") throw UsageError("--backend must be gpu or cpu");
    if (json_path && json_path->empty()) throw UsageError("--json needs a file name (or - for stdout)");
    if (profile_path && profile_path->empty()) throw UsageError("--profile needs a file name");
    std::vector<int64_t> depths = default_decode_depths();
    if (depths_flag) {
        auto d = parse_depths(*depths_flag);
        if (!d) throw UsageError("--depths: " + d.message());
        depths = std::move(d.value());
    }
    bool used_depths = false;
    auto parsed = parse_rows(rows_flag.value_or(default_rows()), depths, &used_depths);
    if (!parsed) throw UsageError("--rows: " + parsed.message());
    if (depths_flag && !used_depths)
        throw UsageError("--depths sets the depths of the bare 'decode' row, and --rows lists none");
    std::vector<RowSpec> rows = std::move(parsed.value());
    const bool parks = std::any_of(rows.begin(), rows.end(), [](const RowSpec& r) {
        return r.kind == RowKind::Park || r.kind == RowKind::Wake;
    });
    if (park_dir_flag && !parks) throw UsageError("--park-dir is where park@D and wake@D rows write, and --rows lists none");
    if (keep_park && !parks) throw UsageError("--keep-park keeps the files of park@D and wake@D rows, and --rows lists none");
    const std::vector<std::string> contexts_from = context_flag ? context_files(*context_flag) : std::vector<std::string>{};
    int64_t n_contexts = 1;  // every row reads context 0
    for (const RowSpec& r : rows) n_contexts = std::max(n_contexts, r.contexts);
    if (int64_t(contexts_from.size()) > n_contexts)
        throw UsageError("--context gives " + std::to_string(contexts_from.size()) + " park files, and the rows read " +
                         std::to_string(n_contexts) + " context" + (n_contexts == 1 ? "" : "s"));
    if (save_flag && save_flag->empty()) throw UsageError("--save-contexts needs a directory");
    const std::string save_dir = save_flag ? writable_dir("--save-contexts ", *save_flag) : std::string();
    const bool profilable = std::any_of(rows.begin(), rows.end(), [](const RowSpec& r) {
        return r.kind == RowKind::Decode || r.kind == RowKind::Append;
    });
    if (profile_path && !profilable) throw UsageError("--profile profiles a decode or append row, and --rows lists none");
    int64_t widest = 1;
    for (const RowSpec& r : rows)
        if (r.kind == RowKind::Append) widest = std::max(widest, r.tokens * r.contexts);
    const int64_t batch = checked(batch_flag, std::max<int64_t>(256, widest), 1, kMaxAppendTokens, "--batch");

    const std::string park_files = parks ? park_dir(park_dir_flag) : std::string();

    auto model = Model::load(*model_path);
    if (!model) throw InputError(model.message());
    const ModelConfig& cfg = model.value()->config();

    BenchInfo info;
    info.model_path = *model_path;
    info.model_summary = model_summary(cfg);
    info.backend = backend_name;
    info.n_ctx_train = cfg.n_ctx_train;
    info.max_batch_tokens = batch;
    info.reps = reps;
    info.warmup = warmup;
    info.seed = seed;
    info.park_dir = park_files;
    info.park_kept = keep_park;
    info.context_files = contexts_from;
    info.bytes = decode_bytes(*model.value(), kv_type_bytes(KvType::F16));
    std::string beyond;
    for (const RowSpec& r : rows)
        if (cfg.n_ctx_train > 0 && r.depth + r.tokens > cfg.n_ctx_train) beyond += (beyond.empty() ? "" : ", ") + r.name;
    if (!beyond.empty())
        info.notes.push_back("rows " + beyond + " run past the model's training context of " +
                             std::to_string(cfg.n_ctx_train) + " cells (allowed: the cost does not depend on it)");
    if (batch < widest)
        info.notes.push_back("--batch " + std::to_string(batch) + " is below the widest row's " + std::to_string(widest) +
                             " tokens: that row takes several passes");
    for (const std::string& n : info.notes) say("note", n);

    BackendOptions bo;
    bo.threads = int(threads);
    bo.max_batch_tokens = batch;
    auto made = make_backend(backend_name, model.value(), bo);
    if (!made) throw RuntimeFailure(made.message());
    Backend& backend = *made.value();
    info.device = backend.device();
    if (profile_path) {  // fail now, not after building the contexts
        if (auto s = backend.set_profiling(true, ""); !s) throw InputError("--profile: " + s.message());
        if (auto s = backend.set_profiling(false, ""); !s) throw RuntimeFailure(s.message());
    }

    tel::SamplerOptions so;
    so.interval = std::chrono::milliseconds(100);
    tel::Sampler sampler(so);
    if (auto s = sampler.start(); !s) info.warnings.push_back("telemetry sampler did not start: " + s.message());
    auto guard = tel::TimingGuard::begin(sampler);
    if (!guard) throw RuntimeFailure("benchmark lock: " + guard.message());
    for (const std::string& w : guard->warnings()) info.warnings.push_back(w);
    for (const std::string& w : info.warnings) say("warning", w);

    auto bw = backend_name == "cpu"
                  ? host_copy_bandwidth(threads > 0 ? int(threads) : int(std::max(1u, std::thread::hardware_concurrency())))
                  : device_copy_bandwidth();
    if (bw) {
        info.bandwidth = bw.value();
    } else {
        info.bandwidth_error = bw.message();
        say("warning", "no bandwidth floor: " + bw.message());
    }

    BenchRunner runner(backend, rows, batch, seed, park_files);
    runner.keep_park_files(keep_park);
    runner.wake_contexts_from(contexts_from);
    runner.save_contexts_to(save_dir);
    info.kv_cache_bytes = uint64_t(runner.kv_pages()) * uint64_t(kKvPageCells) * info.bytes.kv_per_cell;
    say("bench", "KV cache: up to " + std::to_string(runner.kv_pages()) + " pages, " +
                     std::to_string(info.kv_cache_bytes >> 20) + " MiB");
    const auto t0 = std::chrono::steady_clock::now();
    if (auto s = runner.prepare([](const std::string& line) { say("bench", line); }); !s) {
        // A --context file that cannot serve as its context is bad input, like a missing one.
        if (runner.context_file_bad()) throw InputError(s.message());
        throw RuntimeFailure(s.message());
    }
    info.context_build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    info.contexts_saved = runner.saved_contexts();
    for (const std::string& p : info.contexts_saved) say("bench", "saved context to " + p);

    const uint64_t rec = sampler.begin_recording();
    for (int64_t rep = 0; rep < warmup + reps; ++rep)
        for (size_t i = 0; i < rows.size(); ++i)
            if (auto s = runner.run_rep(i, rep >= warmup); !s) throw RuntimeFailure(s.message());
    if (sampler.running()) {  // one snapshot after the last repetition, so that it is covered
        const auto last = sampler.latest();
        (void)sampler.wait_newer(last ? last->sequence : 0, std::chrono::milliseconds(1000));
    }
    const tel::Sampler::Recording recording = sampler.end_recording(rec);
    if (recording.dropped > 0) {
        info.warnings.push_back(std::to_string(recording.dropped) +
                                " telemetry snapshots were not recorded (run too long): late rows may be unmonitored");
        say("warning", info.warnings.back());
    }

    if (profile_path) {
        size_t pick = rows.size();  // the first decode row, else the first append row
        for (RowKind k : {RowKind::Decode, RowKind::Append})
            for (size_t i = 0; i < rows.size() && pick == rows.size(); ++i)
                if (rows[i].kind == k) pick = i;
        auto table = runner.profile_pass(pick, *profile_path);
        if (!table) throw RuntimeFailure("--profile: " + table.message());
        info.profile = std::move(table.value());
        const RowSpec& pr = rows[pick];
        info.profile_row = pr.kind == RowKind::Decode
                               ? "a decode step at depth " + std::to_string(pr.depth) + " (" + pr.name + ")"
                               : std::to_string(pr.tokens) + " tokens appended to " + std::to_string(pr.contexts) +
                                     " context(s) at depth " + std::to_string(pr.depth) + " (" + pr.name +
                                     (pr.tokens * pr.contexts > batch ? ", its last pass)" : ")");
    }
    const tel::TimedRunReport run = guard->finish();
    for (size_t w = guard->warnings().size(); w < run.warnings.size(); ++w) {
        info.warnings.push_back(run.warnings[w]);
        say("warning", run.warnings[w]);
    }

    std::vector<RowStats> stats;
    for (const RowRun& r : runner.rows())
        stats.push_back(summarize(r, label_row(recording.snapshots, r.reps), info.bytes, info.bandwidth, cfg.n_ctx_train));
    compare_with_reprefill(stats);
    if (keep_park)
        for (const std::string& p : runner.park_paths()) say("bench", "kept park file " + p);
    const std::string doc = json::dump(json_report(info, stats), 2) + "\n";
    if (json_path && *json_path != "-") write_file(*json_path, doc);
    write_stdout(json_path && *json_path == "-" ? doc : text_report(info, stats));
    return 0;
}

const Command kBench("bench", kSummary, kUsage, run_bench);

}  // namespace
}  // namespace arbor::cli
