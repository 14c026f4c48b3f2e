// The dot's per-sub-block terms from 32-bit words: for the formats below, packed_terms<Fmt>
// (Packed<Fmt>::apply of Packed<Fmt>::unpack) returns exactly Fmt::terms's SubTerms, computed
// four products at a time (dp4a on NVIDIA, v_dot4_i32_iu8 on gfx11, a loop elsewhere). The integer sums of the contract are exact, so
// any grouping of their products gives the same int32; the float parts (scales) are read and
// converted exactly as Fmt::terms does. Other formats fall back to Fmt::terms.
//
// Unlike quant_blocks.hpp, which reads fields byte by byte, these read aligned words:
//   - the activations `a` (a Q8A block's q: 4-byte aligned in every BlockQ8A array) by 4 bytes;
//   - Q4_K, Q5_K and IQ4_XS blocks by 4 bytes (the block must be 4-byte aligned);
//   - Q4_0, Q8_0, Q6_K and IQ4_NL blocks by 2 bytes (the block must be 2-byte aligned);
//   - MXFP4 blocks (17 bytes) byte by byte.
// packed_aligned<Fmt>(row) tells whether a row's blocks qualify (every block of a row does when
// its first one does, the block sizes keeping the alignment).
#pragma once

#include "quant_blocks.hpp"
#include "quant_blocks_k.hpp"

namespace arbor::quant::blocks {

// acc + the sum of the four signed byte products of w and a.
ARBOR_HD inline int32_t dot4(uint32_t w, uint32_t a, int32_t acc) {
#if defined(__CUDA_ARCH__)
    return __dp4a(static_cast<int>(w), static_cast<int>(a), acc);
#elif defined(__HIP_DEVICE_COMPILE__) && defined(__GFX11__)
    return __builtin_amdgcn_sudot4(true, static_cast<int>(w), true, static_cast<int>(a), acc, false);
#else
    ARBOR_UNROLL
    for (int k = 0; k < 4; ++k)
        acc += int32_t(int8_t(uint8_t(w >> (8 * k)))) * int32_t(int8_t(uint8_t(a >> (8 * k))));
    return acc;
#endif
}

// An aligned little-endian word: p must be 4-byte (ld32_a4) or 2-byte (ld32_a2) aligned.
ARBOR_HD inline uint32_t ld32_a4(const uint8_t* p) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    return *reinterpret_cast<const uint32_t*>(p);
#else
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
#endif
}
ARBOR_HD inline uint32_t ld32_a2(const uint8_t* p) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    const uint16_t* h = reinterpret_cast<const uint16_t*>(p);
    return uint32_t(h[0]) | (uint32_t(h[1]) << 16);
#else
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
#endif
}

// The four table values of the four nibbles (one per byte, < 16) of n, packed as bytes; the
// table is 16 signed bytes in four words, t0 holding entries 0..3.
ARBOR_HD inline uint32_t lut16(uint32_t n, uint32_t t0, uint32_t t1, uint32_t t2, uint32_t t3) {
#if defined(__CUDA_ARCH__)
    // Two byte permutations over the table's halves (entries 0-7 and 8-15), then a per-byte
    // choice by bit 3 of the nibble.
    const uint32_t s = n & 0x07070707u, t4 = s | (s >> 4);
    const uint32_t sel = (t4 & 0xffu) | ((t4 >> 8) & 0xff00u);
    const uint32_t lo = __byte_perm(t0, t1, sel), hi = __byte_perm(t2, t3, sel);
    const uint32_t mask = ((n >> 3) & 0x01010101u) * 0xffu;
    return (lo & ~mask) | (hi & mask);
#else
    uint32_t r = 0;
    ARBOR_UNROLL
    for (int k = 0; k < 4; ++k) {
        const uint32_t i = (n >> (8 * k)) & 15u;
        const uint32_t w = i < 8 ? (i < 4 ? t0 : t1) : (i < 12 ? t2 : t3);  // selects, no indexed array
        r |= ((w >> (8 * (i & 3))) & 0xffu) << (8 * k);
    }
    return r;
#endif
}

