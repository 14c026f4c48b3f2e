// The tensor element types a GGUF file can hold (ggml's numbering), with their block
// geometry. Knowing a type's geometry is enough to validate and skip a tensor; decoding it is
// quant.hpp's job, and only some types decode.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace arbor {

enum class TensorType : uint32_t {
    F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
    Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15,
    IQ2_XXS = 16, IQ2_XS = 17, IQ3_XXS = 18, IQ1_S = 19, IQ4_NL = 20, IQ3_S = 21, IQ2_S = 22,
    IQ4_XS = 23, I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28, IQ1_M = 29, BF16 = 30,
    TQ1_0 = 34, TQ2_0 = 35, MXFP4 = 39,
};

struct TensorTypeInfo {
    TensorType type;
    std::string_view name;  // "Q4_K", as llama.cpp spells it
    uint32_t block_size;    // elements per block
    uint32_t type_size;     // bytes per block
    bool decodable;         // Arbor can dequantize it and take row dots against it
};

// nullopt for a type number this build does not know.
std::optional<TensorTypeInfo> tensor_type_info(uint32_t type);
std::optional<TensorTypeInfo> tensor_type_by_name(std::string_view name);  // case-sensitive

}  // namespace arbor
