// Logits rows of one run, keyed by (sequence, position), and their bit-for-bit comparison.
//
// Two runs are compared by key, not by order: a batched run and a sequence-at-a-time run, or a
// parked-and-woken run and a never-parked one, produce the same (sequence, position) rows in
// different pass orders, and the numerics contract says each row's bits depend only on the
// model, the sequence's tokens and the position.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace arbor::exact {

struct RowKey {
    int32_t seq = 0;
    int64_t pos = 0;
    int32_t step = 0;  // the eval call that produced it (messages; nan-kv picks the rows after its writes by it)
};

struct LogitRows {
    int64_t n_vocab = 0;
    std::vector<RowKey> keys;
    std::vector<float> data;

    size_t size() const { return keys.size(); }
    const float* row(size_t i) const { return data.data() + i * size_t(n_vocab); }
    void add(RowKey k, const float* row);
};

// "" when both hold the same keys and every row has the same bits (memcmp); else the first
// difference: the row (sequence, position, the step of each side), the first differing index,
// both values as hex and decimal, and how many elements of that row differ.
std::string compare_rows(const LogitRows& a, const LogitRows& b, std::string_view a_name, std::string_view b_name);

// "" when every value is finite; else the first row and index that is not. Two backends that
// both produce NaN would compare equal bit for bit, so each side is also checked on its own.
std::string check_finite(const LogitRows& r, std::string_view side);

// "" when compare_rows and check_finite catch what they must: a one-bit difference (at the right
// index), -0 against +0, a missing row, a NaN; and accept equal rows in another order.
std::string self_check();

// "0x3f800000 (1)": a float's bits and its value.
std::string float_bits(float v);

}  // namespace arbor::exact