// lut16 of both nibbles of each byte of w: *lo the table values of the low nibbles, *hi of the
// high ones (lut16(w & 0x0f0f0f0f) and lut16((w >> 4) & 0x0f0f0f0f), byte for byte), by byte
// permutations: perm(x, y, s) is PTX prmt's default mode (bytes 0-3 of x, 4-7 of y; a selector
// nibble's bits 0-2 pick a byte, its bit 3 asks for the byte's sign; only s's low 16 bits count).
// A 16-bit half of w is four selectors as it stands (low nibble, high nibble, low, high): each is
// looked up in both halves of the table with bit 3 cleared, a third permutation takes per nibble
// the half its bit 3 names, and two more sort the eight values into the low nibbles' word and the
// high nibbles' word: 16 operations for eight codes where two lut16 calls and their nibble masks
// take about 25. tests/quant/test_packed_terms.cpp runs this form on the host with an emulated prmt.
template <class Perm>
ARBOR_HD inline void lut16_nibbles_perm(uint32_t w, uint32_t t0, uint32_t t1, uint32_t t2, uint32_t t3, uint32_t* lo,
                                        uint32_t* hi, Perm perm) {
    uint32_t r[2];
    ARBOR_UNROLL
    for (int k = 0; k < 2; ++k) {
        const uint32_t n = w >> (16 * k);
        const uint32_t s = n & 0x7777u;
        const uint32_t l = perm(t0, t1, s), h = perm(t2, t3, s);
        r[k] = perm(l, h, 0x3210u | ((n & 0x8888u) >> 1));  // [a b a' b'] of this half
    }
    *lo = perm(r[0], r[1], 0x6420u);
    *hi = perm(r[0], r[1], 0x7531u);
}

// lut16_nibbles_perm on NVIDIA (__byte_perm is prmt); elsewhere the two lut16 calls.
ARBOR_HD inline void lut16_nibbles(uint32_t w, uint32_t t0, uint32_t t1, uint32_t t2, uint32_t t3, uint32_t* lo,
                                   uint32_t* hi) {
#if defined(__CUDA_ARCH__)
    lut16_nibbles_perm(w, t0, t1, t2, t3, lo, hi, [](uint32_t x, uint32_t y, uint32_t s) { return __byte_perm(x, y, s); });
#else
    *lo = lut16(w & 0x0f0f0f0fu, t0, t1, t2, t3);
    *hi = lut16((w >> 4) & 0x0f0f0f0fu, t0, t1, t2, t3);
#endif
}

// The dot of one sub-block's IQ4_NL grid values with its 32 activations, straight from the code
// words (w: four words, the 16 code bytes; a: the eight activation words), with no table value
// written out: two signed byte dots a code. perm(x, y, s) is PTX prmt's default mode, with bit 3
// of a selector nibble asking for the selected byte's sign replicated (0xff or 0x00). The grid's
// first eight values are negative and its last eight positive, so with the code c as its selector,
// perm(t0, t1, c) is the value for c < 8 and -1 for c >= 8; and perm(u2, u3, c ^ 8), u the last
// eight values plus one, is 0 for c < 8 and the value plus one for c >= 8. The two sum to the
// value for every c. A 16-bit half of a code word holds four selectors as it stands (elements
// 4j, 16 + 4j, 4j + 1, 17 + 4j for the low half of word j), so the activations are taken in that
// order (two byte permutations a word). Per code word: one xor, two shifts, four permutations
// and four dots, where lut16_nibbles and dot32 take 16 operations and two dots; the activations'
// eight permutations are shared by every row dotted against them. The sum is dot32's on the
// table's values (the same integer terms; two partial sums, added at the end).
constexpr uint32_t kIq4nlU2 = kIq4nlW2 + 0x01010101u, kIq4nlU3 = kIq4nlW3 + 0x01010101u;  // no byte carries
// The activations' permutations ask for no sign; on NVIDIA ptxas merges those of a pass's rows
// (gpu-next40's SASS).
template <class Perm>
ARBOR_HD inline int32_t iq4nl_two_dots(const uint32_t* w, const uint32_t* a, Perm perm) {
    int32_t s0 = 0, s1 = 0;
    ARBOR_UNROLL
    for (int j = 0; j < 4; ++j) {
        const uint32_t x = w[j] ^ 0x88888888u;
        const uint32_t a0 = perm(a[j], a[4 + j], 0x5140u), a1 = perm(a[j], a[4 + j], 0x7362u);
        s0 = dot4(perm(kIq4nlW0, kIq4nlW1, w[j]), a0, s0);
        s1 = dot4(perm(kIq4nlU2, kIq4nlU3, x), a0, s1);
        s0 = dot4(perm(kIq4nlW0, kIq4nlW1, w[j] >> 16), a1, s0);
        s1 = dot4(perm(kIq4nlU2, kIq4nlU3, x >> 16), a1, s1);
    }
    return s0 + s1;
}

