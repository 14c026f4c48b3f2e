// Decoding AMD gpu_metrics tables. The header (structure_size, format_revision,
// content_revision) picks one entry of the layout table; nothing is guessed: an unknown
// revision, a size no layout of that revision has, or a buffer shorter than the header says
// is an Error naming the file, the field and the byte offset.
#include "telemetry/gpu_metrics_layouts.hpp"

#include <arbor/telemetry.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace arbor::telemetry {
namespace {

using detail::Field;

uint64_t read_le(const uint8_t* p, int width) {
    uint64_t v = 0;
    for (int i = width - 1; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

uint64_t all_ones(int width) { return width == 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * width)) - 1; }

std::string known_sizes(uint8_t fmt, uint8_t content) {
    std::string out;
    for (const auto& l : detail::layouts()) {
        if (l.format_revision != fmt || l.content_revision != content) continue;
        if (!out.empty()) out += ", ";
        out += std::to_string(l.structure_size);
    }
    return out;
}

// Raw values by field, present only when the layout has the field and it is not all ones.
constexpr int kFieldSlots = static_cast<int>(Field::res_thm_soc) + 1;
struct Raw {
    std::optional<uint64_t> v[kFieldSlots];
    std::optional<uint64_t> get(Field f) const { return v[static_cast<int>(f)]; }
};

std::optional<double> scaled(std::optional<uint64_t> raw, double per_unit) {
    if (!raw) return std::nullopt;
    return double(*raw) / per_unit;
}

std::optional<uint32_t> clock(const Raw& r, Field average, Field current, bool* is_average = nullptr) {
    if (auto a = r.get(average)) {
        if (is_average) *is_average = true;
        return static_cast<uint32_t>(*a);
    }
    if (auto c = r.get(current)) return static_cast<uint32_t>(*c);
    return std::nullopt;
}

std::optional<uint32_t> u32_of(std::optional<uint64_t> v) {
    if (!v) return std::nullopt;
    return static_cast<uint32_t>(*v);
}

}  // namespace

std::vector<GpuMetricsLayoutInfo> supported_gpu_metrics_layouts() {
    std::vector<GpuMetricsLayoutInfo> out;
    for (const auto& l : detail::layouts())
        out.push_back({l.format_revision, l.content_revision, l.structure_size, l.name});
    return out;
}

