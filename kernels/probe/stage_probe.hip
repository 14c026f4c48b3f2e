// arbor-gpu-stage-probe: what staging a piece of global memory into one workgroup's shared memory
// costs on this GPU, outside the megakernel.
//
// The megakernel's decode attention items stage their chunk's K rows (58 KiB at 229 cells, 64 KiB
// at depth) and then its V rows into the 80 KiB arena, and the phase clocks put each stage at
// 4-8 us: about 15 GB/s for one SM while only 32 of the 132 SMs copy anything (docs/GPU.md,
// gpu-next25 and gpu-next26). This probe times the same copy alone, with the ways a workgroup
// can make it:
//   cpasync   every thread's 16-byte cp.async.cg in flight at once, one commit and wait_all (the
//             megakernel's block_stage_async);
//   ldg       plain 16-byte loads, four in flight a thread, stored to shared memory by the thread;
//   bulk1     one bulk copy (sm_90's cp.async.bulk, the copy engine) of the whole piece, issued by
//             one thread, completing on a shared-memory mbarrier;
//   bulk32    the piece cut in 32 parts, one bulk copy a lane of warp 0, the same mbarrier;
// with 1, 8, 32, one an SM and two an SM of the workgroups copying (the rest idle, or with
// --spin polling a global counter with a 100 ns sleep between polls, as the megakernel's barrier
// waits do), the sources cold (read from memory: a region not read since a flush of the L2) or
// warm (two regions a workgroup, read in turn after one untimed pass). Each copying workgroup
// stages --reps pieces in turn and times them by the global timer; the table gives the median
// and slowest workgroup's microseconds a piece, its GB/s, and the copying workgroups' GB/s
// together. It computes nothing that anything uses: a measurement, not a lever.
#include "arbor_hip.hpp"
#include "probe/probe_common.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kThreads = 256;

enum Method { kCpAsync, kLdg, kBulk1, kBulk32, kMethods };
const char* const kMethodNames[kMethods] = {"cpasync", "ldg", "bulk1", "bulk32"};

struct Args {
    const uint8_t* src;
    long long bytes;     // a piece (a multiple of 16)
    int reps;            // pieces a copying workgroup stages
    int active;          // workgroups that copy (blocks 0 .. active - 1)
    int warm;            // 1: two regions a workgroup, after one untimed pass
    int spin;            // 1: the others poll `done` until every copying workgroup is through
    unsigned* done;      // copying workgroups finished
    unsigned long long* t;  // [2 * active]: per copying workgroup, start and end (ns)
    int* smid;           // [active]
    unsigned* sink;      // one word a workgroup, so the copies are read
};

__device__ inline unsigned smid_now() {
#if defined(ARBOR_GPU_VENDOR_NVIDIA)
    unsigned r;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
    return r;
#else
    return 0;
#endif
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ inline void mbar_init(unsigned bar) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(bar) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ inline void mbar_expect(unsigned bar, unsigned bytes) {
    asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}\n" ::"r"(bar), "r"(bytes)
                 : "memory");
}
__device__ inline void bulk_copy(unsigned dst, const void* src, unsigned bytes, unsigned bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}
__device__ inline void mbar_wait(unsigned bar, unsigned parity) {
    asm volatile(
        "{\n .reg .pred p;\n"
        "wait_%=:\n"
        " mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
        " @!p bra wait_%=;\n}\n" ::"r"(bar),
        "r"(parity)
        : "memory");
}
#endif

