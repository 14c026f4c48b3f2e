// Other processes using the AMD compute driver, from KFD's sysfs tree:
//   /sys/class/kfd/kfd/proc/<pid>/queues/<queue id>/   one directory per hardware queue
//   /sys/class/kfd/kfd/proc/<pid>/vram_<gpu id>        VRAM in bytes, per GPU
// A process shows up there as soon as it opens /dev/kfd; what slows us down is its queues.
#include <arbor/telemetry.hpp>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace arbor::telemetry {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::optional<uint64_t> parse_u64(std::string_view s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
    uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
    return v;
}

}  // namespace

std::optional<std::vector<GpuProcess>> list_kfd_processes(const std::string& sys_root,
                                                          const std::string& proc_root, int exclude_pid) {
    const fs::path dir = fs::path(sys_root) / "class/kfd/kfd/proc";
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    if (ec) return std::nullopt;
    std::vector<GpuProcess> out;
    for (; it != fs::directory_iterator(); it.increment(ec)) {
        if (ec) break;
        const std::string name = it->path().filename().string();
        auto pid = parse_u64(name);
        if (!pid || *pid == 0 || *pid > 0x7fffffff || int(*pid) == exclude_pid) continue;
        GpuProcess p;
        p.pid = int(*pid);
        p.source = "kfd";
        if (auto comm = slurp(fs::path(proc_root) / name / "comm")) {
            while (!comm->empty() && comm->back() == '\n') comm->pop_back();
            p.name = *comm;
        }
        std::error_code qec;
        fs::directory_iterator q(it->path() / "queues", qec);
        if (!qec) {
            int n = 0;
            for (; q != fs::directory_iterator(); q.increment(qec)) {
                if (qec) break;
                ++n;
            }
            if (!qec) p.queues = n;
        }
        std::error_code vec;
        for (fs::directory_iterator f(it->path(), vec); !vec && f != fs::directory_iterator(); f.increment(vec)) {
            if (f->path().filename().string().rfind("vram_", 0) != 0) continue;
            if (auto text = slurp(f->path()))
                if (auto bytes = parse_u64(*text)) p.vram_bytes = p.vram_bytes.value_or(0) + *bytes;
        }
        out.push_back(std::move(p));
    }
    std::sort(out.begin(), out.end(), [](const GpuProcess& a, const GpuProcess& b) { return a.pid < b.pid; });
    return out;
}

}  // namespace arbor::telemetry
