// The validating GGUF parser. Every read goes through Cursor, which checks the remaining
// length first; every size is computed with overflow checks; errors name the field and the
// byte offset where it starts (or the tensor by name).
#include "gguf/gguf_parser.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace arbor {
namespace {

constexpr uint64_t kMaxDims = 4;

std::string at(const std::string& label, uint64_t off) {
    return label + ": at byte " + std::to_string(off) + ": ";
}

// A name or key as it may appear in a message: control bytes escaped, long ones cut.
std::string shown(std::string_view s) {
    std::string out;
    for (unsigned char ch : s.substr(0, 200)) {
        if (ch < 0x20 || ch == 0x7f) {
            static const char* hex = "0123456789abcdef";
            out += "\\x";
            out += hex[ch >> 4];
            out += hex[ch & 15];
        } else {
            out += static_cast<char>(ch);
        }
    }
    if (s.size() > 200) out += "...";
    return out;
}

bool mul_overflows(uint64_t a, uint64_t b, uint64_t* out) { return __builtin_mul_overflow(a, b, out); }
bool add_overflows(uint64_t a, uint64_t b, uint64_t* out) { return __builtin_add_overflow(a, b, out); }

class Cursor {
public:
    Cursor(const uint8_t* data, uint64_t size, const std::string& label) : d_(data), n_(size), label_(label) {}
    uint64_t pos() const { return pos_; }
    uint64_t remaining() const { return n_ - pos_; }
    void seek(uint64_t p) { pos_ = p; }

