// Lookups over the generated Unicode tables (unicode_tables.cpp).
#include "tokenizer/unicode_props.hpp"

#include <algorithm>

namespace arbor::tok {

uint8_t cpt_props_slow(uint32_t cp) {
    if (cp >= 0x110000) return kCatUndefined;
    const uint32_t key = (cp << 4) | 0xF;
    const uint32_t* end = kPropRanges + kPropRangeCount;
    const uint32_t* it = std::upper_bound(kPropRanges, end, key);  // first range starting after cp
    return static_cast<uint8_t>(it[-1] & 0xF);
}

uint32_t cpt_tolower(uint32_t cp) {
    if (cp < 128) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
    const LowerRun* end = kLowerRuns + kLowerRunCount;
    const LowerRun* it = std::upper_bound(kLowerRuns, end, cp,
                                          [](uint32_t v, const LowerRun& r) { return v < r.start; });
    if (it == kLowerRuns) return cp;
    const LowerRun& r = it[-1];
    const uint32_t off = cp - r.start;
    if (off % r.stride != 0 || off / r.stride >= r.count) return cp;
    return static_cast<uint32_t>(static_cast<int64_t>(cp) + r.delta);
}

uint32_t cpt_nfd_first(uint32_t cp) {
    if (cp < 0xC0) return cp;
    const NfdRun* end = kNfdRuns + kNfdRunCount;
    const NfdRun* it = std::upper_bound(kNfdRuns, end, cp,
                                        [](uint32_t v, const NfdRun& r) { return v < r.first; });
    if (it == kNfdRuns) return cp;
    const NfdRun& r = it[-1];
    return cp <= r.last ? r.value : cp;
}

}  // namespace arbor::tok
