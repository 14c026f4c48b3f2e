#include "mk_launch.hpp"

#include "arbor_hip.hpp"
#include "mk_sync.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

namespace arbor::gpu {
namespace {

Error hip_error(const char* what, hipError_t e) { return make_error(std::string(what) + ": " + hipGetErrorString(e)); }

const char* wait_name(int k) {
    switch (k) {
    case kWaitGridBarrier: return "grid barrier";
    case kWaitCounter: return "dependency counter";
    default: return "no wait";
    }
}

}  // namespace

Result<MkRuntime*> MkRuntime::get() {
    static std::mutex mu;
    static MkRuntime* rt = nullptr;
    std::lock_guard<std::mutex> lock(mu);
    if (!rt) {
        auto* r = new MkRuntime();
        if (auto s = r->init(); !s) {
            delete r;
            return s.error();
        }
        rt = r;
    }
    return rt;
}

Status MkRuntime::init() {
    hipError_t e;
    int dev = 0;
    if ((e = hipGetDevice(&dev)) != hipSuccess) return hip_error("no GPU device", e);
    hipDeviceProp_t p{};
    if ((e = hipGetDeviceProperties(&p, dev)) != hipSuccess) return hip_error("cannot read device properties", e);
    device_name_ = p.name;
    l2_bytes_ = p.l2CacheSize;
    if (p.warpSize != 32) return make_error("the megakernel needs 32-wide warps/waves; this device runs " + std::to_string(p.warpSize));
    int per_sm = 0;
    if (kMkSmemDynamic &&
        (e = hipFuncSetAttribute(megakernel_entry(), hipFuncAttributeMaxDynamicSharedMemorySize, kMkSmemDynamicBytes)) != hipSuccess)
        return hip_error(("cannot give the megakernel its " + std::to_string(kMkSmemFloats * 4 / 1024) +
                          " KiB shared-memory arena (builds for sm_90 to sm_11x use it; build with CMAKE_CUDA_ARCHITECTURES "
                          "set to this GPU's architecture, or -DARBOR_MK_SMEM_FLOATS=10176 in CMAKE_CUDA_FLAGS)").c_str(),
                         e);
    // ARBOR_GPU_CARVEOUT=P (an A/B switch, NVIDIA): the share of the SM's L1/shared-memory array, in
    // percent, that the megakernel asks to be shared memory; the rest stays L1 cache, which the
    // row dots' scattered loads and the spilled registers go through. Unset: the driver's choice.
    if (const char* cv = std::getenv("ARBOR_GPU_CARVEOUT"); cv && *cv) {
        char* end = nullptr;
        const long pct = std::strtol(cv, &end, 10);
        if (*end != '\0' || pct < 0 || pct > 100)
            return make_error(std::string("ARBOR_GPU_CARVEOUT must be a percentage from 0 to 100, not '") + cv + "'");
        if ((e = hipFuncSetAttribute(megakernel_entry(), hipFuncAttributePreferredSharedMemoryCarveout, int(pct))) != hipSuccess)
            return hip_error("cannot set the megakernel's shared-memory carveout", e);
    }
    if ((e = hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, megakernel_entry(), block_, kMkSmemDynamicBytes)) != hipSuccess)
        return hip_error("occupancy query failed", e);
    if (per_sm < 1) return make_error("the megakernel cannot be resident on this device");
    if (const char* cv = std::getenv("ARBOR_GPU_CARVEOUT"); cv && *cv)
        std::fprintf(stderr, "arbor: ARBOR_GPU_CARVEOUT=%s: %d workgroups an SM\n", cv, per_sm);
    grid_ = per_sm * p.multiProcessorCount;
    int coop = 0;
    (void)hipDeviceGetAttribute(&coop, hipDeviceAttributeCooperativeLaunch, dev);
    cooperative_ = coop != 0;
    if ((e = hipHostMalloc(reinterpret_cast<void**>(&host_), sizeof(MkHostBlock), hipHostMallocMapped)) != hipSuccess)
        return hip_error("cannot allocate the host control block", e);
    std::memset(host_, 0, sizeof(MkHostBlock));
    if ((e = hipHostGetDevicePointer(reinterpret_cast<void**>(&host_dev_), host_, 0)) != hipSuccess)
        return hip_error("cannot map the host control block", e);
    if ((e = hipMalloc(reinterpret_cast<void**>(&lines_), sizeof(MkDeviceLines))) != hipSuccess)
        return hip_error("cannot allocate the device control lines", e);
    if ((e = hipMemset(lines_, 0, sizeof(MkDeviceLines))) != hipSuccess) return hip_error("memset failed", e);
    const char* packed = std::getenv("ARBOR_GPU_PACKED");
    const char* stream_w = std::getenv("ARBOR_GPU_STREAM_W");
    const char* lean_rows = std::getenv("ARBOR_GPU_LEAN_ROWS");
    const char* wg_select = std::getenv("ARBOR_GPU_WG_SELECT");
    const unsigned ab = (packed && std::strcmp(packed, "0") == 0 ? kMkAbPackedOff : 0u) |
                        (stream_w && std::strcmp(stream_w, "1") == 0 ? kMkAbStreamW : 0u) |
                        (lean_rows && std::strcmp(lean_rows, "2") == 0 ? kMkAbLeanPairs : 0u) |
                        (lean_rows && std::strcmp(lean_rows, "1") == 0 ? kMkAbLeanSingle : 0u) |
                        (wg_select && std::strcmp(wg_select, "0") == 0 ? kMkAbWarpSelect : 0u);
#if ARBOR_MK_WG_SELECT
    if (wg_select && std::strcmp(wg_select, "0") != 0 && std::strcmp(wg_select, "1") != 0)
        std::fprintf(stderr,
                     "arbor: ARBOR_GPU_WG_SELECT=%s ignored: 0 takes the router select's warp form, 1 (the default) "
                     "the workgroup's\n",
                     wg_select);
#else
    if (wg_select) std::fprintf(stderr, "arbor: ARBOR_GPU_WG_SELECT ignored: this build has the warp form only\n");
#endif
#if ARBOR_MK_LEAN_DOTS && ARBOR_MK_LEAN_ROWS
    if (lean_rows && std::strcmp(lean_rows, "1") != 0 && std::strcmp(lean_rows, "2") != 0)
        std::fprintf(stderr, "arbor: ARBOR_GPU_LEAN_ROWS=%s ignored: 1 takes single rows always, 2 row pairs\n",
                     lean_rows);
#else
    if (lean_rows)
        std::fprintf(stderr, "arbor: ARBOR_GPU_LEAN_ROWS ignored: %s\n",
                     ARBOR_MK_LEAN_DOTS ? "this build's lean items are row pairs (-DARBOR_MK_LEAN_ROWS=0)"
                                        : "this build has no lean row-dot stages");
#endif
#if !(defined(ARBOR_GPU_VENDOR_NVIDIA) && ARBOR_MK_STREAM_W == 2)
#if defined(ARBOR_GPU_VENDOR_NVIDIA) && ARBOR_MK_STREAM_W == 1
    constexpr const char* kStreamW = "cache-streaming";
#else
    constexpr const char* kStreamW = "plain";
#endif
    if (stream_w)
        std::fprintf(stderr, "arbor: ARBOR_GPU_STREAM_W ignored: this build's weight loads are %s (NVIDIA builds "
                             "with -DARBOR_MK_STREAM_W=2 switch them at run time)\n",
                     kStreamW);
#endif
#if !(defined(ARBOR_GPU_VENDOR_NVIDIA) && ARBOR_MK_PACKED_SWITCH)
    if (ab & kMkAbPackedOff)
        std::fprintf(stderr, "arbor: ARBOR_GPU_PACKED=0 ignored: this build has no byte-wise row-dot path "
                             "(NVIDIA builds with -DARBOR_MK_PACKED_SWITCH=1 have it)\n");
#endif
    if (!mk_set_ab_switches(ab)) return make_error("cannot set the megakernel's A/B switches");
    return {};
}

