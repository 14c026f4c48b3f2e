// arbor-gpu-probe: what one decode level of row dots costs on this GPU outside the megakernel.
//
// The megakernel's gated-FFN level on qwen3-4b (9728 items, each a 2560-wide Q4_K gate row and
// up row against one Q8A activation row; 2112 warps, about 4.6 items a warp, three sub-block
// steps a lane) takes 25-30 us on the H200, about 1.1 TB/s, and neither L2 prefetches nor
// cp.async staging changed it (docs/GPU.md, gpu-next15). This probe runs a simplified form of
// that access pattern as a small kernel of its own: lane j of a warp loads, per step, 16 quant
// bytes and 4 scale bytes of each row (the real Q4_K terms read 32 and 16, in more loads) and
// its 40-byte activation block, then runs dependent integer dot products and a float
// accumulation, so each step waits on its loads the way a row-dot step does; and it runs the
// megakernel's own row-dot code (real_level) on the same rows, which is the comparison to read. It prints the level's time (from the first workgroup's start to the
// last one's end, by the global timer, so no launch overhead) for:
//   - 1 warp an SM (no contention: a step's bare latency), 16 warps an SM (the megakernel's
//     shape: 2 workgroups of 256), and 32;
//   - weights cold (a region not read since the L2 last held it) and warm (read just before);
//   - plain loads (as the megakernel's generic loads) and ld.global.nc;
//   - the megakernel's row-dot code with 4-byte loads and with its wide loads (mk_dot.hpp,
//     ARBOR_MK_WIDE_LOADS);
// and a streaming read of the same bytes by every thread, for the bandwidth this GPU gives.
// --regions G spreads the levels over G regions (the address translation's reach), --managed
// puts the weights in managed memory (where the KV pages live).
// It computes nothing that anything uses: a measurement, not a lever.
#include "arbor_hip.hpp"
#include "probe/probe_common.hpp"
#include "mk_dot.hpp"
#include "mk_model_ops.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr int kThreads = 256;
constexpr long long kBlockBytes = 144;  // a Q4_K block: 8 sub-blocks of 32
constexpr long long kXqBytes = 40;      // a Q8A activation block

template <bool Nc>
__device__ inline uint4 load16(const uint8_t* p) {
    if constexpr (Nc) return __ldg(reinterpret_cast<const uint4*>(p));
    return *reinterpret_cast<const uint4*>(p);
}
template <bool Nc>
__device__ inline uint2 load8(const uint8_t* p) {
    if constexpr (Nc) return __ldg(reinterpret_cast<const uint2*>(p));
    return *reinterpret_cast<const uint2*>(p);
}
template <bool Nc>
__device__ inline unsigned load4(const uint8_t* p) {
    if constexpr (Nc) return __ldg(reinterpret_cast<const unsigned*>(p));
    return *reinterpret_cast<const unsigned*>(p);
}

__device__ inline int dot4(unsigned a, unsigned b, int c) {
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
    return __dp4a(static_cast<int>(a), static_cast<int>(b), c);
#else
    return c + static_cast<int>(a & 0xff) * static_cast<int>(b & 0xff);  // (a stand-in: AMD timings are optimistic)
#endif
}

struct Level {
    const uint8_t* gate;  // rows of row_bytes, item r: gate row r and up row r
    const uint8_t* up;
    const uint8_t* xq;    // n / 32 activation blocks
    long long row_bytes, n, items;
    int warps_per_block;  // warps of a block that work (the rest return)
    float* out;
    unsigned long long* t;  // [2 * blocks]: each block's start and end
};

