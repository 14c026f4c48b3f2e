// arbor-gpu-attn-probe: a decode step's attention chunk level, the megakernel's own code, run as a
// kernel of its own.
//
// Inside the megakernel a decode step's attention level takes 24.9 us a layer on `moer` at 229
// cells (32 items of one q head, each phase of the item 3-4 us whatever its work) and 47 us at
// 16384 (one item of 8 rows a workgroup), where the same K copy alone takes a third to a half of
// the item's K stage (arbor-gpu-stage-probe; docs/GPU.md, gpu-next26). This probe runs
// mk_attn_chunk_block, the function the megakernel calls for each item, on a decode step of the
// same shape, in a grid of the megakernel's shape (as many workgroups of 256 as fit, two an SM on
// the H200; the same launch bound, the same 80 KiB arena; items dealt from the last workgroup
// down, the workgroups without one polling a counter as at a grid barrier), and prints the level's time
// (first workgroup's start to last one's end, by the global timer) with the phase clocks off and
// on, and the phase clocks' mean a mark, the rows `bench --profile` prints for the megakernel (a
// mark is a workgroup barrier and a clock read, up to about 0.8 us; the clocked and plain levels
// say what the clocks add). Three launches a repetition, on
// KV pages of `--layers` layers:
//   cold   after a flush of the L2 (a buffer four times its size read): the item's data, its
//          descriptors and its code's L2 lines come from memory, as in a decode step whose
//          weights went through the L2 since the layer's attention last ran (the SMs' own
//          instruction caches are not flushed: they may still hold the last launch's code);
//   code   then another layer's KV: its data as cold, its code just used;
//   warm   then that layer again: code and data just used.
// The KV pages are one allocation a page, as the engine's: in managed memory filled on the device
// (the engine's pages are cleared by a device memset and written by the passes), or with
// --kv-memory managed-host written by host copies (as a parked context is loaded), or device
// (hipMalloc; GPU.md's lever 11).
// The level's item count and heads an item take follow gpu_backend.hip (attn_head_parts), and the
// one-chunk level writes the attention row and its Q8A blocks (direct), the deeper one the chunk
// rows the combine level reads (not run here). Build flags pass through (-DARBOR_MK_STAGE_TWICE=1
// etc. act here as in the megakernel), except ARBOR_MK_K_EARLY's early K copies, which the
// megakernel issues during the grid barrier's wait before the level: here every item copies its K
// chunk whole, as the megakernel does with the switch off. ptxas gives the item's functions about
// the megakernel's allocation (the same launch bound; sm_90 -O3: attn_chunk_cells<DenseCells>
// 100/344 bytes of spill stores/loads here, 136/376 there; attn_scores_raw 32/48 and 32/36). It
// computes nothing that anything uses: a measurement, not a lever.
#include "arbor_hip.hpp"
#include "probe/probe_common.hpp"
#include "mk_block_ops.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace arbor::gpu;

#ifndef ARBOR_MK_MIN_BLOCKS
#define ARBOR_MK_MIN_BLOCKS 2  // as megakernel.hip's NVIDIA default
#endif

struct Times {
    unsigned long long* t;  // [grid][2] start and end of each workgroup that ran an item
    unsigned* ran;          // [grid] 1 where it did
    unsigned* done;         // workgroups that ran items and are done (zero before each launch)
};