// One sub-block's weights unpacked once, to be applied to any number of activation blocks
// (the prefill tiles apply each to every token of the tile): the 32 codes as bytes, four to a
// word, in element order (any offset the format subtracts is applied by apply()), the float
// factors and the format's integer factors.
struct PackedSub {  // what a format does not use stays zero
    uint32_t q[8];
    float ws = 0.0f, wm = 0.0f;
    int32_t k1 = 0, k2 = 0;
};

ARBOR_HD inline int32_t dot32(const uint32_t* q, const int8_t* a) {
    int32_t s = 0;
    ARBOR_UNROLL
    for (int j = 0; j < 8; ++j) s = dot4(q[j], ld32_a4(reinterpret_cast<const uint8_t*>(a) + 4 * j), s);
    return s;
}

// Nibble words: low nibbles of bytes 4j..4j+3 are elements 4j.., high nibbles elements 16+4j...
// qs aligned to Align bytes (4, 2, or 1: byte loads).
template <int Align>
ARBOR_HD inline uint32_t nibble_word(const uint8_t* qs, int j) {
    static_assert(Align == 1 || Align == 2 || Align == 4);
    const uint8_t* p = qs + 4 * j;
    return Align == 4 ? ld32_a4(p) : Align == 2 ? ld32_a2(p) : ld32(p);
}

template <int Align>
ARBOR_HD inline void nibble_words(const uint8_t* qs, uint32_t* q) {
    ARBOR_UNROLL
    for (int j = 0; j < 4; ++j) {
        const uint32_t w = nibble_word<Align>(qs, j);
        q[j] = w & 0x0f0f0f0fu;
        q[4 + j] = (w >> 4) & 0x0f0f0f0fu;
    }
}

// The nibble words of a sub-block through a grid (quant_blocks.hpp's kIq4nlW*, kMxfp4W*): both
// nibbles of each loaded word by lut16_nibbles (the values of lut16 on nibble_words' words).
template <int Align>
ARBOR_HD inline void grid_nibble_words(const uint8_t* qs, uint32_t* q, uint32_t t0, uint32_t t1, uint32_t t2, uint32_t t3) {
    ARBOR_UNROLL
    for (int j = 0; j < 4; ++j) lut16_nibbles(nibble_word<Align>(qs, j), t0, t1, t2, t3, &q[j], &q[4 + j]);
}

template <class Fmt>
struct Packed {
    static constexpr bool kHas = false;
    static constexpr int kAlign = 1;
};

template <>
struct Packed<Q4_0> {
    static constexpr bool kHas = true;
    static constexpr int kAlign = 2;
    ARBOR_HD static PackedSub unpack(const uint8_t* b, int) {
        PackedSub p;
        nibble_words<2>(b + 2, p.q);
        p.ws = fp16_to_f32(ld16(b));
        return p;
    }
    // codes = nibble - 8: dot(q, a) = dot(nibbles, a) + dot(-8, a) (from a itself, so the bits
    // do not depend on the block's stored sum).
    ARBOR_HD static SubTerms apply(const PackedSub& p, const int8_t* a, int32_t) {
        int32_t s = dot32(p.q, a);
        ARBOR_UNROLL
        for (int j = 0; j < 8; ++j) s = dot4(0xf8f8f8f8u, ld32_a4(reinterpret_cast<const uint8_t*>(a) + 4 * j), s);
        return {p.ws, s, 0.0f, 0};
    }
};

