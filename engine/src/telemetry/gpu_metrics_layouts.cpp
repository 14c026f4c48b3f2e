// The gpu_metrics layout tables, member by member as in the Linux kernel's
// drivers/gpu/drm/amd/include/kgd_pp_interface.h (struct gpu_metrics_vX_Y). Members a snapshot
// does not use are kept (with Field::none) so that every offset follows from the list.
//
// Units: v1.x (dGPUs) report degrees C, watts and percent; v2.x and v3.0 (APUs) report
// centi-degrees, milliwatts and centi-percent (what the kernel's own sensors divide by).
#include "telemetry/gpu_metrics_layouts.hpp"

#include <array>
#include <cstddef>

namespace arbor::telemetry::detail {
namespace {

using F = Field;

constexpr Member u8(F f = F::none) { return {1, 1, f}; }
constexpr Member u16(F f = F::none) { return {2, 1, f}; }
constexpr Member u32(F f = F::none) { return {4, 1, f}; }
constexpr Member u64(F f = F::none) { return {8, 1, f}; }
constexpr Member u16s(uint8_t n) { return {2, n, F::none}; }

template <size_t A, size_t B>
constexpr std::array<Member, A + B> cat(const std::array<Member, A>& a, const std::array<Member, B>& b) {
    std::array<Member, A + B> out{};
    for (size_t i = 0; i < A; ++i) out[i] = a[i];
    for (size_t i = 0; i < B; ++i) out[A + i] = b[i];
    return out;
}

// Size of the struct (header included) under natural alignment, as a C compiler lays it out.
template <size_t N>
constexpr uint32_t padded_size(const std::array<Member, N>& m) {
    uint32_t off = 4, align = 2;
    for (const Member& x : m) {
        off = (off + x.width - 1) / x.width * x.width;
        off += uint32_t(x.width) * x.count;
        if (x.width > align) align = x.width;
    }
    return (off + align - 1) / align * align;
}

constexpr Units kDgpuUnits{1.0, 1.0, 1.0};
constexpr Units kApuUnits{100.0, 1000.0, 100.0};

// ---- v1.x (dGPUs) ---------------------------------------------------------------------------

constexpr auto kV1_0 = std::to_array<Member>({
    u64(F::system_clock_counter),
    u16(F::temperature_edge), u16(F::temperature_hotspot), u16(F::temperature_mem),
    u16(), u16(), u16(),  // temperature_vrgfx, _vrsoc, _vrmem
    u16(F::gfx_activity), u16(), u16(),  // average_gfx/umc/mm_activity
    u16(F::socket_power),
    u32(),  // energy_accumulator
    u16(F::average_gfxclk), u16(F::average_socclk), u16(F::average_uclk),
    u16(), u16(), u16(), u16(),  // average_vclk0/dclk0/vclk1/dclk1
    u16(F::current_gfxclk), u16(F::current_socclk), u16(F::current_uclk),
    u16(), u16(), u16(), u16(),  // current_vclk0/dclk0/vclk1/dclk1
    u32(F::throttle_status),
    u16(),       // current_fan_speed
    u8(), u8(),  // pcie_link_width, pcie_link_speed
});

constexpr auto kV1_1 = std::to_array<Member>({
    u16(F::temperature_edge), u16(F::temperature_hotspot), u16(F::temperature_mem),
    u16(), u16(), u16(),  // temperature_vrgfx, _vrsoc, _vrmem
    u16(F::gfx_activity), u16(), u16(),  // average_gfx/umc/mm_activity
    u16(F::socket_power),
    u64(),  // energy_accumulator
    u64(F::system_clock_counter),
    u16(F::average_gfxclk), u16(F::average_socclk), u16(F::average_uclk),
    u16(), u16(), u16(), u16(),  // average_vclk0/dclk0/vclk1/dclk1
    u16(F::current_gfxclk), u16(F::current_socclk), u16(F::current_uclk),
    u16(), u16(), u16(), u16(),  // current_vclk0/dclk0/vclk1/dclk1
    u32(F::throttle_status),
    u16(),                // current_fan_speed
    u16(), u16(), u16(),  // pcie_link_width, pcie_link_speed, padding
    u32(), u32(),         // gfx_activity_acc, mem_activity_acc
    u16s(4),              // temperature_hbm[4]
});

constexpr auto kV1_2Tail = std::to_array<Member>({u64()});  // firmware_timestamp
constexpr auto kV1_2 = cat(kV1_1, kV1_2Tail);

constexpr auto kV1_3Tail = std::to_array<Member>({
    u16(), u16(), u16(),  // voltage_soc, voltage_gfx, voltage_mem
    u16(),                // padding1
    u64(F::indep_throttle_status),
});
constexpr auto kV1_3 = cat(kV1_2, kV1_3Tail);

// ---- v2.x (APUs) ----------------------------------------------------------------------------

constexpr auto kV2Temps = std::to_array<Member>({u16(F::temperature_gfx), u16(F::temperature_soc)});
constexpr auto kV2TempsRest = std::to_array<Member>({u16s(8), u16s(2), u16(F::gfx_activity), u16()});  // core[8], l3[2], gfx/mm activity
constexpr auto kV2Power = std::to_array<Member>({
    u16(F::socket_power), u16(F::cpu_power), u16(F::soc_power), u16(F::gfx_power),
    u16s(8),  // average_core_power[8]
});
constexpr auto kV2Clocks = std::to_array<Member>({
    u16(F::average_gfxclk), u16(F::average_socclk), u16(F::average_uclk), u16(F::average_fclk),
    u16(), u16(),  // average_vclk, average_dclk
    u16(F::current_gfxclk), u16(F::current_socclk), u16(F::current_uclk), u16(F::current_fclk),
    u16(), u16(),  // current_vclk, current_dclk
    u16s(8), u16s(2),  // current_coreclk[8], current_l3clk[2]
});

constexpr auto kSysClock = std::to_array<Member>({u64(F::system_clock_counter)});
constexpr auto kV2_0Tail = std::to_array<Member>({u32(F::throttle_status), u16(), u16()});  // fan_pwm, padding
constexpr auto kV2_0 = cat(cat(cat(cat(kSysClock, kV2Temps), kV2TempsRest), kV2Power), cat(kV2Clocks, kV2_0Tail));

constexpr auto kV2_1Tail = std::to_array<Member>({u32(F::throttle_status), u16(), u16s(3)});  // fan_pwm, padding[3]
constexpr auto kV2_1 = cat(cat(cat(cat(kV2Temps, kV2TempsRest), kSysClock), kV2Power), cat(kV2Clocks, kV2_1Tail));

constexpr auto kV2_2Tail = std::to_array<Member>({u64(F::indep_throttle_status)});
constexpr auto kV2_2 = cat(kV2_1, kV2_2Tail);

// average_temperature_gfx, _soc, _core[8], _l3[2]
constexpr auto kV2_3Tail = std::to_array<Member>({u16(), u16(), u16s(8), u16s(2)});
constexpr auto kV2_3 = cat(kV2_2, kV2_3Tail);

// average_cpu/soc/gfx_voltage, average_cpu/soc/gfx_current
constexpr auto kV2_4Tail = std::to_array<Member>({u16s(3), u16s(3)});
constexpr auto kV2_4 = cat(kV2_3, kV2_4Tail);

// ---- v3.0 (Strix Point, Strix Halo) ---------------------------------------------------------

constexpr auto kV3Head = std::to_array<Member>({
    u16(F::temperature_gfx), u16(F::temperature_soc),
    u16s(16), u16(),  // temperature_core[16], temperature_skin
    u16(F::gfx_activity), u16(),  // average_gfx_activity, average_vcn_activity
    u16s(8), u16s(16),  // average_ipu_activity[8], average_core_c0_activity[16]
    u16s(2),  // average_dram_reads, average_dram_writes
});
constexpr auto kV3Power = std::to_array<Member>({
    u32(F::socket_power), u16(),  // average_socket_power, average_ipu_power
    u32(), u32(F::gfx_power), u32(), u32(F::cpu_power),  // apu, gfx, dgpu, all_core power
    u16s(16),  // average_core_power[16]
});
constexpr auto kV3Stapm = std::to_array<Member>({u16(F::stapm_limit), u16(F::current_stapm_limit)});
// average gfxclk, socclk, vpeclk, ipuclk, fclk, vclk
constexpr auto kV3Clocks = std::to_array<Member>({
    u16(F::average_gfxclk), u16(F::average_socclk), u16(), u16(), u16(F::average_fclk), u16(),
});
// current_coreclk[16], current_core_maxfreq, current_gfx_maxfreq
constexpr auto kV3MaxFreq = std::to_array<Member>({u16s(16), u16(), u16(F::gfx_max_freq)});
constexpr auto kV3Alpha = std::to_array<Member>({u32()});  // time_filter_alphavalue

// As first merged: nothing between the groups.
constexpr auto kV3_0First =
    cat(cat(cat(cat(cat(kV3Head, kSysClock), kV3Power), kV3Stapm), cat(kV3Clocks, kV3MaxFreq)), kV3Alpha);

// Current: IPU bandwidth, system power, uclk/mpipuclk and the throttle residencies added.
constexpr auto kV3IpuBw = std::to_array<Member>({u16s(2)});   // average_ipu_reads, average_ipu_writes
constexpr auto kV3SysPower = std::to_array<Member>({u16()});  // average_sys_power
constexpr auto kV3MoreClocks = std::to_array<Member>({u16(F::average_uclk), u16()});  // uclk, mpipu
constexpr auto kV3Residency = std::to_array<Member>({
    u32(F::res_prochot), u32(F::res_spl), u32(F::res_fppt), u32(F::res_sppt),
    u32(F::res_thm_core), u32(F::res_thm_gfx), u32(F::res_thm_soc),
});
constexpr auto kV3_0 = cat(
    cat(cat(cat(cat(kV3Head, kV3IpuBw), kSysClock), cat(kV3Power, kV3SysPower)), cat(kV3Stapm, kV3Clocks)),
    cat(cat(kV3MoreClocks, kV3MaxFreq), cat(kV3Residency, kV3Alpha)));

static_assert(padded_size(kV1_0) == 80);
static_assert(padded_size(kV1_1) == 96);
static_assert(padded_size(kV1_2) == 104);
static_assert(padded_size(kV1_3) == 120);
static_assert(padded_size(kV2_0) == 120);
static_assert(padded_size(kV2_1) == 120);
static_assert(padded_size(kV2_2) == 128);
static_assert(padded_size(kV2_3) == 152);
static_assert(padded_size(kV2_4) == 168);
static_assert(padded_size(kV3_0First) == 224);
static_assert(padded_size(kV3_0) == 264);

constexpr Layout kLayouts[] = {
    {1, 0, 80, "v1.0/80", kDgpuUnits, kV1_0},
    {1, 1, 96, "v1.1/96", kDgpuUnits, kV1_1},
    {1, 2, 104, "v1.2/104", kDgpuUnits, kV1_2},
    {1, 3, 120, "v1.3/120", kDgpuUnits, kV1_3},
    {2, 0, 120, "v2.0/120", kApuUnits, kV2_0},
    {2, 1, 120, "v2.1/120", kApuUnits, kV2_1},
    {2, 2, 128, "v2.2/128", kApuUnits, kV2_2},
    {2, 3, 152, "v2.3/152", kApuUnits, kV2_3},
    {2, 4, 168, "v2.4/168", kApuUnits, kV2_4},
    {3, 0, 224, "v3.0/224", kApuUnits, kV3_0First},
    {3, 0, 264, "v3.0/264", kApuUnits, kV3_0},
};

}  // namespace

std::span<const Layout> layouts() { return kLayouts; }

std::vector<Located> layout_fields(const Layout& l, uint32_t* size) {
    std::vector<Located> out;
    uint32_t off = 4, align = 2;
    for (const Member& m : l.members) {
        off = (off + m.width - 1) / m.width * m.width;
        if (m.field != Field::none) out.push_back({m.field, m.width, static_cast<uint16_t>(off)});
        off += uint32_t(m.width) * m.count;
        if (m.width > align) align = m.width;
    }
    if (size) *size = (off + align - 1) / align * align;
    return out;
}

}  // namespace arbor::telemetry::detail
