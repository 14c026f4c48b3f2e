// GgufFile: opening (single or split), typed metadata access and tensor lookup.
#include "gguf/gguf_parser.hpp"

#include <cstdio>
#include <cstring>

namespace arbor {
namespace {

// "dir/name-00002-of-00003.gguf" -> prefix "dir/name", count 3. False if not a split name.
bool split_name(const std::string& path, std::string* prefix, int* count) {
    const std::string tail = ".gguf";
    if (path.size() < 20 || path.compare(path.size() - tail.size(), tail.size(), tail) != 0) return false;
    const size_t end = path.size() - tail.size();  // "-NNNNN-of-NNNNN" precedes it
    if (end < 15) return false;
    const std::string s = path.substr(end - 15, 15);
    int no = 0, n = 0;
    if (s[0] != '-' || s.substr(6, 4) != "-of-") return false;
    for (int i = 1; i <= 5; ++i) {
        if (s[i] < '0' || s[i] > '9' || s[i + 9] < '0' || s[i + 9] > '9') return false;
        no = no * 10 + (s[i] - '0');
        n = n * 10 + (s[i + 9] - '0');
    }
    if (no < 1 || n < 1 || no > n) return false;
    *prefix = path.substr(0, end - 15);
    *count = n;
    return true;
}

std::string split_path(const std::string& prefix, int no, int count) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "-%05d-of-%05d.gguf", no, count);
    return prefix + buf;
}

}  // namespace

GgufFile::~GgufFile() = default;

Result<std::unique_ptr<GgufFile>> GgufFile::open(const std::string& path) {
    std::unique_ptr<GgufFile> f(new GgufFile());
    f->path_ = path;
    std::string prefix;
    int count = 1;
    std::vector<std::string> paths{path};
    if (split_name(path, &prefix, &count) && count > 1) {
        paths.clear();
        for (int i = 1; i <= count; ++i) paths.push_back(split_path(prefix, i, count));
    }
    for (const auto& p : paths) {
        auto m = MappedFile::open(p);
        if (!m) {
            if (paths.size() > 1) return make_error(path + ": split model part missing or unreadable: " + m.message());
            return m.error();
        }
        auto part = std::make_unique<Part>();
        part->data = (*m)->data();
        part->size = (*m)->size();
        part->label = p;
        part->map = std::move(m.value());
        f->parts_.push_back(std::move(part));
    }
    for (size_t i = 0; i < f->parts_.size(); ++i)
        if (auto s = GgufParser::parse_part(*f, i, i == 0); !s) return s.error();
    // A file that says it is one part of several must be opened through its split name.
    auto sc = f->get_uint("split.count");
    if (!sc) return sc.error();
    if (sc.value() && *sc.value() != f->parts_.size())
        return make_error(path + ": metadata split.count is " + std::to_string(*sc.value()) + " but " +
                          std::to_string(f->parts_.size()) + " part(s) were found (expected names like name-00001-of-" +
                          std::to_string(*sc.value()) + ".gguf)");
    if (auto s = GgufParser::finish(*f); !s) return s.error();
    return f;
}

Result<std::unique_ptr<GgufFile>> GgufFile::parse(std::span<const uint8_t> bytes, std::string label) {
    std::unique_ptr<GgufFile> f(new GgufFile());
    f->path_ = label;
    auto part = std::make_unique<Part>();
    part->data = bytes.data();
    part->size = bytes.size();
    part->label = std::move(label);
    f->parts_.push_back(std::move(part));
    if (auto s = GgufParser::parse_part(*f, 0, true); !s) return s.error();
    if (auto s = GgufParser::finish(*f); !s) return s.error();
    return f;
}

uint64_t GgufFile::file_size() const {
    uint64_t n = 0;
    for (const auto& p : parts_) n += p->size;
    return n;
}

const GgufValue* GgufFile::find(std::string_view key) const {
    auto it = kv_index_.find(key);
    return it == kv_index_.end() ? nullptr : &kv_[it->second].second;
}

const GgufTensor* GgufFile::tensor(std::string_view name) const {
    auto it = tensor_index_.find(name);
    return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

namespace {
Error type_error(const std::string& path, std::string_view key, const GgufValue& v, const char* want) {
    return make_error(path + ": metadata key '" + std::string(key) + "' is " +
                      std::string(gguf_value_type_name(v.type)) + ", expected " + want);
}
}  // namespace

Result<std::optional<std::string>> GgufFile::get_string(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return std::optional<std::string>{};
    if (v->type != GgufValueType::STRING) return type_error(path_, key, *v, "a string");
    return std::optional<std::string>(std::string(v->str));
}

Result<std::optional<uint64_t>> GgufFile::get_uint(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return std::optional<uint64_t>{};
    if (!v->is_integer()) return type_error(path_, key, *v, "an unsigned integer");
    if (v->i < 0 && v->type != GgufValueType::U64)
        return make_error(path_ + ": metadata key '" + std::string(key) + "' is negative (" + std::to_string(v->i) + ")");
    return std::optional<uint64_t>(v->u);
}

Result<std::optional<int64_t>> GgufFile::get_int(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return std::optional<int64_t>{};
    if (!v->is_integer()) return type_error(path_, key, *v, "an integer");
    return std::optional<int64_t>(v->i);
}

Result<std::optional<double>> GgufFile::get_float(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return std::optional<double>{};
    if (v->is_float()) return std::optional<double>(v->f);
    if (v->is_integer()) return std::optional<double>(static_cast<double>(v->i));
    return type_error(path_, key, *v, "a number");
}

Result<std::optional<bool>> GgufFile::get_bool(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return std::optional<bool>{};
    if (v->type != GgufValueType::BOOL) return type_error(path_, key, *v, "a bool");
    return std::optional<bool>(v->u != 0);
}

std::string GgufFile::architecture() const {
    const GgufValue* v = find("general.architecture");
    return v && v->type == GgufValueType::STRING ? std::string(v->str) : std::string();
}

}  // namespace arbor
