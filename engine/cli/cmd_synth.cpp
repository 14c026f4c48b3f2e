// arbor-cli synth --arch A --shape S [--type T] [--seed N] [--zero-data [--routed]] [--threads N] -o out.gguf
#include "cli.hpp"

#include <arbor/synth.hpp>

namespace arbor::cli {
namespace {

int run_synth(std::vector<std::string> argv) {
    Args args(std::move(argv));
    SynthOptions o;
    auto arch = args.value("--arch");
    auto shape = args.value("--shape");
    auto type = args.value("--type");
    auto seed = args.integer("--seed");
    auto threads = args.integer("--threads");
    o.zero_data = args.flag("--zero-data");
    o.routed = args.flag("--routed");
    auto out = args.value("-o", "--output");
    args.finish();
    if (!arch) throw UsageError("--arch is required");
    if (!out) throw UsageError("-o OUT.gguf is required");
    if (o.routed && !o.zero_data) throw UsageError("--routed goes with --zero-data (without it every tensor is random)");
    o.arch = *arch;
    if (shape) o.shape = *shape;
    if (type) {
        auto t = tensor_type_by_name(*type);
        if (!t) throw UsageError("unknown tensor type '" + *type + "'");
        o.type = t->type;
    }
    if (seed) o.seed = static_cast<uint64_t>(*seed);
    if (threads) o.threads = static_cast<int>(*threads);
    auto sh = synth_shape(o.arch, o.shape);
    if (!sh) throw UsageError(sh.message());
    if (auto s = synthesize_model(o, *out); !s) throw RuntimeFailure(s.message());
    return 0;
}

const Command kSynth("synth", "write a synthetic GGUF model (random weights, BPE tokenizer, ChatML template)",
                     "--arch llama|qwen2|qwen3|qwen3moe|flashnext --shape S [--type T] [--seed N] [--zero-data [--routed]] [--threads N] -o OUT.gguf",
                     run_synth);

}  // namespace
}  // namespace arbor::cli
