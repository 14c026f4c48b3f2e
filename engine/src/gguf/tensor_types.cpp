// Block geometry of every ggml tensor type Arbor knows, and which of them it can decode.
#include <arbor/tensor_types.hpp>

#include <array>

namespace arbor {
namespace {

constexpr std::array<TensorTypeInfo, 32> kTypes{{
    {TensorType::F32, "F32", 1, 4, true},
    {TensorType::F16, "F16", 1, 2, true},
    {TensorType::Q4_0, "Q4_0", 32, 18, true},
    {TensorType::Q4_1, "Q4_1", 32, 20, true},
    {TensorType::Q5_0, "Q5_0", 32, 22, true},
    {TensorType::Q5_1, "Q5_1", 32, 24, true},
    {TensorType::Q8_0, "Q8_0", 32, 34, true},
    {TensorType::Q8_1, "Q8_1", 32, 36, false},
    {TensorType::Q2_K, "Q2_K", 256, 84, true},
    {TensorType::Q3_K, "Q3_K", 256, 110, true},
    {TensorType::Q4_K, "Q4_K", 256, 144, true},
    {TensorType::Q5_K, "Q5_K", 256, 176, true},
    {TensorType::Q6_K, "Q6_K", 256, 210, true},
    {TensorType::Q8_K, "Q8_K", 256, 292, false},
    {TensorType::IQ2_XXS, "IQ2_XXS", 256, 66, false},
    {TensorType::IQ2_XS, "IQ2_XS", 256, 74, false},
    {TensorType::IQ3_XXS, "IQ3_XXS", 256, 98, false},
    {TensorType::IQ1_S, "IQ1_S", 256, 50, false},
    {TensorType::IQ4_NL, "IQ4_NL", 32, 18, true},
    {TensorType::IQ3_S, "IQ3_S", 256, 110, false},
    {TensorType::IQ2_S, "IQ2_S", 256, 82, false},
    {TensorType::IQ4_XS, "IQ4_XS", 256, 136, true},
    {TensorType::I8, "I8", 1, 1, false},
    {TensorType::I16, "I16", 1, 2, false},
    {TensorType::I32, "I32", 1, 4, false},
    {TensorType::I64, "I64", 1, 8, false},
    {TensorType::F64, "F64", 1, 8, false},
    {TensorType::IQ1_M, "IQ1_M", 256, 56, false},
    {TensorType::BF16, "BF16", 1, 2, true},
    {TensorType::TQ1_0, "TQ1_0", 256, 54, false},
    {TensorType::TQ2_0, "TQ2_0", 256, 66, false},
    {TensorType::MXFP4, "MXFP4", 32, 17, true},
}};

}  // namespace

std::optional<TensorTypeInfo> tensor_type_info(uint32_t type) {
    for (const auto& t : kTypes)
        if (static_cast<uint32_t>(t.type) == type) return t;
    return std::nullopt;
}

std::optional<TensorTypeInfo> tensor_type_by_name(std::string_view name) {
    for (const auto& t : kTypes)
        if (t.name == name) return t;
    return std::nullopt;
}

}  // namespace arbor
