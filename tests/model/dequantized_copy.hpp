// A GGUF copy with every tensor decoded to F32 by the engine's own decoders (quant.hpp) and the
// architecture's scalar metadata: what the float64 oracles run on for a quantized model.
#pragma once

#include <arbor/gguf.hpp>
#include <arbor/quant.hpp>

#include <cstring>
#include <string>
#include <vector>

namespace arbor::test {

inline Status write_dequantized(const GgufFile& src, const std::string& out) {
    GgufWriter w;
    const std::string arch = src.architecture();
    w.set("general.architecture", GgufWriteValue::string(arch));
    for (const auto& [key, v] : src.metadata()) {
        if (key.substr(0, arch.size() + 1) != arch + ".") continue;
        switch (v.type) {
        case GgufValueType::F32:
        case GgufValueType::F64: w.set(std::string(key), GgufWriteValue::f32(float(v.f))); break;
        case GgufValueType::BOOL: w.set(std::string(key), GgufWriteValue::boolean(v.u != 0)); break;
        case GgufValueType::STRING: w.set(std::string(key), GgufWriteValue::string(std::string(v.str))); break;
        case GgufValueType::ARRAY: break;
        default: w.set(std::string(key), GgufWriteValue::u64(uint64_t(v.i))); break;
        }
    }
    for (const GgufTensor& t : src.tensors()) {
        std::vector<float> f(static_cast<size_t>(t.n_elements()));
        if (auto s = quant::dequantize(t.type, t.data, f.data(), t.n_elements()); !s)
            return make_error("tensor '" + std::string(t.name) + "': " + s.message());
        std::vector<uint8_t> bytes(f.size() * 4);
        std::memcpy(bytes.data(), f.data(), bytes.size());
        std::vector<int64_t> shape(t.ne, t.ne + t.n_dims);
        if (auto s = w.add_tensor(std::string(t.name), shape, TensorType::F32, std::move(bytes)); !s) return s;
    }
    return w.write(out);
}

}  // namespace arbor::test
