// quant_bench: single-core throughput of the quantized row dot (weight bytes streamed through
// dot_rows, rows of 4096) and of dequantize, scalar vs AVX2.
//
//   quant_bench [--mb N] [--seconds S] [--types Q4_K,Q6_K,...] [--dot-only]
//
// The weight buffer (default 64 MiB, larger than L2) is read end to end per pass; passes repeat
// for S seconds (default 1) and the fastest pass counts. GB/s = weight bytes / second of that
// pass (1 GB = 1e9 bytes).
#include <arbor/quant.hpp>
#include <arbor/tensor_types.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using arbor::TensorType;
using arbor::quant::BlockQ8A;
using arbor::quant::Isa;
namespace quant = arbor::quant;

namespace {

constexpr int64_t kRowLen = 4096;

struct Options {
    double mb = 64;
    double seconds = 1.0;
    bool dot_only = false;  // skip the scalar dot and dequantize (quick AVX2 iterations)
    std::vector<TensorType> types{TensorType::Q4_K, TensorType::Q6_K, TensorType::Q8_0, TensorType::IQ4_XS};
};

// Weights: a 64-row tile quantized from Gaussian floats, repeated to fill the buffer.
std::vector<uint8_t> make_weights(TensorType t, int64_t rows, std::mt19937& rng) {
    const size_t row_bytes = *quant::row_bytes(t, kRowLen);
    const int64_t tile_rows = 64;
    std::normal_distribution<float> g(0.0f, 0.02f);
    std::vector<float> src(size_t(tile_rows * kRowLen));
    for (float& v : src) v = g(rng);
    std::vector<uint8_t> tile(row_bytes * tile_rows);
    if (!quant::quantize(t, src.data(), tile.data(), tile_rows * kRowLen).ok()) {
        // Types without a quantizer: random bytes with every 16-bit word a moderate half.
        for (size_t i = 0; i < tile.size(); i += 2) {
            const uint16_t h = uint16_t(0x2000 | (rng() & 0x83ff));
            memcpy(&tile[i], &h, 2);
        }
        // MXFP4's scale is one exponent byte per 17-byte block: keep it near 2^-6 so that no
        // product is subnormal (subnormals would time the CPU's microcode, not the kernel).
        if (t == TensorType::MXFP4)
            for (size_t i = 0; i < tile.size(); i += 17) tile[i] = uint8_t(118 + rng() % 8);
    }
    std::vector<uint8_t> w(row_bytes * size_t(rows));
    for (int64_t r = 0; r < rows; r += tile_rows)
        memcpy(&w[row_bytes * size_t(r)], tile.data(), row_bytes * size_t(std::min(tile_rows, rows - r)));
    return w;
}

// Best pass over at least min_seconds of passes: the machine is shared, and interference only
// ever slows a pass down, so the fastest pass is the most repeatable number.
template <class F>
double gb_per_s(size_t bytes_per_pass, double min_seconds, F&& pass) {
    using clock = std::chrono::steady_clock;
    pass();  // warm-up
    double best = 1e30, total = 0;
    int passes = 0;
    while (total < min_seconds || passes < 3) {
        const auto start = clock::now();
        pass();
        const double t = std::chrono::duration<double>(clock::now() - start).count();
        best = std::min(best, t);
        total += t;
        ++passes;
    }
    return double(bytes_per_pass) / best / 1e9;
}

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--mb" && i + 1 < argc)
            o.mb = std::atof(argv[++i]);
        else if (a == "--seconds" && i + 1 < argc)
            o.seconds = std::atof(argv[++i]);
        else if (a == "--dot-only")
            o.dot_only = true;
        else if (a == "--types" && i + 1 < argc) {
            o.types.clear();
            std::string list = argv[++i];
            size_t pos = 0;
            while (pos <= list.size()) {
                const size_t comma = std::min(list.find(',', pos), list.size());
                if (auto info = arbor::tensor_type_by_name(list.substr(pos, comma - pos)))
                    o.types.push_back(info->type);
                pos = comma + 1;
            }
        } else {
            const bool help = a == "--help" || a == "-h";
            std::fprintf(help ? stdout : stderr,
                         "usage: quant_bench [--mb N] [--seconds S] [--types Q4_K,Q6_K,...] [--dot-only]\n");
            std::exit(help ? 0 : 1);
        }
    }
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    const Options opt = parse(argc, argv);
    std::mt19937 rng(1);
    std::normal_distribution<float> g(0.0f, 1.0f);
    std::vector<float> x(kRowLen);
    for (float& v : x) v = g(rng);
    std::vector<BlockQ8A> xq(kRowLen / 32);
    quant::quantize_q8a(x.data(), xq.data(), kRowLen);

    std::printf("quant_bench: one core, rows of %lld, %.0f MiB of weights per pass, best ISA %s\n",
                static_cast<long long>(kRowLen), opt.mb, quant::isa_name(quant::best_isa()));
    std::printf("%-8s %10s %12s %12s %8s %14s\n", "type", "bytes/row", "dot scalar", "dot avx2", "speedup",
                "dequant GB/s");
    for (TensorType t : opt.types) {
        const auto info = arbor::tensor_type_info(static_cast<uint32_t>(t));
        const size_t row_bytes = *quant::row_bytes(t, kRowLen);
        const int64_t rows = std::max<int64_t>(64, int64_t(opt.mb * 1048576.0 / double(row_bytes)));
        const auto w = make_weights(t, rows, rng);
        std::vector<float> out(static_cast<size_t>(rows));
        double dot[2] = {0, 0};
        for (Isa isa : {Isa::Scalar, Isa::Avx2}) {
            if (!quant::isa_supported(isa) || (opt.dot_only && isa == Isa::Scalar)) continue;
            dot[isa == Isa::Avx2] = gb_per_s(w.size(), isa == Isa::Scalar ? opt.seconds / 2 : opt.seconds, [&] {
                quant::dot_rows_isa(isa, t, w.data(), row_bytes, rows, x.data(), xq.data(), kRowLen, out.data());
            });
        }
        std::vector<float> row(kRowLen);
        volatile float sink = 0;
        const double deq = opt.dot_only ? 0.0 : gb_per_s(w.size(), opt.seconds, [&] {
            for (int64_t r = 0; r < rows; ++r) {
                (void)quant::dequantize(t, w.data() + size_t(r) * row_bytes, row.data(), kRowLen);
                sink = sink + row[0];
            }
        });
        std::printf("%-8.*s %10zu %9.2f GB/s %7.2f GB/s %7.1fx %14.2f\n", int(info->name.size()), info->name.data(),
                    row_bytes, dot[0], dot[1], dot[0] > 0 ? dot[1] / dot[0] : 0.0, deq);
        (void)out;
    }
    return 0;
}