template <bool Nc>
__global__ void __launch_bounds__(kThreads, 4) row_level(Level L) {
    const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) & 31;
    __syncthreads();
    const unsigned long long t0 = arbor_wall_ns();
    if (warp < L.warps_per_block) {
        const long long gw = static_cast<long long>(blockIdx.x) * L.warps_per_block + warp;
        const long long warps = static_cast<long long>(gridDim.x) * L.warps_per_block;
        const long long subs = L.n / 32;
        for (long long item = gw; item < L.items; item += warps) {
            const uint8_t* r[2] = {L.gate + item * L.row_bytes, L.up + item * L.row_bytes};
            float acc[2] = {0.0f, 0.0f};
#pragma unroll 1  // a step at a time, as the megakernel's row dots run (no loads hoisted across steps)
            for (long long b = lane; b < subs; b += 32) {
                const long long off = (b / 8) * kBlockBytes;
                const int sb = static_cast<int>(b % 8);
                const uint8_t* xb = L.xq + b * kXqBytes;
                // (a Q8A block's quants start 8 bytes in: 8-byte aligned only)
                const uint2 xa = load8<Nc>(xb + 8), xb2 = load8<Nc>(xb + 16), xc = load8<Nc>(xb + 24), xe = load8<Nc>(xb + 32);
                const uint4 x0{xa.x, xa.y, xb2.x, xb2.y}, x1{xc.x, xc.y, xe.x, xe.y};
                const unsigned xd = load4<Nc>(xb);
                uint4 q[2];
                unsigned sc[2];
#pragma unroll
                for (int i = 0; i < 2; ++i) {
                    q[i] = load16<Nc>(r[i] + off + 16 + (sb / 2) * 32 + (sb & 1) * 16);
                    sc[i] = load4<Nc>(r[i] + off + 4 + (sb & 2) * 2);
                }
#pragma unroll
                for (int i = 0; i < 2; ++i) {
                    int s = dot4(q[i].x, x0.x, 0);
                    s = dot4(q[i].y, x0.y, s);
                    s = dot4(q[i].z, x0.z, s);
                    s = dot4(q[i].w, x0.w, s);
                    s = dot4(q[i].x >> 4, x1.x, s);
                    s = dot4(q[i].y >> 4, x1.y, s);
                    s = dot4(q[i].z >> 4, x1.z, s);
                    s = dot4(q[i].w >> 4, x1.w, s);
                    acc[i] = fmaf(__uint_as_float((sc[i] & 0x3fffffffu) | 0x3c000000u) * __uint_as_float(xd | 0x3c000000u),
                                  static_cast<float>(s), acc[i]);
                }
            }
            for (int o = 16; o >= 1; o >>= 1) {
                acc[0] += __shfl_down(acc[0], o);
                acc[1] += __shfl_down(acc[1], o);
            }
            if (lane == 0) L.out[item] = acc[0] * acc[1];
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        L.t[2 * blockIdx.x] = t0;
        L.t[2 * blockIdx.x + 1] = arbor_wall_ns();
    }
}

// The same level with the megakernel's own row-dot code (warp_dot_row2 on Q4_K rows: the packed
// sub-block terms, the lane accumulation and the combine tree), in a kernel of its own: what the
// item code costs without the megakernel around it (its dispatch, descriptors and spills).
template <int MinBlocks, bool Wide = false>
__global__ void __launch_bounds__(kThreads, MinBlocks) real_level(Level L) {
    const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) & 31;
    __syncthreads();
    const unsigned long long t0 = arbor_wall_ns();
    const long long gw = static_cast<long long>(blockIdx.x) * kThreads / 32 + warp;
    const long long warps = static_cast<long long>(gridDim.x) * kThreads / 32;
    const auto* xq = reinterpret_cast<const arbor::quant::BlockQ8A*>(L.xq);
    for (long long item = gw; item < L.items; item += warps) {
        const uint8_t* r[2] = {L.gate + item * L.row_bytes, L.up + item * L.row_bytes};
        float v[2];
        arbor::gpu::warp_dot_quant_rows<arbor::quant::blocks::Q4_K, 2, Wide>(r, xq, L.n, lane, v);
        if (lane == 0) L.out[item] = v[0] * v[1];
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        L.t[2 * blockIdx.x] = t0;
        L.t[2 * blockIdx.x + 1] = arbor_wall_ns();
    }
}

// Every thread reads 16-byte words of [p, p + bytes) in a grid-stride loop (the bandwidth
// reference), summing them so the loads are not dropped.
__global__ void __launch_bounds__(kThreads) stream_read(const uint4* p, long long words, unsigned* sink,
                                                        unsigned long long* t) {
    __syncthreads();
    const unsigned long long t0 = arbor_wall_ns();
    unsigned s = 0;
    for (long long i = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x; i < words;
         i += static_cast<long long>(gridDim.x) * kThreads) {
        const uint4 v = p[i];
        s += v.x ^ v.y ^ v.z ^ v.w;
    }
    if (s == 0x12345678u) sink[0] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        t[2 * blockIdx.x] = t0;
        t[2 * blockIdx.x + 1] = arbor_wall_ns();
    }
}

bool ok(hipError_t e, const char* what) { return arbor::probe::ok("arbor-gpu-probe", e, what); }

