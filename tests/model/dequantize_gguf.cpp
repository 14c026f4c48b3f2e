// dequantize_gguf IN.gguf OUT.gguf: writes OUT with every tensor of IN decoded to F32 by the
// engine's decoders (for the float64 oracles in tests/oracle, which read only F32/F16/BF16).
#include "dequantized_copy.hpp"

#include <cstdio>

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: dequantize_gguf IN.gguf OUT.gguf\n");
        return 1;
    }
    auto f = arbor::GgufFile::open(argv[1]);
    if (!f) {
        std::fprintf(stderr, "error: %s\n", f.message().c_str());
        return 1;
    }
    if (auto s = arbor::test::write_dequantized(*f.value(), argv[2]); !s) {
        std::fprintf(stderr, "error: %s\n", s.message().c_str());
        return 2;
    }
    return 0;
}
