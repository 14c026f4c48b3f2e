// The bandwidth floor of a decode step: the bytes one token must read, over the device's measured
// copy bandwidth. A decode step at depth D reads
//   - every weight matrix a token passes through once: all dense tensors, the LM head (the token
//     embedding when tied), one row of the token embedding, and for MoE layers only the
//     n_expert_used / n_expert share of each expert tensor (ffn_*_exps);
//   - the K and V cells of every layer for the D cells before it and its own.
// A decode row's 64 steps run at depths D .. D+63, attending to D+1 .. D+64 cells, so a row's
// floor is taken at D + 32.5 cells (the mean). Writes (the new cells, the logits) are not counted.
//
// Bandwidth is counted as copies count it, read + write bytes per second: arbor::gpu_copy_bandwidth
// on the GPU, a multi-threaded host memcpy of 256 MiB on the CPU (median of 5 after a warm-up).
#pragma once

#include <arbor/model.hpp>
#include <arbor/result.hpp>

#include <cstdint>
#include <string>

namespace arbor::cli::bench {

struct DecodeBytes {
    uint64_t weights = 0;      // weight bytes read per token
    uint64_t kv_per_cell = 0;  // K + V bytes per cell, all layers
};

DecodeBytes decode_bytes(const Model& model, int64_t kv_elem_bytes);

// Milliseconds to read one decode row's mean bytes per token at `bytes_per_s`.
double decode_floor_ms(const DecodeBytes& b, int64_t depth, int64_t steps, double bytes_per_s);

struct Bandwidth {
    double bytes_per_s = 0;
    std::string source;  // how it was measured, for the table header and JSON
};

// Host memory: `threads` threads each memcpy a slice of `bytes`.
Result<Bandwidth> host_copy_bandwidth(int threads, uint64_t bytes = uint64_t(256) << 20);
// The GPU of the backend (device 0).
Result<Bandwidth> device_copy_bandwidth();

}  // namespace arbor::cli::bench
