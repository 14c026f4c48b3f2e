// Maps a TensorType to its block-format struct from quant_blocks.hpp at compile time.
#pragma once

#include "quant_blocks.hpp"

#include <arbor/tensor_types.hpp>

namespace arbor::quant {

// Calls f(Fmt{}) with the block format of a quantized type; returns false (and calls nothing)
// for float types and types Arbor does not decode.
template <class F>
bool visit_block_format(TensorType t, F&& f) {
    switch (t) {
        case TensorType::Q4_0: f(blocks::Q4_0{}); return true;
        case TensorType::Q4_1: f(blocks::Q4_1{}); return true;
        case TensorType::Q5_0: f(blocks::Q5_0{}); return true;
        case TensorType::Q5_1: f(blocks::Q5_1{}); return true;
        case TensorType::Q8_0: f(blocks::Q8_0{}); return true;
        case TensorType::Q2_K: f(blocks::Q2_K{}); return true;
        case TensorType::Q3_K: f(blocks::Q3_K{}); return true;
        case TensorType::Q4_K: f(blocks::Q4_K{}); return true;
        case TensorType::Q5_K: f(blocks::Q5_K{}); return true;
        case TensorType::Q6_K: f(blocks::Q6_K{}); return true;
        case TensorType::IQ4_NL: f(blocks::IQ4_NL{}); return true;
        case TensorType::IQ4_XS: f(blocks::IQ4_XS{}); return true;
        case TensorType::MXFP4: f(blocks::MXFP4{}); return true;
        default: return false;
    }
}

inline bool is_float_type(TensorType t) {
    return t == TensorType::F32 || t == TensorType::F16 || t == TensorType::BF16;
}

}  // namespace arbor::quant
