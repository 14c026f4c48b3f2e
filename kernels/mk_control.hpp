// Control block of the persistent megakernel, shared by host and device code.
//
// Every flag and counter sits on its own 128-byte line. Counters the grid spins on live in
// device memory (MkDeviceLines); the abort flag the host watchdog writes and the error record
// the host reads live in host-mapped pinned memory (MkHostBlock), so they work while the kernel
// runs and after it exits.
#pragma once

#include "arbor_vendor.hpp"

#include <cstdint>

namespace arbor::gpu {

struct alignas(128) MkLine {
    unsigned int value;
    unsigned int pad[31];
};
static_assert(sizeof(MkLine) == 128);

// A/B switches of the megakernel (mk_set_ab_switches, read from the environment once per
// process by MkRuntime): bits of the device variable mk_ab_switches, for runs of two code paths
// in one build. None changes a result's bits.
enum MkAbSwitch : unsigned {
    kMkAbPackedOff = 1u,  // ARBOR_GPU_PACKED=0: the row dots take the byte-wise sub-block terms
    kMkAbStreamW = 2u,    // ARBOR_GPU_STREAM_W=1 (ARBOR_MK_STREAM_W=2 builds): weights read evict-first
    kMkAbLeanPairs = 4u,  // ARBOR_GPU_LEAN_ROWS=2 (ARBOR_MK_LEAN_ROWS builds): lean stages take row pairs always
    kMkAbLeanSingle = 8u, // ARBOR_GPU_LEAN_ROWS=1 (ARBOR_MK_LEAN_ROWS builds): lean stages take single rows always
    kMkAbWarpSelect = 16u, // ARBOR_GPU_WG_SELECT=0 (ARBOR_MK_WG_SELECT builds): the router select in warp 0
};

// ARBOR_MK_PACKED_SWITCH=1 (NVIDIA builds, e.g. -DCMAKE_CUDA_FLAGS=-DARBOR_MK_PACKED_SWITCH=1)
// compiles the ARBOR_GPU_PACKED=0 switch into the row dots. Off by default: the switch was a
// global load and a branch in every sub-block of every row dot; compiling it out (with three
// smaller changes measured in the same build) made a decode step 0.56-0.78 ms faster on the
// H200 (docs/BENCHMARKS.md, gpu-next12). Without it the variable is
// still set, and ARBOR_GPU_PACKED=0 is reported as ignored.
#ifndef ARBOR_MK_PACKED_SWITCH
#define ARBOR_MK_PACKED_SWITCH 0
#endif

// ARBOR_MK_STREAM_W (NVIDIA builds): the quantized weight words the row dots read (mkw::wload,
// mk_dot.hpp) are loaded cache-streaming (ld.global.cs: evict-first in the L1 and the L2). A
// decode step streams its weights (1.7 GB on the MoE, 2.3 GB on qwen3-4b) through the 50 MB L2
// once, and under the default policy they evicted what the next levels read again: the
// megakernel's code (5.5 MB of SASS), the activations, the KV cells, the descriptors. The
// prefill tiles' staging keeps plain loads: a tile's weight rows are read again by the pass's
// other token tiles. 1: on; 2: on when ARBOR_GPU_STREAM_W=1 (the A/B bit kMkAbStreamW, copied
// into shared memory at the entry; the branch on it costs decode about 0.7 ms in both
// settings); 0: plain loads. The values read do not change, so neither do the bits. Measured on
// the H200 (gpu-next21, docs/BENCHMARKS.md call 6, =2 with both settings in one binary, the
// tiles streaming too): exact (356/0, 25/0); decode@229 8.15-8.23 to 7.16-7.23 ms on the MoE and
// 6.65-6.68 to 5.93-5.94 on qwen3-4b (-12%, -11%); read50@229 within 0.3%; prefill256@229 +1.4%
// and +2.5%, which the tiles' plain loads are meant to take back. On by default on NVIDIA (=1);
// AMD builds keep plain loads (on gfx1151 non-temporal loads bypass the MALL; a gfx1151 run
// decides).
#ifndef ARBOR_MK_STREAM_W
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
#define ARBOR_MK_STREAM_W 1
#else
#define ARBOR_MK_STREAM_W 0
#endif
#endif

// ARBOR_MK_GLOBAL_LOADS=1 (prepared, off; gpu-next28): loads of global memory that the hot
// stages issue through generic pointers become global-memory loads (arbor_ldg, through
// mk_dot.hpp's mk_ld): the Q8A activations of the row dots' wide path (load_q8a: the formats
// with a packed form, Q4_0, Q8_0, the K-quants, IQ4_XS, and IQ4_NL and MXFP4 with ARBOR_PACKED_GRIDS;
// the others read them inside the CPU's term functions), the router's float rows and XN
// (warp_dot_float_deep), the global side of the
// workgroup copies (block_copy, block_copy_rows, block_stage_k_f32: the RMSNorm's row, the KV
// pieces where cp.async does not take them), the combine's chunk rows, and the wide path's weight
// words on AMD (mkw::wload; NVIDIA's are ld.global.cs already). AMD builds take the wide path
// only with ARBOR_MK_WIDE_LOADS=1, so there the switch alone reaches the copies, the combine and
// the router. The sm_90 PTX goes from 27654 generic loads and 1709 ld.global to
// 25993 and 3370; the default's PTX is unchanged. The values read are the same, so the bits are.
// The shared-memory twin of this (ARBOR_MK_SMEM_ASSUME) took the MoE's read50@16384 from 179.5
// to 151.7 ms; on NVIDIA a generic load that resolves to global costs less than one that
// resolves to shared, so less is expected here.
#ifndef ARBOR_MK_GLOBAL_LOADS
#define ARBOR_MK_GLOBAL_LOADS 0
#endif

// ARBOR_MK_STREAM_ROUTER=1 (NVIDIA; prepared in gpu-next28, on by default since gpu-next34): the
// float router rows of a one-row router item (warp_dot_float_deep, the MoE's router logits) are
// loaded cache-streaming, as ARBOR_MK_STREAM_W loads the quantized weights. `moer`'s routers are
// F32, 1 MB a layer: 48 MB a decode step at the L2's default priority, against the 50-60 MB L2,
// where the evict-first quantized weights leave room for what the next levels and the next step
// read again (the code, the KV cells, the activations). The values loaded are the same: the bits
// do not change (356/0, 25/0). On an H100, `moer` decode@16384 -0.17 ms (-2%) in both rounds,
// decode@229 and read50@16384 within the spread (docs/BENCHMARKS.md "gpu-next34", call 8).
// AMD builds: off until a gfx1151 run measures it.
#ifndef ARBOR_MK_STREAM_ROUTER
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
#define ARBOR_MK_STREAM_ROUTER 1
#else
#define ARBOR_MK_STREAM_ROUTER 0
#endif
#endif

enum MkWaitKind : int { kWaitNone = 0, kWaitGridBarrier = 1, kWaitCounter = 2 };
enum MkErrorCode : int { kMkOk = 0, kMkTimeout = 1, kMkHostAbort = 2, kMkBadOp = 3 };

struct MkError {
    int code;        // MkErrorCode
    int stage;       // stage index in the program
    int level;       // dependency level
    int wait_kind;   // MkWaitKind
    int block;       // the workgroup that reported it
    int pad;
    unsigned long long waited_ns;
};

struct MkHostBlock {
    MkLine abort;         // nonzero: every wait gives up (set by the host watchdog or the device)
    MkLine error_claim;   // the first reporter wins
    MkError error;
};

struct MkDeviceLines {
    MkLine barrier;       // grid-barrier arrivals, monotonic within a pass
    MkLine abort;         // device-side copy of the abort decision (cheap to poll)
    MkLine counters[14];  // per-dependency counters for stages that use them
};

// One profiler event: a workgroup's span on a stage, or its wait at a level's barrier.
struct MkEvent {
    int stage;   // >= 0: stage index; < 0: -(level+1) for a barrier wait
    int block;
    unsigned long long t0_ns, t1_ns;
};

}  // namespace arbor::gpu
