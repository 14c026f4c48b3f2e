#include "core/mapped_file.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace arbor {

Result<std::unique_ptr<MappedFile>> MappedFile::open(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return make_error(path + ": cannot open: " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        int e = errno;
        ::close(fd);
        return make_error(path + ": cannot stat: " + std::strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        return make_error(path + ": not a regular file");
    }
    std::unique_ptr<MappedFile> m(new MappedFile());
    m->path_ = path;
    m->size_ = static_cast<uint64_t>(st.st_size);
    if (m->size_ > 0) {
        void* p = ::mmap(nullptr, m->size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            int e = errno;
            ::close(fd);
            return make_error(path + ": cannot map " + std::to_string(m->size_) + " bytes: " + std::strerror(e));
        }
        m->data_ = static_cast<const uint8_t*>(p);
    }
    ::close(fd);
    return m;
}

MappedFile::~MappedFile() {
    if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace arbor
