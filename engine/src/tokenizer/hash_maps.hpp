// Small open-addressing hash maps for the tokenizers' hot lookups: byte strings to ids, and
// pairs of ids to a merge. Built once, read-only afterwards (safe to share between threads).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

namespace arbor::tok {

inline uint64_t hash_bytes(std::string_view s) {
    constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
    uint64_t h = 0x243F6A8885A308D3ull ^ (s.size() * kMul);
    const char* p = s.data();
    size_t n = s.size();
    while (n >= 8) {
        uint64_t w;
        std::memcpy(&w, p, 8);
        h = (h ^ w) * kMul;
        h ^= h >> 29;
        p += 8;
        n -= 8;
    }
    if (n > 0) {
        uint64_t w = 0;
        std::memcpy(&w, p, n);
        h = (h ^ w) * kMul;
    }
    h ^= h >> 32;
    h *= 0xD6E8FEB86659FD93ull;
    h ^= h >> 32;
    return h;
}

// Byte string -> int32 id. Keys are views: their storage must outlive the map.
class StrMap {
public:
    void build(const std::vector<std::pair<std::string_view, int32_t>>& entries) {
        reserve(entries.size());
        for (const auto& [k, v] : entries) insert(k, v);
    }
    // Empties the map, sized for n keys (it grows past that as needed).
    void reserve(size_t n) {
        size_t cap = 16;
        while (cap < n * 2) cap <<= 1;
        slots_.assign(cap, Slot{});
        mask_ = cap - 1;
        size_ = 0;
    }
    // Keeps the first value stored under a key.
    void insert(std::string_view key, int32_t value) {
        if ((size_ + 1) * 2 > slots_.size()) grow();
        const uint64_t h = hash_bytes(key);
        if (place(Slot{h, key, value})) ++size_;
    }
    int32_t find(std::string_view key) const {
        if (slots_.empty()) return -1;
        const uint64_t h = hash_bytes(key);
        for (size_t i = h & mask_;; i = (i + 1) & mask_) {
            const Slot& s = slots_[i];
            if (s.value < 0) return -1;
            if (s.hash == h && s.key == key) return s.value;
        }
    }

private:
    struct Slot {
        uint64_t hash = 0;
        std::string_view key;
        int32_t value = -1;
    };
    bool place(const Slot& n) {
        for (size_t i = n.hash & mask_;; i = (i + 1) & mask_) {
            Slot& s = slots_[i];
            if (s.value < 0) {
                s = n;
                return true;
            }
            if (s.hash == n.hash && s.key == n.key) return false;
        }
    }
    void grow() {
        std::vector<Slot> old = std::move(slots_);
        const size_t cap = old.empty() ? 16 : old.size() * 2;
        slots_.assign(cap, Slot{});
        mask_ = cap - 1;
        for (const Slot& s : old) {
            if (s.value >= 0) place(s);
        }
    }
    std::vector<Slot> slots_;
    size_t mask_ = 0;
    size_t size_ = 0;
};

// (left piece, right piece) -> (rank, merged piece).
class PairMap {
public:
    struct Merge {
        int32_t rank = -1;
        int32_t result = -1;
    };
    void reserve(size_t n) {
        size_t cap = 16;
        while (cap < n * 2) cap <<= 1;
        slots_.assign(cap, Slot{});
        mask_ = cap - 1;
    }
    // Keeps the first (lowest-rank) merge of a pair.
    void insert(int32_t left, int32_t right, Merge m) {
        const uint64_t key = pack(left, right);
        for (size_t i = mix(key) & mask_;; i = (i + 1) & mask_) {
            Slot& s = slots_[i];
            if (s.key == kEmpty) {
                s = Slot{key, m};
                return;
            }
            if (s.key == key) return;
        }
    }
    Merge find(int32_t left, int32_t right) const {
        if (left < 0 || right < 0 || slots_.empty()) return {};
        const uint64_t key = pack(left, right);
        for (size_t i = mix(key) & mask_;; i = (i + 1) & mask_) {
            const Slot& s = slots_[i];
            if (s.key == key) return s.merge;
            if (s.key == kEmpty) return {};
        }
    }

private:
    static constexpr uint64_t kEmpty = ~0ull;
    static uint64_t pack(int32_t l, int32_t r) {
        return (static_cast<uint64_t>(static_cast<uint32_t>(l)) << 32) | static_cast<uint32_t>(r);
    }
    static uint64_t mix(uint64_t k) {
        k ^= k >> 31;
        k *= 0x9E3779B97F4A7C15ull;
        k ^= k >> 29;
        return k;
    }
    struct Slot {
        uint64_t key = kEmpty;
        Merge merge;
    };
    std::vector<Slot> slots_;
    size_t mask_ = 0;
};

}  // namespace arbor::tok
