// Row labels from recorded telemetry snapshots (see bench_labels.hpp).
#include "bench_labels.hpp"

#include <algorithm>
#include <limits>

namespace arbor::cli::bench {
namespace {

// A reason without its numbers, so that "uses 84% of 2 CPUs" and "uses 78% of 2 CPUs" count once.
std::string shape_of(const std::string& reason) {
    std::string s;
    for (char c : reason)
        if (c < '0' || c > '9') s += c;
    return s;
}

}  // namespace

RowLabel label_row(const std::vector<telemetry::Snapshot>& snapshots, const std::vector<RepSample>& reps) {
    using telemetry::Contention;
    RowLabel out;
    uint64_t seen = 0;
    bool contended = false;
    for (size_t j = 0; j < snapshots.size(); ++j) {
        const telemetry::Snapshot& s = snapshots[j];
        const int64_t lo = j == 0 ? std::numeric_limits<int64_t>::min() : snapshots[j - 1].steady_ns;
        const int64_t hi = s.steady_ns;
        const bool overlaps = std::any_of(reps.begin(), reps.end(),
                                          [&](const RepSample& r) { return r.end_ns > lo && r.begin_ns <= hi; });
        if (!overlaps) continue;
        ++seen;
        ++out.counts[size_t(s.contention)];
        if (s.contention == Contention::other_gpu_process || s.contention == Contention::cpu_busy ||
            s.contention == Contention::thermal_limited) {
            contended = true;
            for (const std::string& why : s.reasons) {
                const bool known = std::any_of(out.reasons.begin(), out.reasons.end(),
                                               [&](const std::string& r) { return shape_of(r) == shape_of(why); });
                if (!known && out.reasons.size() < 4) out.reasons.push_back(why);
            }
        }
    }
    out.label = seen == 0 ? "unmonitored" : contended ? "contended" : "clean";
    return out;
}

}  // namespace arbor::cli::bench
