// Decoding to float32, bit-exact with ggml's reference decoder (see arbor/quant.hpp), and the
// type facts the public API answers (decodable, uses_q8a, row_bytes).
#include "format_dispatch.hpp"

#include <arbor/quant.hpp>

#include <cstring>
#include <string>

namespace arbor::quant {
namespace {

std::string type_label(TensorType t) {
    if (auto info = tensor_type_info(static_cast<uint32_t>(t))) return std::string(info->name);
    return "type " + std::to_string(static_cast<uint32_t>(t));
}

template <class Fmt>
void decode_blocks(const uint8_t* src, float* dst, int64_t n) {
    for (int64_t blk = 0; blk < n / Fmt::kElems; ++blk)
        for (int sb = 0; sb < Fmt::kSubs; ++sb)
            Fmt::decode(src + blk * Fmt::kBytes, sb, dst + blk * Fmt::kElems + 32 * sb);
}

}  // namespace

bool decodable(TensorType t) {
    return is_float_type(t) || visit_block_format(t, [](auto) {});
}

bool uses_q8a(TensorType t) { return !is_float_type(t) && decodable(t); }

Result<size_t> row_bytes(TensorType t, int64_t n) {
    auto info = tensor_type_info(static_cast<uint32_t>(t));
    if (!info) return make_error("row_bytes: unknown tensor " + type_label(t));
    if (n < 0 || n % info->block_size != 0)
        return make_error("row_bytes: a " + std::string(info->name) + " row needs a multiple of " +
                          std::to_string(info->block_size) + " elements, got " + std::to_string(n));
    return size_t(n / info->block_size) * info->type_size;
}

Status dequantize(TensorType t, const void* src, float* dst, int64_t n) {
    if (!decodable(t)) return make_error("dequantize: tensor type " + type_label(t) + " cannot be decoded");
    auto bytes = row_bytes(t, n);
    if (!bytes) return make_error("dequantize: " + bytes.message());
    const auto* s = static_cast<const uint8_t*>(src);
    switch (t) {
        case TensorType::F32: memcpy(dst, s, size_t(n) * 4); return {};
        case TensorType::F16:
            for (int64_t i = 0; i < n; ++i) dst[i] = blocks::fp16_to_f32(blocks::ld16(s + 2 * i));
            return {};
        case TensorType::BF16:
            for (int64_t i = 0; i < n; ++i) dst[i] = blocks::bf16_to_f32(blocks::ld16(s + 2 * i));
            return {};
        default: break;
    }
    visit_block_format(t, [&](auto fmt) { decode_blocks<decltype(fmt)>(s, dst, n); });
    return {};
}

}  // namespace arbor::quant
