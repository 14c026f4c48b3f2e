// CPU work items of the expert FFN: the router (softmax, top-k, renormalise), the gated FFN of
// each expert over the tokens routed to it, and the down projection with the weighted combine
// in slot order and the residual add (numerics.hpp).
#include "model/cpu_pass.hpp"
#include "model/numerics.hpp"

namespace arbor::cpu {

void run_router(const Pass& p, const plan::Stage& s, int64_t t, int worker) {
    const ModelConfig& c = *p.cfg;
    const LayerWeights& L = p.w->layers[size_t(s.layer)];
    const int64_t E = c.n_expert, K = c.n_expert_used;
    float* logits = p.scratch[worker].a.data();
    float* probs = p.scratch[worker].b.data();
    quant::dot_rows_isa(p.isa, L.gate_inp.type, L.gate_inp.row(0), L.gate_inp.row_bytes, E, p.xn + t * c.n_embd,
                    p.xq + t * (c.n_embd / 32), c.n_embd, logits);
    num::softmax(logits, int(E), probs);
    num::top_k(probs, int(E), int(K), c.expert_weights_norm, p.route_idx + t * K, p.route_w + t * K);
}

// Serial step between the router and the experts: for each expert, its (token, slot) pairs in
// token order. Which pairs an expert serves is fixed by the routes; the order only affects
// which item computes what, never a bit.
void build_expert_routes(const Pass& p) {
    const int64_t E = p.cfg->n_expert, K = p.cfg->n_expert_used, n = p.n_tokens * K;
    ExpertRoutes& r = *p.routes;
    r.start.assign(size_t(E + 1), 0);
    r.pairs.resize(size_t(n));
    for (int64_t i = 0; i < n; ++i) ++r.start[size_t(p.route_idx[i]) + 1];
    for (int64_t e = 0; e < E; ++e) r.start[size_t(e + 1)] += r.start[size_t(e)];
    r.fill.assign(r.start.begin(), r.start.end() - 1);
    for (int64_t i = 0; i < n; ++i) r.pairs[size_t(r.fill[size_t(p.route_idx[i])]++)] = int32_t(i);
}

void run_expert_gated_ffn(const Pass& p, const plan::Stage& s, int64_t item, int worker) {
    const ModelConfig& c = *p.cfg;
    const LayerWeights& L = p.w->layers[size_t(s.layer)];
    const int64_t tiles = (c.n_ff_exp + s.tile - 1) / s.tile;
    const int64_t e = item / tiles, r0 = (item % tiles) * s.tile;
    const int64_t rows = std::min<int64_t>(s.tile, c.n_ff_exp - r0);
    const ExpertRoutes& routes = *p.routes;
    float* g = p.scratch[worker].a.data();
    float* u = p.scratch[worker].b.data();
    for (int32_t i = routes.start[size_t(e)]; i < routes.start[size_t(e + 1)]; ++i) {
        const int64_t pair = routes.pairs[size_t(i)], t = pair / c.n_expert_used;
        const float* x = p.xn + t * c.n_embd;
        const BlockQ8A* xq = p.xq + t * (c.n_embd / 32);
        quant::dot_rows_isa(p.isa, L.gate_exps.type, L.gate_exps.row(r0, e), L.gate_exps.row_bytes, rows, x, xq, c.n_embd, g);
        quant::dot_rows_isa(p.isa, L.up_exps.type, L.up_exps.row(r0, e), L.up_exps.row_bytes, rows, x, xq, c.n_embd, u);
        float* h = p.he + pair * c.n_ff_exp + r0;
        p.k->silu_mul(g, u, int(rows), h);
        if (s.quantize_out) quant::quantize_q8a_isa(p.isa, h, p.heq + pair * (c.n_ff_exp / 32) + r0 / 32, rows);
    }
}

void run_expert_down_add(const Pass& p, const plan::Stage& s, int64_t item, int worker) {
    const ModelConfig& c = *p.cfg;
    const LayerWeights& L = p.w->layers[size_t(s.layer)];
    const int64_t K = c.n_expert_used;
    const int64_t r0 = item * s.tile, rows = std::min<int64_t>(s.tile, c.n_embd - r0);
    float* y = p.scratch[worker].a.data();  // [K][tile]
    for (int64_t t = 0; t < p.n_tokens; ++t) {
        for (int64_t k = 0; k < K; ++k) {
            const int64_t pair = t * K + k, e = p.route_idx[pair];
            quant::dot_rows_isa(p.isa, L.down_exps.type, L.down_exps.row(r0, e), L.down_exps.row_bytes, rows,
                            p.he + pair * c.n_ff_exp, p.heq + pair * (c.n_ff_exp / 32), c.n_ff_exp, y + k * s.tile);
        }
        float* x = p.x + t * c.n_embd + r0;
        const float* w = p.route_w + t * K;
        for (int64_t r = 0; r < rows; ++r) {
            float acc = 0.0f;
            for (int64_t k = 0; k < K; ++k) acc = fmaf(w[k], y[k * s.tile + r], acc);
            x[r] = num::add_rn(x[r], acc);
        }
    }
}

}  // namespace arbor::cpu
