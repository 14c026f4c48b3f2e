// Keyed logits rows and their bit-for-bit comparison.
#include "logits_exact_rows.hpp"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <utility>

namespace arbor::exact {

void LogitRows::add(RowKey k, const float* row) {
    keys.push_back(k);
    data.insert(data.end(), row, row + n_vocab);
}

std::string float_bits(float v) {
    uint32_t u = 0;
    std::memcpy(&u, &v, 4);
    char buf[64];
    std::snprintf(buf, sizeof buf, "0x%08" PRIx32 " (%.9g)", u, double(v));
    return buf;
}

namespace {

std::string key_text(const RowKey& k) {
    return "seq " + std::to_string(k.seq) + " pos " + std::to_string(k.pos);
}

}  // namespace

std::string compare_rows(const LogitRows& a, const LogitRows& b, std::string_view a_name, std::string_view b_name) {
    const std::string an(a_name), bn(b_name);
    if (a.n_vocab != b.n_vocab)
        return "n_vocab " + an + " " + std::to_string(a.n_vocab) + ", " + bn + " " + std::to_string(b.n_vocab);
    std::map<std::pair<int32_t, int64_t>, size_t> in_b;
    for (size_t i = 0; i < b.size(); ++i) {
        if (!in_b.emplace(std::pair{b.keys[i].seq, b.keys[i].pos}, i).second)
            return bn + " has two rows for " + key_text(b.keys[i]);
    }
    std::map<std::pair<int32_t, int64_t>, size_t> in_a;
    for (size_t i = 0; i < a.size(); ++i) {
        if (!in_a.emplace(std::pair{a.keys[i].seq, a.keys[i].pos}, i).second)
            return an + " has two rows for " + key_text(a.keys[i]);
        if (!in_b.count({a.keys[i].seq, a.keys[i].pos}))
            return "row " + key_text(a.keys[i]) + " only in " + an + " (step " + std::to_string(a.keys[i].step) + ")";
    }
    for (size_t i = 0; i < b.size(); ++i)
        if (!in_a.count({b.keys[i].seq, b.keys[i].pos}))
            return "row " + key_text(b.keys[i]) + " only in " + bn + " (step " + std::to_string(b.keys[i].step) + ")";
    const size_t bytes = size_t(a.n_vocab) * sizeof(float);
    for (size_t i = 0; i < a.size(); ++i) {
        const size_t j = in_b.at({a.keys[i].seq, a.keys[i].pos});
        const float* ra = a.row(i);
        const float* rb = b.row(j);
        if (std::memcmp(ra, rb, bytes) == 0) continue;
        int64_t first = -1, differ = 0;
        for (int64_t v = 0; v < a.n_vocab; ++v)
            if (std::memcmp(ra + v, rb + v, sizeof(float)) != 0) {
                if (first < 0) first = v;
                ++differ;
            }
        return "row " + key_text(a.keys[i]) + " (" + an + " step " + std::to_string(a.keys[i].step) + ", " + bn +
               " step " + std::to_string(b.keys[j].step) + "): first difference at index " + std::to_string(first) +
               ": " + an + " " + float_bits(ra[first]) + ", " + bn + " " + float_bits(rb[first]) + "; " +
               std::to_string(differ) + " of " + std::to_string(a.n_vocab) + " differ";
    }
    return {};
}

std::string check_finite(const LogitRows& r, std::string_view side) {
    for (size_t i = 0; i < r.size(); ++i) {
        const float* row = r.row(i);
        for (int64_t v = 0; v < r.n_vocab; ++v)
            if (!std::isfinite(row[v]))
                return std::string(side) + " row " + key_text(r.keys[i]) + " (step " + std::to_string(r.keys[i].step) +
                       ") index " + std::to_string(v) + " is not finite: " + float_bits(row[v]);
    }
    return {};
}

std::string self_check() {
    LogitRows a, b;
    a.n_vocab = b.n_vocab = 5;
    const float r0[5] = {1.0f, -2.5f, 0.0f, 3.0e-38f, 7.0f}, r1[5] = {0.5f, 0.25f, -1.0f, 2.0f, 4.0f};
    a.add({0, 3, 0}, r0), a.add({1, 0, 0}, r1);
    b.add({1, 0, 2}, r1), b.add({0, 3, 1}, r0);
    if (auto w = compare_rows(a, b, "a", "b"); !w.empty()) return "equal rows in another order reported: " + w;
    LogitRows c = b;
    uint32_t u;
    std::memcpy(&u, &c.data[8], 4);
    u ^= 1u;
    std::memcpy(&c.data[8], &u, 4);  // row (0, 3), index 3: one bit of the mantissa
    if (compare_rows(a, c, "a", "b").find("index 3") == std::string::npos) return "a one-bit difference was not found";
    LogitRows z = b;
    z.data[7] = -0.0f;  // row (0, 3), index 2: -0 == +0 as floats, not as bits
    if (compare_rows(a, z, "a", "b").empty()) return "-0 against +0 was not found";
    LogitRows m = a;
    m.keys.pop_back(), m.data.resize(5);
    if (compare_rows(a, m, "a", "b").empty() || compare_rows(m, a, "a", "b").empty()) return "a missing row was not found";
    LogitRows n = a;
    n.data[6] = std::nanf("");
    if (check_finite(n, "a").empty()) return "a NaN was not found";
    return {};
}

}  // namespace arbor::exact
