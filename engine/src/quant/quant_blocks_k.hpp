// The 256-element super-block formats (K-quants and IQ4_XS): eight 32-element sub-blocks per
// block, each with its own sub-scale (two 16-element groups for Q2_K, Q3_K and Q6_K).
// Included by quant_blocks.hpp; see there for the conventions.
#pragma once

#include "quant_blocks.hpp"

namespace arbor::quant::blocks {

// Q4_K / Q5_K: the 6-bit scale and min of sub-block j, packed in 12 bytes.
ARBOR_HD inline void k4_scale_min(const uint8_t* s, int j, int* sc, int* m) {
    if (j < 4) {
        *sc = s[j] & 63;
        *m = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 0xf) | ((s[j - 4] >> 6) << 4);
        *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

// k4_scale_min from the 12 scale bytes as three little-endian words (s0 = bytes 0-3, s1 = 4-7,
// s2 = 8-11), without a branch: byte j & 3 of each word is byte j, j + 4 or j - 4 as needed, and
// the two cases are chosen by selects. The GPU row dots use it so that no branch stands between
// their loads (a branch ends the block a scheduler may hoist loads within).
ARBOR_HD inline void k4_scale_min_w(uint32_t s0, uint32_t s1, uint32_t s2, int j, int* sc, int* m) {
    const int sh = 8 * (j & 3);
    const int a = int((s0 >> sh) & 0xffu), b = int((s1 >> sh) & 0xffu), c = int((s2 >> sh) & 0xffu);
    const bool lo = j < 4;  // a = byte j, b = byte j + 4; else a = byte j - 4, b = byte j, c = byte j + 4
    *sc = lo ? (a & 63) : ((c & 0xf) | ((a >> 6) << 4));
    *m = lo ? (b & 63) : ((c >> 4) | ((b >> 6) << 4));
}

// Q3_K: the 6-bit scale k (0..15) of 16-element group k, unsigned (subtract 32 to use it).
ARBOR_HD inline int k3_scale(const uint8_t* s, int k) {
    const int low = k < 8 ? (s[k] & 0xf) : (s[k - 8] >> 4);
    const int high = (s[8 + (k & 3)] >> (2 * (k >> 2))) & 3;
    return low | (high << 4);
}

// IQ4_XS: the 6-bit scale of sub-block sb, unsigned (subtract 32 to use it).
ARBOR_HD inline int iq4xs_scale(const uint8_t* b, int sb) {
    return ((b[4 + sb / 2] >> (4 * (sb % 2))) & 0xf) | (((ld16(b + 2) >> (2 * sb)) & 3) << 4);
}

struct Q2_K {
    static constexpr int kElems = 256, kBytes = 84, kSubs = 8;
    static constexpr bool kHasMin = true;
    ARBOR_HD static void codes(const uint8_t* b, int sb, int8_t* q) {
        const uint8_t* qs = b + 16 + 32 * (sb / 4);
        const int shift = 2 * (sb % 4);
        for (int l = 0; l < 32; ++l) q[l] = int8_t((qs[l] >> shift) & 3);
    }
    ARBOR_HD static void decode(const uint8_t* b, int sb, float* y) {
        const float d = fp16_to_f32(ld16(b + 80)), dmin = fp16_to_f32(ld16(b + 82));
        int8_t q[32];
        codes(b, sb, q);
        for (int g = 0; g < 2; ++g) {
            const int sc = b[2 * sb + g];
            const float dl = mul_rn(d, float(sc & 0xf)), ml = mul_rn(dmin, float(sc >> 4));
            for (int l = 0; l < 16; ++l) y[16 * g + l] = sub_rn(mul_rn(dl, float(q[16 * g + l])), ml);
        }
    }
    ARBOR_HD static SubTerms terms(const uint8_t* b, int sb, const int8_t* a, int32_t) {
        int8_t q[32];
        codes(b, sb, q);
        const int s0 = b[2 * sb], s1 = b[2 * sb + 1];
        const int32_t i1 = (s0 & 0xf) * dot16(q, a) + (s1 & 0xf) * dot16(q + 16, a + 16);
        const int32_t i2 = (s0 >> 4) * sum16(a) + (s1 >> 4) * sum16(a + 16);
        return {fp16_to_f32(ld16(b + 80)), i1, -fp16_to_f32(ld16(b + 82)), i2};
    }
};

struct Q3_K {
    static constexpr int kElems = 256, kBytes = 110, kSubs = 8;
    static constexpr bool kHasMin = false;
    ARBOR_HD static void codes(const uint8_t* b, int sb, int8_t* q) {
        const uint8_t* qs = b + 32 + 32 * (sb / 4);
        const int shift = 2 * (sb % 4);
        for (int l = 0; l < 32; ++l) q[l] = int8_t(((qs[l] >> shift) & 3) - (((b[l] >> sb) & 1) ? 0 : 4));
    }
    ARBOR_HD static void decode(const uint8_t* b, int sb, float* y) {
        const float d = fp16_to_f32(ld16(b + 108));
        int8_t q[32];
        codes(b, sb, q);
        for (int g = 0; g < 2; ++g) {
            const float dl = mul_rn(d, float(k3_scale(b + 96, 2 * sb + g) - 32));
            for (int l = 0; l < 16; ++l) y[16 * g + l] = mul_rn(dl, float(q[16 * g + l]));
        }
    }
    ARBOR_HD static SubTerms terms(const uint8_t* b, int sb, const int8_t* a, int32_t) {
        int8_t q[32];
        codes(b, sb, q);
        const int s0 = k3_scale(b + 96, 2 * sb) - 32, s1 = k3_scale(b + 96, 2 * sb + 1) - 32;
        return {fp16_to_f32(ld16(b + 108)), s0 * dot16(q, a) + s1 * dot16(q + 16, a + 16), 0.0f, 0};
    }
};

struct Q4_K {
    static constexpr int kElems = 256, kBytes = 144, kSubs = 8;
    static constexpr bool kHasMin = true;
    ARBOR_HD static void codes(const uint8_t* b, int sb, int8_t* q) {
        const uint8_t* qs = b + 16 + 32 * (sb / 2);
        const int shift = 4 * (sb % 2);
        for (int l = 0; l < 32; ++l) q[l] = int8_t((qs[l] >> shift) & 0xf);
    }
    ARBOR_HD static void decode(const uint8_t* b, int sb, float* y) {
        const float d = fp16_to_f32(ld16(b)), dmin = fp16_to_f32(ld16(b + 2));
        int sc, m;
        k4_scale_min(b + 4, sb, &sc, &m);
        const float d1 = mul_rn(d, float(sc)), m1 = mul_rn(dmin, float(m));
        int8_t q[32];
        codes(b, sb, q);
        for (int l = 0; l < 32; ++l) y[l] = sub_rn(mul_rn(d1, float(q[l])), m1);
    }
    ARBOR_HD static SubTerms terms(const uint8_t* b, int sb, const int8_t* a, int32_t asum) {
        int sc, m;
        k4_scale_min(b + 4, sb, &sc, &m);
        int8_t q[32];
        codes(b, sb, q);
        return {fp16_to_f32(ld16(b)), sc * (dot16(q, a) + dot16(q + 16, a + 16)), -fp16_to_f32(ld16(b + 2)), m * asum};
    }
};

struct Q5_K {
    static constexpr int kElems = 256, kBytes = 176, kSubs = 8;
    static constexpr bool kHasMin = true;
    ARBOR_HD static void codes(const uint8_t* b, int sb, int8_t* q) {
        const uint8_t* qh = b + 16;
        const uint8_t* qs = b + 48 + 32 * (sb / 2);
        const int shift = 4 * (sb % 2);
        for (int l = 0; l < 32; ++l) q[l] = int8_t(((qs[l] >> shift) & 0xf) + (((qh[l] >> sb) & 1) << 4));
    }
    ARBOR_HD static void decode(const uint8_t* b, int sb, float* y) {
        const float d = fp16_to_f32(ld16(b)), dmin = fp16_to_f32(ld16(b + 2));
        int sc, m;
        k4_scale_min(b + 4, sb, &sc, &m);
        const float d1 = mul_rn(d, float(sc)), m1 = mul_rn(dmin, float(m));
        int8_t q[32];
        codes(b, sb, q);
        for (int l = 0; l < 32; ++l) y[l] = sub_rn(mul_rn(d1, float(q[l])), m1);
    }
    ARBOR_HD static SubTerms terms(const uint8_t* b, int sb, const int8_t* a, int32_t asum) {
        int sc, m;
        k4_scale_min(b + 4, sb, &sc, &m);
        int8_t q[32];
        codes(b, sb, q);
        return {fp16_to_f32(ld16(b)), sc * (dot16(q, a) + dot16(q + 16, a + 16)), -fp16_to_f32(ld16(b + 2)), m * asum};
    }
};

struct Q6_K {
    static constexpr int kElems = 256, kBytes = 210, kSubs = 8;
    static constexpr bool kHasMin = false;
    ARBOR_HD static void codes(const uint8_t* b, int sb, int8_t* q) {
        const int h = sb / 4, k = sb % 4;
        const uint8_t* ql = b + 64 * h + 32 * (k & 1);
        const uint8_t* qh = b + 128 + 32 * h;
        const int lshift = 4 * (k >> 1), hshift = 2 * k;
        for (int l = 0; l < 32; ++l) q[l] = int8_t((((ql[l] >> lshift) & 0xf) | (((qh[l] >> hshift) & 3) << 4)) - 32);
    }
    ARBOR_HD static void decode(const uint8_t* b, int sb, float* y) {
        const float d = fp16_to_f32(ld16(b + 208));
        int8_t q[32];
        codes(b, sb, q);
        for (int g = 0; g < 2; ++g) {
            const float dl = mul_rn(d, float(int8_t(b[192 + 2 * sb + g])));
            for (int l = 0; l < 16; ++l) y[16 * g + l] = mul_rn(dl, float(q[16 * g + l]));
        }
    }
    ARBOR_HD static SubTerms terms(const uint8_t* b, int sb, const int8_t* a, int32_t) {
        int8_t q[32];
        codes(b, sb, q);
        const int s0 = int8_t(b[192 + 2 * sb]), s1 = int8_t(b[192 + 2 * sb + 1]);
        return {fp16_to_f32(ld16(b + 208)), s0 * dot16(q, a) + s1 * dot16(q + 16, a + 16), 0.0f, 0};
    }
};

struct IQ4_XS {
    static constexpr int kElems = 256, kBytes = 136, kSubs = 8;
    static constexpr bool kHasMin = false;
    ARBOR_HD static void codes(const uint8_t* b, int sb, int8_t* q) {
        int n[32];
        nibbles32(b + 8 + 16 * sb, n);
        for (int i = 0; i < 32; ++i) q[i] = int8_t(iq4nl_value(n[i]));
    }
    ARBOR_HD static void decode(const uint8_t* b, int sb, float* y) {
        const float dl = mul_rn(fp16_to_f32(ld16(b)), float(iq4xs_scale(b, sb) - 32));
        int8_t q[32];
        codes(b, sb, q);
        for (int i = 0; i < 32; ++i) y[i] = mul_rn(dl, float(q[i]));
    }
    ARBOR_HD static SubTerms terms(const uint8_t* b, int sb, const int8_t* a, int32_t) {
        int8_t q[32];
        codes(b, sb, q);
        return {fp16_to_f32(ld16(b)), (iq4xs_scale(b, sb) - 32) * (dot16(q, a) + dot16(q + 16, a + 16)), 0.0f, 0};
    }
};

}  // namespace arbor::quant::blocks
