// Round-to-nearest quantizers for the GGUF writer: F32, F16, BF16, Q8_0, Q4_K, Q6_K, IQ4_XS.
// Simple and deterministic (no search, no importance weights): scales come from each block's
// extreme values, then every code is the nearest one under the *decoded* (fp16-rounded)
// scales, computed with the decoder's own float products. Non-finite inputs never crash:
// NaNs are skipped when finding ranges and code to zero; scales saturate at the fp16 maximum.
#include "format_dispatch.hpp"

#include <arbor/quant.hpp>

#include <string>

namespace arbor::quant {
namespace {

using namespace blocks;

// fp16 of a finite scale, saturated to the largest finite half.
uint16_t scale_fp16(float v) {
    const uint16_t h = f32_to_fp16(v);
    if ((h & 0x7c00u) == 0x7c00u) return uint16_t((h & 0x8000u) | 0x7bffu);
    return h;
}

int round_clamp(float v, int lo, int hi) {
    const float r = rintf(v);
    if (r != r) return lo <= 0 && hi >= 0 ? 0 : lo;
    return r < float(lo) ? lo : r > float(hi) ? hi : int(r);
}

float finite_or_zero(float v) { return std::isfinite(v) ? v : 0.0f; }

// The element of largest magnitude (first one on ties), NaNs skipped; 0 when there is none.
float signed_absmax(const float* x, int n) {
    float best = 0.0f;
    for (int i = 0; i < n; ++i)
        if (fabsf(x[i]) > fabsf(best)) best = x[i];
    return best;
}

void put16(uint8_t* p, uint16_t v) {
    p[0] = uint8_t(v);
    p[1] = uint8_t(v >> 8);
}

void quantize_q8_0(const float* x, uint8_t* b) {
    const float amax = fabsf(signed_absmax(x, 32));
    const uint16_t dh = scale_fp16(finite_or_zero(amax / 127.0f));
    const float d = fp16_to_f32(dh);
    put16(b, dh);
    for (int i = 0; i < 32; ++i) b[2 + i] = uint8_t(int8_t(d == 0.0f ? 0 : round_clamp(x[i] / d, -127, 127)));
}

void quantize_q4_k(const float* x, uint8_t* b) {
    float scale[8], offset[8], max_scale = 0.0f, max_offset = 0.0f;
    for (int sb = 0; sb < 8; ++sb) {
        float lo = 0.0f, hi = 0.0f;
        for (int l = 0; l < 32; ++l) {
            const float v = x[32 * sb + l];
            if (v < lo) lo = v;
            if (v > hi) hi = v;
        }
        scale[sb] = finite_or_zero((hi - lo) / 15.0f);
        offset[sb] = finite_or_zero(-lo);
        if (scale[sb] > max_scale) max_scale = scale[sb];
        if (offset[sb] > max_offset) max_offset = offset[sb];
    }
    const uint16_t dh = scale_fp16(max_scale / 63.0f), mh = scale_fp16(max_offset / 63.0f);
    const float d = fp16_to_f32(dh), dmin = fp16_to_f32(mh);
    int sc[8], mn[8];
    for (int sb = 0; sb < 8; ++sb) {
        sc[sb] = d > 0.0f ? round_clamp(scale[sb] / d, 0, 63) : 0;
        mn[sb] = dmin > 0.0f ? round_clamp(offset[sb] / dmin, 0, 63) : 0;
    }
    put16(b, dh);
    put16(b + 2, mh);
    uint8_t* s = b + 4;
    for (int j = 0; j < 4; ++j) {
        s[j] = uint8_t(sc[j] | ((sc[j + 4] >> 4) << 6));
        s[j + 4] = uint8_t(mn[j] | ((mn[j + 4] >> 4) << 6));
        s[j + 8] = uint8_t((sc[j + 4] & 0xf) | ((mn[j + 4] & 0xf) << 4));
    }
    uint8_t* qs = b + 16;
    for (int sb = 0; sb < 8; ++sb) {
        const float d1 = d * float(sc[sb]), m1 = dmin * float(mn[sb]);
        for (int l = 0; l < 32; ++l) {
            const int q = d1 > 0.0f ? round_clamp((x[32 * sb + l] + m1) / d1, 0, 15) : 0;
            uint8_t& byte = qs[32 * (sb / 2) + l];
            byte = sb % 2 ? uint8_t((byte & 0x0f) | (q << 4)) : uint8_t(q);
        }
    }
}

void quantize_q6_k(const float* x, uint8_t* b) {
    float scale[16], max_scale = 0.0f;
    for (int g = 0; g < 16; ++g) {
        scale[g] = finite_or_zero(signed_absmax(x + 16 * g, 16) / -32.0f);
        if (fabsf(scale[g]) > max_scale) max_scale = fabsf(scale[g]);
    }
    const uint16_t dh = scale_fp16(max_scale / 127.0f);
    const float d = fp16_to_f32(dh);
    uint8_t* ql = b;
    uint8_t* qh = b + 128;
    int8_t* sc = reinterpret_cast<int8_t*>(b + 192);
    for (int i = 0; i < 192; ++i) b[i] = 0;
    for (int g = 0; g < 16; ++g) sc[g] = int8_t(d > 0.0f ? round_clamp(scale[g] / d, -128, 127) : 0);
    put16(b + 208, dh);
    for (int i = 0; i < 256; ++i) {
        const float dl = d * float(sc[i / 16]);
        const int q = (dl != 0.0f ? round_clamp(x[i] / dl, -32, 31) : 0) + 32;
        const int sb = i / 32, l = i % 32, h = sb / 4, k = sb % 4;
        ql[64 * h + 32 * (k & 1) + l] |= uint8_t((q & 0xf) << (4 * (k >> 1)));
        qh[32 * h + l] |= uint8_t((q >> 4) << (2 * k));
    }
}

int nearest_iq4nl(float v) {
    int best = 8;
    float err = fabsf(v - float(iq4nl_value(8)));
    for (int i = 0; i < 16; ++i) {
        const float e = fabsf(v - float(iq4nl_value(i)));
        if (e < err) best = i, err = e;
    }
    return best;
}

void quantize_iq4_xs(const float* x, uint8_t* b) {
    float scale[8], pick = 0.0f;
    for (int sb = 0; sb < 8; ++sb) {
        scale[sb] = finite_or_zero(signed_absmax(x + 32 * sb, 32) / -127.0f);
        if (fabsf(scale[sb]) > fabsf(pick)) pick = scale[sb];
    }
    const uint16_t dh = scale_fp16(pick / -32.0f);
    const float d = fp16_to_f32(dh);
    uint16_t scales_h = 0;
    for (int i = 0; i < 4; ++i) b[4 + i] = 0;
    for (int sb = 0; sb < 8; ++sb) {
        const int ls = (d != 0.0f ? round_clamp(scale[sb] / d, -32, 31) : 0) + 32;
        b[4 + sb / 2] |= uint8_t((ls & 0xf) << (4 * (sb % 2)));
        scales_h |= uint16_t((ls >> 4) << (2 * sb));
        const float dl = d * float(ls - 32);
        uint8_t* qs = b + 8 + 16 * sb;
        for (int j = 0; j < 16; ++j) {
            const int lo = dl != 0.0f ? nearest_iq4nl(x[32 * sb + j] / dl) : 8;
            const int hi = dl != 0.0f ? nearest_iq4nl(x[32 * sb + j + 16] / dl) : 8;
            qs[j] = uint8_t(lo | (hi << 4));
        }
    }
    put16(b, dh);
    put16(b + 2, scales_h);
}

template <int Elems, int Bytes>
void each_block(const float* src, uint8_t* dst, int64_t n, void (*fn)(const float*, uint8_t*)) {
    for (int64_t blk = 0; blk < n / Elems; ++blk) fn(src + blk * Elems, dst + blk * Bytes);
}

}  // namespace

Status quantize(TensorType t, const float* src, void* dst, int64_t n) {
    auto bytes = row_bytes(t, n);
    if (!bytes) return make_error("quantize: " + bytes.message());
    auto* d = static_cast<uint8_t*>(dst);
    switch (t) {
        case TensorType::F32: memcpy(d, src, size_t(n) * 4); return {};
        case TensorType::F16:
            for (int64_t i = 0; i < n; ++i) put16(d + 2 * i, f32_to_fp16(src[i]));
            return {};
        case TensorType::BF16:
            for (int64_t i = 0; i < n; ++i) put16(d + 2 * i, f32_to_bf16(src[i]));
            return {};
        case TensorType::Q8_0: each_block<32, 34>(src, d, n, quantize_q8_0); return {};
        case TensorType::Q4_K: each_block<256, 144>(src, d, n, quantize_q4_k); return {};
        case TensorType::Q6_K: each_block<256, 210>(src, d, n, quantize_q6_k); return {};
        case TensorType::IQ4_XS: each_block<256, 136>(src, d, n, quantize_iq4_xs); return {};
        default: break;
    }
    auto info = tensor_type_info(static_cast<uint32_t>(t));
    return make_error("quantize: no quantizer for tensor type " +
                      (info ? std::string(info->name) : std::to_string(static_cast<uint32_t>(t))));
}

}  // namespace arbor::quant