Status MkRuntime::reset_after_abort() {
    hipError_t e = hipMemset(lines_, 0, sizeof(MkDeviceLines));
    std::memset(host_, 0, sizeof(MkHostBlock));
    if (e != hipSuccess) return hip_error("cannot reset the control lines", e);
    return {};
}

Status MkRuntime::run(const std::vector<MkStage>& stages, const RunOptions& opt, LaunchInfo* info) {
    hipError_t e;
    if (stages.size() > stages_cap_) {
        if (stages_dev_) (void)hipFree(stages_dev_);
        stages_cap_ = std::max<size_t>(stages.size(), 64);
        if ((e = hipMalloc(reinterpret_cast<void**>(&stages_dev_), stages_cap_ * sizeof(MkStage))) != hipSuccess)
            return hip_error("cannot allocate the stage table", e);
    }
    if ((e = hipMemcpy(stages_dev_, stages.data(), stages.size() * sizeof(MkStage), hipMemcpyHostToDevice)) != hipSuccess)
        return hip_error("cannot upload the stage table", e);
    MkProgram prog{};
    prog.stages = stages_dev_;
    prog.n_stages = static_cast<int>(stages.size());
    prog.n_levels = stages.empty() ? 0 : stages.back().level + 1;
    if (opt.profile) {
        const int want = static_cast<int>(stages.size()) + prog.n_levels + 4;
        if (want > max_events_) {
            if (events_) (void)hipFree(events_);
            max_events_ = want;
            if ((e = hipMalloc(reinterpret_cast<void**>(&events_), sizeof(MkEvent) * size_t(grid_) * max_events_)) != hipSuccess)
                return hip_error("cannot allocate the profiler ring", e);
        }
        (void)hipMemset(events_, 0xff, sizeof(MkEvent) * size_t(grid_) * max_events_);
        prog.events = events_;
        prog.max_events = max_events_;
    }
    bool phases_armed = false;
    if (opt.profile || phases_on_) {
        phases_on_ = opt.profile;
        phases_armed = mk_phases_arm(opt.profile);
    }
    MkSync sync{lines_, host_dev_, static_cast<unsigned long long>(opt.timeout_s * 1e9)};
    std::memset(host_, 0, sizeof(MkHostBlock));

    hipEvent_t t0, t1;
    (void)hipEventCreate(&t0);
    (void)hipEventCreate(&t1);
    void* args[] = {&prog, &sync};
    (void)hipEventRecord(t0, nullptr);
    if (cooperative_)
        e = hipLaunchCooperativeKernel(megakernel_entry(), dim3(grid_), dim3(block_), args, kMkSmemDynamicBytes, nullptr);
    else
        e = hipLaunchKernel(megakernel_entry(), dim3(grid_), dim3(block_), args, kMkSmemDynamicBytes, nullptr);
    if (e != hipSuccess) return hip_error("megakernel launch failed", e);
    (void)hipEventRecord(t1, nullptr);

    // Host watchdog: a pass that overruns is told to abort; the kernel's bounded waits then end it.
    const auto start = std::chrono::steady_clock::now();
    bool aborted_by_host = false;
    while ((e = hipEventQuery(t1)) == hipErrorNotReady) {
        if (!aborted_by_host && std::chrono::steady_clock::now() - start > std::chrono::duration<double>(opt.watchdog_s)) {
            reinterpret_cast<volatile unsigned*>(&host_->abort.value)[0] = 1u;
            aborted_by_host = true;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    if (e != hipSuccess) return hip_error("the megakernel failed", e);
    float ms = 0;
    (void)hipEventElapsedTime(&ms, t0, t1);
    (void)hipEventDestroy(t0);
    (void)hipEventDestroy(t1);
    if (info) {
        info->grid = grid_;
        info->block = block_;
        info->cooperative = cooperative_;
        info->launches = 1;
        info->ms = ms;
    }
    const MkError err = *const_cast<const MkError*>(&host_->error);
    if (host_->error_claim.value || aborted_by_host) {
        (void)reset_after_abort();
        char buf[256];
        std::snprintf(buf, sizeof buf, "the GPU pass was aborted: %s at stage %d (level %d), %s, workgroup %d, after %.3f s",
                      err.code == kMkTimeout ? "a wait timed out" : err.code == kMkHostAbort ? "the host watchdog fired"
                                                                                             : "an invalid stage",
                      err.stage, err.level, wait_name(err.wait_kind), err.block, err.waited_ns / 1e9);
        return make_error(buf);
    }
    if (opt.profile && info) {
        std::vector<MkEvent> ev(size_t(grid_) * max_events_);
        (void)hipMemcpy(ev.data(), events_, ev.size() * sizeof(MkEvent), hipMemcpyDeviceToHost);
        unsigned long long base = ~0ull;
        for (const auto& x : ev)
            if (x.block >= 0 && x.t0_ns < base) base = x.t0_ns;
        std::map<int, std::pair<double, double>> per;  // stage -> (sum of spans, max span) in us
        auto label = [&](int stage) {
            if (stage < 0) return "wait L" + std::to_string(-stage - 1);
            if (size_t(stage) < opt.stage_names.size()) return std::to_string(stage) + " " + opt.stage_names[size_t(stage)];
            return "stage " + std::to_string(stage);
        };
        std::ofstream trace;
        if (!opt.trace_path.empty()) trace.open(opt.trace_path);
        if (trace) trace << "{\"traceEvents\":[";
        bool first = true;
        for (const auto& x : ev) {
            if (x.block < 0) continue;
            const double us = (x.t1_ns - x.t0_ns) / 1e3;
            auto& p = per[x.stage];
            p.first += us;
            p.second = std::max(p.second, us);
            if (trace) {
                trace << (first ? "" : ",") << "{\"name\":\"" << label(x.stage)
                      << "\",\"ph\":\"X\",\"pid\":0,\"tid\":" << x.block << ",\"ts\":" << (x.t0_ns - base) / 1e3
                      << ",\"dur\":" << us << "}";
                first = false;
            }
        }
        if (trace) trace << "]}\n";
        for (const auto& [stage, v] : per) {
            char row[200];
            std::snprintf(row, sizeof row, "%-40s mean %9.2f us  max %9.2f us", label(stage).c_str(), v.first / grid_,
                          v.second);
            info->profile_rows.push_back(row);
        }
        if (phases_armed) mk_phases_read(info->profile_rows, grid_);
        else info->profile_rows.push_back("phase clocks unavailable (their device counters could not be reset)");
    }
    return {};
}

}  // namespace arbor::gpu