template <int M>
__global__ void __launch_bounds__(kThreads, 2) stage_kernel(Args a) {
    extern __shared__ uint4 smem[];
    const int tid = static_cast<int>(threadIdx.x);
    if (static_cast<int>(blockIdx.x) >= a.active) {
        if (a.spin && tid == 0) {
            const volatile unsigned* d = a.done;
            const unsigned long long t0 = arbor_wall_ns();
            while (*d < static_cast<unsigned>(a.active) && arbor_wall_ns() - t0 < 1000000000ull) arbor_pause();
        }
        return;
    }
    const long long words = a.bytes / 16;
    const int b = static_cast<int>(blockIdx.x);
    __shared__ unsigned long long bar_word;
    [[maybe_unused]] const unsigned bar = static_cast<unsigned>(__cvta_generic_to_shared(&bar_word));
    [[maybe_unused]] const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (M == kBulk1 || M == kBulk32)
        if (tid == 0) mbar_init(bar);
#endif
    __syncthreads();
    unsigned parity = 0, acc = 0;
    unsigned long long t0 = 0;
    for (int i = a.warm ? -2 : 0; i < a.reps; ++i) {
        if (i == 0) {
            __syncthreads();
            t0 = arbor_wall_ns();
        }
        const long long region = a.warm ? 2ll * b + (i & 1) : static_cast<long long>(b) * a.reps + i;
        const uint8_t* src = a.src + region * a.bytes;
        if constexpr (M == kCpAsync) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
            const uint4* s = reinterpret_cast<const uint4*>(src);
            for (long long w = tid; w < words; w += kThreads)
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst + 16u * static_cast<unsigned>(w)),
                             "l"(s + w)
                             : "memory");
            asm volatile("cp.async.commit_group;\n" ::: "memory");
            asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
        } else if constexpr (M == kLdg) {
            const uint4* s = reinterpret_cast<const uint4*>(src);
            for (long long w = tid; w < words; w += 4 * kThreads) {
                uint4 v[4];
#pragma unroll
                for (int k = 0; k < 4; ++k)
                    if (w + k * kThreads < words) v[k] = __ldcg(s + w + k * kThreads);
#pragma unroll
                for (int k = 0; k < 4; ++k)
                    if (w + k * kThreads < words) smem[w + k * kThreads] = v[k];
            }
        } else {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
            if (tid < 32) {
                if (tid == 0) mbar_expect(bar, static_cast<unsigned>(a.bytes));
                __syncwarp();
                if constexpr (M == kBulk1) {
                    if (tid == 0) bulk_copy(dst, src, static_cast<unsigned>(a.bytes), bar);
                } else {
                    const long long per = (words + 31) / 32 * 16;  // bytes a lane, whole words
                    const long long off = tid * per, n = per < a.bytes - off ? per : a.bytes - off;
                    if (n > 0) bulk_copy(dst + static_cast<unsigned>(off), src + off, static_cast<unsigned>(n), bar);
                }
            }
            mbar_wait(bar, parity);
            parity ^= 1u;
#endif
        }
        __syncthreads();
        acc += reinterpret_cast<const unsigned*>(smem)[(tid * 37 + i + 2) % (words * 4)];
        __syncthreads();  // the next piece overwrites what this one's reads saw
    }
    const unsigned long long t1 = arbor_wall_ns();
    if (acc == 0x9e3779b9u) a.sink[b] = acc;  // (almost never: keeps the reads)
    if (tid == 0) {
        a.t[2 * b] = t0;
        a.t[2 * b + 1] = t1;
        a.smid[b] = static_cast<int>(smid_now());
        __threadfence();
        atomicAdd(a.done, 1u);
    }
}

__global__ void flush_kernel(uint4* p, long long words, unsigned salt) {
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < words;
         i += static_cast<long long>(gridDim.x) * blockDim.x)
        p[i] = make_uint4(salt, static_cast<unsigned>(i), 0u, 0u);
}

bool ok(hipError_t e, const char* what) { return arbor::probe::ok("arbor-gpu-stage-probe", e, what); }