Result<GpuMetrics> parse_gpu_metrics(std::span<const uint8_t> bytes, std::string_view source) {
    const std::string where(source);
    if (bytes.size() < 4)
        return make_error(where + ": gpu_metrics header truncated: " + std::to_string(bytes.size()) +
                          " bytes, the header (structure_size, format_revision, content_revision) needs 4");
    const uint16_t size = static_cast<uint16_t>(read_le(bytes.data(), 2));
    const uint8_t fmt = bytes[2], content = bytes[3];
    std::string version = "v";  // built by appending: GCC 12 warns falsely on "v" + to_string()
    version += std::to_string(fmt);
    version += '.';
    version += std::to_string(content);

    const detail::Layout* layout = nullptr;
    bool revision_known = false;
    for (const auto& l : detail::layouts()) {
        if (l.format_revision != fmt || l.content_revision != content) continue;
        revision_known = true;
        if (l.structure_size == size) layout = &l;
    }
    if (!revision_known)
        return make_error(where + ": gpu_metrics " + version +
                          " is not a supported version (format_revision at byte 2, content_revision at byte 3)");
    if (!layout)
        return make_error(where + ": gpu_metrics " + version + " with structure_size " + std::to_string(size) +
                          " (byte 0) matches no known layout of that version (known sizes: " +
                          known_sizes(fmt, content) + ")");
    if (bytes.size() < size)
        return make_error(where + ": gpu_metrics " + version + " truncated: " + std::to_string(bytes.size()) +
                          " bytes, structure_size (byte 0) says " + std::to_string(size));

    uint32_t padded = 0;
    const auto fields = detail::layout_fields(*layout, &padded);
    if (padded != size)  // the table disagrees with itself; static_asserts make this unreachable
        return make_error(where + ": gpu_metrics layout " + layout->name + " is inconsistent");

    Raw raw;
    for (const auto& f : fields) {
        const uint64_t v = read_le(bytes.data() + f.offset, f.width);
        if (v != all_ones(f.width)) raw.v[static_cast<int>(f.field)] = v;
    }

    const detail::Units& u = layout->units;
    GpuMetrics m;
    m.structure_size = size;
    m.format_revision = fmt;
    m.content_revision = content;
    m.layout = layout->name;
    m.system_clock_ns = raw.get(Field::system_clock_counter);
    m.socket_power_w = scaled(raw.get(Field::socket_power), u.power_per_w);
    m.gfx_power_w = scaled(raw.get(Field::gfx_power), u.power_per_w);
    m.cpu_power_w = scaled(raw.get(Field::cpu_power), u.power_per_w);
    m.soc_power_w = scaled(raw.get(Field::soc_power), u.power_per_w);
    m.stapm_limit_w = scaled(raw.get(Field::stapm_limit), u.power_per_w);
    m.current_stapm_limit_w = scaled(raw.get(Field::current_stapm_limit), u.power_per_w);
    m.gfxclk_mhz = clock(raw, Field::average_gfxclk, Field::current_gfxclk, &m.gfxclk_is_average);
    m.socclk_mhz = clock(raw, Field::average_socclk, Field::current_socclk);
    m.fclk_mhz = clock(raw, Field::average_fclk, Field::current_fclk);
    m.uclk_mhz = clock(raw, Field::average_uclk, Field::current_uclk);
    m.gfx_max_freq_mhz = u32_of(raw.get(Field::gfx_max_freq));
    m.temperature_gfx_c = scaled(raw.get(Field::temperature_gfx), u.temperature_per_c);
    m.temperature_soc_c = scaled(raw.get(Field::temperature_soc), u.temperature_per_c);
    m.temperature_edge_c = scaled(raw.get(Field::temperature_edge), u.temperature_per_c);
    m.temperature_hotspot_c = scaled(raw.get(Field::temperature_hotspot), u.temperature_per_c);
    m.temperature_mem_c = scaled(raw.get(Field::temperature_mem), u.temperature_per_c);
    m.gfx_activity_pct = scaled(raw.get(Field::gfx_activity), u.activity_per_pct);
    m.throttle_status = u32_of(raw.get(Field::throttle_status));
    m.indep_throttle_status = raw.get(Field::indep_throttle_status);
    m.residency.prochot = u32_of(raw.get(Field::res_prochot));
    m.residency.spl = u32_of(raw.get(Field::res_spl));
    m.residency.fppt = u32_of(raw.get(Field::res_fppt));
    m.residency.sppt = u32_of(raw.get(Field::res_sppt));
    m.residency.thm_core = u32_of(raw.get(Field::res_thm_core));
    m.residency.thm_gfx = u32_of(raw.get(Field::res_thm_gfx));
    m.residency.thm_soc = u32_of(raw.get(Field::res_thm_soc));
    return m;
}

Result<GpuMetrics> read_gpu_metrics(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return make_error(path + ": cannot open: " + std::strerror(errno));
    // sysfs hands out the whole table in one read; a captured copy is small too. The largest
    // kernel layout is about 1 KiB, so anything reaching 16 KiB is not a gpu_metrics table.
    std::vector<uint8_t> buf(16384);
    size_t n = 0;
    while (n < buf.size()) {
        size_t got = std::fread(buf.data() + n, 1, buf.size() - n, f);
        if (got == 0) break;
        n += got;
    }
    const bool failed = std::ferror(f) != 0;
    const int err = errno;
    std::fclose(f);
    if (failed) return make_error(path + ": read failed: " + std::strerror(err));
    if (n == buf.size()) return make_error(path + ": 16 KiB or more, not a gpu_metrics table");
    buf.resize(n);
    return parse_gpu_metrics(buf, path);
}

}  // namespace arbor::telemetry
