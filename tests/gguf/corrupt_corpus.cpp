#include "corrupt_corpus.hpp"

#include <cstring>

namespace arbor::test {
namespace {

struct Field {
    enum Kind { Magic, Version, TensorCount, KvCount, StrLen, ValueType, ArrayType, ArrayLen, Scalar,
                NDims, Ne, TensorType, Offset, Alignment, DataStart } kind;
    uint64_t at;
    uint64_t aux = 0;  // StrLen: string length; Ne: dim index; Offset: tensor index
};

uint64_t rd64(const std::vector<uint8_t>& b, uint64_t at) {
    uint64_t v;
    std::memcpy(&v, b.data() + at, 8);
    return v;
}
uint32_t rd32(const std::vector<uint8_t>& b, uint64_t at) {
    uint32_t v;
    std::memcpy(&v, b.data() + at, 4);
    return v;
}
void wr64(std::vector<uint8_t>& b, uint64_t at, uint64_t v) { std::memcpy(b.data() + at, &v, 8); }
void wr32(std::vector<uint8_t>& b, uint64_t at, uint32_t v) { std::memcpy(b.data() + at, &v, 4); }

uint64_t scalar_size(uint32_t t) {
    static const uint64_t sz[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    return t < 13 ? sz[t] : 0;
}

// Walks a valid image and lists every field. Assumes validity (it was written by us or
// opened successfully before).
std::vector<Field> walk(const std::vector<uint8_t>& b) {
    std::vector<Field> f;
    uint64_t p = 0;
    f.push_back({Field::Magic, 0});
    f.push_back({Field::Version, 4});
    f.push_back({Field::TensorCount, 8});
    f.push_back({Field::KvCount, 16});
    const uint64_t nt = rd64(b, 8), nkv = rd64(b, 16);
    p = 24;
    auto str = [&] {
        const uint64_t len = rd64(b, p);
        f.push_back({Field::StrLen, p, len});
        p += 8 + len;
        return len;
    };
    for (uint64_t k = 0; k < nkv; ++k) {
        const uint64_t key_at = p;
        const uint64_t klen = str();
        const bool is_align = klen == 17 && std::memcmp(b.data() + key_at + 8, "general.alignment", 17) == 0;
        const uint32_t t = rd32(b, p);
        f.push_back({Field::ValueType, p});
        p += 4;
        if (t == 8) {
            str();
        } else if (t == 9) {
            const uint32_t et = rd32(b, p);
            f.push_back({Field::ArrayType, p});
            p += 4;
            const uint64_t n = rd64(b, p);
            f.push_back({Field::ArrayLen, p, n});
            p += 8;
            if (et == 8) {
                for (uint64_t i = 0; i < n; ++i) {
                    if (i < 4 || i + 1 == n) str();
                    else p += 8 + rd64(b, p);
                }
            } else {
                p += n * scalar_size(et);
            }
        } else {
            f.push_back({is_align ? Field::Alignment : Field::Scalar, p});
            p += scalar_size(t);
        }
    }
    for (uint64_t i = 0; i < nt; ++i) {
        str();
        const uint32_t nd = rd32(b, p);
        f.push_back({Field::NDims, p});
        p += 4;
        for (uint32_t d = 0; d < nd; ++d) {
            f.push_back({Field::Ne, p, d});
            p += 8;
        }
        f.push_back({Field::TensorType, p});
        p += 4;
        f.push_back({Field::Offset, p, i});
        p += 8;
    }
    f.push_back({Field::DataStart, p});
    return f;
}

}  // namespace

std::vector<uint64_t> gguf_structure_boundaries(const std::vector<uint8_t>& valid) {
    std::vector<uint64_t> out;
    for (const auto& f : walk(valid)) out.push_back(f.at);
    return out;
}

std::vector<CorruptCase> make_corrupt_corpus(const std::vector<uint8_t>& valid, const std::string& label) {
    std::vector<CorruptCase> out;
    const auto fields = walk(valid);
    auto add = [&](std::string name, std::vector<uint8_t> b, bool must_fail = true) {
        out.push_back({label + ":" + name, std::move(b), must_fail});
    };
    // Truncations at, just before and just after every structure boundary, and inside the data.
    for (const auto& f : fields) {
        for (int64_t d : {-1, 0, 1, 3}) {
            const int64_t cut = static_cast<int64_t>(f.at) + d;
            if (cut < 0 || static_cast<uint64_t>(cut) >= valid.size()) continue;
            add("truncate@" + std::to_string(cut), std::vector<uint8_t>(valid.begin(), valid.begin() + cut));
        }
    }
    add("truncate-last-byte", std::vector<uint8_t>(valid.begin(), valid.end() - 1));
    add("empty", {});
    add("not-gguf", std::vector<uint8_t>{'G', 'G', 'M', 'L', 0, 0, 0, 0});

    uint64_t tensor_idx = 0;
    for (const auto& f : fields) {
        auto b = valid;
        const std::string at = "@" + std::to_string(f.at);
        switch (f.kind) {
            case Field::Magic: b[0] = 'X'; add("bad-magic", b); break;
            case Field::Version:
                wr32(b, f.at, 7); add("version-7", b);
                wr32(b, f.at, 1); add("version-1", b);
                wr32(b, f.at, 0x03000000u); add("big-endian", b);
                break;
            case Field::TensorCount: case Field::KvCount:
                wr64(b, f.at, 1ull << 62); add("huge-count" + at, b);
                wr64(b, f.at, rd64(valid, f.at) + 1); add("count-plus-one" + at, b);
                break;
            case Field::StrLen:
                wr64(b, f.at, 1ull << 62); add("huge-string" + at, b);
                wr64(b, f.at, ~0ull); add("max-string" + at, b);
                wr64(b, f.at, valid.size()); add("string-past-end" + at, b);
                break;
            case Field::ValueType: wr32(b, f.at, 99); add("unknown-value-type" + at, b); break;
            case Field::ArrayType:
                wr32(b, f.at, 99); add("unknown-array-type" + at, b);
                b = valid; wr32(b, f.at, 9); add("nested-array" + at, b);
                break;
            case Field::ArrayLen:
                wr64(b, f.at, 1ull << 60); add("huge-array" + at, b);
                wr64(b, f.at, ~0ull); add("max-array" + at, b);
                break;
            case Field::Alignment:
                wr32(b, f.at, 3); add("alignment-3", b);
                b = valid; wr32(b, f.at, 0); add("alignment-0", b);
                b = valid; wr32(b, f.at, 64); add("alignment-64", b, false);
                break;
            case Field::NDims:
                wr32(b, f.at, 0); add("ndims-0" + at, b);
                b = valid; wr32(b, f.at, 5); add("ndims-5" + at, b);
                break;
            case Field::Ne:
                wr64(b, f.at, 1ull << 62); add("huge-dim" + at, b);
                b = valid; wr64(b, f.at, ~0ull); add("negative-dim" + at, b);
                if (f.aux == 0) { b = valid; wr64(b, f.at, rd64(valid, f.at) + 1); add("ne0-not-block-multiple" + at, b, false); }
                break;
            case Field::TensorType: wr32(b, f.at, 99); add("unknown-tensor-type" + at, b); break;
            case Field::Offset: {
                const uint64_t off = rd64(valid, f.at);
                wr64(b, f.at, off + 1); add("misaligned-offset" + at, b);
                b = valid; wr64(b, f.at, 1ull << 62); add("offset-past-end" + at, b);
                b = valid; wr64(b, f.at, ~0ull - 31); add("offset-overflow" + at, b);
                if (tensor_idx > 0) {
                    // Point this tensor at the previous one's data: overlap (unless both are empty).
                    for (const auto& g : fields)
                        if (g.kind == Field::Offset && g.aux == tensor_idx - 1) {
                            b = valid; wr64(b, f.at, rd64(valid, g.at)); add("overlap" + at, b);
                        }
                }
                ++tensor_idx;
                break;
            }
            default: break;
        }
    }
    // Single-byte flips over the whole header: each must parse or fail cleanly.
    const uint64_t header_end = fields.back().at;
    for (uint64_t i = 0; i < header_end; ++i) {
        auto b = valid;
        b[i] ^= 0xFF;
        add("flip@" + std::to_string(i), std::move(b), false);
    }
    return out;
}

}  // namespace arbor::test