using KernelFn = void (*)(Args);
KernelFn kernel_of(int m) {
    switch (m) {
    case kCpAsync: return stage_kernel<kCpAsync>;
    case kLdg: return stage_kernel<kLdg>;
    case kBulk1: return stage_kernel<kBulk1>;
    default: return stage_kernel<kBulk32>;
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<long long> sizes = {58624, 65536, 16384};
    int reps = 16;
    for (int i = 1; i < argc; ++i) {
        const std::string o = argv[i];
        if ((o == "--bytes" || o == "--reps") && i + 1 < argc) {
            const long long v = std::atoll(argv[++i]);
            if (v <= 0 || (o == "--bytes" && (v % 16 != 0 || v > 160 * 1024))) {
                std::fprintf(stderr, "arbor-gpu-stage-probe: %s needs a positive value%s\n", o.c_str(),
                             o == "--bytes" ? " (a multiple of 16, at most 163840)" : "");
                return 2;
            }
            if (o == "--bytes") sizes = {v};
            else reps = static_cast<int>(v);
        } else {
            std::fprintf(stderr, "usage: arbor-gpu-stage-probe [--bytes B] [--reps K]\n");
            return 2;
        }
    }
    hipDeviceProp_t prop{};
    if (!ok(hipGetDeviceProperties(&prop, 0), "device properties")) return 1;
    const int sms = prop.multiProcessorCount, grid = 2 * sms;
    if (prop.major < 9) std::printf("(sm_%d%d: the bulk copies need sm_90; their rows are skipped)\n", prop.major, prop.minor);
    long long max_bytes = 0;
    for (long long s : sizes) max_bytes = std::max(max_bytes, s);
    const long long src_bytes = static_cast<long long>(grid) * reps * max_bytes, flush_bytes = 4ll * prop.l2CacheSize + (64ll << 20);
    uint8_t* src = nullptr;
    uint4* flush = nullptr;
    unsigned* done = nullptr;
    unsigned* sink = nullptr;
    unsigned long long* t = nullptr;
    int* smid = nullptr;
    if (!ok(hipMalloc(&src, src_bytes), "source") || !ok(hipMalloc(&flush, flush_bytes), "flush buffer") ||
        !ok(hipMalloc(&done, sizeof(unsigned)), "counter") || !ok(hipMalloc(&sink, grid * sizeof(unsigned)), "sink") ||
        !ok(hipMalloc(&t, 2 * grid * sizeof(unsigned long long)), "times") || !ok(hipMalloc(&smid, grid * sizeof(int)), "smid"))
        return 1;
    if (!ok(hipMemset(src, 0x3c, src_bytes), "source fill")) return 1;
    for (int m = 0; m < kMethods; ++m)
        if (!ok(hipFuncSetAttribute(reinterpret_cast<const void*>(kernel_of(m)), hipFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(max_bytes)),
                "dynamic shared memory"))
            return 1;
    std::printf("%s, %d SMs, L2 %d MiB; %d pieces a copying workgroup, grid %d x %d\n", prop.name, sms,
                prop.l2CacheSize >> 20, reps, grid, kThreads);
    std::printf("%-8s %6s %7s %-4s %-5s %9s %9s %9s %9s %5s\n", "method", "bytes", "copying", "src", "spin", "us_med",
                "us_max", "GBs_med", "GBs_all", "SMs");
    const int actives[] = {1, 8, 32, sms, grid};
    unsigned salt = 1;
    for (long long bytes : sizes)
        for (int warm = 0; warm < 2; ++warm)
            for (int act : actives)
                for (int spin = 0; spin < (act < sms ? 2 : 1); ++spin)
                    for (int m = 0; m < kMethods; ++m) {
                        if ((m == kBulk1 || m == kBulk32) && prop.major < 9) continue;
                        flush_kernel<<<4 * sms, 256>>>(flush, flush_bytes / 16, salt++);
                        if (!ok(hipMemset(done, 0, sizeof(unsigned)), "counter reset")) return 1;
                        Args a{src, bytes, reps, act, warm, spin, done, t, smid, sink};
                        kernel_of(m)<<<grid, kThreads, static_cast<size_t>(bytes)>>>(a);
                        if (!ok(hipGetLastError(), "launch") || !ok(hipDeviceSynchronize(), kMethodNames[m])) return 1;
                        std::vector<unsigned long long> ht(2 * act);
                        std::vector<int> hs(act);
                        if (!ok(hipMemcpy(ht.data(), t, ht.size() * sizeof(unsigned long long), hipMemcpyDeviceToHost), "times") ||
                            !ok(hipMemcpy(hs.data(), smid, hs.size() * sizeof(int), hipMemcpyDeviceToHost), "smid"))
                            return 1;
                        std::vector<double> us(act);
                        unsigned long long lo = ~0ull, hi = 0;
                        for (int b = 0; b < act; ++b) {
                            us[b] = double(ht[2 * b + 1] - ht[2 * b]) / 1e3 / reps;
                            lo = std::min(lo, ht[2 * b]);
                            hi = std::max(hi, ht[2 * b + 1]);
                        }
                        std::sort(us.begin(), us.end());
                        std::sort(hs.begin(), hs.end());
                        const int distinct = static_cast<int>(std::unique(hs.begin(), hs.end()) - hs.begin());
                        const double med = us[act / 2], all = double(bytes) * reps * act / double(hi - lo);
                        std::printf("%-8s %6lld %7d %-4s %-5s %9.2f %9.2f %9.1f %9.1f %5d\n", kMethodNames[m], bytes, act,
                                    warm ? "warm" : "cold", spin ? "spin" : "idle", med, us.back(), double(bytes) / med / 1e3,
                                    all, distinct);
                    }
    return 0;
}
