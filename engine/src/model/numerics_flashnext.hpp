// The element functions of flashnext's ops (docs/MODEL-flashnext.md, "Choices made"): the
// hyper-connection mix (pre, post, Sinkhorn-normalised comb), the stream combine and update,
// the pooled block key's mean, and the indexer score. Plain inline C++ (ARBOR_HD) on top of
// numerics.hpp, shared by the CPU stages and the GPU megakernel so both compute the same bits.
//
// ORDERS (float32, every operation rounded once unless it is an fmaf):
//  * sigmoid(z) = 1 / (1 + exp_f(-z)).
//  * pre_i = sigmoid(fmaf(s_pre, m_i, base_i)) + eps; post_i = 2 * sigmoid(fmaf(s_post, m_4+i, base_4+i)).
//  * comb: c[j][k] = fmaf(s_comb, m_8+4j+k, base_8+4j+k); softmax of each row j (numerics'
//    softmax), + eps; columns divided by (sequential column sum + eps); then iters-1 rounds of
//    rows, then columns, each divided by (its sequential sum + eps), the sum taken first.
//  * stream combine: x = +0; x = fmaf(pre_i, X_i, x) for i = 0..3.
//  * stream update: X'_k = rn(post_k * y), then fmaf(comb[j][k], X_j, .) for j = 0..3.
//  * pooled mean: ((k0 + k1) + k2) + k3, times 0.25.
//  * score: acc = +0; acc = fmaf(w_h, relu(dot_lanes(q_h, K, d)), acc) for h in order,
//    relu(v) = v > 0 ? v : +0.
#pragma once

#include "model/numerics.hpp"

namespace arbor::num {

constexpr int kHcStreams = 4;
constexpr int kHcMix = 2 * kHcStreams + kHcStreams * kHcStreams;  // 24: pre 4 | post 4 | comb 16

ARBOR_HD inline float sigmoid(float z) { return div_rn(1.0f, add_rn(1.0f, exp_f(-z))); }

// m[24] = fn . f; scale[3]; base[24]. Writes pre[4], post[4], comb[16] (row-major j, k).
ARBOR_HD inline void hc_mix(const float* m, const float* scale, const float* base, float eps, int iters, float* pre,
                            float* post, float* comb) {
    const int n = kHcStreams;
    for (int i = 0; i < n; ++i) {
        pre[i] = add_rn(sigmoid(fmaf(scale[0], m[i], base[i])), eps);
        post[i] = mul_rn(2.0f, sigmoid(fmaf(scale[1], m[n + i], base[n + i])));
    }
    float c[kHcStreams * kHcStreams];
    for (int i = 0; i < n * n; ++i) c[i] = fmaf(scale[2], m[2 * n + i], base[2 * n + i]);
    for (int j = 0; j < n; ++j) {
        softmax(c + j * n, n, comb + j * n);
        for (int k = 0; k < n; ++k) comb[j * n + k] = add_rn(comb[j * n + k], eps);
    }
    auto columns = [&] {
        for (int k = 0; k < n; ++k) {
            float s = 0.0f;
            for (int j = 0; j < n; ++j) s = add_rn(s, comb[j * n + k]);
            const float den = add_rn(s, eps);
            for (int j = 0; j < n; ++j) comb[j * n + k] = div_rn(comb[j * n + k], den);
        }
    };
    columns();
    for (int it = 1; it < iters; ++it) {
        for (int j = 0; j < n; ++j) {
            float s = 0.0f;
            for (int k = 0; k < n; ++k) s = add_rn(s, comb[j * n + k]);
            const float den = add_rn(s, eps);
            for (int k = 0; k < n; ++k) comb[j * n + k] = div_rn(comb[j * n + k], den);
        }
        columns();
    }
}

// The head's pre weights: pre_i = sigmoid(fmaf(scale, m_i, base_i)) + eps.
ARBOR_HD inline void hc_head_pre(const float* m, float scale, const float* base, float eps, float* pre) {
    for (int i = 0; i < kHcStreams; ++i) pre[i] = add_rn(sigmoid(fmaf(scale, m[i], base[i])), eps);
}

// x = sum_i pre_i X_i for one element (X_i at stride apart).
ARBOR_HD inline float hc_combine(const float* pre, const float* x0, int64_t stride) {
    float acc = 0.0f;
    for (int i = 0; i < kHcStreams; ++i) acc = fmaf(pre[i], x0[i * stride], acc);
    return acc;
}

// The new value of stream k for one element: post_k * y + sum_j comb[j][k] X_j.
ARBOR_HD inline float hc_update(float post_k, float y, const float* comb, int k, const float* xj) {
    float acc = mul_rn(post_k, y);
    for (int j = 0; j < kHcStreams; ++j) acc = fmaf(comb[j * kHcStreams + k], xj[j], acc);
    return acc;
}

ARBOR_HD inline float pool_mean4(float k0, float k1, float k2, float k3) {
    return mul_rn(add_rn(add_rn(add_rn(k0, k1), k2), k3), 0.25f);
}

ARBOR_HD inline float relu(float v) { return v > 0.0f ? v : 0.0f; }

// s(t, b) for one block: q = H heads of d (scaled, rotated), w = H head weights, key = K_b.
ARBOR_HD inline float index_score(const float* q, const float* w, const float* key, int heads, int d) {
    float acc = 0.0f;
    for (int h = 0; h < heads; ++h) acc = fmaf(w[h], relu(dot_lanes(q + h * d, key, d)), acc);
    return acc;
}

}  // namespace arbor::num
