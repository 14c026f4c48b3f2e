// Bytes per decoded token and the copy bandwidth that turns them into a time floor
// (see bench_floor.hpp).
#include "bench_floor.hpp"

#include <arbor/gpu.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <new>
#include <string_view>
#include <thread>
#include <vector>

namespace arbor::cli::bench {

DecodeBytes decode_bytes(const Model& model, int64_t kv_elem_bytes) {
    const ModelConfig& c = model.config();
    DecodeBytes b;
    for (const GgufTensor& t : model.gguf().tensors()) {
        const std::string_view name = t.name;
        if (name == "token_embd.weight") {
            b.weights += t.row_bytes();                 // the embedding lookup reads one row
            if (c.tied_embeddings) b.weights += t.nbytes;  // the LM head reads it all
        } else if (c.is_moe() && name.find("_exps.") != std::string_view::npos && c.n_expert > 0) {
            b.weights += t.nbytes / uint64_t(c.n_expert) * uint64_t(c.n_expert_used);
        } else {
            b.weights += t.nbytes;
        }
    }
    b.kv_per_cell = uint64_t(model.kv_bytes_per_cell(kv_elem_bytes));
    return b;
}

double decode_floor_ms(const DecodeBytes& b, int64_t depth, int64_t steps, double bytes_per_s) {
    if (bytes_per_s <= 0) return 0;
    const double cells = double(depth) + double(steps + 1) / 2.0;
    return (double(b.weights) + double(b.kv_per_cell) * cells) / bytes_per_s * 1000.0;
}

Result<Bandwidth> host_copy_bandwidth(int threads, uint64_t bytes) {
    threads = std::max(threads, 1);
    std::unique_ptr<uint8_t[]> src(new (std::nothrow) uint8_t[bytes]);
    std::unique_ptr<uint8_t[]> dst(new (std::nothrow) uint8_t[bytes]);
    if (!src || !dst) return make_error("host bandwidth: cannot allocate 2 x " + std::to_string(bytes >> 20) + " MiB");
    std::memset(src.get(), 1, bytes);  // touch every page before timing
    std::memset(dst.get(), 0, bytes);
    const uint64_t slice = (bytes / uint64_t(threads) + 63) / 64 * 64;
    auto copy_once = [&] {
        std::vector<std::thread> pool;
        for (int i = 1; i < threads; ++i) {
            const uint64_t at = std::min(bytes, slice * uint64_t(i)), n = std::min(bytes - at, slice);
            pool.emplace_back([&, at, n] { std::memcpy(dst.get() + at, src.get() + at, n); });
        }
        std::memcpy(dst.get(), src.get(), std::min(bytes, slice));
        for (auto& t : pool) t.join();
    };
    copy_once();
    std::vector<double> secs;
    for (int rep = 0; rep < 5; ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
        copy_once();
        secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(secs.begin(), secs.end());
    Bandwidth bw;
    bw.bytes_per_s = 2.0 * double(bytes) / secs[secs.size() / 2];
    bw.source = "host memcpy of " + std::to_string(bytes >> 20) + " MiB, " + std::to_string(threads) + " thread" +
                (threads == 1 ? "" : "s") + ", read + write counted";
    return bw;
}

Result<Bandwidth> device_copy_bandwidth() {
    auto devs = gpu_devices();
    if (!devs) return devs.error();
    if (devs->empty()) return make_error("no GPU device to measure");
    auto bw = gpu_copy_bandwidth(devs->front().index);
    if (!bw) return bw.error();
    return Bandwidth{*bw, "device copy on GPU " + std::to_string(devs->front().index) + " (" + devs->front().name +
                              "), read + write counted"};
}

}  // namespace arbor::cli::bench
