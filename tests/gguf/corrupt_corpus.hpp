// Corrupt GGUF images generated from valid ones: truncations at every structure boundary,
// flipped bytes, huge counts and lengths, wrong alignment, lying and overlapping offsets.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace arbor::test {

struct CorruptCase {
    std::string name;
    std::vector<uint8_t> bytes;
    bool must_fail;  // false: a flip that may still be a valid file
};

// Byte offsets where each header structure starts, found by walking a valid image.
std::vector<uint64_t> gguf_structure_boundaries(const std::vector<uint8_t>& valid);
std::vector<CorruptCase> make_corrupt_corpus(const std::vector<uint8_t>& valid, const std::string& label);

}  // namespace arbor::test
