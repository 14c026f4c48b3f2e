// The park files' disk budget (arbor/park.hpp): least-recently-used eviction by mtime.
#include <arbor/park.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>

namespace arbor {

Result<ParkEviction> enforce_park_budget(const std::string& dir, uint64_t budget_bytes, const std::string& keep) {
    namespace fs = std::filesystem;
    struct Entry {
        fs::path path;
        uint64_t size;
        fs::file_time_type used;
    };
    std::vector<Entry> files;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        if (e.path().extension() != ".park" || !e.is_regular_file(ec)) continue;
        const uint64_t size = e.file_size(ec);
        if (ec) continue;  // vanished meanwhile
        const auto t = e.last_write_time(ec);
        if (ec) continue;
        files.push_back({e.path(), size, t});
    }
    if (ec) return make_error(dir + ": cannot list park files: " + ec.message());
    std::sort(files.begin(), files.end(), [](const Entry& a, const Entry& b) {
        return a.used != b.used ? a.used < b.used : a.path < b.path;
    });
    ParkEviction ev;
    for (const Entry& f : files) ev.bytes_after += f.size;
    std::error_code keep_ec;
    const fs::path kept = keep.empty() ? fs::path() : fs::weakly_canonical(keep, keep_ec);
    for (const Entry& f : files) {
        if (ev.bytes_after <= budget_bytes) break;
        std::error_code c;
        if (!kept.empty() && fs::weakly_canonical(f.path, c) == kept) continue;
        if (!fs::remove(f.path, c) && c) return make_error(f.path.string() + ": cannot remove: " + c.message());
        ev.removed.push_back(f.path.string());
        ev.bytes_after -= f.size;
    }
    return ev;
}

Status touch_park_file(const std::string& path) {
    if (::utimensat(AT_FDCWD, path.c_str(), nullptr, 0) != 0)
        return make_error(path + ": cannot update its time: " + std::strerror(errno));
    return {};
}

}  // namespace arbor
