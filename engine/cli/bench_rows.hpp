// The rows of `arbor-cli bench`: what each one measures, and their names.
//
//   decode@D        64 greedy decode steps (one token per eval call) starting from a context of
//                   D cells; the row's time is milliseconds per token.
//   prefillN@D      N tokens appended to a context of D cells in one eval call (one batch entry).
//   readN@D         the same work as prefillN@D under the name the issue uses for short reads.
//   readNxK@D       N tokens appended to each of K different D-cell contexts, in one eval call
//                   with K batch entries (also prefillNxK@D).
//   park@D          context 0 at D cells written to a park file (arbor/park.hpp), atomically.
//   wake@D          that park file read into a fresh sequence: cells restored, not recomputed.
//   reprefill@D     the same D tokens evaluated into a fresh sequence: the fallback of a wake
//                   whose file is bad, and the peer of park@D and wake@D (D >= 1 for these three).
//
// A bare "decode" in --rows stands for decode@D at every depth of --depths.
#pragma once

#include <arbor/result.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace arbor::cli::bench {

enum class RowKind {
    Decode,  // `tokens` single-token eval calls, greedy
    Append,  // `tokens` tokens appended to each of `contexts` contexts in one eval call
    Park,       // context 0 at `depth` cells to a park file
    Wake,       // that park file into a fresh sequence
    Reprefill,  // context 0's first `depth` tokens into a fresh sequence
};

struct RowSpec {
    std::string name;      // as written in tables and JSON: "decode@229", "read50x4@16384"
    RowKind kind = RowKind::Decode;
    int64_t depth = 0;     // context cells present before the row's work
    int64_t tokens = 0;    // decode: steps; append: tokens per context; park, wake, reprefill: 0
    int64_t contexts = 1;  // distinct contexts in the eval call
};

inline constexpr int64_t kDecodeSteps = 64;
inline constexpr int64_t kMaxDepth = int64_t(1) << 20;  // cells; far beyond any model's training context
inline constexpr int64_t kMaxContexts = 64;
inline constexpr int64_t kMaxAppendTokens = 65536;      // tokens x contexts of one append row

std::vector<int64_t> default_decode_depths();  // 229, 4096, 16384, 31900 (the table)
std::string default_rows();                    // "decode,prefill256@16384,read50@16384,read50x4@16384,read50x8@16384"

// "229,4096": depths in [0, kMaxDepth]. Errors name the bad item.
Result<std::vector<int64_t>> parse_depths(std::string_view list);
// A comma-separated row list. `decode` expands to decode@D for each of `decode_depths` (and sets
// *used_depths). Errors name the bad item: unknown kind, bad number, out of range, duplicate.
Result<std::vector<RowSpec>> parse_rows(std::string_view list, const std::vector<int64_t>& decode_depths,
                                        bool* used_depths);

}  // namespace arbor::cli::bench
