// The CPU's inner loops of the model ops, in two implementations that give the same bits: a
// scalar one that calls numerics.hpp's definitions directly, and an AVX2+FMA one (chosen at run
// time when the CPU has it) that performs the same IEEE operations eight lanes at a time.
// tests/model/test_numerics.cpp checks that the two agree bit for bit.
#pragma once

#include <arbor/kv_cache.hpp>

#include <cstddef>
#include <cstdint>

namespace arbor::cpu {

struct Kernels {
    const char* name;
    // numerics' dot_lanes(a, b, n).
    float (*dot)(const float* a, const float* b, int n);
    // Attention scores of nq queries (q + h*q_stride) against n cells of K rows (k + j*k_stride
    // bytes, elements of type t): s[h*kAttnChunk + j] = dot_lanes(q_h, k_j, hd) * scale.
    void (*scores)(const float* q, int nq, int q_stride, const uint8_t* k, size_t k_stride, KvType t, int n, int hd,
                   float scale, float* s);
    // s[j] = exp_f(s[j] - m) for j < n; returns the sequential sum of the new s[j].
    float (*exp_sum)(float* s, int n, float m);
    // o[d] = sequential over j < n of fmaf(e[j], v_j[d], o[d]), from o = +0; V rows at
    // v + j*v_stride bytes.
    void (*weighted_sum)(const float* e, int n, const uint8_t* v, size_t v_stride, KvType t, int dv, float* o);
    // y[i] = (x[i] * scale) * w[i].
    void (*scale_mul)(const float* x, float scale, const float* w, int n, float* y);
    // h[i] = silu(g[i]) * u[i] (numerics' silu).
    void (*silu_mul)(const float* g, const float* u, int n, float* h);
};

// Element i of a KV-cell row (K, V or indexer key) of type t, as a float (exact).
float kv_load(const uint8_t* row, int64_t i, KvType t);
// n floats stored as a KV-cell row of type t (IEEE half rounds to nearest even).
void kv_store(uint8_t* dst, const float* src, int64_t n, KvType t);

const Kernels& scalar_kernels();
const Kernels& avx2_kernels();  // only where cpu_has_avx2()
bool cpu_has_avx2();
const Kernels& best_kernels();

}  // namespace arbor::cpu