// The level's time in us: the last end less the first start over the blocks.
double span_us(const std::vector<unsigned long long>& t, int blocks) {
    unsigned long long lo = ~0ull, hi = 0;
    for (int b = 0; b < blocks; ++b) {
        lo = t[2 * b] < lo ? t[2 * b] : lo;
        hi = t[2 * b + 1] > hi ? t[2 * b + 1] : hi;
    }
    return double(hi - lo) / 1e3;
}

// --down: one decode token's expert down level with the megakernel's own code, expert_down_slots
// (qwen3moe-30b-a3b's shape: 2048 rows of 768-wide IQ4_XS, 128 experts, 8 slots): item i is row
// pair i, its 8 slots' dots summed in slot order, on random weights, activations and route
// weights. gpu-next16 timed a pipelined form (the next slot's words loaded before the current
// slot's dots) against it here: the same bits, 13.1 against 12.2 us, so it was taken out.
struct DownLevel {
    arbor::gpu::MkPass* P;  // device copy
    arbor::gpu::MkW dw;
    long long pairs;
    float* out;  // [2 * pairs]
    unsigned long long* t;
};

__global__ void __launch_bounds__(kThreads, 2) down_level(DownLevel L) {
    const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) & 31;
    __syncthreads();
    const unsigned long long t0 = arbor_wall_ns();
    const long long gw = static_cast<long long>(blockIdx.x) * kThreads / 32 + warp;
    const long long warps = static_cast<long long>(gridDim.x) * kThreads / 32;
    const arbor::gpu::MkPass& P = *L.P;
    for (long long i = gw; i < L.pairs; i += warps) {
        float a0 = 0.0f, a1 = 0.0f;
        arbor::gpu::WarpPhaseClock clk(lane, false);
        arbor::gpu::expert_down_slots(P, L.dw, 0, 2 * i, 2 * i + 1, lane, &a0, &a1, clk);
        if (lane == 0) L.out[2 * i] = a0, L.out[2 * i + 1] = a1;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        L.t[2 * blockIdx.x] = t0;
        L.t[2 * blockIdx.x + 1] = arbor_wall_ns();
    }
}

// --smem K: the row-dot kernels launch with K KiB of dynamic shared memory a workgroup (unused),
// as the megakernel reserves its arena: the L1 keeps what the shared memory leaves of the SM's
// 256 KiB, so this shows what the arena's share costs the row dots.
// --carveout P asks for P percent of the SM's array as shared memory (the megakernel's
// ARBOR_GPU_CARVEOUT), -1 (the default) leaves it to the driver.
int g_smem_kib = 0;
int g_carveout = -1;

template <class Kernel>
bool smem_attr(Kernel k) {
    const void* f = reinterpret_cast<const void*>(k);
    return (g_smem_kib <= 48 || ok(hipFuncSetAttribute(f, hipFuncAttributeMaxDynamicSharedMemorySize, g_smem_kib * 1024),
                                   "dynamic shared memory")) &&
           (g_carveout < 0 || ok(hipFuncSetAttribute(f, hipFuncAttributePreferredSharedMemoryCarveout, g_carveout), "carveout"));
}

