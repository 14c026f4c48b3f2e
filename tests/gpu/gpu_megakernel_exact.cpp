// GPU row dots through the megakernel equal the CPU's bit for bit, for every weight format.
// Inputs: every 2-D tensor of the GGUF files in $ARBOR_GPU_MODELS (default
// $ARBOR_SHARED_DATA/quant), dotted with random activations; the CPU runs both its scalar and
// its best ISA; then every half bit pattern through the F16 row dot (all_halves). Prints one
// line per file and a closing "N passed, N failed".
#include "gpu_runtime.hpp"

#include <arbor/gguf.hpp>
#include <arbor/quant.hpp>

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <random>
#include <string>
#include <vector>

using namespace arbor;

namespace {

// Every half bit pattern through the F16 row dot: a 256-row matrix whose row r holds the
// patterns 256r .. 256r + 255 (one sign and exponent range a row, so a row of subnormals sums
// exactly and a flushed or wrong conversion shows), then the row's first 32 again (the chains'
// tail loop), infinities and NaNs replaced by +0, dotted with ones. The GPU converts halves in
// hardware, the CPU in software (quant_blocks.hpp); both must also equal the exact sum, which
// every partial sum here is, computed in double from the bit patterns' definition.
bool all_halves(const gpu::RunOptions& opt) {
    constexpr int64_t rows = 256, n = 256 + 32;
    auto pattern = [](int64_t r, int64_t c) { return uint32_t(r * 256 + c % 256); };
    auto half_value = [](uint32_t h) {  // +0 for the infinities and NaNs (replaced below)
        const int e = int((h >> 10) & 31), m = int(h & 1023);
        const double v = e == 31 ? 0.0 : e == 0 ? std::ldexp(double(m), -24) : std::ldexp(double(1024 + m), e - 25);
        return (h & 0x8000u) ? -v : v;
    };
    std::vector<uint8_t> w(static_cast<size_t>(rows * n * 2));
    std::vector<float> want(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
        double sum = 0.0;
        for (int64_t c = 0; c < n; ++c) {
            const uint32_t h = pattern(r, c), v = (h & 0x7c00u) == 0x7c00u ? 0u : h;
            w[size_t(2 * (r * n + c))] = uint8_t(v & 0xff);
            w[size_t(2 * (r * n + c) + 1)] = uint8_t(v >> 8);
            sum += half_value(v);
        }
        want[size_t(r)] = float(sum);
    }
    std::vector<float> x(static_cast<size_t>(n), 1.0f), cpu(static_cast<size_t>(rows)), scalar(static_cast<size_t>(rows)),
        gpu(static_cast<size_t>(rows));
    quant::dot_rows(TensorType::F16, w.data(), size_t(n * 2), rows, x.data(), nullptr, n, cpu.data());
    quant::dot_rows_isa(quant::Isa::Scalar, TensorType::F16, w.data(), size_t(n * 2), rows, x.data(), nullptr, n,
                        scalar.data());
    gpu::LaunchInfo info;
    if (auto s = gpu::mk_dot_rows(TensorType::F16, w.data(), size_t(n * 2), rows, n, x.data(), nullptr, gpu.data(), opt, &info);
        !s) {
        std::printf("FAIL every half: %s\n", s.message().c_str());
        return false;
    }
    for (int64_t r = 0; r < rows; ++r) {
        const size_t i = size_t(r);
        if (std::memcmp(&cpu[i], &gpu[i], 4) != 0 || std::memcmp(&cpu[i], &scalar[i], 4) != 0 ||
            std::memcmp(&cpu[i], &want[i], 4) != 0) {
            std::printf("FAIL every half, row %" PRId64 " (patterns 0x%04x..): gpu %.9g cpu %.9g scalar %.9g exact %.9g\n", r,
                        unsigned(r * 256), double(gpu[i]), double(cpu[i]), double(scalar[i]), double(want[i]));
            return false;
        }
    }
    if (info.launches != 1) {
        std::printf("FAIL every half: %d launches, not 1\n", int(info.launches));
        return false;
    }
    std::printf("ok   every half: 256 rows of all 65536 patterns equal the exact sums on GPU and CPU\n");
    return true;
}

}  // namespace