// The terms of a format whose codes need no offset: the scale, and the codes' dot.
struct ScaledDot {
    ARBOR_HD static SubTerms apply(const PackedSub& p, const int8_t* a, int32_t) { return {p.ws, dot32(p.q, a), 0.0f, 0}; }
};

template <>
struct Packed<Q8_0> : ScaledDot {
    static constexpr bool kHas = true;
    static constexpr int kAlign = 2;
    ARBOR_HD static PackedSub unpack(const uint8_t* b, int) {
        PackedSub p;
        ARBOR_UNROLL
        for (int j = 0; j < 8; ++j) p.q[j] = ld32_a2(b + 2 + 4 * j);
        p.ws = fp16_to_f32(ld16(b));
        return p;
    }
};

// Q4_K and Q5_K: k1 = the 6-bit scale, k2 = the 6-bit min; the low four bits of sub-block sb's
// codes are nibbles of the 32 bytes at qs0 + 32 * (sb / 2).
ARBOR_HD inline PackedSub k4_unpack(const uint8_t* b, int sb, const uint8_t* qs0) {
    PackedSub p;
    k4_scale_min_w(ld32_a4(b + 4), ld32_a4(b + 8), ld32_a4(b + 12), sb, &p.k1, &p.k2);
    const uint8_t* qs = qs0 + 32 * (sb / 2);
    const int shift = 4 * (sb % 2);
    ARBOR_UNROLL
    for (int j = 0; j < 8; ++j) p.q[j] = (ld32_a4(qs + 4 * j) >> shift) & 0x0f0f0f0fu;
    const uint32_t dm = ld32_a4(b);  // d, then dmin
    p.ws = fp16_to_f32(dm & 0xffffu);
    p.wm = -fp16_to_f32(dm >> 16);
    return p;
}

template <>
struct Packed<Q4_K> {
    static constexpr bool kHas = true;
    static constexpr int kAlign = 4;
    ARBOR_HD static PackedSub unpack(const uint8_t* b, int sb) { return k4_unpack(b, sb, b + 16); }
    ARBOR_HD static SubTerms apply(const PackedSub& p, const int8_t* a, int32_t asum) {
        return {p.ws, p.k1 * dot32(p.q, a), p.wm, p.k2 * asum};
    }
};

// Q5_K: Q4_K's nibbles (at b + 48) plus a fifth bit per element, bit sb of the 32 bytes at b + 16.
template <>
struct Packed<Q5_K> : Packed<Q4_K> {
    ARBOR_HD static PackedSub unpack(const uint8_t* b, int sb) {
        PackedSub p = k4_unpack(b, sb, b + 48);
        ARBOR_UNROLL
        for (int j = 0; j < 8; ++j) p.q[j] |= ((ld32_a4(b + 16 + 4 * j) >> sb) & 0x01010101u) << 4;
        return p;
    }
};

// Q6_K: the codes are u - 32 with u = 6 bits (0..63), kept as u; k1, k2 = the two 16-element
// groups' signed scales. Each group's dot is dot(u, a) + dot(-32, a).
template <>
struct Packed<Q6_K> {
    static constexpr bool kHas = true;
    static constexpr int kAlign = 2;
    ARBOR_HD static PackedSub unpack(const uint8_t* b, int sb) {
        PackedSub p;
        const int h = sb / 4, k = sb % 4;
        const uint8_t* ql = b + 64 * h + 32 * (k & 1);
        const uint8_t* qh = b + 128 + 32 * h;
        const int lshift = 4 * (k >> 1), hshift = 2 * k;
        ARBOR_UNROLL
        for (int j = 0; j < 8; ++j)
            p.q[j] = ((ld32_a2(ql + 4 * j) >> lshift) & 0x0f0f0f0fu) | (((ld32_a2(qh + 4 * j) >> hshift) & 0x03030303u) << 4);
        p.k1 = int8_t(b[192 + 2 * sb]);
        p.k2 = int8_t(b[192 + 2 * sb + 1]);
        p.ws = fp16_to_f32(ld16(b + 208));
        return p;
    }
    ARBOR_HD static SubTerms apply(const PackedSub& p, const int8_t* a, int32_t) {
        int32_t half[2];
        ARBOR_UNROLL
        for (int g = 0; g < 2; ++g) {
            int32_t s = 0;
            ARBOR_UNROLL
            for (int j = 4 * g; j < 4 * g + 4; ++j) {
                const uint32_t av = ld32_a4(reinterpret_cast<const uint8_t*>(a) + 4 * j);
                s = dot4(p.q[j], av, s);
                s = dot4(0xe0e0e0e0u, av, s);  // -32 in each byte
            }
            half[g] = s;
        }
        return {p.ws, p.k1 * half[0] + p.k2 * half[1], 0.0f, 0};
    }
};