// Workgroup b takes items grid - 1 - b, then every grid-th one (the megakernel deals workgroup
// items from its last workgroup down; with ARBOR_PROBE_SPREAD=N, item k goes to workgroup
// grid - 1 - N k instead, which means something for a level of few items, one at 229 cells, not
// one whose head_parts were sized for the whole grid). The workgroups without an item stay,
// thread 0 polling `done` with a 100 ns sleep between polls as the megakernel's barrier waits
// do, until every item is done.
__global__ void __launch_bounds__(kMkBlockThreads, ARBOR_MK_MIN_BLOCKS)
    attn_level(const MkPass* P, MkModelStage s, long long items, Times tm) {
#if ARBOR_MK_SMEM_FLOATS > 10176
    extern __shared__ __align__(16) float smem[];
#else
    __shared__ __align__(16) float smem[kMkSmemFloats];
#endif
#if ARBOR_MK_BULK_ON
    mk_bulk_init();
#endif
    mk_k_early_init();
    mk_phase_flag_load();
    __syncthreads();
#if ARBOR_PROBE_SPREAD
    // Measurement variant: item k to workgroup grid - 1 - N k (N = ARBOR_PROBE_SPREAD), so that
    // a level of few items spreads over N times as many workgroups, and SMs, as the megakernel's
    // last ones (do the chunk items' copies share something of the SMs that hold them?)
    // (step: the workgroups that hold items, ceil(grid / N), so each item runs once for any N)
    static_assert(ARBOR_PROBE_SPREAD >= 1, "ARBOR_PROBE_SPREAD is a spacing of 1 or more");
    const long long b = blockIdx.x, r = gridDim.x - 1 - b;
    const long long first = r % ARBOR_PROBE_SPREAD ? items : r / ARBOR_PROBE_SPREAD;
    const long long step = (gridDim.x + ARBOR_PROBE_SPREAD - 1) / ARBOR_PROBE_SPREAD;
    const unsigned busy = static_cast<unsigned>(items < step ? items : step);
#else
    const long long b = blockIdx.x, first = gridDim.x - 1 - b;
    const long long step = gridDim.x;
    const unsigned busy = static_cast<unsigned>(items < gridDim.x ? items : gridDim.x);
#endif
    if (first >= items) {
        if (threadIdx.x == 0) {  // (bounded: 1 s, should a workgroup with items not be resident)
            const unsigned long long w0 = arbor_wall_ns();
            while (*reinterpret_cast<volatile unsigned*>(tm.done) < busy && arbor_wall_ns() - w0 < 1000000000ull) arbor_pause();
        }
        return;
    }
    const unsigned long long t0 = arbor_wall_ns();
    for (long long item = first; item < items; item += step) {
        mk_attn_chunk_block(*P, s, item, smem);
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        tm.t[2 * b] = t0;
        tm.t[2 * b + 1] = arbor_wall_ns();
        tm.ran[b] = 1;
        __threadfence();
        atomicAdd(tm.done, 1u);
    }
}

