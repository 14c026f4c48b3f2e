// The element and reduction functions of the model ops: the numerics contract of the engine.
//
// Every function here is plain C++ (inline, ARBOR_HD), so the CPU backend and the GPU megakernel
// compute the same bits by construction. Arithmetic goes through the correctly rounded helpers
// of quant_blocks.hpp (mul_rn, add_rn, sub_rn, div_rn) or explicit fmaf, sqrtf and rintf, which
// are correctly rounded IEEE operations on every target. No libm transcendental is used:
// exp_f and sincos_d below are ours and fully specified.
//
// REDUCTIONS (accumulator float32 unless said otherwise):
//  * lanes32 dot, dot_lanes(a, b, n): element i goes to lane i % 32 in increasing i,
//    acc[i%32] = fmaf(a_i, b_i, acc[i%32]); then the tree of combine_lanes (s = 16, 8, 4, 2, 1:
//    acc[j] = acc[j] + acc[j+s]). This is the F32 row-dot of arbor/quant.hpp, so matmuls with
//    float weights, attention scores and the RMSNorm sum of squares all share one definition.
//  * RMSNorm: ss = dot_lanes(x, x, n); mean = ss / n; scale = 1 / sqrt(mean + eps);
//    y_i = (x_i * scale) * w_i.
//  * Softmax of the MoE router over E logits: m = max; e_i = exp_f(l_i - m); s = sequential
//    sum of e_i in increasing i; p_i = e_i / s. Top-k: the k largest p (ties: lower expert id
//    first), in that order (slot order); renormalised weights w_k = p_k / t, where t is the
//    sequential sum of the selected p in slot order.
//  * Expert combine: acc = 0; for each slot k in slot order acc = fmaf(w_k, y_k, acc); then the
//    residual x = x + acc.
//  * Attention of one query over cells 0..p of its sequence, cut into chunks of kAttnChunk
//    cells at absolute cell boundaries (chunk c = cells [c*256, c*256+256)):
//      s_j = dot_lanes(q, k_j, head_dim) * scale
//      per chunk: m_c = max s_j; e_j = exp_f(s_j - m_c); l_c = sequential sum of e_j in j;
//                 o_c[d] = sequential fmaf(e_j, v_j[d], o_c[d]) in j (from +0)
//      combine in chunk order: M = max m_c; w_c = exp_f(m_c - M);
//                 L = fmaf(l_c, w_c, L); O[d] = fmaf(o_c[d], w_c, O[d]) (from +0)
//      out[d] = O[d] / L.
//    With one chunk w = 1 exactly, so O = o and L = l. The chunking is part of the definition:
//    a backend may spread chunks over workers, but it combines them in chunk order.
//  * RoPE: theta = float(pos) * freq_i (one rounding); (c, s) = cos/sin of theta computed by
//    sincos_d in double and rounded to float, each times mscale (one rounding) when mscale != 1;
//    a' = a*c - b*s, b' = a*s + b*c, each product rounded, then the sum or difference rounded.
//  * SiLU: silu(x) = x / (1 + exp_f(-x)); the gated FFN is h = silu(g) * u.
#pragma once

#include "quant/quant_blocks.hpp"

#include <cmath>
#include <cstdint>

