// Unicode property and case-mapping tables (generated into unicode_tables.cpp by
// gen_unicode_tables.py from the Python that runs the jinja2 oracle). Sorted, for binary search.
#pragma once

#include <cstddef>

namespace arbor::tmpl::unicode_tables {

struct Range {
    char32_t first, last;
};
struct CaseMapping {
    char32_t cp;
    char32_t out[3];  // up to three code points, zero-padded
};

extern const CaseMapping kUpper[], kLower[], kTitle[];
extern const size_t kUpper_count, kLower_count, kTitle_count;
extern const Range kNonPrintable[], kCased[], kCaseIgnorable[], kLowercase[], kUppercase[], kAlpha[],
    kDecimal[], kDigit[], kNumeric[];
extern const size_t kNonPrintable_count, kCased_count, kCaseIgnorable_count, kLowercase_count,
    kUppercase_count, kAlpha_count, kDecimal_count, kDigit_count, kNumeric_count;

}  // namespace arbor::tmpl::unicode_tables
