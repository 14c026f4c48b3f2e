// A read-only memory mapping of a whole file. The mapping is private to the process and is
// never written; pages are faulted in only when read.
#pragma once

#include <arbor/result.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace arbor {

class MappedFile {
public:
    static Result<std::unique_ptr<MappedFile>> open(const std::string& path);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const uint8_t* data() const { return data_; }
    uint64_t size() const { return size_; }
    const std::string& path() const { return path_; }

private:
    MappedFile() = default;
    std::string path_;
    const uint8_t* data_ = nullptr;
    uint64_t size_ = 0;
};

}  // namespace arbor