#if ARBOR_PROBE_CHAIN
// Measurement variant (ARBOR_PROBE_CHAIN=1): what one step of a one-thread chain of n dependent
// adds costs, timed by the SM's cycle counter (arbor_cycles: NVIDIA only) in one workgroup's
// thread 0 (lane 0 of warp 0), its operands fed three ways: (0) one register, (1) the
// shared-memory sum attn_chunk_l itself, (2) shuffles from warp 0's lanes as a one-head softmax
// could take them. cyc[k] gets form k's cycles, out[k] its sum (so nothing folds away). With
// busy = 0 the warps past the first return after the block's barrier; with busy = 1 they copy
// the 64 KiB at `bulk` into shared memory by 16-byte words through registers (loads, then stores:
// not the stage copy's cp.async, and from the L1 after the first round) until warp 0 is done, and
// with busy = 2 they run FMA chains over shared words (as the o loop does), so that the three
// forms are also timed beside other warps' work.
__global__ void chain_probe(const float* src, int n, unsigned long long* cyc, float* out, const uint4* bulk,
                            int busy, float* sink) {
    __shared__ __align__(16) float e[256];
    __shared__ __align__(16) uint4 scratch[2048];  // 32 KiB
    __shared__ volatile int stop;
    for (int i = static_cast<int>(threadIdx.x); i < 256; i += static_cast<int>(blockDim.x)) e[i] = src[i];
    for (int i = static_cast<int>(threadIdx.x); i < 2048; i += static_cast<int>(blockDim.x)) scratch[i] = uint4{};
    if (threadIdx.x == 0) stop = 0;
    __syncthreads();
    if (threadIdx.x >= 32) {
        if (busy == 0) return;
        const int t = static_cast<int>(threadIdx.x) - 32, nt = static_cast<int>(blockDim.x) - 32;
        float acc = 0.0f;
        while (!stop) {  // (busy = 1: words i and i + 2048 land in one slot, either is fine)
            if (busy == 1) {
                for (int i = t; i < 4096; i += nt) scratch[i & 2047] = bulk[i];
            } else {
                const float* sf = reinterpret_cast<const float*>(scratch);
                for (int i = 0; i < 64; ++i) acc = __fmaf_rn(sf[(t + 8 * i) & 8191], 1.0001f, acc);
            }
        }
        if (acc == 1234.5f) *sink = acc;  // (almost never: keeps the FMAs)
        return;
    }
    const int lane = static_cast<int>(threadIdx.x);
    const float x = e[1];
    unsigned long long c0 = arbor_cycles();
    float l = 0.0f;
    for (int j = 0; j < n; ++j) l = arbor::num::add_rn(l, x);
    unsigned long long c1 = arbor_cycles();
    if (lane == 0) cyc[0] = c1 - c0, out[0] = l;
    arbor_syncwarp();
    c0 = arbor_cycles();
    l = lane == 0 ? attn_chunk_l<false>(e, n) : 0.0f;
    c1 = arbor_cycles();
    if (lane == 0) cyc[1] = c1 - c0, out[1] = l;
    arbor_syncwarp();
    float ev[8];
#pragma unroll
    for (int r = 0; r < 8; ++r) ev[r] = e[lane + 32 * r];
    c0 = arbor_cycles();
    l = 0.0f;
#pragma unroll
    for (int r = 0; r < 8; ++r) {
        if (32 * r < n) {
            const int nr = n - 32 * r < 32 ? n - 32 * r : 32;
#pragma unroll
            for (int i = 0; i < 32; ++i) {
                const float v = __shfl(ev[r], i);
                if (i < nr) l = arbor::num::add_rn(l, v);
            }
        }
    }
    c1 = arbor_cycles();
    if (lane == 0) cyc[2] = c1 - c0, out[2] = l;
    if (lane == 0) stop = 1;
}
#endif

// Reads `words` 16-byte words (four times the L2 and more): the L2 then holds none of what the
// probe reads, and no dirty lines to write back (a read sweep, not a write one).
__global__ void flush_l2(const uint4* p, long long words, unsigned* sink) {
    unsigned acc = 0;
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < words;
         i += static_cast<long long>(gridDim.x) * blockDim.x) {
        const uint4 v = p[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) *sink = acc;  // (almost never: keeps the reads)
}

__device__ inline unsigned mix(unsigned long long x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return static_cast<unsigned>(x);
}
// IEEE halves of magnitude [0.5, 1), either sign.
__global__ void fill_halves(uint16_t* p, long long n, unsigned long long seed) {
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<long long>(gridDim.x) * blockDim.x) {
        const unsigned h = mix(seed + static_cast<unsigned long long>(i));
        p[i] = static_cast<uint16_t>(((h >> 16) & 0x8000u) | (14u << 10) | (h & 0x3ffu));
    }
}

bool ok(hipError_t e, const char* what) { return arbor::probe::ok("arbor-gpu-attn-probe", e, what); }

struct Mode {
    const char* name;
    std::vector<double> us;                     // the level, a launch
    std::vector<double> item_us;                // mean workgroup time, a launch
    std::vector<double> clocked_us;             // the level with the phase clocks on, a launch
    unsigned long long ns[kMkPhases] = {};      // phase clocks, summed over the phase launches
    unsigned long long marks[kMkPhases] = {};
};

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

bool phases_reset(void* ns, void* marks) {
    return ok(hipMemset(ns, 0, sizeof(unsigned long long) * kMkPhases), "phase reset") &&
           ok(hipMemset(marks, 0, sizeof(unsigned long long) * kMkPhases), "phase reset");
}

}  // namespace