int run_down(int reps) {
    using arbor::quant::BlockQ8A;
    hipDeviceProp_t prop{};
    if (!ok(hipGetDeviceProperties(&prop, 0), "device properties")) return 1;
    const int sms = prop.multiProcessorCount, blocks = 2 * sms;
    const long long E = 128, K = 8, rows = 2048, nf = 768, rb = nf / 256 * 136, mat = rows * rb;
    const int copies = 4;  // weight copies taken in turn, so each level reads from memory (4 x 107 MiB)
    std::vector<uint8_t> hw(size_t(E * mat));
    unsigned long long x = 0x9e3779b97f4a7c15ull;
    auto rnd = [&]() { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x; };
    for (size_t i = 0; i < hw.size(); ++i) hw[i] = uint8_t(rnd());
    for (long long b = 0; b < E * mat; b += 136) {  // a normal positive d in every block
        const unsigned d = 0x2000u | unsigned(rnd() & 0x3ffu);
        hw[size_t(b)] = uint8_t(d & 0xff);
        hw[size_t(b) + 1] = uint8_t(d >> 8);
    }
    std::vector<BlockQ8A> hq(size_t(K * nf / 32));
    for (BlockQ8A& q : hq) {
        int sum = 0;
        for (int j = 0; j < 32; ++j) q.q[j] = int8_t(int(rnd() % 255) - 127), sum += q.q[j];
        q.sum = sum;
        q.d = float(rnd() % 1000 + 1) / 65536.0f;
    }
    int routes[8] = {3, 17, 29, 64, 90, 101, 118, 127};
    float rw[8];
    for (float& w : rw) w = float(rnd() % 1000 + 1) / 4096.0f;
    uint8_t* dwm = nullptr;
    BlockQ8A* dq = nullptr;
    int* dr = nullptr;
    float *dwt = nullptr, *out = nullptr;
    unsigned long long* t = nullptr;
    arbor::gpu::MkPass* dP = nullptr;
    if (!ok(hipMalloc(&dwm, size_t(E * mat) * copies), "weights") || !ok(hipMalloc(&dq, hq.size() * sizeof(BlockQ8A)), "heq") ||
        !ok(hipMalloc(&dr, sizeof routes), "routes") || !ok(hipMalloc(&dwt, sizeof rw), "route weights") ||
        !ok(hipMalloc(&out, size_t(2 * rows) * 4 * 2), "out") || !ok(hipMalloc(&t, size_t(2 * blocks) * 8), "clocks") ||
        !ok(hipMalloc(&dP, sizeof(arbor::gpu::MkPass)), "pass"))
        return 1;
    for (int c = 0; c < copies; ++c)
        if (!ok(hipMemcpy(dwm + size_t(c) * size_t(E * mat), hw.data(), hw.size(), hipMemcpyHostToDevice), "upload"))
            return 1;
    if (!ok(hipMemcpy(dq, hq.data(), hq.size() * sizeof(BlockQ8A), hipMemcpyHostToDevice), "upload") ||
        !ok(hipMemcpy(dr, routes, sizeof routes, hipMemcpyHostToDevice), "upload") ||
        !ok(hipMemcpy(dwt, rw, sizeof rw, hipMemcpyHostToDevice), "upload"))
        return 1;
    arbor::gpu::MkPass hp{};
    hp.d.n_embd = rows;
    hp.d.n_used = K;
    hp.d.n_expert = E;
    hp.d.n_ff_exp = nf;
    hp.n_tokens = 1;
    hp.route_idx = dr;
    hp.route_w = dwt;
    hp.heq = dq;
    if (!ok(hipMemcpy(dP, &hp, sizeof hp, hipMemcpyHostToDevice), "pass")) return 1;
    std::printf("device: %s; expert down: %lld row pairs, %lld slots of %lld-wide IQ4_XS rows, %lld experts\n", prop.name,
                rows / 2, K, nf, E);
    std::vector<unsigned long long> th(size_t(2 * blocks));
    std::vector<float> res[2];
    int next = 0;
    for (int pass = 0; pass < 2; ++pass) {  // twice: the same bits each time
        std::vector<double> us;
        for (int r = 0; r < reps; ++r) {
            arbor::gpu::MkW dw{};
            dw.data = dwm + size_t(next++ % copies) * size_t(E * mat);
            dw.row_bytes = rb;
            dw.mat_bytes = mat;
            dw.rows = rows;
            dw.cols = nf;
            dw.type = int(arbor::TensorType::IQ4_XS);
            DownLevel L{dP, dw, rows / 2, out + pass * 2 * rows, t};
            down_level<<<blocks, kThreads, size_t(g_smem_kib) * 1024>>>(L);
            if (!ok(hipDeviceSynchronize(), "down level") ||
                !ok(hipMemcpy(th.data(), t, size_t(2 * blocks) * 8, hipMemcpyDeviceToHost), "clocks"))
                return 1;
            us.push_back(span_us(th, blocks));
        }
        std::sort(us.begin(), us.end());
        res[pass].resize(size_t(2 * rows));
        if (!ok(hipMemcpy(res[pass].data(), out + pass * 2 * rows, size_t(2 * rows) * 4, hipMemcpyDeviceToHost), "out")) return 1;
        std::printf("%-56s %10.2f\n", "expert_down_slots, cold (us)", us[us.size() / 2]);
    }
    long long differ = 0;
    for (size_t i = 0; i < res[0].size(); ++i) differ += std::memcmp(&res[0][i], &res[1][i], 4) != 0;
    std::printf("bits: %lld of %lld outputs differ%s\n", differ, 2 * rows, differ ? "" : " (identical)");
    hipFree(dwm);
    hipFree(dq);
    hipFree(dr);
    hipFree(dwt);
    hipFree(out);
    hipFree(t);
    hipFree(dP);
    return differ ? 3 : 0;
}

}  // namespace

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const bool smem = !std::strcmp(argv[i], "--smem"), carve = !std::strcmp(argv[i], "--carveout");
        if (!smem && !carve) continue;
        char* end = nullptr;
        const long v = i + 1 < argc ? std::strtol(argv[i + 1], &end, 10) : -1;
        if (i + 1 >= argc || *end != '\0' || end == argv[i + 1] || v < 0 || v > (smem ? 227 : 100)) {
            std::fprintf(stderr, "arbor-gpu-probe: %s needs %s\n", argv[i], smem ? "KiB from 0 to 227" : "a percentage from 0 to 100");
            return 2;
        }
        (smem ? g_smem_kib : g_carveout) = int(v);
    }
    if (!smem_attr(down_level) || !smem_attr(real_level<2, true>) || !smem_attr(real_level<2>) || !smem_attr(real_level<4>))
        return 1;
    for (int i = 1; i < argc; ++i)
        if (!std::strcmp(argv[i], "--down")) return run_down(7);
    // The qwen3-4b gated FFN level by default: 9728 rows of 2560 Q4_K (1440 bytes) in each of
    // gate and up; --rows and --n change the shape, --reps the repetitions (the median is shown).
    long long rows = 9728, n = 2560;
    int reps = 5, regions = 8;
    bool managed = false;
    for (int i = 1; i < argc; i += 2) {
        if (!std::strcmp(argv[i], "--smem") || !std::strcmp(argv[i], "--carveout")) continue;  // (read above, with its value)
        if (!std::strcmp(argv[i], "--managed")) {  // weights in managed memory (as the KV pages are)
            managed = true;
            --i;
            continue;
        }
        if (i + 1 >= argc) {
            std::fprintf(stderr, "arbor-gpu-probe: %s needs a value\n", argv[i]);
            return 2;
        }
        if (!std::strcmp(argv[i], "--rows")) rows = std::atoll(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--regions")) regions = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--n")) n = std::atoll(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
        else {
            std::fprintf(stderr, "usage: arbor-gpu-probe [--rows R] [--n N] [--reps K] [--regions G] [--managed] [--smem KIB] [--carveout P] | --down [--smem KIB] [--carveout P]\n");
            return 2;
        }
    }
    if (rows <= 0 || n <= 0 || n % 256 != 0 || reps <= 0 || regions <= 0) {
        std::fprintf(stderr, "arbor-gpu-probe: --rows, --reps and --regions must be positive and --n a multiple of 256\n");
        return 2;
    }
    hipDeviceProp_t prop{};
    if (!ok(hipGetDeviceProperties(&prop, 0), "device properties")) return 1;
    const int sms = prop.multiProcessorCount;
    const long long row_bytes = n / 256 * kBlockBytes, mat = rows * row_bytes;
    // Regions of gate + up, far enough apart that reading one evicts the last from the L2. The
    // levels take them in turn: --regions sets how many (8 by default, 736 MiB for the default
    // shape; a decode step of qwen3-4b reads 2.5 GiB of weights, so 32 puts the address
    // translation's reach to the same test), and --managed puts them in managed memory, where
    // the KV pages live (hipMallocManaged, filled on the device).
    const long long region = ((2 * mat + (64ll << 20)) + 255) / 256 * 256;
    uint8_t* w = nullptr;
    uint8_t* xq = nullptr;
    float* out = nullptr;
    unsigned long long* t = nullptr;
    unsigned* sink = nullptr;
    const int max_blocks = 4 * sms;
    const hipError_t we = managed ? hipMallocManaged(reinterpret_cast<void**>(&w), size_t(region) * regions, hipMemAttachGlobal)
                                  : hipMalloc(&w, size_t(region) * regions);
    if (!ok(we, "weights") || !ok(hipMalloc(&xq, size_t(n / 32 * kXqBytes)), "xq") ||
        !ok(hipMalloc(&out, size_t(rows) * 4), "out") || !ok(hipMalloc(&t, size_t(2 * max_blocks) * 8), "clocks") ||
        !ok(hipMalloc(&sink, 4), "sink"))
        return 1;
    if (!ok(hipMemset(w, 0x35, size_t(region) * regions), "fill") || !ok(hipMemset(xq, 0x11, size_t(n / 32 * kXqBytes)), "fill"))
        return 1;
    if (!ok(hipDeviceSynchronize(), "fill")) return 1;
    std::printf("device: %s, %d SMs; level: %lld items of 2 rows x %lld bytes (%.1f MiB), %lld-wide; %d regions of %.0f MiB (%s memory)\n",
                prop.name, sms, rows, row_bytes, 2.0 * double(mat) / (1 << 20), n, regions, double(region) / (1 << 20),
                managed ? "managed" : "device");
    std::printf("%-56s %10s %10s %12s\n", "case", "us", "GB/s", "us an item");
    std::vector<unsigned long long> th(size_t(2 * max_blocks));
    int next_region = 0;
    auto run = [&](const char* name, int blocks, int wpb, bool nc, bool warm, int real = 0) {
        std::vector<double> us;
        for (int r = 0; r < reps; ++r) {
            const uint8_t* base = w + region * (next_region++ % regions);
            Level L{base, base + mat, xq, row_bytes, n, rows, wpb, out, t};
            for (int k = warm ? 0 : 1; k < 2; ++k) {  // warm: read once just before (its rows in the L2)
                const size_t sm = size_t(g_smem_kib) * 1024;
                if (real == 3) real_level<2, true><<<blocks, kThreads, sm>>>(L);
                else if (real == 2) real_level<2><<<blocks, kThreads, sm>>>(L);
                else if (real == 4) real_level<4><<<blocks, kThreads, sm>>>(L);
                else if (nc) row_level<true><<<blocks, kThreads>>>(L);
                else row_level<false><<<blocks, kThreads>>>(L);
            }
            if (!ok(hipDeviceSynchronize(), name) || !ok(hipMemcpy(th.data(), t, size_t(2 * blocks) * 8, hipMemcpyDeviceToHost), name))
                std::exit(1);
            us.push_back(span_us(th, blocks));
        }
        std::sort(us.begin(), us.end());
        const double m = us[us.size() / 2], per_warp = std::ceil(double(rows) / (double(blocks) * wpb));
        std::printf("%-56s %10.2f %10.1f %12.2f\n", name, m, 2.0 * double(mat) / (m * 1e3), m / per_warp);
    };
    struct Case {
        const char* name;
        int blocks_per_sm, wpb;
        bool nc, warm;
    };
    const Case cases[] = {
        {"1 warp an SM, cold", 1, 1, false, false},
        {"1 warp an SM, warm", 1, 1, false, true},
        {"16 warps an SM, cold", 2, 8, false, false},
        {"16 warps an SM, warm", 2, 8, false, true},
        {"16 warps an SM, cold, ld.nc", 2, 8, true, false},
        {"16 warps an SM, warm, ld.nc", 2, 8, true, true},
        {"32 warps an SM, cold", 4, 8, false, false},
        {"32 warps an SM, cold, ld.nc", 4, 8, true, false},
    };
    for (const Case& c : cases) run(c.name, c.blocks_per_sm * sms, c.wpb, c.nc, c.warm);
    run("megakernel's Q4_K row dots, 4-byte loads, 16/SM, cold", 2 * sms, 8, false, false, 2);
    run("megakernel's Q4_K row dots, 4-byte loads, 16/SM, warm", 2 * sms, 8, false, true, 2);
    run("megakernel's Q4_K row dots, 4-byte loads, 32/SM, cold", 4 * sms, 8, false, false, 4);
    run("the same, wide loads, 16/SM, cold", 2 * sms, 8, false, false, 3);
    run("the same, wide loads, 16/SM, warm", 2 * sms, 8, false, true, 3);
    // The streaming reference over one region's gate and up.
    std::vector<double> us;
    for (int r = 0; r < reps; ++r) {
        const uint8_t* base = w + region * (next_region++ % regions);
        stream_read<<<4 * sms, kThreads>>>(reinterpret_cast<const uint4*>(base), 2 * mat / 16, sink, t);
        if (!ok(hipDeviceSynchronize(), "stream") || !ok(hipMemcpy(th.data(), t, size_t(8 * sms) * 8, hipMemcpyDeviceToHost), "stream"))
            return 1;
        us.push_back(span_us(th, 4 * sms));
    }
    std::sort(us.begin(), us.end());
    std::printf("%-56s %10.2f %10.1f\n", "stream read, 32 warps an SM, cold", us[us.size() / 2],
                2.0 * double(mat) / (us[us.size() / 2] * 1e3));
    hipFree(w);
    hipFree(xq);
    hipFree(out);
    hipFree(t);
    hipFree(sink);
    return 0;
}