    Status need(uint64_t bytes, const char* what) const {
        if (bytes > remaining())
            return make_error(at(label_, pos_) + what + " needs " + std::to_string(bytes) + " bytes but only " +
                              std::to_string(remaining()) + " remain (truncated file?)");
        return {};
    }
    template <class T>
    Status read(T* out, const char* what) {
        if (auto s = need(sizeof(T), what); !s) return s;
        std::memcpy(out, d_ + pos_, sizeof(T));
        pos_ += sizeof(T);
        return {};
    }
    Status read_string(std::string_view* out, const char* what) {
        uint64_t start = pos_;
        uint64_t len = 0;
        if (auto s = read(&len, what); !s) return s;
        if (len > remaining()) {
            pos_ = start;
            return make_error(at(label_, start) + what + " has length " + std::to_string(len) + " but only " +
                              std::to_string(remaining() - 8 > remaining() ? 0 : remaining()) +
                              " bytes remain in the file");
        }
        *out = std::string_view(reinterpret_cast<const char*>(d_ + pos_), len);
        pos_ += len;
        return {};
    }
    const uint8_t* here() const { return d_ + pos_; }
    const std::string& label() const { return label_; }

private:
    const uint8_t* d_;
    uint64_t n_;
    uint64_t pos_ = 0;
    const std::string& label_;
};

uint64_t scalar_size(GgufValueType t) {
    switch (t) {
        case GgufValueType::U8: case GgufValueType::I8: case GgufValueType::BOOL: return 1;
        case GgufValueType::U16: case GgufValueType::I16: return 2;
        case GgufValueType::U32: case GgufValueType::I32: case GgufValueType::F32: return 4;
        case GgufValueType::U64: case GgufValueType::I64: case GgufValueType::F64: return 8;
        default: return 0;
    }
}

bool known_value_type(uint32_t t) { return t <= static_cast<uint32_t>(GgufValueType::F64); }

void load_scalar(GgufValue& v, GgufValueType t, const uint8_t* p) {
    switch (t) {
        case GgufValueType::U8: v.u = p[0]; v.i = p[0]; break;
        case GgufValueType::I8: { int8_t x; std::memcpy(&x, p, 1); v.i = x; v.u = static_cast<uint64_t>(x); break; }
        case GgufValueType::BOOL: v.u = p[0] != 0; v.i = p[0] != 0; break;
        case GgufValueType::U16: { uint16_t x; std::memcpy(&x, p, 2); v.u = x; v.i = x; break; }
        case GgufValueType::I16: { int16_t x; std::memcpy(&x, p, 2); v.i = x; v.u = static_cast<uint64_t>(x); break; }
        case GgufValueType::U32: { uint32_t x; std::memcpy(&x, p, 4); v.u = x; v.i = x; break; }
        case GgufValueType::I32: { int32_t x; std::memcpy(&x, p, 4); v.i = x; v.u = static_cast<uint64_t>(x); break; }
        case GgufValueType::F32: { float x; std::memcpy(&x, p, 4); v.f = x; break; }
        case GgufValueType::U64: { uint64_t x; std::memcpy(&x, p, 8); v.u = x; v.i = static_cast<int64_t>(x); break; }
        case GgufValueType::I64: { int64_t x; std::memcpy(&x, p, 8); v.i = x; v.u = static_cast<uint64_t>(x); break; }
        case GgufValueType::F64: { double x; std::memcpy(&x, p, 8); v.f = x; break; }
        default: break;
    }
}

Status read_value(Cursor& c, std::string_view key, GgufValue& v) {
    const uint64_t type_at = c.pos();
    uint32_t t = 0;
    if (auto s = c.read(&t, "metadata value type"); !s) return s;
    if (!known_value_type(t))
        return make_error(at(c.label(), type_at) + "metadata key '" + shown(key) + "' has unknown value type " +
                          std::to_string(t));
    v.type = static_cast<GgufValueType>(t);
    if (v.type == GgufValueType::STRING) return c.read_string(&v.str, "metadata string value");
    if (v.type != GgufValueType::ARRAY) {
        uint64_t n = scalar_size(v.type);
        if (auto s = c.need(n, "metadata value"); !s) return s;
        load_scalar(v, v.type, c.here());
        c.seek(c.pos() + n);
        return {};
    }
    const uint64_t arr_at = c.pos();
    uint32_t et = 0;
    if (auto s = c.read(&et, "array element type"); !s) return s;
    if (!known_value_type(et))
        return make_error(at(c.label(), arr_at) + "array '" + shown(key) + "' has unknown element type " +
                          std::to_string(et));
    v.elem_type = static_cast<GgufValueType>(et);
    if (v.elem_type == GgufValueType::ARRAY)
        return make_error(at(c.label(), arr_at) + "array '" + shown(key) + "' nests arrays, which GGUF readers do not support");
    const uint64_t len_at = c.pos();
    if (auto s = c.read(&v.length, "array length"); !s) return s;
    if (v.elem_type == GgufValueType::STRING) {
        // Each string takes at least its 8-byte length: bound the count before reserving.
        if (v.length > c.remaining() / 8)
            return make_error(at(c.label(), len_at) + "array '" + shown(key) + "' claims " +
                              std::to_string(v.length) + " strings, more than the file can hold");
        v.strings.reserve(v.length);
        for (uint64_t i = 0; i < v.length; ++i) {
            std::string_view s;
            if (auto st = c.read_string(&s, "array string element"); !st) return st;
            v.strings.push_back(s);
        }
        return {};
    }
    uint64_t bytes = 0;
    if (mul_overflows(v.length, scalar_size(v.elem_type), &bytes) || bytes > c.remaining())
        return make_error(at(c.label(), len_at) + "array '" + shown(key) + "' claims " + std::to_string(v.length) +
                          " elements, more than the file can hold");
    v.data = c.here();
    c.seek(c.pos() + bytes);
    return {};
}

}  // namespace