int main(int argc, char** argv) {
    long long n_kv = 4, group = 8, hd = 128, layers = 48, reps = 20;
    std::vector<long long> cells_list = {229, 16384};
    std::string kv_memory = "managed";
    for (int i = 1; i < argc; ++i) {
        const std::string o = argv[i];
        const bool has = i + 1 < argc;
        if (o == "--kv-memory" && has) {
            kv_memory = argv[++i];
            if (kv_memory != "managed" && kv_memory != "managed-host" && kv_memory != "device") {
                std::fprintf(stderr, "arbor-gpu-attn-probe: --kv-memory is managed, managed-host or device\n");
                return 2;
            }
        } else if (o == "--cells" && has) {
            cells_list.clear();
            for (const char* c = argv[++i]; *c;) {
                char* end = nullptr;
                const long long v = std::strtoll(c, &end, 10);
                if (end == c || v < 1 || v > 1 << 20) {
                    std::fprintf(stderr, "arbor-gpu-attn-probe: --cells takes a comma list of 1 to 1048576\n");
                    return 2;
                }
                cells_list.push_back(v);
                c = *end == ',' ? end + 1 : end;
            }
        } else if ((o == "--kv" || o == "--group" || o == "--hd" || o == "--layers" || o == "--reps") && has) {
            const long long v = std::atoll(argv[++i]);
            if (v < 1 || v > 4096) {
                std::fprintf(stderr, "arbor-gpu-attn-probe: %s takes 1 to 4096\n", o.c_str());
                return 2;
            }
            (o == "--kv" ? n_kv : o == "--group" ? group : o == "--hd" ? hd : o == "--layers" ? layers : reps) = v;
        } else {
            std::fprintf(stderr,
                         "usage: arbor-gpu-attn-probe [--kv H] [--group G] [--hd D] [--cells N,N] [--layers L] [--reps R]\n"
                         "                            [--kv-memory managed|managed-host|device]\n"
                         "  (defaults: qwen3moe-30b-a3b's attention, --kv 4 --group 8 --hd 128 --layers 48;\n"
                         "   qwen3-4b's is --kv 8 --group 4 --hd 128 --layers 36)\n");
            return 2;
        }
    }
    if (layers < 2) {
        std::fprintf(stderr, "arbor-gpu-attn-probe: --layers must be at least 2 (the code mode reads another layer)\n");
        return 2;
    }
    // The engine's own checks (GpuBackend's model checks): head dims up to 256, whole Q8A blocks a
    // head, up to 16 q heads a KV head with their queries and scores in the arena, and a K piece
    // of whole score tiles beside any share of them.
    bool fits = hd % 32 == 0 && hd <= 256 && group <= 16 && attn_stage_floats(group, hd) >= kMkStageFloats;
    for (long long gh = 1; fits && gh <= group; ++gh)
        fits = attn_stage_floats(gh, hd) >= attn_tile_cells(static_cast<int>(gh)) * (hd + 1);
    if (!fits) {
        std::fprintf(stderr, "arbor-gpu-attn-probe: a group of %lld q heads of head dim %lld is not a shape the GPU backend "
                             "takes in this build's arena\n", group, hd);
        return 2;
    }
    if (kMkSmemDynamic &&
        !ok(hipFuncSetAttribute(reinterpret_cast<const void*>(attn_level), hipFuncAttributeMaxDynamicSharedMemorySize,
                                static_cast<int>(kMkSmemFloats * sizeof(float))),
            "dynamic shared memory"))
        return 1;
    const size_t dyn = kMkSmemDynamic ? kMkSmemFloats * sizeof(float) : 0;
    hipDeviceProp_t prop{};
    int per_sm = 0;
    if (!ok(hipGetDeviceProperties(&prop, 0), "device properties") ||
        !ok(hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, attn_level, kMkBlockThreads, dyn), "occupancy"))
        return 1;
    // The megakernel's grid: as many workgroups as fit at once (MkRuntime asks the same question).
    const int sms = prop.multiProcessorCount, grid = per_sm * sms;
    if (grid < 1) {
        std::fprintf(stderr, "arbor-gpu-attn-probe: no workgroup of this kernel fits an SM\n");
        return 1;
    }
    const long long max_cells = *std::max_element(cells_list.begin(), cells_list.end());
    const long long max_pages = (max_cells + mkm::kChunk - 1) / mkm::kChunk + 1;  // the decoded token's cell too
    const unsigned long long layer_bytes = static_cast<unsigned long long>(n_kv) * mkm::kChunk * (2 * hd) * 2;
    const unsigned long long page_bytes = layer_bytes * static_cast<unsigned long long>(layers);
    const long long flush_bytes = 4ll * prop.l2CacheSize + (64ll << 20);
    std::printf("%s, %d SMs, L2 %d MiB; grid %d x %d, arena %d floats; KV heads %lld, group %lld, head dim %lld, "
                "f16 KV of %lld layers (%.1f MiB a page, %s memory), %lld repetitions\n",
                prop.name, sms, prop.l2CacheSize >> 20, grid, kMkBlockThreads, kMkSmemFloats, n_kv, group, hd, layers,
                page_bytes / 1048576.0, kv_memory.c_str(), reps);

    std::vector<uint8_t*> kv(static_cast<size_t>(max_pages), nullptr);  // a page an allocation, as the engine's
    uint8_t** pages = nullptr;
    int *pos = nullptr, *seq = nullptr;
    float *q = nullptr, *att = nullptr, *part = nullptr;
    arbor::quant::BlockQ8A* attq = nullptr;
    uint4* flush = nullptr;
    MkPass* pass = nullptr;
    unsigned long long* t = nullptr;
    unsigned* ran = nullptr;
    unsigned* done = nullptr;
    unsigned* sink = nullptr;
    const long long n_head = n_kv * group;
    for (uint8_t*& page : kv)
        if (!ok(kv_memory == "device" ? hipMalloc(reinterpret_cast<void**>(&page), page_bytes)
                                      : hipMallocManaged(reinterpret_cast<void**>(&page), page_bytes, hipMemAttachGlobal),
                "KV page"))
            return 1;
    if (!ok(hipMalloc(&pages, max_pages * sizeof(uint8_t*)), "page table") ||
        !ok(hipMalloc(&pos, sizeof(int)), "pos") || !ok(hipMalloc(&seq, sizeof(int)), "seq") ||
        !ok(hipMalloc(&q, n_head * hd * sizeof(float)), "q") || !ok(hipMalloc(&att, n_head * hd * sizeof(float)), "att") ||
        !ok(hipMalloc(&attq, (n_head * hd / 32) * sizeof(arbor::quant::BlockQ8A)), "attq") ||
        !ok(hipMalloc(&part, n_kv * max_pages * group * (hd + 2) * sizeof(float)), "chunk rows") ||
        !ok(hipMalloc(&flush, flush_bytes), "flush buffer") || !ok(hipMalloc(&pass, sizeof(MkPass)), "pass") ||
        !ok(hipMalloc(&t, 2 * grid * sizeof(unsigned long long)), "times") || !ok(hipMalloc(&ran, grid * sizeof(unsigned)), "ran") ||
        !ok(hipMalloc(&done, sizeof(unsigned)), "counter") || !ok(hipMalloc(&sink, sizeof(unsigned)), "sink") ||
        !ok(hipMemset(flush, 0x5a, flush_bytes), "flush buffer"))
        return 1;
    if (kv_memory == "managed-host") {
        // Written from the host by copies, as a parked context is loaded (ManagedPageMemory::copy).
        std::vector<uint16_t> h(page_bytes / 2);
        unsigned long long x = 88172645463325252ull;
        for (uint8_t* page : kv) {
            for (uint16_t& v : h) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                v = static_cast<uint16_t>(((x >> 16) & 0x8000u) | (14u << 10) | (x & 0x3ffu));
            }
            if (!ok(hipMemcpy(page, h.data(), page_bytes, hipMemcpyDefault), "KV page copy")) return 1;
        }
    } else {
        for (long long p = 0; p < max_pages; ++p)
            fill_halves<<<4 * sms, 256>>>(reinterpret_cast<uint16_t*>(kv[size_t(p)]), static_cast<long long>(page_bytes / 2),
                                           12345ull + static_cast<unsigned long long>(p) * page_bytes);
    }
    {
        const std::vector<uint8_t*>& hp = kv;
        std::vector<float> hq(static_cast<size_t>(n_head * hd));
        unsigned x = 2463534242u;
        for (float& v : hq) {
            x ^= x << 13, x ^= x >> 17, x ^= x << 5;
            v = (static_cast<float>(x % 2001u) - 1000.0f) / 8000.0f;
        }
        const int seq0 = 0;
        if (!ok(hipMemcpy(pages, hp.data(), hp.size() * sizeof(uint8_t*), hipMemcpyHostToDevice), "page table") ||
            !ok(hipMemcpy(q, hq.data(), hq.size() * sizeof(float), hipMemcpyHostToDevice), "q") ||
            !ok(hipMemcpy(seq, &seq0, sizeof seq0, hipMemcpyHostToDevice), "seq") || !ok(hipDeviceSynchronize(), "fill"))
            return 1;
    }
    void *ph_ns = nullptr, *ph_marks = nullptr, *ph_on = nullptr;
    if (!ok(hipGetSymbolAddress(&ph_ns, HIP_SYMBOL(mk_phase_ns)), "phase symbols") ||
        !ok(hipGetSymbolAddress(&ph_marks, HIP_SYMBOL(mk_phase_marks)), "phase symbols") ||
        !ok(hipGetSymbolAddress(&ph_on, HIP_SYMBOL(mk_phase_on)), "phase symbols"))
        return 1;

