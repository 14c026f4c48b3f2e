// arbor-cli gpu [--json] [--bandwidth]
// Which GPU backend this build has and which devices it can use; optionally the measured
// device copy bandwidth (the denominator of the benchmarks' bandwidth floor).
#include "cli.hpp"

#include <arbor/gpu.hpp>
#include <arbor/json.hpp>

#include <cstdio>

namespace arbor::cli {
namespace {

int run_gpu(std::vector<std::string> argv) {
    Args args(std::move(argv));
    const bool as_json = args.flag("--json");
    const bool bandwidth = args.flag("--bandwidth");
    args.finish();
    auto devs = gpu_devices();
    json::Value o = json::Value::object();
    o["backend"] = gpu_backend_name();
    json::Value list = json::Value::array();
    std::string text = "backend: " + gpu_backend_name() + "\n";
    if (!devs) {
        o["devices"] = std::move(list);
        o["reason"] = devs.message();
        if (as_json) write_stdout(json::dump(o) + "\n");
        else write_stdout(text + "no usable GPU: " + devs.message() + "\n");
        return 0;
    }
    for (const auto& d : *devs) {
        json::Value j = json::Value::object();
        j["index"] = d.index;
        j["name"] = d.name;
        j["arch"] = d.arch;
        j["compute_units"] = d.compute_units;
        j["warp_size"] = d.warp_size;
        j["memory_bytes"] = static_cast<unsigned long long>(d.memory_bytes);
        j["integrated"] = d.integrated;
        j["cooperative_launch"] = d.cooperative_launch;
        char line[256];
        std::snprintf(line, sizeof line, "device %d: %s (%s), %d compute units, warp %d, %.1f GiB%s%s\n", d.index,
                      d.name.c_str(), d.arch.c_str(), d.compute_units, d.warp_size, d.memory_bytes / double(1ull << 30),
                      d.integrated ? ", integrated" : "", d.cooperative_launch ? ", cooperative launch" : "");
        text += line;
        if (bandwidth) {
            auto bw = gpu_copy_bandwidth(d.index);
            if (!bw) throw RuntimeFailure(bw.message());
            j["copy_bandwidth_bytes_per_s"] = *bw;
            std::snprintf(line, sizeof line, "  copy bandwidth: %.0f GB/s (read + write)\n", *bw / 1e9);
            text += line;
        }
        list.push_back(std::move(j));
    }
    o["devices"] = std::move(list);
    write_stdout(as_json ? json::dump(o) + "\n" : text);
    return 0;
}

const Command kGpu("gpu", "show the GPU backend and devices this build can use", "[--json] [--bandwidth]", run_gpu);

}  // namespace
}  // namespace arbor::cli
