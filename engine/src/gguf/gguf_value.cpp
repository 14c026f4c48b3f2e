// GgufValue helpers: type names and widened element access.
#include <arbor/gguf.hpp>

#include <cstring>

namespace arbor {

std::string_view gguf_value_type_name(GgufValueType t) {
    switch (t) {
        case GgufValueType::U8: return "u8";
        case GgufValueType::I8: return "i8";
        case GgufValueType::U16: return "u16";
        case GgufValueType::I16: return "i16";
        case GgufValueType::U32: return "u32";
        case GgufValueType::I32: return "i32";
        case GgufValueType::F32: return "f32";
        case GgufValueType::BOOL: return "bool";
        case GgufValueType::STRING: return "string";
        case GgufValueType::ARRAY: return "array";
        case GgufValueType::U64: return "u64";
        case GgufValueType::I64: return "i64";
        case GgufValueType::F64: return "f64";
    }
    return "unknown";
}

namespace {
bool integer_type(GgufValueType t) {
    switch (t) {
        case GgufValueType::U8: case GgufValueType::I8: case GgufValueType::U16: case GgufValueType::I16:
        case GgufValueType::U32: case GgufValueType::I32: case GgufValueType::U64: case GgufValueType::I64:
            return true;
        default:
            return false;
    }
}
}  // namespace

bool GgufValue::is_integer() const { return integer_type(type); }
bool GgufValue::is_float() const { return type == GgufValueType::F32 || type == GgufValueType::F64; }

int64_t GgufValue::int_at(uint64_t k) const {
    const uint8_t* p = data;
    switch (elem_type) {
        case GgufValueType::U8: case GgufValueType::BOOL: return p[k];
        case GgufValueType::I8: { int8_t x; std::memcpy(&x, p + k, 1); return x; }
        case GgufValueType::U16: { uint16_t x; std::memcpy(&x, p + 2 * k, 2); return x; }
        case GgufValueType::I16: { int16_t x; std::memcpy(&x, p + 2 * k, 2); return x; }
        case GgufValueType::U32: { uint32_t x; std::memcpy(&x, p + 4 * k, 4); return x; }
        case GgufValueType::I32: { int32_t x; std::memcpy(&x, p + 4 * k, 4); return x; }
        case GgufValueType::U64: { uint64_t x; std::memcpy(&x, p + 8 * k, 8); return static_cast<int64_t>(x); }
        case GgufValueType::I64: { int64_t x; std::memcpy(&x, p + 8 * k, 8); return x; }
        case GgufValueType::F32: { float x; std::memcpy(&x, p + 4 * k, 4); return static_cast<int64_t>(x); }
        case GgufValueType::F64: { double x; std::memcpy(&x, p + 8 * k, 8); return static_cast<int64_t>(x); }
        default: return 0;
    }
}

double GgufValue::float_at(uint64_t k) const {
    switch (elem_type) {
        case GgufValueType::F32: { float x; std::memcpy(&x, data + 4 * k, 4); return x; }
        case GgufValueType::F64: { double x; std::memcpy(&x, data + 8 * k, 8); return x; }
        default: return static_cast<double>(int_at(k));
    }
}

uint64_t GgufTensor::row_bytes() const {
    auto info = tensor_type_info(static_cast<uint32_t>(type));
    return info ? static_cast<uint64_t>(ne[0]) / info->block_size * info->type_size : 0;
}

}  // namespace arbor
