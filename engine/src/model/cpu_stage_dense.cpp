// CPU work items of the token-wise and matmul stages: embedding, RoPE table, RMSNorm,
// quantize, matmul + residual, gated FFN and the LM head. Every matmul output element is one
// quant::dot_rows row dot (the row-dot contract of arbor/quant.hpp); an item covers a tile of
// rows for every token of the pass, so a weight tile is read once per pass and stays in cache
// while the tokens go by.
#include "model/cpu_pass.hpp"
#include "model/numerics.hpp"

namespace arbor::cpu {
namespace {

int64_t n_blocks(int64_t n) { return n / 32; }

void dot_tile(const Pass& p, const WeightRef& w, int64_t r0, int64_t rows, const float* x, const BlockQ8A* xq,
              float* out) {
    quant::dot_rows_isa(p.isa, w.type, w.row(r0), w.row_bytes, rows, x, xq, w.cols, out);
}

struct Input {
    const float* x;
    const BlockQ8A* xq;
    int64_t width;
};

Input stage_input(const Pass& p, plan::Buf b) {
    const ModelConfig& c = *p.cfg;
    switch (b) {
    case plan::Buf::Att: return {p.att, p.attq, p.att_width()};
    case plan::Buf::H: return {p.h, p.hq, c.n_ff};
    default: return {p.xn, p.xq, c.n_embd};
    }
}

}  // namespace

void run_embed(const Pass& p, int64_t t) {
    const WeightRef& e = p.w->tok_embd;
    (void)quant::dequantize(e.type, e.row(p.token[t]), p.x + t * p.cfg->n_embd, p.cfg->n_embd);
}

void run_rope_table(const Pass& p, int64_t t) {
    const int64_t half = p.cfg->n_rot / 2;
    float* out = p.rope + t * half * 2;
    for (int64_t i = 0; i < half; ++i)
        num::rope_cs(p.pos[t], p.w->rope_freq[size_t(i)], p.w->rope_mscale, &out[2 * i], &out[2 * i + 1]);
}

void run_rms_norm(const Pass& p, const plan::Stage& s, int64_t item) {
    const int64_t n = p.cfg->n_embd;
    const int64_t t = s.outputs_only ? p.out_token[item] : item;  // outputs_only writes row o
    const float* x = p.x + t * n;
    float* y = p.xn + item * n;
    const float scale = num::rms_scale(p.k->dot(x, x, int(n)), int(n), p.cfg->rms_eps);
    p.k->scale_mul(x, scale, s.norm->data(), int(n), y);
    if (s.quantize_out) quant::quantize_q8a_isa(p.isa, y, p.xq + item * n_blocks(n), n);
}

void run_quantize(const Pass& p, const plan::Stage& s, int64_t t) {
    const Input in = stage_input(p, s.in);
    quant::quantize_q8a_isa(p.isa, in.x + t * in.width, const_cast<BlockQ8A*>(in.xq) + t * n_blocks(in.width), in.width);
}

void run_matmul_add(const Pass& p, const plan::Stage& s, int64_t item, int worker) {
    const WeightRef& w = *s.weight;
    const Input in = stage_input(p, s.in);
    const int64_t r0 = item * s.tile, rows = std::min<int64_t>(s.tile, w.rows - r0);
    const int64_t n_embd = p.cfg->n_embd;
    float* tmp = p.scratch[worker].a.data();
    for (int64_t t = 0; t < p.n_tokens; ++t) {
        dot_tile(p, w, r0, rows, in.x + t * in.width, in.xq + t * n_blocks(in.width), tmp);
        float* x = p.x + t * n_embd + r0;
        for (int64_t r = 0; r < rows; ++r) x[r] = num::add_rn(x[r], tmp[r]);
    }
}

// A tile of the gated FFN h = silu(Wg . x) * (Wu . x) over rows [r0, r0 + rows) of n_ff, for
// every token of the pass, from XN into h (+ its Q8A form when quantize_out).
void gated_ffn_tile(const Pass& p, const WeightRef& gate, const WeightRef& up, int64_t n_ff, int64_t r0, int64_t rows,
                    bool quantize_out, float* h_out, BlockQ8A* hq_out, int worker) {
    const int64_t n_embd = p.cfg->n_embd;
    float* g = p.scratch[worker].a.data();
    float* u = p.scratch[worker].b.data();
    for (int64_t t = 0; t < p.n_tokens; ++t) {
        const float* x = p.xn + t * n_embd;
        const BlockQ8A* xq = p.xq + t * n_blocks(n_embd);
        dot_tile(p, gate, r0, rows, x, xq, g);
        dot_tile(p, up, r0, rows, x, xq, u);
        float* h = h_out + t * n_ff + r0;
        p.k->silu_mul(g, u, int(rows), h);
        if (quantize_out) quant::quantize_q8a_isa(p.isa, h, hq_out + t * n_blocks(n_ff) + r0 / 32, rows);
    }
}

void run_gated_ffn(const Pass& p, const plan::Stage& s, int64_t item, int worker) {
    const LayerWeights& L = p.w->layers[size_t(s.layer)];
    const int64_t n_ff = p.cfg->n_ff;
    const int64_t r0 = item * s.tile, rows = std::min<int64_t>(s.tile, n_ff - r0);
    gated_ffn_tile(p, L.ffn_gate, L.ffn_up, n_ff, r0, rows, s.quantize_out, p.h, p.hq, worker);
}

void run_lm_head(const Pass& p, const plan::Stage& s, int64_t item, int worker) {
    const WeightRef& w = *s.weight;
    const int64_t n_embd = p.cfg->n_embd, n_vocab = p.cfg->n_vocab;
    const int64_t r0 = item * s.tile, rows = std::min<int64_t>(s.tile, n_vocab - r0);
    for (int64_t o = 0; o < p.n_out; ++o)
        dot_tile(p, w, r0, rows, p.xn + o * n_embd, p.xq + o * n_blocks(n_embd), p.logits + o * n_vocab + r0);
    (void)worker;
}

}  // namespace arbor::cpu
