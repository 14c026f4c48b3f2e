// Checksum64 of arbor/park.hpp: a four-lane multiply-rotate hash over 32-byte stripes.
#include <arbor/park.hpp>

#include <cstring>

namespace arbor {
namespace {

constexpr uint64_t P1 = 0x9E3779B185EBCA87ull, P2 = 0xC2B2AE3D27D4EB4Full, P3 = 0x165667B19E3779F9ull,
                   P4 = 0x85EBCA77C2B2AE63ull;

uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
uint64_t load64(const uint8_t* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}
uint64_t lane(uint64_t acc, uint64_t w) { return rotl(acc + w * P2, 31) * P1; }

}  // namespace

Checksum64::Checksum64() : acc_{P1 + P2, P2, 0, 0 - P1} {}

void Checksum64::stripe(const uint8_t* p) {
    for (int i = 0; i < 4; ++i) acc_[i] = lane(acc_[i], load64(p + 8 * i));
}

void Checksum64::update(const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    total_ += n;
    if (buffered_ > 0) {
        const size_t take = std::min(n, sizeof buf_ - buffered_);
        std::memcpy(buf_ + buffered_, p, take);
        buffered_ += take;
        p += take;
        n -= take;
        if (buffered_ < sizeof buf_) return;
        stripe(buf_);
        buffered_ = 0;
    }
    for (; n >= 32; p += 32, n -= 32) stripe(p);
    std::memcpy(buf_, p, n);
    buffered_ = n;
}

uint64_t Checksum64::digest() const {
    uint64_t h = rotl(acc_[0], 1) + rotl(acc_[1], 7) + rotl(acc_[2], 12) + rotl(acc_[3], 18);
    for (uint64_t a : acc_) h = (h ^ lane(0, a)) * P1 + P4;
    h += total_;
    size_t i = 0;
    for (; i + 8 <= buffered_; i += 8) h = rotl(h ^ lane(0, load64(buf_ + i)), 27) * P1 + P4;
    for (; i < buffered_; ++i) h = rotl(h ^ (uint64_t(buf_[i]) * P3), 11) * P1;
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    h ^= h >> 32;
    return h;
}

uint64_t checksum64(const void* data, size_t n) {
    Checksum64 c;
    c.update(data, n);
    return c.digest();
}

}  // namespace arbor
