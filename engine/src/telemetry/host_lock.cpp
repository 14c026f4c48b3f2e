// The host lock that serialises GPU benchmark runs (and builds that opt in, e.g. with
// `flock "$(arbor-cli telemetry --lock-path)" ninja`): an exclusive flock(2) on one file per user.
// flock locks belong to the open file, so the lock goes away with the process however it ends.
#include <arbor/telemetry.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace arbor::telemetry {

std::string default_host_lock_path() {
    const char* rt = std::getenv("XDG_RUNTIME_DIR");
    if (rt && *rt && access(rt, W_OK) == 0) return std::string(rt) + "/arbor-gpu.lock";
    return "/tmp/arbor-gpu-" + std::to_string(getuid()) + ".lock";
}

Result<HostLock> HostLock::acquire(const std::string& path, std::chrono::milliseconds wait) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return make_error("host lock " + path + ": cannot open: " + std::strerror(errno));
    const auto deadline = std::chrono::steady_clock::now() + wait;
    for (;;) {
        if (::flock(fd, LOCK_EX | LOCK_NB) == 0) break;
        const int err = errno;
        if (err == EINTR) continue;
        if (err != EWOULDBLOCK || std::chrono::steady_clock::now() >= deadline) {
            std::string holder;
            char buf[32] = {};
            ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
            if (n > 0) {
                holder.assign(buf, size_t(n));
                while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
            }
            ::close(fd);
            if (err != EWOULDBLOCK) return make_error("host lock " + path + ": flock failed: " + std::strerror(err));
            return make_error("host lock " + path + " is held" + (holder.empty() ? "" : " by pid " + holder) +
                              " (waited " + std::to_string(wait.count()) + " ms)");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    // Leave our pid for whoever waits next; failures here do not matter to the lock itself.
    const std::string pid = std::to_string(getpid()) + "\n";
    if (::ftruncate(fd, 0) == 0) {
        ssize_t w = ::pwrite(fd, pid.data(), pid.size(), 0);
        (void)w;
    }
    return HostLock(fd, path);
}

HostLock::HostLock(HostLock&& o) noexcept : fd_(o.fd_), path_(std::move(o.path_)) { o.fd_ = -1; }

HostLock& HostLock::operator=(HostLock&& o) noexcept {
    if (this != &o) {
        release();
        fd_ = o.fd_;
        path_ = std::move(o.path_);
        o.fd_ = -1;
    }
    return *this;
}

HostLock::~HostLock() { release(); }

void HostLock::release() {
    if (fd_ < 0) return;
    if (::ftruncate(fd_, 0) != 0) {
        // best effort: the next holder overwrites the pid anyway
    }
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
    fd_ = -1;
}

}  // namespace arbor::telemetry
