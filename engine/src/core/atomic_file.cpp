#include "core/atomic_file.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace arbor {

Result<AtomicFile> AtomicFile::create(const std::string& path) {
    AtomicFile f;
    f.path_ = path;
    f.tmp_ = path + ".tmp-" + std::to_string(::getpid());
    f.fd_ = ::open(f.tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (f.fd_ < 0) return make_error(f.tmp_ + ": cannot create: " + std::strerror(errno));
    return f;
}

AtomicFile::AtomicFile(AtomicFile&& o) noexcept : path_(std::move(o.path_)), tmp_(std::move(o.tmp_)), fd_(o.fd_), pos_(o.pos_) {
    o.fd_ = -1;
    o.tmp_.clear();
}

AtomicFile::~AtomicFile() {
    if (fd_ >= 0) {
        ::close(fd_);
        ::unlink(tmp_.c_str());
    }
}

Status AtomicFile::write(const void* data, uint64_t n) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
        ssize_t w = ::write(fd_, p, n > (1u << 30) ? (1u << 30) : n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return make_error(tmp_ + ": write failed at byte " + std::to_string(pos_) + ": " + std::strerror(errno));
        }
        p += w;
        n -= static_cast<uint64_t>(w);
        pos_ += static_cast<uint64_t>(w);
    }
    return {};
}

Status AtomicFile::extend_to(uint64_t size) {
    if (size < pos_) return make_error(tmp_ + ": cannot shrink while writing");
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0)
        return make_error(tmp_ + ": cannot extend to " + std::to_string(size) + " bytes: " + std::strerror(errno));
    if (::lseek(fd_, static_cast<off_t>(size), SEEK_SET) < 0)
        return make_error(tmp_ + ": seek failed: " + std::strerror(errno));
    pos_ = size;
    return {};
}

Status AtomicFile::commit() {
    if (::fsync(fd_) != 0) return make_error(tmp_ + ": fsync failed: " + std::strerror(errno));
    if (::close(fd_) != 0) {
        fd_ = -1;
        return make_error(tmp_ + ": close failed: " + std::strerror(errno));
    }
    fd_ = -1;
    if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
        int e = errno;
        ::unlink(tmp_.c_str());
        return make_error(path_ + ": cannot rename temp file into place: " + std::strerror(e));
    }
    std::string dir = path_;
    size_t slash = dir.find_last_of('/');
    dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : dir.substr(0, slash));
    int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
    return {};
}

}  // namespace arbor