#if ARBOR_PROBE_CHAIN
    {  // (ARBOR_PROBE_CHAIN: a chain step's cycles, chain_probe; five launches, each printed)
        constexpr int kN = 229;
        float *csrc = nullptr, *cout = nullptr;
        unsigned long long* ccyc = nullptr;
        uint4* cbulk = nullptr;
        std::vector<float> hs(256);
        for (int i = 0; i < 256; ++i) hs[size_t(i)] = 1.0f / float(i + 3);
        if (!ok(hipMalloc(&csrc, 256 * sizeof(float)), "chain src") ||
            !ok(hipMalloc(&cbulk, 4096 * sizeof(uint4)), "chain bulk") ||
            !ok(hipMemset(cbulk, 0, 4096 * sizeof(uint4)), "chain bulk") ||
            !ok(hipMalloc(&cout, 4 * sizeof(float)), "chain out") ||
            !ok(hipMalloc(&ccyc, 3 * sizeof(unsigned long long)), "chain cycles") ||
            !ok(hipMemcpy(csrc, hs.data(), 256 * sizeof(float), hipMemcpyHostToDevice), "chain src"))
            return 1;
        static const char* const kBeside[3] = {"alone", "beside a copy to shared", "beside shared FMAs"};
        for (int busy = 0; busy < 3; ++busy) {
            std::printf("chain of %d dependent adds, one thread %s, cycles a step "
                        "(register, attn_chunk_l's shared loads, shuffles):\n", kN, kBeside[busy]);
            for (int r = 0; r < 5; ++r) {
                unsigned long long hc[3];
                chain_probe<<<1, kMkBlockThreads>>>(csrc, kN, ccyc, cout, cbulk, busy, cout + 3);
                if (!ok(hipGetLastError(), "chain launch") || !ok(hipDeviceSynchronize(), "chain") ||
                    !ok(hipMemcpy(hc, ccyc, sizeof hc, hipMemcpyDeviceToHost), "chain cycles"))
                    return 1;
                std::printf("  %6.2f %6.2f %6.2f\n", double(hc[0]) / kN, double(hc[1]) / kN, double(hc[2]) / kN);
            }
        }
    }
