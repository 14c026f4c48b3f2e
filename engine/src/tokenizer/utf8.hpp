// UTF-8 decoding and encoding as the reference tokenizers see text.
//
// Decoding is lenient the way llama.cpp's is: a lead byte followed by the right number of
// continuation bytes decodes without overlong or surrogate checks; anything else (a stray
// continuation byte, a truncated sequence, 0xF8..0xFF) becomes U+FFFD for that one byte and
// decoding resumes at the next byte. A sequence that decodes above U+10FFFF is treated the
// same way (the reference would fail on it later; we never do).
#pragma once

#include "core/utf8_append.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace arbor::tok {

constexpr uint32_t kReplacementChar = 0xFFFD;

// Decodes one code point at s[pos]; advances pos by the bytes consumed (at least 1).
inline uint32_t utf8_decode_one(std::string_view s, size_t& pos) {
    const auto b0 = static_cast<uint8_t>(s[pos]);
    if (b0 < 0x80) {
        pos += 1;
        return b0;
    }
    size_t n = 0;
    uint32_t cp = 0;
    if ((b0 & 0xE0) == 0xC0) {
        n = 2;
        cp = b0 & 0x1F;
    } else if ((b0 & 0xF0) == 0xE0) {
        n = 3;
        cp = b0 & 0x0F;
    } else if ((b0 & 0xF8) == 0xF0) {
        n = 4;
        cp = b0 & 0x07;
    } else {
        pos += 1;
        return kReplacementChar;
    }
    if (pos + n > s.size()) {
        pos += 1;
        return kReplacementChar;
    }
    for (size_t i = 1; i < n; ++i) {
        const auto b = static_cast<uint8_t>(s[pos + i]);
        if ((b & 0xC0) != 0x80) {
            pos += 1;
            return kReplacementChar;
        }
        cp = (cp << 6) | (b & 0x3F);
    }
    if (cp > 0x10FFFF) {
        pos += 1;
        return kReplacementChar;
    }
    pos += n;
    return cp;
}

using ::arbor::utf8_append;

// Length of the UTF-8 sequence a lead byte announces, as llama.cpp counts it (1 for
// continuation bytes and invalid leads).
inline size_t utf8_seq_len(uint8_t lead) {
    static constexpr uint8_t kLen[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    return kLen[lead >> 4];
}

inline std::vector<uint32_t> utf8_to_cpts(std::string_view s) {
    std::vector<uint32_t> out;
    out.reserve(s.size());
    size_t pos = 0;
    while (pos < s.size()) out.push_back(utf8_decode_one(s, pos));
    return out;
}

}  // namespace arbor::tok
