// CPU work items of the attention block: the per-head Q/K/V projection with bias, q/k norm and
// RoPE (writing K and V into the sequences' cells), and the chunked attention of numerics.hpp.
#include "model/cpu_pass.hpp"
#include "model/numerics.hpp"

#include <cstring>

namespace arbor::cpu {
namespace {

void apply_rope(const ModelConfig& c, const float* cs, float* v) {
    const int64_t half = c.n_rot / 2;
    if (c.rope_style == RopeStyle::Neox) {
        for (int64_t i = 0; i < half; ++i) num::rope_pair(&v[i], &v[i + half], cs[2 * i], cs[2 * i + 1]);
    } else {
        for (int64_t i = 0; i < half; ++i) num::rope_pair(&v[2 * i], &v[2 * i + 1], cs[2 * i], cs[2 * i + 1]);
    }
}

}  // namespace

// Item h: heads [0, n_head) are Q heads, then n_head_kv K heads, then n_head_kv V heads.
void run_qkv_rope(const Pass& p, const plan::Stage& s, int64_t item, int worker) {
    const ModelConfig& c = *p.cfg;
    const LayerWeights& L = p.w->layers[size_t(s.layer)];
    const int64_t n_embd = c.n_embd;
    enum { kQ, kK, kV } kind;
    int64_t head;
    if (item < c.n_head) {
        kind = kQ, head = item;
    } else if (item < c.n_head + c.n_head_kv) {
        kind = kK, head = item - c.n_head;
    } else {
        kind = kV, head = item - c.n_head - c.n_head_kv;
    }
    const WeightRef& w = kind == kQ ? L.wq : kind == kK ? L.wk : L.wv;
    const std::vector<float>& bias = kind == kQ ? L.bq : kind == kK ? L.bk : L.bv;
    const int64_t hd = kind == kV ? c.head_dim_v : c.head_dim_k;
    const int64_t r0 = head * hd;
    float* v = p.scratch[worker].a.data();
    const int64_t half = c.n_rot / 2;
    for (int64_t t = 0; t < p.n_tokens; ++t) {
        quant::dot_rows_isa(p.isa, w.type, w.row(r0), w.row_bytes, hd, p.xn + t * n_embd, p.xq + t * (n_embd / 32), w.cols, v);
        if (!bias.empty())
            for (int64_t d = 0; d < hd; ++d) v[d] = num::add_rn(v[d], bias[size_t(r0 + d)]);
        if (kind != kV) {
            if (c.qk_norm) {
                const std::vector<float>& nw = kind == kQ ? L.q_norm : L.k_norm;
                const float scale = num::rms_scale(p.k->dot(v, v, int(hd)), int(hd), c.rms_eps);
                p.k->scale_mul(v, scale, nw.data(), int(hd), v);
            }
            apply_rope(c, p.rope + t * half * 2, v);
        }
        if (kind == kQ) {
            std::memcpy(p.q + t * p.q_width() + r0, v, size_t(hd) * 4);
        } else {
            kv_store(p.kv_row(t, s.layer, head, p.pos[t], kind == kV), v, hd, p.kv.type);
        }
    }
}

// Item (g, t): the q heads sharing kv head g, for token t. Items of one kv head are adjacent, so
// a worker taking consecutive items keeps that head's K/V cells in cache across tokens.
void run_attention(const Pass& p, const plan::Stage& s, int64_t item, int worker) {
    const ModelConfig& c = *p.cfg;
    const int64_t g = item / p.n_tokens, t = item % p.n_tokens;
    const int group = int(c.n_head / c.n_head_kv);
    const int hdk = int(c.head_dim_k), hdv = int(c.head_dim_v);
    const int64_t pos = p.pos[t];
    const int64_t n_chunks = pos / num::kAttnChunk + 1;
    WorkerScratch& ws = p.scratch[worker];
    float* sc = ws.scores.data();
    float* res = ws.chunks.data();  // [chunk][head][hdv + 2]: o[hdv], m, l
    const size_t res_stride = size_t(hdv + 2);
    const float* q = p.q + t * p.q_width() + g * group * hdk;
    const size_t k_stride = size_t(hdk * p.kv.elem_bytes), v_stride = size_t(hdv * p.kv.elem_bytes);
    for (int64_t ch = 0; ch < n_chunks; ++ch) {
        const int64_t first = ch * num::kAttnChunk;
        const int n = int(std::min<int64_t>(num::kAttnChunk, pos + 1 - first));
        const uint8_t* k = p.kv_row(t, s.layer, g, first, false);
        const uint8_t* v = p.kv_row(t, s.layer, g, first, true);
        p.k->scores(q, group, hdk, k, k_stride, p.kv.type, n, hdk, c.attn_scale, sc);
        attention_chunk_heads(p, sc, n, v, v_stride, group, res + size_t(ch) * size_t(group) * res_stride);
    }
    combine_attention_chunks(p, s, res, n_chunks, t, g);
}

// The chunk contract of numerics.hpp for the q heads of one kv head: sc holds their scores
// (head h at h * kAttnChunk) over n cells whose V rows start at v; writes [o(hdv), m, l] per
// head into r (stride hdv + 2).
void attention_chunk_heads(const Pass& p, float* sc, int n, const uint8_t* v, size_t v_stride, int group, float* r) {
    const int hdv = int(p.cfg->head_dim_v);
    for (int h = 0; h < group; ++h) {
        float* e = sc + h * num::kAttnChunk;
        float m = e[0];
        for (int j = 1; j < n; ++j)
            if (e[j] > m) m = e[j];
        float* rh = r + size_t(h) * size_t(hdv + 2);
        const float l = p.k->exp_sum(e, n, m);
        p.k->weighted_sum(e, n, v, v_stride, p.kv.type, hdv, rh);
        rh[hdv] = m;
        rh[hdv + 1] = l;
    }
}

// The chunks' results combined in chunk order into Att[t] for kv head g (+ AttQ).
void combine_attention_chunks(const Pass& p, const plan::Stage& s, const float* res, int64_t n_chunks, int64_t t,
                              int64_t g) {
    const int group = int(p.cfg->n_head / p.cfg->n_head_kv), hdv = int(p.cfg->head_dim_v);
    const size_t res_stride = size_t(hdv + 2);
    float* out = p.att + t * p.att_width() + g * group * hdv;
    for (int h = 0; h < group; ++h) {
        float* o = out + h * hdv;
        float M = res[size_t(h) * res_stride + size_t(hdv)];
        for (int64_t ch = 1; ch < n_chunks; ++ch) {
            const float m = res[(size_t(ch) * size_t(group) + size_t(h)) * res_stride + size_t(hdv)];
            if (m > M) M = m;
        }
        float L = 0.0f;
        for (int d = 0; d < hdv; ++d) o[d] = 0.0f;
        for (int64_t ch = 0; ch < n_chunks; ++ch) {
            const float* r = res + (size_t(ch) * size_t(group) + size_t(h)) * res_stride;
            const float wc = num::attn_chunk_weight(r[hdv], M);
            L = fmaf(r[hdv + 1], wc, L);
            for (int d = 0; d < hdv; ++d) o[d] = fmaf(r[d], wc, o[d]);
        }
        for (int d = 0; d < hdv; ++d) o[d] = num::div_rn(o[d], L);
    }
    if (s.quantize_out) {
        const int64_t span = int64_t(group) * hdv;
        quant::quantize_q8a_isa(p.isa, out, p.attq + (t * p.att_width() + g * span) / 32, span);
    }
}

}  // namespace arbor::cpu
