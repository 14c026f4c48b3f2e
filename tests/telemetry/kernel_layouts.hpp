// The gpu_metrics layouts of the Linux kernel's kgd_pp_interface.h, retyped member by member as
// plain C++ structs. They are the tests' oracle: the compiler lays them out with the same natural
// alignment the kernel's compiler uses, so a fixture filled through these members and copied out
// byte for byte is independent of the parser's own offset tables.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

namespace arbor_test::kernel {

struct Header {
    uint16_t structure_size;
    uint8_t format_revision;
    uint8_t content_revision;
};

struct V1_0 {
    Header h;
    uint64_t system_clock_counter;
    uint16_t temperature_edge, temperature_hotspot, temperature_mem, temperature_vrgfx, temperature_vrsoc,
        temperature_vrmem;
    uint16_t average_gfx_activity, average_umc_activity, average_mm_activity;
    uint16_t average_socket_power;
    uint32_t energy_accumulator;
    uint16_t average_gfxclk_frequency, average_socclk_frequency, average_uclk_frequency, average_vclk0_frequency,
        average_dclk0_frequency, average_vclk1_frequency, average_dclk1_frequency;
    uint16_t current_gfxclk, current_socclk, current_uclk, current_vclk0, current_dclk0, current_vclk1,
        current_dclk1;
    uint32_t throttle_status;
    uint16_t current_fan_speed;
    uint8_t pcie_link_width, pcie_link_speed;
};

// v1.1 .. v1.3 share their first part.
struct V1_1 {
    Header h;
    uint16_t temperature_edge, temperature_hotspot, temperature_mem, temperature_vrgfx, temperature_vrsoc,
        temperature_vrmem;
    uint16_t average_gfx_activity, average_umc_activity, average_mm_activity;
    uint16_t average_socket_power;
    uint64_t energy_accumulator;
    uint64_t system_clock_counter;
    uint16_t average_gfxclk_frequency, average_socclk_frequency, average_uclk_frequency, average_vclk0_frequency,
        average_dclk0_frequency, average_vclk1_frequency, average_dclk1_frequency;
    uint16_t current_gfxclk, current_socclk, current_uclk, current_vclk0, current_dclk0, current_vclk1,
        current_dclk1;
    uint32_t throttle_status;
    uint16_t current_fan_speed;
    uint16_t pcie_link_width, pcie_link_speed;
    uint16_t padding;
    uint32_t gfx_activity_acc, mem_activity_acc;
    uint16_t temperature_hbm[4];
};

struct V1_2 : V1_1 {
    uint64_t firmware_timestamp;
};

struct V1_3 : V1_2 {
    uint16_t voltage_soc, voltage_gfx, voltage_mem;
    uint16_t padding1;
    uint64_t indep_throttle_status;
};

struct V2_0 {
    Header h;
    uint64_t system_clock_counter;
    uint16_t temperature_gfx, temperature_soc, temperature_core[8], temperature_l3[2];
    uint16_t average_gfx_activity, average_mm_activity;
    uint16_t average_socket_power, average_cpu_power, average_soc_power, average_gfx_power, average_core_power[8];
    uint16_t average_gfxclk_frequency, average_socclk_frequency, average_uclk_frequency, average_fclk_frequency,
        average_vclk_frequency, average_dclk_frequency;
    uint16_t current_gfxclk, current_socclk, current_uclk, current_fclk, current_vclk, current_dclk,
        current_coreclk[8], current_l3clk[2];
    uint32_t throttle_status;
    uint16_t fan_pwm;
    uint16_t padding;
};

// v2.1 .. v2.4 share their first part.
struct V2_1 {
    Header h;
    uint16_t temperature_gfx, temperature_soc, temperature_core[8], temperature_l3[2];
    uint16_t average_gfx_activity, average_mm_activity;
    uint64_t system_clock_counter;
    uint16_t average_socket_power, average_cpu_power, average_soc_power, average_gfx_power, average_core_power[8];
    uint16_t average_gfxclk_frequency, average_socclk_frequency, average_uclk_frequency, average_fclk_frequency,
        average_vclk_frequency, average_dclk_frequency;
    uint16_t current_gfxclk, current_socclk, current_uclk, current_fclk, current_vclk, current_dclk,
        current_coreclk[8], current_l3clk[2];
    uint32_t throttle_status;
    uint16_t fan_pwm;
    uint16_t padding[3];
};

struct V2_2 : V2_1 {
    uint64_t indep_throttle_status;
};

struct V2_3 : V2_2 {
    uint16_t average_temperature_gfx, average_temperature_soc, average_temperature_core[8],
        average_temperature_l3[2];
};

struct V2_4 : V2_3 {
    uint16_t average_cpu_voltage, average_soc_voltage, average_gfx_voltage;
    uint16_t average_cpu_current, average_soc_current, average_gfx_current;
};

// v3.0 as first merged (Strix Point bring-up): no uclk, no throttle residency.
struct V3_0_First {
    Header h;
    uint16_t temperature_gfx, temperature_soc, temperature_core[16], temperature_skin;
    uint16_t average_gfx_activity, average_vcn_activity, average_ipu_activity[8], average_core_c0_activity[16];
    uint16_t average_dram_reads, average_dram_writes;
    uint64_t system_clock_counter;
    uint32_t average_socket_power;
    uint16_t average_ipu_power;
    uint32_t average_apu_power, average_gfx_power, average_dgpu_power, average_all_core_power;
    uint16_t average_core_power[16];
    uint16_t stapm_power_limit, current_stapm_power_limit;
    uint16_t average_gfxclk_frequency, average_socclk_frequency, average_vpeclk_frequency,
        average_ipuclk_frequency, average_fclk_frequency, average_vclk_frequency;
    uint16_t current_coreclk[16];
    uint16_t current_core_maxfreq, current_gfx_maxfreq;
    uint32_t time_filter_alphavalue;
};

// v3.0 as it is now: IPU bandwidth, system power, uclk/mpipuclk and the throttle residencies added.
struct V3_0 {
    Header h;
    uint16_t temperature_gfx, temperature_soc, temperature_core[16], temperature_skin;
    uint16_t average_gfx_activity, average_vcn_activity, average_ipu_activity[8], average_core_c0_activity[16];
    uint16_t average_dram_reads, average_dram_writes, average_ipu_reads, average_ipu_writes;
    uint64_t system_clock_counter;
    uint32_t average_socket_power;
    uint16_t average_ipu_power;
    uint32_t average_apu_power, average_gfx_power, average_dgpu_power, average_all_core_power;
    uint16_t average_core_power[16];
    uint16_t average_sys_power;
    uint16_t stapm_power_limit, current_stapm_power_limit;
    uint16_t average_gfxclk_frequency, average_socclk_frequency, average_vpeclk_frequency,
        average_ipuclk_frequency, average_fclk_frequency, average_vclk_frequency, average_uclk_frequency,
        average_mpipu_frequency;
    uint16_t current_coreclk[16];
    uint16_t current_core_maxfreq, current_gfx_maxfreq;
    uint32_t throttle_residency_prochot, throttle_residency_spl, throttle_residency_fppt,
        throttle_residency_sppt, throttle_residency_thm_core, throttle_residency_thm_gfx,
        throttle_residency_thm_soc;
    uint32_t time_filter_alphavalue;
};

// A struct the way the kernel hands it out: every byte 0xff first (firmware "not supported"),
// then the header, then whatever the caller fills in.
template <class S>
S unsupported_all(uint8_t format, uint8_t content) {
    S s;
    std::memset(static_cast<void*>(&s), 0xff, sizeof(S));
    s.h.structure_size = static_cast<uint16_t>(sizeof(S));
    s.h.format_revision = format;
    s.h.content_revision = content;
    return s;
}

template <class S>
std::string bytes_of(const S& s) {
    return std::string(reinterpret_cast<const char*>(&s), sizeof(S));
}

}  // namespace arbor_test::kernel
