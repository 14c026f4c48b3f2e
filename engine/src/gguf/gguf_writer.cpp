// GgufWriter: metadata plus already-encoded tensors to a valid GGUF v3 file, atomically.
#include <arbor/gguf.hpp>

#include "core/atomic_file.hpp"

#include <cstring>

namespace arbor {
namespace {

template <class T>
std::vector<uint8_t> bytes_of(T v) {
    std::vector<uint8_t> b(sizeof(T));
    std::memcpy(b.data(), &v, sizeof(T));
    return b;
}

template <class T>
void put(std::vector<uint8_t>& out, T v) {
    const size_t at = out.size();
    out.resize(at + sizeof(T));
    std::memcpy(out.data() + at, &v, sizeof(T));
}

void put_string(std::vector<uint8_t>& out, const std::string& s) {
    put<uint64_t>(out, s.size());
    out.insert(out.end(), s.begin(), s.end());
}

}  // namespace

GgufWriteValue GgufWriteValue::u32(uint32_t v) { GgufWriteValue w; w.type = GgufValueType::U32; w.scalar_bytes = bytes_of(v); return w; }
GgufWriteValue GgufWriteValue::i32(int32_t v) { GgufWriteValue w; w.type = GgufValueType::I32; w.scalar_bytes = bytes_of(v); return w; }
GgufWriteValue GgufWriteValue::u64(uint64_t v) { GgufWriteValue w; w.type = GgufValueType::U64; w.scalar_bytes = bytes_of(v); return w; }
GgufWriteValue GgufWriteValue::f32(float v) { GgufWriteValue w; w.type = GgufValueType::F32; w.scalar_bytes = bytes_of(v); return w; }
GgufWriteValue GgufWriteValue::boolean(bool v) { GgufWriteValue w; w.type = GgufValueType::BOOL; w.scalar_bytes = {static_cast<uint8_t>(v)}; return w; }
GgufWriteValue GgufWriteValue::string(std::string v) { GgufWriteValue w; w.type = GgufValueType::STRING; w.strings = {std::move(v)}; return w; }

GgufWriteValue GgufWriteValue::string_array(std::vector<std::string> v) {
    GgufWriteValue w;
    w.type = GgufValueType::ARRAY;
    w.elem_type = GgufValueType::STRING;
    w.length = v.size();
    w.strings = std::move(v);
    return w;
}

GgufWriteValue GgufWriteValue::i32_array(const std::vector<int32_t>& v) {
    GgufWriteValue w;
    w.type = GgufValueType::ARRAY;
    w.elem_type = GgufValueType::I32;
    w.length = v.size();
    w.scalar_bytes.resize(v.size() * 4);
    if (!v.empty()) std::memcpy(w.scalar_bytes.data(), v.data(), v.size() * 4);
    return w;
}

GgufWriteValue GgufWriteValue::f32_array(const std::vector<float>& v) {
    GgufWriteValue w;
    w.type = GgufValueType::ARRAY;
    w.elem_type = GgufValueType::F32;
    w.length = v.size();
    w.scalar_bytes.resize(v.size() * 4);
    if (!v.empty()) std::memcpy(w.scalar_bytes.data(), v.data(), v.size() * 4);
    return w;
}

void GgufWriter::set(std::string key, GgufWriteValue v) {
    for (auto& kv : kv_)
        if (kv.first == key) {
            kv.second = std::move(v);
            return;
        }
    kv_.emplace_back(std::move(key), std::move(v));
}

Status GgufWriter::add_tensor(std::string name, std::vector<int64_t> shape, TensorType type, std::vector<uint8_t> data) {
    auto info = tensor_type_info(static_cast<uint32_t>(type));
    if (!info) return make_error("tensor '" + name + "': unknown type");
    if (shape.empty() || shape.size() > 4) return make_error("tensor '" + name + "': 1 to 4 dimensions required");
    for (const auto& t : tensors_)
        if (t.name == name) return make_error("tensor '" + name + "' added twice");
    if (shape[0] % info->block_size) return make_error("tensor '" + name + "': row length is not a multiple of the block size");
    uint64_t nbytes = static_cast<uint64_t>(shape[0]) / info->block_size * info->type_size;
    for (size_t d = 1; d < shape.size(); ++d) nbytes *= static_cast<uint64_t>(shape[d]);
    if (!data.empty() && data.size() != nbytes)
        return make_error("tensor '" + name + "': " + std::to_string(data.size()) + " data bytes given, " +
                          std::to_string(nbytes) + " expected");
    tensors_.push_back({std::move(name), std::move(shape), type, std::move(data), nbytes, {}});
    return {};
}

Status GgufWriter::add_tensor_generated(std::string name, std::vector<int64_t> shape, TensorType type, TensorFill fill) {
    if (auto s = add_tensor(std::move(name), std::move(shape), type, {}); !s) return s;
    tensors_.back().fill = std::move(fill);
    return {};
}

Status GgufWriter::write(const std::string& path, bool zero_data) const {
    std::vector<uint8_t> h;
    h.insert(h.end(), {'G', 'G', 'U', 'F'});
    put<uint32_t>(h, 3);
    put<uint64_t>(h, tensors_.size());
    const bool has_align = [&] {
        for (const auto& kv : kv_)
            if (kv.first == "general.alignment") return true;
        return false;
    }();
    put<uint64_t>(h, kv_.size() + (has_align || alignment_ == 32 ? 0 : 1));
    auto put_value = [&](const GgufWriteValue& v) {
        put<uint32_t>(h, static_cast<uint32_t>(v.type));
        if (v.type == GgufValueType::STRING) {
            put_string(h, v.strings.empty() ? std::string() : v.strings[0]);
        } else if (v.type == GgufValueType::ARRAY) {
            put<uint32_t>(h, static_cast<uint32_t>(v.elem_type));
            put<uint64_t>(h, v.length);
            if (v.elem_type == GgufValueType::STRING)
                for (const auto& s : v.strings) put_string(h, s);
            else
                h.insert(h.end(), v.scalar_bytes.begin(), v.scalar_bytes.end());
        } else {
            h.insert(h.end(), v.scalar_bytes.begin(), v.scalar_bytes.end());
        }
    };
    for (const auto& [k, v] : kv_) {
        put_string(h, k);
        put_value(v);
    }
    if (!has_align && alignment_ != 32) {
        put_string(h, "general.alignment");
        put_value(GgufWriteValue::u32(alignment_));
    }
    uint64_t offset = 0;
    std::vector<uint64_t> offsets;
    for (const auto& t : tensors_) {
        put_string(h, t.name);
        put<uint32_t>(h, static_cast<uint32_t>(t.shape.size()));
        for (int64_t d : t.shape) put<uint64_t>(h, static_cast<uint64_t>(d));
        put<uint32_t>(h, static_cast<uint32_t>(t.type));
        put<uint64_t>(h, offset);
        offsets.push_back(offset);
        offset += t.nbytes;
        offset = (offset + alignment_ - 1) / alignment_ * alignment_;
    }
    while (h.size() % alignment_) h.push_back(0);
    auto f = AtomicFile::create(path);
    if (!f) return f.error();
    if (auto s = f->write(h.data(), h.size()); !s) return s;
    const uint64_t data_start = h.size();
    if (zero_data || tensors_.empty()) {
        if (auto s = f->extend_to(data_start + offset); !s) return s;
    } else {
        static const uint8_t zeros[256] = {};
        for (size_t i = 0; i < tensors_.size(); ++i) {
            const auto& t = tensors_[i];
            const uint64_t want = data_start + offsets[i];
            while (f->position() < want) {
                uint64_t n = std::min<uint64_t>(sizeof zeros, want - f->position());
                if (auto s = f->write(zeros, n); !s) return s;
            }
            if (t.fill) {
                std::vector<uint8_t> buf(t.nbytes);
                if (auto s = t.fill(buf.data(), t.nbytes); !s) return make_error("tensor '" + t.name + "': " + s.message());
                if (auto s = f->write(buf.data(), buf.size()); !s) return s;
            } else if (t.data.empty()) {
                if (auto s = f->extend_to(want + t.nbytes); !s) return s;
            } else if (auto s = f->write(t.data.data(), t.data.size()); !s) {
                return s;
            }
        }
        if (auto s = f->extend_to(data_start + offset); !s) return s;
    }
    return f->commit();
}

}  // namespace arbor
