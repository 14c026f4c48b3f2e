// GGUF reading (memory-mapped, validated before trusted) and writing.
//
// GgufFile maps the file read-only and parses the header, metadata and tensor table once.
// Every count, length and offset is checked against the file size before use, with overflow-
// free arithmetic; a violation is an Error naming the field and its byte offset, or the tensor
// by name. Tensor data is never touched by open(): it stays in the page cache until a caller
// reads it through tensor data pointers. Allocation is bounded by the file size.
//
// Split models (name-00001-of-00003.gguf) open as one model from any part: the metadata comes
// from the first part and the tensor tables of all parts are merged.
#pragma once

#include <arbor/result.hpp>
#include <arbor/tensor_types.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace arbor {

enum class GgufValueType : uint32_t {
    U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, BOOL = 7,
    STRING = 8, ARRAY = 9, U64 = 10, I64 = 11, F64 = 12,
};
std::string_view gguf_value_type_name(GgufValueType t);

// One metadata value. Scalars are held by value; strings and arrays point into the mapping,
// so a GgufValue is valid only while its GgufFile is alive.
struct GgufValue {
    GgufValueType type = GgufValueType::U8;
    GgufValueType elem_type = GgufValueType::U8;  // arrays only
    uint64_t length = 0;                          // arrays: element count
    uint64_t u = 0;                               // unsigned ints and bools
    int64_t i = 0;                                // signed ints
    double f = 0;                                 // floats
    std::string_view str;                         // STRING
    const uint8_t* data = nullptr;                // numeric arrays: little-endian elements
    std::vector<std::string_view> strings;        // STRING arrays

    bool is_array() const { return type == GgufValueType::ARRAY; }
    bool is_integer() const;
    bool is_float() const;
    // Numeric element i of a numeric array, widened. Caller checks i < length.
    int64_t int_at(uint64_t i) const;
    double float_at(uint64_t i) const;
};

struct GgufTensor {
    std::string_view name;
    uint32_t n_dims = 0;
    int64_t ne[4] = {1, 1, 1, 1};  // GGUF order: ne[0] is the row length
    TensorType type = TensorType::F32;
    uint64_t offset = 0;           // absolute byte offset in its file
    uint64_t nbytes = 0;
    uint32_t split = 0;            // which part of a split model
    const uint8_t* data = nullptr; // into the mapping

    int64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
    int64_t rows() const { return ne[1] * ne[2] * ne[3]; }
    uint64_t row_bytes() const;
};

class GgufFile {
public:
    static Result<std::unique_ptr<GgufFile>> open(const std::string& path);
    // Parse an in-memory image (fuzzing, tests). The bytes must outlive the GgufFile.
    static Result<std::unique_ptr<GgufFile>> parse(std::span<const uint8_t> bytes, std::string label);
    ~GgufFile();
    GgufFile(const GgufFile&) = delete;
    GgufFile& operator=(const GgufFile&) = delete;

    const std::string& path() const { return path_; }
    uint32_t version() const { return version_; }
    uint64_t file_size() const;               // all parts together
    uint32_t alignment() const { return alignment_; }
    size_t split_count() const { return parts_.size(); }

    // Metadata, in file order.
    const std::vector<std::pair<std::string_view, GgufValue>>& metadata() const { return kv_; }
    const GgufValue* find(std::string_view key) const;

    // Typed access. Each returns nullopt when the key is absent and an Error when the key is
    // present with a type that does not convert (say, a string where a count is expected).
    Result<std::optional<std::string>> get_string(std::string_view key) const;
    Result<std::optional<uint64_t>> get_uint(std::string_view key) const;
    Result<std::optional<int64_t>> get_int(std::string_view key) const;
    Result<std::optional<double>> get_float(std::string_view key) const;
    Result<std::optional<bool>> get_bool(std::string_view key) const;
    std::string architecture() const;  // general.architecture, "" when absent

    const std::vector<GgufTensor>& tensors() const { return tensors_; }
    const GgufTensor* tensor(std::string_view name) const;

private:
    GgufFile() = default;
    struct Part;
    std::string path_;
    uint32_t version_ = 0;
    uint32_t alignment_ = 32;
    std::vector<std::unique_ptr<Part>> parts_;
    std::vector<std::pair<std::string_view, GgufValue>> kv_;
    std::map<std::string_view, size_t> kv_index_;
    std::vector<GgufTensor> tensors_;
    std::map<std::string_view, size_t> tensor_index_;
    friend class GgufParser;
};

// ---- writing ------------------------------------------------------------------------------

// A metadata value to write. Construct with the helpers below.
struct GgufWriteValue {
    GgufValueType type = GgufValueType::U32;
    GgufValueType elem_type = GgufValueType::U32;
    std::vector<uint8_t> scalar_bytes;   // scalars and numeric array payload (little-endian)
    std::vector<std::string> strings;    // STRING (one) and STRING arrays
    uint64_t length = 0;                 // arrays

    static GgufWriteValue u32(uint32_t v);
    static GgufWriteValue i32(int32_t v);
    static GgufWriteValue u64(uint64_t v);
    static GgufWriteValue f32(float v);
    static GgufWriteValue boolean(bool v);
    static GgufWriteValue string(std::string v);
    static GgufWriteValue string_array(std::vector<std::string> v);
    static GgufWriteValue i32_array(const std::vector<int32_t>& v);
    static GgufWriteValue f32_array(const std::vector<float>& v);
};

class GgufWriter {
public:
    explicit GgufWriter(uint32_t alignment = 32) : alignment_(alignment) {}
    void set(std::string key, GgufWriteValue v);
    // Adds a tensor whose data (already encoded in `type`) is `data`. With sparse writing the
    // data may be empty: the file then holds a hole of the right size.
    Status add_tensor(std::string name, std::vector<int64_t> shape, TensorType type, std::vector<uint8_t> data);
    // Adds a tensor whose bytes are produced at write time, `nbytes` at a time into `dst`, so a
    // multi-gigabyte model never has to sit in memory. The callback may fail with an Error.
    using TensorFill = std::function<Status(uint8_t* dst, uint64_t nbytes)>;
    Status add_tensor_generated(std::string name, std::vector<int64_t> shape, TensorType type, TensorFill fill);
    // Writes atomically (temp file + rename). zero_data leaves tensor data as a sparse hole.
    Status write(const std::string& path, bool zero_data = false) const;

private:
    struct T {
        std::string name;
        std::vector<int64_t> shape;
        TensorType type;
        std::vector<uint8_t> data;
        uint64_t nbytes;
        TensorFill fill;
    };
    uint32_t alignment_;
    std::vector<std::pair<std::string, GgufWriteValue>> kv_;
    std::vector<T> tensors_;
};

}  // namespace arbor