int main() {
    std::string dir;
    if (const char* d = std::getenv("ARBOR_GPU_MODELS")) dir = d;
    else if (const char* s = std::getenv("ARBOR_SHARED_DATA")) dir = std::string(s) + "/quant";
    std::vector<std::string> files;
    if (DIR* dp = opendir(dir.c_str())) {
        while (dirent* e = readdir(dp)) {
            std::string n = e->d_name;
            if (n.size() > 5 && n.substr(n.size() - 5) == ".gguf") files.push_back(dir + "/" + n);
        }
        closedir(dp);
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) {
        std::printf("error: no GGUF files in '%s' (set ARBOR_GPU_MODELS)\n", dir.c_str());
        return 1;
    }
    int passed = 0, failed = 0;
    std::mt19937 rng(1234);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    gpu::RunOptions opt;
    (all_halves(opt) ? passed : failed) += 1;
    for (const auto& path : files) {
        auto f = GgufFile::open(path);
        if (!f) {
            std::printf("FAIL %s: %s\n", path.c_str(), f.message().c_str());
            ++failed;
            continue;
        }
        int tensors = 0, bad = 0;
        double ms = 0;
        for (const auto& t : (*f)->tensors()) {
            if (t.n_dims < 2 || !quant::decodable(t.type)) continue;
            const int64_t n = t.ne[0], rows = t.rows();
            std::vector<float> x(n);
            for (auto& v : x) v = nd(rng);
            std::vector<quant::BlockQ8A> xq(n / 32 + 1);
            const bool q = quant::uses_q8a(t.type);
            if (q) quant::quantize_q8a(x.data(), xq.data(), n);
            std::vector<float> cpu(rows), scalar(rows), gpu(rows);
            quant::dot_rows(t.type, t.data, t.row_bytes(), rows, x.data(), q ? xq.data() : nullptr, n, cpu.data());
            quant::dot_rows_isa(quant::Isa::Scalar, t.type, t.data, t.row_bytes(), rows, x.data(), q ? xq.data() : nullptr,
                                n, scalar.data());
            gpu::LaunchInfo info;
            auto s = gpu::mk_dot_rows(t.type, t.data, t.row_bytes(), rows, n, q ? nullptr : x.data(), q ? xq.data() : nullptr,
                                      gpu.data(), opt, &info);
            ++tensors;
            if (!s) {
                std::printf("FAIL %s %s: %s\n", path.c_str(), std::string(t.name).c_str(), s.message().c_str());
                ++bad;
                continue;
            }
            ms += info.ms;
            if (info.launches != 1) ++bad;
            if (std::memcmp(cpu.data(), gpu.data(), rows * 4) != 0 || std::memcmp(cpu.data(), scalar.data(), rows * 4) != 0) {
                for (int64_t r = 0; r < rows; ++r)
                    if (std::memcmp(&cpu[r], &gpu[r], 4) != 0) {
                        std::printf("FAIL %s %s (%s) row %" PRId64 ": cpu %.9g gpu %.9g scalar %.9g\n", path.c_str(),
                                    std::string(t.name).c_str(), std::string(tensor_type_info(uint32_t(t.type))->name).c_str(), r,
                                    cpu[r], gpu[r], scalar[r]);
                        break;
                    }
                ++bad;
            }
        }
        std::printf("%s %s: %d tensors bit-identical GPU vs CPU, %d mismatched, %.3f ms of GPU passes\n", bad ? "FAIL" : "ok  ",
                    path.substr(path.find_last_of('/') + 1).c_str(), tensors - bad, bad, ms);
        (bad ? failed : passed) += 1;
    }
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
