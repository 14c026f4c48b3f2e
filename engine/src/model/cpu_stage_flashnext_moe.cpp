// CPU work items of flashnext's MoE sublayer beyond qwen3moe's router and experts: the shared
// expert's gate and gated FFN, and the down projections with the combine (slots in order, then
// the gated shared term) and the hyper-connection stream update folded in.
#include "model/cpu_pass.hpp"
#include "model/numerics_flashnext.hpp"

namespace arbor::cpu {
namespace {

constexpr int kN = num::kHcStreams;

}  // namespace

void run_shared_gate(const Pass& p, const plan::Stage& s, int64_t t, int) {
    const LayerWeights& L = p.w->layers[size_t(s.layer)];
    const int64_t d = p.cfg->n_embd;
    p.gs[t] = num::sigmoid(p.k->dot(L.gate_inp_shexp.data(), p.xn + t * d, int(d)));
}

void run_shared_gated_ffn(const Pass& p, const plan::Stage& s, int64_t item, int worker) {
    const LayerWeights& L = p.w->layers[size_t(s.layer)];
    const int64_t F = p.cfg->n_ff_shexp;
    const int64_t r0 = item * s.tile, rows = std::min<int64_t>(s.tile, F - r0);
    gated_ffn_tile(p, L.gate_shexp, L.up_shexp, F, r0, rows, s.quantize_out, p.hs, p.hsq, worker);
}

// Item: a tile of rows r. y[r] = sum over slots k of w_k (Wd_e(k)[r] . HE[t][k]), then
// + GS[t] (Wds[r] . HS[t]); the streams of row r are updated as in run_matmul_hc_post.
void run_moe_down_hc_post(const Pass& p, const plan::Stage& s, int64_t item, int worker) {
    const ModelConfig& c = *p.cfg;
    const LayerWeights& L = p.w->layers[size_t(s.layer)];
    const int64_t K = c.n_expert_used, d = c.n_embd, F = c.n_ff_shexp;
    const int64_t r0 = item * s.tile, rows = std::min<int64_t>(s.tile, d - r0);
    float* y = p.scratch[worker].a.data();   // [K][tile]
    float* ys = p.scratch[worker].b.data();  // [tile]
    for (int64_t t = 0; t < p.n_tokens; ++t) {
        for (int64_t k = 0; k < K; ++k) {
            const int64_t pair = t * K + k, e = p.route_idx[pair];
            quant::dot_rows_isa(p.isa, L.down_exps.type, L.down_exps.row(r0, e), L.down_exps.row_bytes, rows,
                                p.he + pair * c.n_ff_exp, p.heq + pair * (c.n_ff_exp / 32), c.n_ff_exp, y + k * s.tile);
        }
        quant::dot_rows_isa(p.isa, L.down_shexp.type, L.down_shexp.row(r0), L.down_shexp.row_bytes, rows, p.hs + t * F,
                            p.hsq + t * (F / 32), F, ys);
        const float* w = p.route_w + t * K;
        const float* hc = p.hc + t * num::kHcMix;
        float* X = p.x4 + t * kN * d;
        for (int64_t r = 0; r < rows; ++r) {
            float acc = 0.0f;
            for (int64_t k = 0; k < K; ++k) acc = fmaf(w[k], y[k * s.tile + r], acc);
            acc = fmaf(p.gs[t], ys[r], acc);
            float xj[kN];
            for (int j = 0; j < kN; ++j) xj[j] = X[j * d + r0 + r];
            for (int kk = 0; kk < kN; ++kk) X[kk * d + r0 + r] = num::hc_update(hc[kN + kk], acc, hc + 2 * kN, kk, xj);
        }
    }
}

}  // namespace arbor::cpu
