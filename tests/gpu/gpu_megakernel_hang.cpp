// A planted hang (a stage waiting on a counter nothing signals) ends in a clean error that names
// the stage and the wait, within the wait bound; the host watchdog ends an overrunning pass; and
// the process and the GPU stay usable: a satisfied hand-off and a real row dot run afterwards.
#include "gpu_runtime.hpp"

#include <arbor/quant.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

using namespace arbor;

namespace {
int passed = 0, failed = 0;
void check(bool ok, const std::string& what) {
    std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
    (ok ? passed : failed) += 1;
}
double since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

int main() {
    gpu::RunOptions opt;
    opt.timeout_s = 1.0;
    opt.watchdog_s = 30.0;
    gpu::LaunchInfo info;

    auto t0 = std::chrono::steady_clock::now();
    auto s = gpu::mk_planted_hang(opt, &info);
    const double took = since(t0);
    check(!s.ok(), "planted hang is reported as an error");
    if (!s.ok()) {
        std::printf("     reported: %s\n", s.message().c_str());
        check(s.message().find("timed out") != std::string::npos, "the error says a wait timed out");
        check(s.message().find("stage 1") != std::string::npos, "the error names the waiting stage");
        check(s.message().find("dependency counter") != std::string::npos, "the error names the kind of wait");
    }
    check(took < 5.0, "the grid exited within the wait bound (" + std::to_string(took) + " s)");
    check(info.launches == 1, "one launch for the pass");
    std::printf("     grid %d x %d threads, cooperative %d\n", info.grid, info.block, int(info.cooperative));

    // The host watchdog: waits bounded at 20 s, watchdog at 0.5 s.
    opt.timeout_s = 20.0;
    opt.watchdog_s = 0.5;
    t0 = std::chrono::steady_clock::now();
    s = gpu::mk_planted_hang(opt, &info);
    const double took2 = since(t0);
    check(!s.ok() && s.message().find("watchdog") != std::string::npos,
          "the host watchdog aborts an overrunning pass: " + (s.ok() ? std::string("no error") : s.message()));
    check(took2 < 5.0, "the watchdog ended it quickly (" + std::to_string(took2) + " s)");

    // Still usable.
    opt.timeout_s = 1.0;
    opt.watchdog_s = 30.0;
    s = gpu::mk_counter_handoff(opt, &info);
    check(s.ok(), "a satisfied counter hand-off runs after the hangs" + (s.ok() ? std::string() : ": " + s.message()));
    const int64_t n = 256, rows = 64;
    std::vector<float> w(n * rows), x(n), cpu(rows), gpu(rows);
    for (int64_t i = 0; i < n * rows; ++i) w[i] = float((i * 37) % 101) / 101.0f - 0.5f;
    for (int64_t i = 0; i < n; ++i) x[i] = float((i * 13) % 7) - 3.0f;
    quant::dot_rows(TensorType::F32, w.data(), n * 4, rows, x.data(), nullptr, n, cpu.data());
    s = gpu::mk_dot_rows(TensorType::F32, w.data(), n * 4, rows, n, x.data(), nullptr, gpu.data(), opt, &info);
    check(s.ok() && cpu == gpu, "a row-dot pass after the hangs is correct and bit-identical");
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
