// Crash-safe file replacement: write to a temp file beside the target, fsync it, rename it
// over the target, fsync the directory. A kill -9 at any point leaves either the old file or
// the new one, never a mix. An AtomicFile that is destroyed without commit() removes its temp.
#pragma once

#include <arbor/result.hpp>

#include <cstdint>
#include <string>

namespace arbor {

class AtomicFile {
public:
    static Result<AtomicFile> create(const std::string& path);
    AtomicFile(AtomicFile&& o) noexcept;
    AtomicFile& operator=(AtomicFile&&) = delete;
    ~AtomicFile();

    Status write(const void* data, uint64_t n);
    // Extends the file to `size` bytes without writing them (a sparse hole reading as zeros).
    Status extend_to(uint64_t size);
    uint64_t position() const { return pos_; }
    Status commit();

private:
    AtomicFile() = default;
    std::string path_, tmp_;
    int fd_ = -1;
    uint64_t pos_ = 0;
};

}  // namespace arbor