#endif
    for (const long long cells : cells_list) {
        // A decode step at position `cells` (the context's cells 0 .. cells - 1 and the new token's).
        const int p0 = static_cast<int>(cells);
        const long long MC = cells / mkm::kChunk + 1;
        MkPass hpass{};
        hpass.d.n_head = n_head;
        hpass.d.n_head_kv = n_kv;
        hpass.d.hd_k = hpass.d.hd_v = hd;
        hpass.d.attn_scale = 1.0f / std::sqrt(static_cast<float>(hd));
        hpass.d.kv_elem_bytes = 2;
        hpass.d.kv_layer_bytes = layer_bytes;
        hpass.n_tokens = 1;
        hpass.n_out = 1;
        hpass.max_chunks = MC;
        // Streamed (evict-first K and V copies) where the engine streams it (GpuBackend::kv_stream):
        // the step's cells over every layer at least the L2's size.
        const bool stream = ARBOR_MK_KV_EVICT_FIRST &&
                            double(layers) * double(layer_bytes) / mkm::kChunk * double(cells + 1) >= double(prop.l2CacheSize);
        hpass.kv_stream = stream ? 1 : 0;
        hpass.pos = pos;
        hpass.seq = seq;
        hpass.pages = pages;
        hpass.pages_stride = max_pages;
        hpass.q = q;
        hpass.att = att;
        hpass.attq = attq;
        hpass.attn_part = part;
        MkModelStage s{};
        s.pass = pass;
        s.buf = kBufAtt;
        s.direct = MC == 1 ? 1 : 0;
        s.quantize_out = MC == 1 ? 1 : 0;
        s.attn_tokens = 1;
        s.head_parts = attn_head_parts(n_kv * MC, group, hd, grid);
        const long long items = n_kv * MC * s.head_parts;
        if (!ok(hipMemcpy(pass, &hpass, sizeof hpass, hipMemcpyHostToDevice), "pass") ||
            !ok(hipMemcpy(pos, &p0, sizeof p0, hipMemcpyHostToDevice), "pos"))
            return 1;
        // One untimed launch a layer first: managed pages written by the host move to the device
        // at their first touch there, as a parked context's do in its first pass.
        const unsigned off = 0;
        if (!ok(hipMemcpy(ph_on, &off, sizeof off, hipMemcpyHostToDevice), "phase flag")) return 1;
        for (long long l = 0; l < layers; ++l) {
            s.layer = static_cast<int>(l);
            if (!ok(hipMemset(done, 0, sizeof(unsigned)), "counter reset")) return 1;
            attn_level<<<grid, kMkBlockThreads, dyn>>>(pass, s, items, Times{t, ran, done});
        }
        if (!ok(hipGetLastError(), "launch") || !ok(hipDeviceSynchronize(), "first pass")) return 1;
        Mode modes[3] = {{"cold"}, {"code"}, {"warm"}};
#if ARBOR_MK_STAGE_CLOCKS
        // (ARBOR_MK_STAGE_CLOCKS: the one-head item's pieces, cycles an item, summed over the warm
        // launches with the phase clocks off)
        unsigned long long stc_sum[kStcSlots] = {}, stc_n[kStcSlots] = {};
#endif
        for (int phases = 0; phases < 2; ++phases) {
            const unsigned on = static_cast<unsigned>(phases);
            if (!ok(hipMemcpy(ph_on, &on, sizeof on, hipMemcpyHostToDevice), "phase flag")) return 1;
            for (long long r = 0; r < reps; ++r) {
                const int la = static_cast<int>((2 * r) % layers), lb = static_cast<int>((2 * r + 1) % layers);
                flush_l2<<<4 * sms, 256>>>(flush, flush_bytes / 16, sink);
                for (int m = 0; m < 3; ++m) {
                    s.layer = m == 0 ? la : lb;
                    if (!ok(hipMemset(ran, 0, grid * sizeof(unsigned)), "reset") ||
                        !ok(hipMemset(done, 0, sizeof(unsigned)), "counter reset") || (phases && !phases_reset(ph_ns, ph_marks)))
                        return 1;
#if ARBOR_MK_STAGE_CLOCKS
                    if (!ok(mk_stc_reset(), "stage clocks")) return 1;
#endif
                    attn_level<<<grid, kMkBlockThreads, dyn>>>(pass, s, items, Times{t, ran, done});
                    if (!ok(hipGetLastError(), "launch") || !ok(hipDeviceSynchronize(), modes[m].name)) return 1;
#if ARBOR_MK_STAGE_CLOCKS
                    if (m == 2 && !phases) {
                        unsigned long long hc[kStcSlots], hn[kStcSlots];
                        if (!ok(mk_stc_read(hc, hn), "stage clocks")) return 1;
                        for (int k = 0; k < kStcSlots; ++k) stc_sum[k] += hc[k], stc_n[k] += hn[k];
                    }
#endif
                    std::vector<unsigned long long> ht(size_t(2 * grid));
                    std::vector<unsigned> hr(static_cast<size_t>(grid));
                    if (!ok(hipMemcpy(ht.data(), t, ht.size() * sizeof(unsigned long long), hipMemcpyDeviceToHost), "times") ||
                        !ok(hipMemcpy(hr.data(), ran, hr.size() * sizeof(unsigned), hipMemcpyDeviceToHost), "ran"))
                        return 1;
                    unsigned long long lo = ~0ull, hi = 0;
                    double sum = 0;
                    int n = 0;
                    for (int b = 0; b < grid; ++b) {
                        if (!hr[size_t(b)]) continue;
                        lo = std::min(lo, ht[size_t(2 * b)]);
                        hi = std::max(hi, ht[size_t(2 * b + 1)]);
                        sum += double(ht[size_t(2 * b + 1)] - ht[size_t(2 * b)]);
                        ++n;
                    }
                    if (phases) {  // the phase rows, and what the clocks' barriers cost the level
                        unsigned long long ns[kMkPhases], mk[kMkPhases];
                        if (!ok(hipMemcpy(ns, ph_ns, sizeof ns, hipMemcpyDeviceToHost), "phases") ||
                            !ok(hipMemcpy(mk, ph_marks, sizeof mk, hipMemcpyDeviceToHost), "phases"))
                            return 1;
                        for (int p = 0; p < kMkPhases; ++p) modes[m].ns[p] += ns[p], modes[m].marks[p] += mk[p];
                        modes[m].clocked_us.push_back(n ? (hi - lo) / 1e3 : 0);
                        continue;
                    }
                    modes[m].us.push_back(n ? (hi - lo) / 1e3 : 0);
                    modes[m].item_us.push_back(n ? sum / n / 1e3 : 0);
                }
            }
        }
        std::printf("\ndecode at %lld cells: %lld chunk%s, %lld items of %lld q head%s (head_parts %d), %s, KV %s\n", cells,
                    MC, MC == 1 ? "" : "s", items, group / s.head_parts, group / s.head_parts == 1 ? "" : "s", s.head_parts,
                    MC == 1 ? "direct (the attention row and its Q8A blocks)" : "chunk rows for the combine",
                    stream ? "streamed (evict-first copies)" : "not streamed");
        std::printf("%-5s %10s %10s %10s %10s %10s", "mode", "level_med", "level_min", "level_max", "workgroup", "clocked");
        for (int p = kPhAttnQ; p <= kPhAttnWrite; ++p) std::printf(" %10.10s", kMkPhaseNames[p] + 12);
        std::printf("\n  (us: the level's median, min and max over the repetitions; a workgroup's mean time; the level with\n"
                    "   the phase clocks on; the phases' mean a mark in those clocked launches)\n");
        for (Mode& m : modes) {
            const double lmin = *std::min_element(m.us.begin(), m.us.end()), lmax = *std::max_element(m.us.begin(), m.us.end());
            std::printf("%-5s %10.2f %10.2f %10.2f %10.2f %10.2f", m.name, median(m.us), lmin, lmax, median(m.item_us),
                        median(m.clocked_us));
            for (int p = kPhAttnQ; p <= kPhAttnWrite; ++p)
                std::printf(" %10.3f", m.marks[p] ? m.ns[p] / 1e3 / double(m.marks[p]) : 0.0);
            std::printf("\n");
        }
#if ARBOR_MK_STAGE_CLOCKS
        std::printf("stage clocks, warm launches with the phase clocks off: cycles an item (items timed)\n");
        for (int k = 0; k < kStcSlots; ++k) {
            if (stc_n[k] == 0) continue;  // (a slot this build's items never reach)
            char name[64];
            mk_stc_name(k, name, sizeof name);
            std::printf("  %-30s %9.0f  (%llu)\n", name, double(stc_sum[k]) / double(stc_n[k]), stc_n[k]);
        }
#endif
    }
    return 0;
}
