// The telemetry label of a bench row, from the sampler's snapshots recorded during the run.
//
// A snapshot describes the interval since the snapshot before it (CPU load is a difference of
// two readings), so snapshot j covers (steady_ns of j-1, steady_ns of j]; the first recorded one
// covers everything before it. A row's label looks at every snapshot whose interval overlaps one
// of its timed repetitions and applies the timing guard's rule (docs/TELEMETRY.md): contended
// when any of them is other-gpu-process, cpu-busy or thermal-limited, else clean.
// power-limited alone stays clean. A row no snapshot covers is "unmonitored".
#pragma once

#include "bench_runner.hpp"

#include <arbor/telemetry.hpp>

#include <array>
#include <string>
#include <vector>

namespace arbor::cli::bench {

struct RowLabel {
    std::string label;  // "clean", "contended" or "unmonitored"
    std::array<uint64_t, telemetry::kContentionCount> counts{};  // overlapping snapshots, by Contention
    std::vector<std::string> reasons;  // distinct reasons (numbers aside) of the contended snapshots, at most 4
};

RowLabel label_row(const std::vector<telemetry::Snapshot>& snapshots, const std::vector<RepSample>& reps);

}  // namespace arbor::cli::bench
