// CPU work items of flashnext's hyper-connections (docs/MODEL-flashnext.md): the embedding
// copied into the four streams, the pre step of each wrap (stream norm, the 24 mixes, the
// combined and normalised sublayer input) and of the head, and the attention output matmul
// with the stream update folded into its epilogue. Orders: numerics_flashnext.hpp.
#include "model/cpu_pass.hpp"
#include "model/numerics_flashnext.hpp"

#include <cstring>

namespace arbor::cpu {
namespace {

constexpr int kN = num::kHcStreams;

}  // namespace

void run_embed_hc(const Pass& p, int64_t t) {
    const int64_t d = p.cfg->n_embd;
    float* x = p.x4 + t * kN * d;
    const WeightRef& e = p.w->tok_embd;
    (void)quant::dequantize(e.type, e.row(p.token[t]), x, d);
    for (int i = 1; i < kN; ++i) std::memcpy(x + i * d, x, size_t(d) * 4);
}

// Item t (or output row o of the head): Hc[t] = (pre, post, comb) and XN[t].
void run_hc_pre(const Pass& p, const plan::Stage& s, int64_t item, int worker) {
    const ModelConfig& c = *p.cfg;
    const int64_t d = c.n_embd, nd = kN * d;
    const bool head = s.outputs_only;
    const int64_t t = head ? p.out_token[item] : item;
    const float* X = p.x4 + t * nd;
    float* f = p.scratch[worker].fx.data();  // [4d] normalised streams, then [d] the combined input
    float m[num::kHcMix], mix[num::kHcMix];
    const float r = num::rms_scale(p.k->dot(X, X, int(nd)), int(nd), c.rms_eps);
    for (int64_t i = 0; i < nd; ++i) f[i] = num::mul_rn(X[i], r);
    float* pre = mix;
    if (head) {
        const WeightRef& fn = p.w->output_hc_fn;
        quant::dot_rows_isa(p.isa, fn.type, fn.row(0), fn.row_bytes, kN, f, nullptr, nd, m);
        num::hc_head_pre(m, p.w->output_hc_scale[0], p.w->output_hc_base.data(), c.hc_eps, pre);
    } else {
        const LayerWeights& L = p.w->layers[size_t(s.layer)];
        const bool attn = s.norm == &L.attn_norm;
        const WeightRef& fn = attn ? L.hc_attn_fn : L.hc_ffn_fn;
        const std::vector<float>& scale = attn ? L.hc_attn_scale : L.hc_ffn_scale;
        const std::vector<float>& base = attn ? L.hc_attn_base : L.hc_ffn_base;
        quant::dot_rows_isa(p.isa, fn.type, fn.row(0), fn.row_bytes, num::kHcMix, f, nullptr, nd, m);
        num::hc_mix(m, scale.data(), base.data(), c.hc_eps, int(c.hc_sinkhorn_iters), mix, mix + kN, mix + 2 * kN);
        std::memcpy(p.hc + t * num::kHcMix, mix, sizeof mix);
    }
    float* x = f;  // the normalised streams are no longer needed
    for (int64_t e = 0; e < d; ++e) x[e] = num::hc_combine(pre, X + e, d);
    float* y = p.xn + item * d;
    const float scale = num::rms_scale(p.k->dot(x, x, int(d)), int(d), c.rms_eps);
    p.k->scale_mul(x, scale, s.norm->data(), int(d), y);
    if (s.quantize_out) quant::quantize_q8a_isa(p.isa, y, p.xq + item * (d / 32), d);
}

// Item: a tile of rows r of y = W . Att[t] for every token; X4[t][k][r] becomes
// post_k * y[r] + sum_j comb[j][k] X4[t][j][r] (all four streams of the row in one item).
void run_matmul_hc_post(const Pass& p, const plan::Stage& s, int64_t item, int worker) {
    const WeightRef& w = *s.weight;
    const int64_t d = p.cfg->n_embd, aw = p.att_width();
    const int64_t r0 = item * s.tile, rows = std::min<int64_t>(s.tile, w.rows - r0);
    float* y = p.scratch[worker].a.data();
    for (int64_t t = 0; t < p.n_tokens; ++t) {
        quant::dot_rows_isa(p.isa, w.type, w.row(r0), w.row_bytes, rows, p.att + t * aw, p.attq + t * (aw / 32), w.cols, y);
        const float* hc = p.hc + t * num::kHcMix;
        float* X = p.x4 + t * kN * d;
        for (int64_t r = 0; r < rows; ++r) {
            float xj[kN];
            for (int j = 0; j < kN; ++j) xj[j] = X[j * d + r0 + r];
            for (int k = 0; k < kN; ++k) X[k * d + r0 + r] = num::hc_update(hc[kN + k], y[r], hc + 2 * kN, k, xj);
        }
    }
}

}  // namespace arbor::cpu