// IQ4_XS: the codes are the table's values; k1 = the sub-block's scale - 32.
template <>
struct Packed<IQ4_XS> {
    static constexpr bool kHas = true;
    static constexpr int kAlign = 4;
    ARBOR_HD static PackedSub unpack(const uint8_t* b, int sb) {
        PackedSub p;
        grid_nibble_words<4>(b + 8 + 16 * sb, p.q, kIq4nlW0, kIq4nlW1, kIq4nlW2, kIq4nlW3);
        p.k1 = iq4xs_scale(b, sb) - 32;
        p.ws = fp16_to_f32(ld16(b));
        return p;
    }
    ARBOR_HD static SubTerms apply(const PackedSub& p, const int8_t* a, int32_t) {
        return {p.ws, p.k1 * dot32(p.q, a), 0.0f, 0};
    }
};

// IQ4_NL and MXFP4 have packed forms where ARBOR_PACKED_GRIDS_ON (quant_blocks.hpp) says so.
constexpr bool kPackedGrids = ARBOR_PACKED_GRIDS_ON != 0;

// IQ4_NL: Q4_0's layout (an fp16 scale, then 16 bytes of nibbles) with the table's values as
// the codes.
template <>
struct Packed<IQ4_NL> : ScaledDot {
    static constexpr bool kHas = kPackedGrids;
    static constexpr int kAlign = 2;
    ARBOR_HD static PackedSub unpack(const uint8_t* b, int) {
        PackedSub p;
        grid_nibble_words<2>(b + 2, p.q, kIq4nlW0, kIq4nlW1, kIq4nlW2, kIq4nlW3);
        p.ws = fp16_to_f32(ld16(b));
        return p;
    }
};

// MXFP4: an exponent byte, then 16 bytes of nibbles whose codes are the doubled e2m1 values. Its
// 17-byte blocks keep no alignment, so the nibble words are read byte by byte.
template <>
struct Packed<MXFP4> : ScaledDot {
    static constexpr bool kHas = kPackedGrids;
    static constexpr int kAlign = 1;
    ARBOR_HD static PackedSub unpack(const uint8_t* b, int) {
        PackedSub p;
        grid_nibble_words<1>(b + 1, p.q, kMxfp4W0, kMxfp4W1, kMxfp4W2, kMxfp4W3);
        p.ws = e8m0_half_to_f32(b[0]);
        return p;
    }
};

// Fmt::terms's result, from words where the format has a packed form.
template <class Fmt>
ARBOR_HD inline SubTerms packed_terms(const uint8_t* b, int sb, const int8_t* a, int32_t asum) {
    if constexpr (Packed<Fmt>::kHas) return Packed<Fmt>::apply(Packed<Fmt>::unpack(b, sb), a, asum);
    else return Fmt::terms(b, sb, a, asum);
}

// Whether packed_terms may read the blocks of a row starting at `row`.
template <class Fmt>
ARBOR_HD inline bool packed_aligned(const void* row) {
    return (reinterpret_cast<unsigned long long>(row) & static_cast<unsigned long long>(Packed<Fmt>::kAlign - 1)) == 0;
}

}  // namespace arbor::quant::blocks
