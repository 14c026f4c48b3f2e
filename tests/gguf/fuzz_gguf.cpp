// libFuzzer entry: any byte string must give a parsed file or a clean error, never a crash,
// a hang or an allocation beyond what the input can justify (-malloc_limit_mb).
#include <arbor/gguf.hpp>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto f = arbor::GgufFile::parse(std::span<const uint8_t>(data, size), "fuzz");
    if (f) {
        // Touch what a caller would touch: metadata and tensor bounds.
        volatile uint64_t sink = 0;
        for (const auto& [k, v] : (*f)->metadata()) sink = sink + k.size() + v.length;
        for (const auto& t : (*f)->tensors())
            if (t.nbytes) sink = sink + t.data[0] + t.data[t.nbytes - 1];
    }
    return 0;
}
