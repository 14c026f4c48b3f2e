// The scalar kernels: numerics.hpp's definitions, one element at a time.
#include "model/cpu_kernels.hpp"

#include "model/numerics.hpp"

#include <cstring>

namespace arbor::cpu {
namespace {

using quant::blocks::fp16_to_f32;

float dot_scalar(const float* a, const float* b, int n) { return num::dot_lanes(a, b, n); }

void scores_scalar(const float* q, int nq, int q_stride, const uint8_t* k, size_t k_stride, KvType t, int n, int hd,
                   float scale, float* s) {
    float kf[1024];
    for (int j = 0; j < n; ++j) {
        const uint8_t* row = k + size_t(j) * k_stride;
        for (int d = 0; d < hd; ++d) kf[d] = kv_load(row, d, t);
        for (int h = 0; h < nq; ++h)
            s[h * num::kAttnChunk + j] = num::mul_rn(num::dot_lanes(q + h * q_stride, kf, hd), scale);
    }
}

float exp_sum_scalar(float* s, int n, float m) {
    float l = 0.0f;
    for (int j = 0; j < n; ++j) {
        s[j] = num::exp_f(num::sub_rn(s[j], m));
        l = num::add_rn(l, s[j]);
    }
    return l;
}

void weighted_sum_scalar(const float* e, int n, const uint8_t* v, size_t v_stride, KvType t, int dv, float* o) {
    for (int d = 0; d < dv; ++d) o[d] = 0.0f;
    for (int j = 0; j < n; ++j) {
        const uint8_t* row = v + size_t(j) * v_stride;
        for (int d = 0; d < dv; ++d) o[d] = fmaf(e[j], kv_load(row, d, t), o[d]);
    }
}

void scale_mul_scalar(const float* x, float scale, const float* w, int n, float* y) {
    for (int i = 0; i < n; ++i) y[i] = num::mul_rn(num::mul_rn(x[i], scale), w[i]);
}

void silu_mul_scalar(const float* g, const float* u, int n, float* h) {
    for (int i = 0; i < n; ++i) h[i] = num::mul_rn(num::silu(g[i]), u[i]);
}

}  // namespace

float kv_load(const uint8_t* row, int64_t i, KvType t) {
    if (t == KvType::F32) {
        float f;
        std::memcpy(&f, row + 4 * i, 4);
        return f;
    }
    return fp16_to_f32(quant::blocks::ld16(row + 2 * i));
}

void kv_store(uint8_t* dst, const float* src, int64_t n, KvType t) {
    if (t == KvType::F32) {
        std::memcpy(dst, src, size_t(n) * 4);
        return;
    }
    for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = quant::blocks::f32_to_fp16(src[i]);
        dst[2 * i] = uint8_t(h & 0xff);
        dst[2 * i + 1] = uint8_t(h >> 8);
    }
}

const Kernels& scalar_kernels() {
    static const Kernels k{"scalar", dot_scalar, scores_scalar, exp_sum_scalar, weighted_sum_scalar, scale_mul_scalar,
                           silu_mul_scalar};
    return k;
}

bool cpu_has_avx2() {
#if defined(__x86_64__) || defined(__i386__)
    static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                            __builtin_cpu_supports("f16c");
    return has;
#else
    return false;
#endif
}

const Kernels& best_kernels() { return cpu_has_avx2() ? avx2_kernels() : scalar_kernels(); }

}  // namespace arbor::cpu
