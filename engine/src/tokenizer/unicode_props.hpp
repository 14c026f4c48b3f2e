// Unicode facts the tokenizers need: general category class, White_Space, simple lowercase and
// the first code point of NFD. The tables are generated (gen_unicode_tables.py, Python's
// unicodedata) as sorted range lists; lookups are an ASCII table or a binary search.
#pragma once

#include <cstddef>
#include <cstdint>

namespace arbor::tok {

// Category classes, the low 3 bits of a props byte.
enum : uint8_t {
    kCatUndefined = 0,  // Cn
    kCatNumber = 1,     // Nd Nl No
    kCatLetter = 2,     // Lu Ll Lt Lm Lo
    kCatSeparator = 3,  // Zs Zl Zp
    kCatMark = 4,       // Mn Mc Me
    kCatPunct = 5,      // Pc Pd Ps Pe Pi Pf Po
    kCatSymbol = 6,     // Sm Sc Sk So
    kCatControl = 7,    // Cc Cf Co Cs
};
constexpr uint8_t kCatMask = 0x7;
constexpr uint8_t kWhiteSpaceBit = 0x8;

struct LowerRun {
    uint32_t start;
    uint16_t count;
    uint8_t stride;
    int32_t delta;
};
struct NfdRun {
    uint32_t first;
    uint32_t last;
    uint32_t value;
};

extern const uint32_t kPropRanges[];  // (start << 4) | props
extern const size_t kPropRangeCount;
extern const LowerRun kLowerRuns[];
extern const size_t kLowerRunCount;
extern const NfdRun kNfdRuns[];
extern const size_t kNfdRunCount;

// Props byte (category class | White_Space bit) of a code point; 0 beyond U+10FFFF.
uint8_t cpt_props_slow(uint32_t cp);
extern const uint8_t kAsciiProps[128];
inline uint8_t cpt_props(uint32_t cp) { return cp < 128 ? kAsciiProps[cp] : cpt_props_slow(cp); }
inline uint8_t cpt_cat(uint32_t cp) { return cpt_props(cp) & kCatMask; }
inline bool cpt_is_space(uint32_t cp) { return (cpt_props(cp) & kWhiteSpaceBit) != 0; }
inline bool cpt_is_letter(uint32_t cp) { return cpt_cat(cp) == kCatLetter; }
inline bool cpt_is_number(uint32_t cp) { return cpt_cat(cp) == kCatNumber; }

uint32_t cpt_tolower(uint32_t cp);    // simple lowercase mapping, or cp itself
uint32_t cpt_nfd_first(uint32_t cp);  // first code point of cp's NFD, or cp itself

}  // namespace arbor::tok
