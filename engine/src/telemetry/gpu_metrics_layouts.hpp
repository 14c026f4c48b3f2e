// The gpu_metrics layouts as data: each one lists the kernel struct's members in order (width,
// array length, and which decoded field it feeds, if any), plus the raw units of its family.
// Offsets are not written down; they follow from C's natural alignment, as in the kernel, and
// layout_fields() computes them. The tables live in gpu_metrics_layouts.cpp.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace arbor::telemetry::detail {

enum class Field : uint8_t {
    none,
    system_clock_counter,
    temperature_edge, temperature_hotspot, temperature_mem, temperature_gfx, temperature_soc,
    gfx_activity,
    socket_power, cpu_power, soc_power, gfx_power,
    stapm_limit, current_stapm_limit,
    average_gfxclk, average_socclk, average_uclk, average_fclk,
    current_gfxclk, current_socclk, current_uclk, current_fclk,
    gfx_max_freq,
    throttle_status, indep_throttle_status,
    res_prochot, res_spl, res_fppt, res_sppt, res_thm_core, res_thm_gfx, res_thm_soc,  // keep last
};

// One struct member: `width` bytes (1, 2, 4 or 8), repeated `count` times (arrays).
struct Member {
    uint8_t width;
    uint8_t count;
    Field field;
};

// Raw units of a layout family, as divisors to the decoded unit.
struct Units {
    double temperature_per_c;  // v1: 1 (degrees C); v2, v3: 100 (centi-degrees)
    double power_per_w;        // v1: 1 (W); v2, v3: 1000 (mW)
    double activity_per_pct;   // v1: 1 (%); v2, v3: 100 (centi-percent)
};

struct Layout {
    uint8_t format_revision;
    uint8_t content_revision;
    uint16_t structure_size;  // what the header must say; checked against the members
    const char* name;
    Units units;
    std::span<const Member> members;  // after the 4-byte header
};

struct Located {
    Field field;
    uint8_t width;
    uint16_t offset;
};

std::span<const Layout> layouts();
// Offsets of the named (field != none) members; `size` gets the padded struct size.
std::vector<Located> layout_fields(const Layout& l, uint32_t* size);

}  // namespace arbor::telemetry::detail
