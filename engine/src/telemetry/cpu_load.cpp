// CPU load from /proc/stat and /proc/<pid>/stat (see proc(5)). Both count clock ticks
// (USER_HZ); the busy fraction is a difference of two readings, and the load from other
// processes is that minus this process's own utime+stime over the same interval.
#include <arbor/telemetry.hpp>

#include <algorithm>
#include <charconv>

namespace arbor::telemetry {
namespace {

std::string_view next_line(std::string_view& text) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    return line;
}

// Splits on spaces; returns false on a token that is not a plain unsigned integer.
bool parse_numbers(std::string_view s, std::vector<uint64_t>& out, std::string* bad) {
    size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
        if (i >= s.size()) break;
        size_t j = i;
        while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
        uint64_t v = 0;
        auto [ptr, ec] = std::from_chars(s.data() + i, s.data() + j, v);
        if (ec != std::errc() || ptr != s.data() + j) {
            if (bad) *bad = std::string(s.substr(i, j - i));
            return false;
        }
        out.push_back(v);
        i = j;
    }
    return true;
}

}  // namespace

Result<CpuTimes> parse_proc_stat(std::string_view text) {
    CpuTimes t;
    bool have_total = false;
    int line_no = 0;
    while (!text.empty()) {
        std::string_view line = next_line(text);
        ++line_no;
        if (line.size() < 3 || line.substr(0, 3) != "cpu") continue;
        if (line.size() > 3 && line[3] >= '0' && line[3] <= '9') {
            ++t.cpus;
            continue;
        }
        if (line.size() > 3 && line[3] != ' ') continue;
        std::vector<uint64_t> v;
        std::string bad;
        if (!parse_numbers(line.substr(3), v, &bad))
            return make_error("/proc/stat line " + std::to_string(line_no) + ": 'cpu' field '" + bad +
                              "' is not a number");
        if (v.size() < 4)
            return make_error("/proc/stat line " + std::to_string(line_no) + ": 'cpu' has " +
                              std::to_string(v.size()) + " fields, need at least 4 (user nice system idle)");
        v.resize(10, 0);  // user nice system idle iowait irq softirq steal guest guest_nice
        t.busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
        t.total = t.busy + v[3] + v[4];
        have_total = true;
    }
    if (!have_total) return make_error("/proc/stat: no aggregate 'cpu' line");
    if (t.cpus == 0) t.cpus = 1;
    return t;
}

Result<uint64_t> parse_process_stat_ticks(std::string_view text) {
    // "pid (comm) state ppid ..." - comm can contain anything, so fields start after the LAST ')'.
    size_t close = text.rfind(')');
    if (close == std::string_view::npos) return make_error("process stat: no ')' closing the command name");
    std::string_view rest = text.substr(close + 1);
    // Field 3 (state) is the first token after ')'; utime and stime are fields 14 and 15.
    std::vector<std::string_view> tok;
    size_t i = 0;
    while (i < rest.size() && tok.size() < 13) {
        while (i < rest.size() && (rest[i] == ' ' || rest[i] == '\n')) ++i;
        size_t j = i;
        while (j < rest.size() && rest[j] != ' ' && rest[j] != '\n') ++j;
        if (j > i) tok.push_back(rest.substr(i, j - i));
        i = j;
    }
    if (tok.size() < 13)
        return make_error("process stat: " + std::to_string(tok.size() + 2) + " fields, need 15 (utime, stime)");
    uint64_t ticks = 0;
    for (int k : {11, 12}) {
        uint64_t v = 0;
        auto [ptr, ec] = std::from_chars(tok[k].data(), tok[k].data() + tok[k].size(), v);
        if (ec != std::errc() || ptr != tok[k].data() + tok[k].size())
            return make_error("process stat: field " + std::to_string(k + 3) + " ('" + std::string(tok[k]) +
                              "') is not a number");
        ticks += v;
    }
    return ticks;
}

std::optional<CpuLoad> cpu_load_between(const CpuTimes& before, const CpuTimes& after, uint64_t self_before,
                                        uint64_t self_after) {
    if (after.total <= before.total || after.busy < before.busy) return std::nullopt;
    const double total = double(after.total - before.total);
    CpuLoad l;
    l.cpus = after.cpus;
    l.busy = std::clamp(double(after.busy - before.busy) / total, 0.0, 1.0);
    const double self = self_after >= self_before ? double(self_after - self_before) : 0.0;
    l.self = std::clamp(self / total, 0.0, l.busy);
    l.other = std::clamp(l.busy - l.self, 0.0, 1.0);
    return l;
}

}  // namespace arbor::telemetry
