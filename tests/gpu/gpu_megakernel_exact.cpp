// GPU row dots through the megakernel equal the CPU's bit for bit, for every weight format.
// Inputs: every 2-D tensor of the GGUF files in $ARBOR_GPU_MODELS (default
// $ARBOR_SHARED_DATA/quant), dotted with random activations; the CPU runs both its scalar and
// its best ISA; then every half bit pattern through the F16 row dot (all_halves). Prints one
// line per file and a closing "N passed, N failed".
#include "gpu_runtime.hpp"

#include <arbor/gguf.hpp>
#include <arbor/quant.hpp>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <random>
#include <string>
#include <vector>

using namespace arbor;

namespace {

// Every half bit pattern through the F16 row dot: a 256 x 256 matrix whose row r holds the
// patterns 256r .. 256r + 255 (one sign and exponent range a row, so a row of subnormals sums
// exactly and a flushed or wrong conversion shows), infinities and NaNs replaced by +0, dotted
// with ones. The GPU converts halves in hardware and the CPU in software (quant_blocks.hpp).
bool all_halves(const gpu::RunOptions& opt) {
    constexpr int64_t n = 256, rows = 256;
    std::vector<uint8_t> w(size_t(n * rows * 2));
    for (uint32_t h = 0; h < 65536; ++h) {
        const uint32_t v = (h & 0x7c00u) == 0x7c00u ? 0u : h;
        w[2 * h] = uint8_t(v & 0xff);
        w[2 * h + 1] = uint8_t(v >> 8);
    }
    std::vector<float> x(static_cast<size_t>(n), 1.0f), cpu(static_cast<size_t>(rows)), gpu(static_cast<size_t>(rows));
    quant::dot_rows(TensorType::F16, w.data(), size_t(n * 2), rows, x.data(), nullptr, n, cpu.data());
    gpu::LaunchInfo info;
    if (auto s = gpu::mk_dot_rows(TensorType::F16, w.data(), size_t(n * 2), rows, n, x.data(), nullptr, gpu.data(), opt, &info);
        !s) {
        std::printf("FAIL every half: %s\n", s.message().c_str());
        return false;
    }
    for (int64_t r = 0; r < rows; ++r)
        if (std::memcmp(&cpu[size_t(r)], &gpu[size_t(r)], 4) != 0) {
            std::printf("FAIL every half, row %" PRId64 " (patterns 0x%04x..): cpu %.9g gpu %.9g\n", r, unsigned(r * 256),
                        double(cpu[size_t(r)]), double(gpu[size_t(r)]));
            return false;
        }
    std::printf("ok   every half: 256 rows of all 65536 patterns bit-identical GPU vs CPU\n");
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
    (all_halves(opt) ? passed : failed) += 1;
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