namespace arbor::num {

using quant::blocks::add_rn;
using quant::blocks::bits_f32;
using quant::blocks::combine_lanes;
using quant::blocks::div_rn;
using quant::blocks::f32_bits;
using quant::blocks::mul_rn;
using quant::blocks::sub_rn;

constexpr int kAttnChunk = 256;  // attention chunk, in cells (equal to the KV page size)

// ---- exp ----------------------------------------------------------------------------------
// exp_f(x): NaN -> NaN; x > 88.72283935546875 -> +inf; x < -87 -> +0 (values below 1.7e-38 are
// flushed, which keeps every intermediate normal). Otherwise, with n = rint(x * log2(e)):
//   r = fmaf(-n, LN2_HI, x); r = fmaf(-n, LN2_LO, r)                     (|r| <= 0.35)
//   p = Taylor polynomial of (e^r - 1 - r) / r^2, degree 5, Horner with fmaf:
//       p = 1/5040; p = fmaf(p, r, 1/720); ... p = fmaf(p, r, 1/2)
//   y = fmaf(p, r*r, r) + 1                                              (e^r, rel. err ~1e-7)
//   result = y * 2^n (an exact power-of-two scaling, in two steps when n = 128).
ARBOR_HD inline float exp_f(float x) {
    if (!(x == x)) return x;
    if (x > 88.72283935546875f) return bits_f32(0x7f800000u);
    if (x < -87.0f) return 0.0f;
    const float n = rintf(mul_rn(x, 1.44269504088896340736f));
    float r = fmaf(-n, 0.693145751953125f, x);
    r = fmaf(-n, 1.42860682030941723212e-6f, r);
    float p = 1.98412698412698412698e-4f;  // 1/5040
    p = fmaf(p, r, 1.38888888888888888889e-3f);  // 1/720
    p = fmaf(p, r, 8.33333333333333333333e-3f);  // 1/120
    p = fmaf(p, r, 4.16666666666666666667e-2f);  // 1/24
    p = fmaf(p, r, 1.66666666666666666667e-1f);  // 1/6
    p = fmaf(p, r, 0.5f);
    const float y = add_rn(fmaf(p, mul_rn(r, r), r), 1.0f);
    const int ni = int(n);
    if (ni > 127) return mul_rn(mul_rn(y, bits_f32(uint32_t(127 + 127) << 23)), 2.0f);
    return mul_rn(y, bits_f32(uint32_t(ni + 127) << 23));
}

ARBOR_HD inline float silu(float x) { return div_rn(x, add_rn(1.0f, exp_f(-x))); }

// ---- lanes32 dot ----------------------------------------------------------------------------
ARBOR_HD inline float dot_lanes(const float* a, const float* b, int n) {
    float acc[32];
    for (int j = 0; j < 32; ++j) acc[j] = 0.0f;
    for (int i = 0; i < n; ++i) acc[i & 31] = fmaf(a[i], b[i], acc[i & 31]);
    return combine_lanes(acc);
}

// The same with b stored as IEEE half (exact conversion).
ARBOR_HD inline float dot_lanes_h(const float* a, const uint16_t* b, int n) {
    float acc[32];
    for (int j = 0; j < 32; ++j) acc[j] = 0.0f;
    for (int i = 0; i < n; ++i) acc[i & 31] = fmaf(a[i], quant::blocks::fp16_to_f32(b[i]), acc[i & 31]);
    return combine_lanes(acc);
}

// ---- RMSNorm --------------------------------------------------------------------------------
ARBOR_HD inline float rms_scale(float sum_sq, int n, float eps) {
    const float mean = div_rn(sum_sq, float(n));
    return div_rn(1.0f, sqrtf(add_rn(mean, eps)));
}

// y may alias x.
ARBOR_HD inline void rms_norm(const float* x, const float* w, float eps, int n, float* y) {
    const float scale = rms_scale(dot_lanes(x, x, n), n, eps);
    for (int i = 0; i < n; ++i) y[i] = mul_rn(mul_rn(x[i], scale), w[i]);
}

// ---- RoPE -----------------------------------------------------------------------------------
// sin and cos of a double argument (|x| < 2^30), fully specified: k = rint(x * 2/pi);
// r = x - k*pi/2 with a three-part Cody-Waite constant (fma); Taylor series of sin and cos on
// |r| <= pi/4 to degree 21/20 (error far below one double ulp of the float result); the
// quadrant k mod 4 picks and signs them. Double operations are IEEE everywhere.
ARBOR_HD inline void sincos_d(double x, double* s, double* c) {
    const double k = rint(x * 0.63661977236758134308);
    double r = fma(-k, 1.57079632673412561417e+00, x);  // pi/2 in three parts (33+33+53 bits)
    r = fma(-k, 6.07710050630396597660e-11, r);
    r = fma(-k, 2.02226624879595063154e-21, r);
    const double r2 = r * r;
    // sin r = r * (1 - r2/3! + r2^2/5! - ...), cos r = 1 - r2/2! + r2^2/4! - ...
    double ps = 1.9572941063391262e-20;   // 1/21!
    ps = fma(ps, -r2, 8.2206352466243297e-18);  // 1/19!
    ps = fma(ps, -r2, 2.8114572543455206e-15);  // 1/17!
    ps = fma(ps, -r2, 7.6471637318198164e-13);  // 1/15!
    ps = fma(ps, -r2, 1.6059043836821613e-10);  // 1/13!
    ps = fma(ps, -r2, 2.5052108385441720e-08);  // 1/11!
    ps = fma(ps, -r2, 2.7557319223985893e-06);  // 1/9!
    ps = fma(ps, -r2, 1.9841269841269841e-04);  // 1/7!
    ps = fma(ps, -r2, 8.3333333333333333e-03);  // 1/5!
    ps = fma(ps, -r2, 1.6666666666666667e-01);  // 1/3!
    const double sr = fma(-r * r2, ps, r);
    double pc = 4.1103176233121648e-19;   // 1/20!
    pc = fma(pc, -r2, 1.5619206968586225e-16);  // 1/18!
    pc = fma(pc, -r2, 4.7794773323873853e-14);  // 1/16!
    pc = fma(pc, -r2, 1.1470745597729725e-11);  // 1/14!
    pc = fma(pc, -r2, 2.0876756987868099e-09);  // 1/12!
    pc = fma(pc, -r2, 2.7557319223985888e-07);  // 1/10!
    pc = fma(pc, -r2, 2.4801587301587302e-05);  // 1/8!
    pc = fma(pc, -r2, 1.3888888888888889e-03);  // 1/6!
    pc = fma(pc, -r2, 4.1666666666666667e-02);  // 1/4!
    pc = fma(pc, -r2, 5.0000000000000000e-01);  // 1/2!
    const double cr = fma(-r2, pc, 1.0);
    const int q = int(k - 4.0 * floor(k * 0.25));
    switch (q) {
    case 0: *s = sr; *c = cr; break;
    case 1: *s = cr; *c = -sr; break;
    case 2: *s = -sr; *c = -cr; break;
    default: *s = -cr; *c = sr; break;
    }
}

// cos and sin of theta = pos * freq for RoPE, as floats (see the contract above).
ARBOR_HD inline void rope_cs(int pos, float freq, float mscale, float* c, float* s) {
    const float theta = mul_rn(float(pos), freq);
    double sd, cd;
    sincos_d(double(theta), &sd, &cd);
    float cf = float(cd), sf = float(sd);
    if (mscale != 1.0f) {
        cf = mul_rn(cf, mscale);
        sf = mul_rn(sf, mscale);
    }
    *c = cf;
    *s = sf;
}

ARBOR_HD inline void rope_pair(float* a, float* b, float c, float s) {
    const float x0 = *a, x1 = *b;
    *a = sub_rn(mul_rn(x0, c), mul_rn(x1, s));
    *b = add_rn(mul_rn(x0, s), mul_rn(x1, c));
}

// ---- attention chunk ------------------------------------------------------------------------
// One chunk of the attention contract for one query: scores s[0..n) are turned in place into
// e_j; returns m (the chunk max) and l; o[0..dv) gets the weighted sum of the rows, where
// v(j, d) is element d of value row j as a float.
template <class VLoad>
ARBOR_HD inline void attn_chunk(float* s, int n, VLoad v, int dv, float* m_out, float* l_out, float* o) {
    float m = s[0];
    for (int j = 1; j < n; ++j)
        if (s[j] > m) m = s[j];
    float l = 0.0f;
    for (int j = 0; j < n; ++j) {
        s[j] = exp_f(sub_rn(s[j], m));
        l = add_rn(l, s[j]);
    }
    for (int d = 0; d < dv; ++d) o[d] = 0.0f;
    for (int j = 0; j < n; ++j)
        for (int d = 0; d < dv; ++d) o[d] = fmaf(s[j], v(j, d), o[d]);
    *m_out = m;
    *l_out = l;
}

// Weight of a chunk in the combine: w_c = exp_f(m_c - M).
ARBOR_HD inline float attn_chunk_weight(float m_c, float M) { return exp_f(sub_rn(m_c, M)); }

// ---- router ---------------------------------------------------------------------------------
// Softmax over n logits into p (see the contract).
ARBOR_HD inline void softmax(const float* l, int n, float* p) {
    float m = l[0];
    for (int i = 1; i < n; ++i)
        if (l[i] > m) m = l[i];
    float s = 0.0f;
    for (int i = 0; i < n; ++i) {
        p[i] = exp_f(sub_rn(l[i], m));
        s = add_rn(s, p[i]);
    }
    for (int i = 0; i < n; ++i) p[i] = div_rn(p[i], s);
}

// The k largest of p[0..n) (ties: lower index first), in descending order, into idx[0..k);
// their weights renormalised to sum to one (when norm) into w[0..k).
ARBOR_HD inline void top_k(const float* p, int n, int k, bool norm, int* idx, float* w) {
    for (int s = 0; s < k; ++s) {
        int best = -1;
        for (int i = 0; i < n; ++i) {
            bool taken = false;
            for (int t = 0; t < s; ++t) taken = taken || idx[t] == i;
            if (taken) continue;
            if (best < 0 || p[i] > p[best]) best = i;
        }
        idx[s] = best;
        w[s] = p[best];
    }
    if (!norm) return;
    float t = 0.0f;
    for (int s = 0; s < k; ++s) t = add_rn(t, w[s]);
    for (int s = 0; s < k; ++s) w[s] = div_rn(w[s], t);
}

}  // namespace arbor::num
