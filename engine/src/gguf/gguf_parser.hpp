// Internal: the validating GGUF parser behind GgufFile (see arbor/gguf.hpp).
#pragma once

#include <arbor/gguf.hpp>

#include "core/mapped_file.hpp"

namespace arbor {

struct GgufFile::Part {
    std::unique_ptr<MappedFile> map;  // null when parsing caller-owned bytes
    const uint8_t* data = nullptr;
    uint64_t size = 0;
    std::string label;                // path, for messages
};

class GgufParser {
public:
    // Parses one part into `file`. The first part (or a single file) provides the metadata;
    // later parts of a split model contribute only tensors.
    static Status parse_part(GgufFile& file, size_t part_index, bool take_metadata);
    static Status finish(GgufFile& file);  // cross-part checks, overlap, indexes
};

}  // namespace arbor
