// The shapes `arbor-cli synth` knows: tiny ones for tests and the real shapes benchmarks use.
#include <arbor/synth.hpp>

namespace arbor {

std::vector<std::string> synth_architectures() { return {"llama", "qwen2", "qwen3", "qwen3moe", "flashnext"}; }

std::vector<SynthShape> synth_shapes(const std::string& arch) {
    std::vector<SynthShape> v;
    auto dense = [&](SynthShape s) { v.push_back(s); };
    if (arch == "llama") {
        dense({"tiny", 256, 2, 4, 2, 64, 512, 1024, 2048, 0, 0, 0, false, 10000.f, 1e-5f});
        dense({"llama-1b", 2048, 16, 32, 8, 64, 8192, 128256, 131072, 0, 0, 0, true, 500000.f, 1e-5f});
    } else if (arch == "qwen2") {
        dense({"tiny", 256, 2, 4, 2, 64, 512, 1024, 4096, 0, 0, 0, false, 1e6f, 1e-6f});
        dense({"qwen2-0.5b", 896, 24, 14, 2, 64, 4864, 151936, 32768, 0, 0, 0, true, 1e6f, 1e-6f});
    } else if (arch == "qwen3") {
        dense({"tiny", 256, 2, 4, 2, 64, 512, 1024, 4096, 0, 0, 0, false, 1e6f, 1e-6f});
        // tiny with the real models' head dim of 128: the GPU attention's paths for 128-dim heads.
        dense({"tiny-hd128", 256, 2, 4, 2, 128, 512, 1024, 4096, 0, 0, 0, false, 1e6f, 1e-6f});
        dense({"qwen3-0.6b", 1024, 28, 16, 8, 128, 3072, 151936, 40960, 0, 0, 0, true, 1e6f, 1e-6f});
        dense({"qwen3-4b", 2560, 36, 32, 8, 128, 9728, 151936, 40960, 0, 0, 0, true, 1e6f, 1e-6f});
    } else if (arch == "qwen3moe") {
        dense({"tiny", 256, 2, 4, 2, 64, 512, 1024, 4096, 8, 2, 256, false, 1e6f, 1e-6f});
        // tiny with three experts a token: an odd slot count, for every per-slot loop's tail.
        dense({"tiny-k3", 256, 2, 4, 2, 64, 512, 1024, 4096, 8, 3, 256, false, 1e6f, 1e-6f});
        dense({"qwen3moe-30b-a3b", 2048, 48, 32, 4, 128, 6144, 151936, 40960, 128, 8, 768, false, 1e6f, 1e-6f});
    } else if (arch == "flashnext") {
        // docs/MODEL-flashnext.md: tiny selects from position 67 on (budget 64).
        dense({"tiny", 256, 2, 4, 2, 64, 0, 1024, 4096, 8, 2, 256, false, 1e6f, 1e-6f, 256, 4, 64, 64});
        dense({"30b-a3b", 2048, 48, 32, 4, 128, 0, 151936, 40960, 128, 8, 768, false, 1e6f, 1e-6f, 768, 16, 128, 2048});
        // tiny with a budget of one block: from position 7 on a token attends one selected block and
        // its own, so past the first page a token whose block is in the second page attends nothing
        // in the first 256-cell chunk (sparse attention's skipped chunk, for the GPU exactness suite).
        dense({"tiny-k4", 256, 2, 4, 2, 64, 0, 1024, 4096, 8, 2, 256, false, 1e6f, 1e-6f, 256, 4, 64, 4});
    }
    return v;
}

Result<SynthShape> synth_shape(const std::string& arch, const std::string& shape) {
    const auto all = synth_shapes(arch);
    if (all.empty()) return make_error("synth: unknown architecture '" + arch + "' (known: llama, qwen2, qwen3, qwen3moe, flashnext)");
    std::string names;
    for (const auto& s : all) {
        if (s.name == shape) return s;
        names += (names.empty() ? "" : ", ") + s.name;
    }
    return make_error("synth: architecture " + arch + " has no shape '" + shape + "' (known: " + names + ")");
}

}  // namespace arbor