Status GgufParser::parse_part(GgufFile& file, size_t part_index, bool take_metadata) {
    GgufFile::Part& part = *file.parts_[part_index];
    Cursor c(part.data, part.size, part.label);

    char magic[4];
    if (auto s = c.need(4, "magic"); !s) return s;
    std::memcpy(magic, part.data, 4);
    if (std::memcmp(magic, "GGUF", 4) != 0)
        return make_error(part.label + ": at byte 0: not a GGUF file (magic is not 'GGUF')");
    c.seek(4);
    uint32_t version = 0;
    if (auto s = c.read(&version, "version"); !s) return s;
    if (version == 0x02000000u || version == 0x03000000u)
        return make_error(part.label + ": at byte 4: big-endian GGUF files are not supported");
    if (version == 1) return make_error(part.label + ": at byte 4: GGUF version 1 is obsolete; re-convert the model");
    if (version != 2 && version != 3)
        return make_error(part.label + ": at byte 4: unsupported GGUF version " + std::to_string(version));
    if (part_index == 0) file.version_ = version;

    uint64_t n_tensors = 0, n_kv = 0;
    const uint64_t nt_at = c.pos();
    if (auto s = c.read(&n_tensors, "tensor count"); !s) return s;
    const uint64_t nkv_at = c.pos();
    if (auto s = c.read(&n_kv, "metadata count"); !s) return s;
    // Smallest possible encodings: a kv is 8 (key length) + 4 (type) + 1 bytes, a tensor info
    // 8 (name length) + 4 (n_dims) + 4 (type) + 8 (offset).
    if (n_kv > c.remaining() / 13)
        return make_error(at(part.label, nkv_at) + "metadata count " + std::to_string(n_kv) + " exceeds what the file can hold");
    if (n_tensors > c.remaining() / 24)
        return make_error(at(part.label, nt_at) + "tensor count " + std::to_string(n_tensors) + " exceeds what the file can hold");

    std::map<std::string_view, size_t> seen;
    uint32_t alignment = 32;
    for (uint64_t k = 0; k < n_kv; ++k) {
        const uint64_t key_at = c.pos();
        std::string_view key;
        if (auto s = c.read_string(&key, "metadata key"); !s) return s;
        if (key.empty()) return make_error(at(part.label, key_at) + "metadata key " + std::to_string(k) + " is empty");
        if (seen.count(key))
            return make_error(at(part.label, key_at) + "duplicate metadata key '" + shown(key) + "'");
        GgufValue v;
        if (auto s = read_value(c, key, v); !s) return s;
        if (key == "general.alignment") {
            if (v.type != GgufValueType::U32 && v.type != GgufValueType::I32 && v.type != GgufValueType::U64)
                return make_error(at(part.label, key_at) + "general.alignment must be an integer");
            if (v.u == 0 || v.u > (1u << 20) || (v.u & (v.u - 1)) != 0)
                return make_error(at(part.label, key_at) + "general.alignment " + std::to_string(v.u) +
                                  " is not a power of two up to 1 MiB");
            alignment = static_cast<uint32_t>(v.u);
        }
        seen[key] = k;
        if (take_metadata) {
            file.kv_index_[key] = file.kv_.size();
            file.kv_.emplace_back(key, std::move(v));
        }
    }
    if (take_metadata) file.alignment_ = alignment;

    struct Pending {
        GgufTensor t;
        uint64_t rel_offset;
        uint64_t info_at;
    };
    std::vector<Pending> pending;
    pending.reserve(n_tensors);
    for (uint64_t ti = 0; ti < n_tensors; ++ti) {
        const uint64_t info_at = c.pos();
        GgufTensor t;
        if (auto s = c.read_string(&t.name, "tensor name"); !s) return s;
        if (t.name.empty()) return make_error(at(part.label, info_at) + "tensor " + std::to_string(ti) + " has an empty name");
        const std::string nm = shown(t.name);
        const uint64_t dims_at = c.pos();
        if (auto s = c.read(&t.n_dims, "tensor dimension count"); !s) return s;
        if (t.n_dims == 0 || t.n_dims > kMaxDims)
            return make_error(at(part.label, dims_at) + "tensor '" + nm + "' has " + std::to_string(t.n_dims) +
                              " dimensions (1 to 4 allowed)");
        uint64_t elems = 1;
        for (uint32_t d = 0; d < t.n_dims; ++d) {
            const uint64_t ne_at = c.pos();
            uint64_t ne = 0;
            if (auto s = c.read(&ne, "tensor dimension"); !s) return s;
            if (ne > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) || mul_overflows(elems, ne, &elems) ||
                elems > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
                return make_error(at(part.label, ne_at) + "tensor '" + nm + "' dimension " + std::to_string(d) +
                                  " makes the element count overflow");
            t.ne[d] = static_cast<int64_t>(ne);
        }
        const uint64_t type_at = c.pos();
        uint32_t type = 0;
        if (auto s = c.read(&type, "tensor type"); !s) return s;
        auto info = tensor_type_info(type);
        if (!info)
            return make_error(at(part.label, type_at) + "tensor '" + nm + "' has unknown type " + std::to_string(type));
        t.type = info->type;
        if (t.ne[0] % info->block_size != 0)
            return make_error(at(part.label, dims_at) + "tensor '" + nm + "' row length " + std::to_string(t.ne[0]) +
                              " is not a multiple of the " + std::string(info->name) + " block size " +
                              std::to_string(info->block_size));
        uint64_t nbytes = 0;
        if (mul_overflows(static_cast<uint64_t>(t.ne[0]) / info->block_size, info->type_size, &nbytes) ||
            mul_overflows(nbytes, static_cast<uint64_t>(t.ne[1]), &nbytes) ||
            mul_overflows(nbytes, static_cast<uint64_t>(t.ne[2]), &nbytes) ||
            mul_overflows(nbytes, static_cast<uint64_t>(t.ne[3]), &nbytes))
            return make_error(at(part.label, dims_at) + "tensor '" + nm + "' byte size overflows");
        t.nbytes = nbytes;
        uint64_t rel = 0;
        if (auto s = c.read(&rel, "tensor data offset"); !s) return s;
        t.split = static_cast<uint32_t>(part_index);
        pending.push_back({t, rel, info_at});
    }

    uint64_t data_start = c.pos();
    const uint32_t align = file.alignment_;
    if (data_start % align) data_start += align - data_start % align;
    if (data_start > part.size && !pending.empty())
        return make_error(part.label + ": the tensor data section (byte " + std::to_string(data_start) +
                          ") starts past the end of the file (" + std::to_string(part.size) + " bytes)");
    for (auto& p : pending) {
        const std::string nm = shown(p.t.name);
        if (p.rel_offset % align)
            return make_error(at(part.label, p.info_at) + "tensor '" + nm + "' data offset " + std::to_string(p.rel_offset) +
                              " is not aligned to " + std::to_string(align));
        uint64_t abs = 0, end = 0;
        if (add_overflows(data_start, p.rel_offset, &abs) || add_overflows(abs, p.t.nbytes, &end) || end > part.size)
            return make_error(at(part.label, p.info_at) + "tensor '" + nm + "' data (offset " + std::to_string(p.rel_offset) +
                              ", " + std::to_string(p.t.nbytes) + " bytes) lies outside the file (" +
                              std::to_string(part.size) + " bytes)");
        p.t.offset = abs;
        p.t.data = part.data + abs;
        if (file.tensor_index_.count(p.t.name))
            return make_error(at(part.label, p.info_at) + "duplicate tensor name '" + nm + "'");
        file.tensor_index_[p.t.name] = file.tensors_.size();
        file.tensors_.push_back(p.t);
    }
    return {};
}

Status GgufParser::finish(GgufFile& file) {
    // No two tensors of one part may share bytes.
    std::vector<const GgufTensor*> order;
    order.reserve(file.tensors_.size());
    for (const auto& t : file.tensors_) order.push_back(&t);
    std::sort(order.begin(), order.end(), [](const GgufTensor* a, const GgufTensor* b) {
        return a->split != b->split ? a->split < b->split : a->offset < b->offset;
    });
    for (size_t i = 1; i < order.size(); ++i) {
        const GgufTensor* a = order[i - 1];
        const GgufTensor* b = order[i];
        if (a->split == b->split && a->offset + a->nbytes > b->offset && a->nbytes > 0 && b->nbytes > 0)
            return make_error(file.parts_[b->split]->label + ": tensor '" + shown(b->name) + "' data overlaps tensor '" +
                              shown(a->name) + "'");
    }
    return {};
}

}  // namespace arbor
