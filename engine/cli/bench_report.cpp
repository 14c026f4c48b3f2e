// Statistics, text table and JSON of `arbor-cli bench` (see bench_report.hpp).
#include "bench_report.hpp"

#include <algorithm>
#include <cstdio>

namespace arbor::cli::bench {
namespace {

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

std::string mib(uint64_t bytes) { return fmt("%.2f MiB", double(bytes) / double(1 << 20)); }

double to_mib(uint64_t bytes) { return double(bytes) / double(1 << 20); }

const char* kind_name(RowKind k) {
    switch (k) {
    case RowKind::Decode: return "decode";
    case RowKind::Append: return "append";
    case RowKind::Park: return "park";
    case RowKind::Wake: return "wake";
    case RowKind::Reprefill: return "reprefill";
    }
    return "?";
}

const char* unit_of(RowKind k) {
    switch (k) {
    case RowKind::Decode: return "ms/token";
    case RowKind::Append: return "ms/call";
    case RowKind::Park: return "ms/park";
    case RowKind::Wake: return "ms/wake";
    case RowKind::Reprefill: return "ms/reprefill";
    }
    return "?";
}

const RowStats* reprefill_at(const std::vector<RowStats>& rows, int64_t depth) {
    for (const RowStats& r : rows)
        if (r.spec.kind == RowKind::Reprefill && r.spec.depth == depth) return &r;
    return nullptr;
}

// The park and wake rows against re-prefill, and what each wake row checked.
std::string park_section(const BenchInfo& info, const std::vector<RowStats>& rows) {
    std::string t = "\npark and wake against re-prefill (park files in " + info.park_dir +
                    (info.park_kept ? ", kept" : ", removed at exit") + "):\n";
    char line[256];
    std::snprintf(line, sizeof line, "%-20s %10s %10s %10s %16s %14s\n", "row", "p50 ms", "file MiB", "MiB/s",
                  "reprefill p50 ms", "reprefill/row");
    t += line;
    std::string checks;
    for (const RowStats& r : rows) {
        if (!r.file_bytes) continue;
        const RowStats* peer = reprefill_at(rows, r.spec.depth);
        const double mb = to_mib(*r.file_bytes);
        std::snprintf(line, sizeof line, "%-20s %10.2f %10.2f %10s %16s %14s\n", r.spec.name.c_str(), r.p50_ms, mb,
                      r.p50_ms > 0 ? fmt("%.0f", mb / (r.p50_ms / 1000.0)).c_str() : "-",
                      peer ? fmt("%.1f", peer->p50_ms).c_str() : "-",
                      r.reprefill_ratio ? fmt("%.1f", *r.reprefill_ratio).c_str() : "-");
        t += line;
        if (const auto& c = r.wake_check)
            checks += r.spec.name + ": restored " + std::to_string(c->restored_cells) + " cells, recomputed " +
                      std::to_string(c->recomputed_cells) + "; the next step's logits are " +
                      (c->logits_identical ? "bit-identical to" : "NOT identical to") +
                      (c->reference.empty() ? std::string(" the never-parked context's")
                                            : " those of the context woken from " + c->reference) +
                      " (that step: " + fmt("%.2f", c->first_step_ms) + " ms woken, " +
                      fmt("%.2f", c->first_step_ms_never_parked) +
                      (c->reference.empty() ? " ms never parked)\n" : " ms on that context)\n");
    }
    return t + checks;
}

}  // namespace

RowStats summarize(const RowRun& run, RowLabel label, const DecodeBytes& bytes, const std::optional<Bandwidth>& bw,
                   int64_t n_ctx_train) {
    RowStats s;
    s.spec = run.spec;
    s.label = std::move(label);
    int64_t passes = 0, launches = 0;
    std::vector<double> dev;
    bool has_device = false;
    for (const RepSample& r : run.reps) {
        s.ms.push_back(r.ms);
        dev.push_back(r.device_ms);
        has_device = has_device || r.device_ms > 0;
        passes += r.passes;
        launches += r.launches;
    }
    if (!s.ms.empty()) {
        s.p50_ms = median(s.ms);
        s.min_ms = *std::min_element(s.ms.begin(), s.ms.end());
        s.max_ms = *std::max_element(s.ms.begin(), s.ms.end());
        s.passes_per_rep = double(passes) / double(s.ms.size());
    }
    s.launches_per_pass = passes > 0 ? double(launches) / double(passes) : 0.0;
    if (has_device) s.device_ms_p50 = median(dev);
    if (run.spec.kind == RowKind::Decode && bw && bw->bytes_per_s > 0) {
        s.floor_ms = decode_floor_ms(bytes, run.spec.depth, run.spec.tokens, bw->bytes_per_s);
        if (*s.floor_ms > 0) s.ratio = s.p50_ms / *s.floor_ms;
    }
    s.beyond_train_ctx = n_ctx_train > 0 && run.spec.depth + run.spec.tokens > n_ctx_train;
    if (run.spec.kind == RowKind::Park || run.spec.kind == RowKind::Wake) s.file_bytes = run.file_bytes;
    s.wake_check = run.wake_check;
    return s;
}

void compare_with_reprefill(std::vector<RowStats>& rows) {
    for (RowStats& r : rows) {
        if (!r.file_bytes) continue;
        const RowStats* peer = reprefill_at(rows, r.spec.depth);
        if (peer && r.p50_ms > 0) r.reprefill_ratio = peer->p50_ms / r.p50_ms;
    }
}

std::string text_report(const BenchInfo& info, const std::vector<RowStats>& rows) {
    std::string t;
    t += "model: " + info.model_path + " (" + info.model_summary + ")\n";
    t += "device: " + info.device + " [" + info.backend + " backend]\n";
    t += "decode reads " + mib(info.bytes.weights) + " of weights per token + " +
         fmt("%.1f KiB", double(info.bytes.kv_per_cell) / 1024.0) + " of KV per cell\n";
    if (info.bandwidth)
        t += "bandwidth: " + fmt("%.1f GB/s", info.bandwidth->bytes_per_s / 1e9) + " (" + info.bandwidth->source + ")\n";
    else
        t += "bandwidth: not measured (" + info.bandwidth_error + "); no floor\n";
    const bool whole = std::any_of(rows.begin(), rows.end(), [](const RowStats& r) {
        return r.spec.kind != RowKind::Decode && r.spec.kind != RowKind::Append;
    });
    t += std::to_string(info.reps) + " reps after " + std::to_string(info.warmup) +
         " warm-up, interleaved across rows; decode rows: ms per token over " + std::to_string(kDecodeSteps) +
         (whole ? " greedy steps, append rows: ms per eval call, park, wake and reprefill rows: ms per operation\n\n"
                : " greedy steps, other rows: ms per eval call\n\n");
    char line[256];
    std::snprintf(line, sizeof line, "%-20s %10s %10s %10s %5s %-12s %14s %10s %7s\n", "row", "p50 ms", "min ms",
                  "max ms", "reps", "label", "launches/pass", "floor ms", "ratio");
    t += line;
    for (const RowStats& r : rows) {
        const std::string floor = r.floor_ms ? fmt("%.4f", *r.floor_ms) : "-";
        const std::string ratio = r.ratio ? fmt("%.2f", *r.ratio) : "-";
        std::snprintf(line, sizeof line, "%-20s %10.4f %10.4f %10.4f %5zu %-12s %14s %10s %7s\n", r.spec.name.c_str(),
                      r.p50_ms, r.min_ms, r.max_ms, r.ms.size(), r.label.label.c_str(),
                      fmt("%.2f", r.launches_per_pass).c_str(), floor.c_str(), ratio.c_str());
        t += line;
    }
    if (std::any_of(rows.begin(), rows.end(), [](const RowStats& r) { return r.file_bytes.has_value(); }))
        t += park_section(info, rows);
    if (!info.profile.empty()) {
        t += "\nprofile of one pass of " + info.profile_row + ":\n";
        for (const std::string& l : info.profile) t += l + "\n";
    }
    return t;
}

json::Value json_report(const BenchInfo& info, const std::vector<RowStats>& rows) {
    using json::Value;
    Value o = Value::object();
    o["model"] = info.model_path;
    o["model_summary"] = info.model_summary;
    o["device"] = info.device;
    o["backend"] = info.backend;
    o["n_ctx_train"] = info.n_ctx_train;
    o["max_batch_tokens"] = info.max_batch_tokens;
    o["reps"] = info.reps;
    o["warmup"] = info.warmup;
    o["seed"] = static_cast<unsigned long long>(info.seed);
    o["decode_steps"] = kDecodeSteps;
    o["weight_bytes_per_token"] = static_cast<unsigned long long>(info.bytes.weights);
    o["kv_bytes_per_cell"] = static_cast<unsigned long long>(info.bytes.kv_per_cell);
    o["bandwidth_bytes_per_s"] = info.bandwidth ? Value(info.bandwidth->bytes_per_s) : Value(nullptr);
    o["bandwidth_source"] = info.bandwidth ? info.bandwidth->source : "not measured: " + info.bandwidth_error;
    o["context_build_s"] = info.context_build_s;
    o["kv_cache_bytes"] = static_cast<unsigned long long>(info.kv_cache_bytes);
    o["park_dir"] = info.park_dir.empty() ? Value(nullptr) : Value(info.park_dir);
    o["park_files_kept"] = info.park_kept;
    o["context_woken_from"] = info.context_files.empty() ? Value(nullptr) : Value(info.context_files[0]);  // context 0's
    Value woken = Value::array(), saved = Value::array();
    for (const std::string& f : info.context_files) woken.push_back(Value(f));
    for (const std::string& f : info.contexts_saved) saved.push_back(Value(f));
    o["contexts_woken_from"] = std::move(woken);
    o["contexts_saved"] = std::move(saved);
    Value list = Value::array();
    for (const RowStats& r : rows) {
        Value j = Value::object();
        j["row"] = r.spec.name;
        j["kind"] = kind_name(r.spec.kind);
        j["depth"] = r.spec.depth;
        j["tokens"] = r.spec.tokens;
        j["contexts"] = r.spec.contexts;
        j["unit"] = unit_of(r.spec.kind);
        j["p50_ms"] = r.p50_ms;
        j["min_ms"] = r.min_ms;
        j["max_ms"] = r.max_ms;
        j["reps"] = int64_t(r.ms.size());
        Value ms = Value::array();
        for (double v : r.ms) ms.push_back(v);
        j["rep_ms"] = std::move(ms);
        j["label"] = r.label.label;
        Value counts = Value::object();
        for (int c = 0; c < telemetry::kContentionCount; ++c)
            counts[telemetry::contention_name(telemetry::Contention(c))] =
                static_cast<unsigned long long>(r.label.counts[size_t(c)]);
        j["snapshots"] = std::move(counts);
        Value reasons = Value::array();
        for (const std::string& why : r.label.reasons) reasons.push_back(why);
        j["contention_reasons"] = std::move(reasons);
        j["launches_per_pass"] = r.launches_per_pass;
        j["passes_per_rep"] = r.passes_per_rep;
        j["device_ms_p50"] = r.device_ms_p50 ? Value(*r.device_ms_p50) : Value(nullptr);
        j["floor_ms"] = r.floor_ms ? Value(*r.floor_ms) : Value(nullptr);
        j["ratio"] = r.ratio ? Value(*r.ratio) : Value(nullptr);
        j["beyond_train_ctx"] = r.beyond_train_ctx;
        j["file_bytes"] = r.file_bytes ? Value(static_cast<unsigned long long>(*r.file_bytes)) : Value(nullptr);
        j["file_mib"] = r.file_bytes ? Value(to_mib(*r.file_bytes)) : Value(nullptr);
        j["reprefill_ratio"] = r.reprefill_ratio ? Value(*r.reprefill_ratio) : Value(nullptr);
        if (const auto& c = r.wake_check) {
            Value w = Value::object();
            w["restored_cells"] = c->restored_cells;
            w["recomputed_cells"] = c->recomputed_cells;
            w["logits_bit_identical"] = c->logits_identical;
            w["first_step_ms"] = c->first_step_ms;
            w["first_step_ms_never_parked"] = c->first_step_ms_never_parked;
            w["reference_woken_from"] = c->reference.empty() ? Value(nullptr) : Value(c->reference);
            j["wake_check"] = std::move(w);
        } else {
            j["wake_check"] = Value(nullptr);
        }
        list.push_back(std::move(j));
    }
    o["rows"] = std::move(list);
    Value notes = Value::array(), warnings = Value::array(), profile = Value::array();
    for (const std::string& n : info.notes) notes.push_back(n);
    for (const std::string& w : info.warnings) warnings.push_back(w);
    for (const std::string& l : info.profile) profile.push_back(l);
    o["notes"] = std::move(notes);
    o["warnings"] = std::move(warnings);
    if (!info.profile.empty()) {
        o["profile_row"] = info.profile_row;
        o["profile"] = std::move(profile);
    }
    return o;
}

}  // namespace arbor::cli::bench
