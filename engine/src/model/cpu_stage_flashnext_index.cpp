// CPU work items of flashnext's indexer (docs/MODEL-flashnext.md): the indexer projections
// (queries with RoPE and scale, head weights, keys into the cells and the pooled key of each
// block a token completes), the block scores of (token, 32 blocks) items, and the per-token
// selection of the top budget/4 blocks. Also the pooled-key rebuild used at wake.
#include "model/cpu_pass.hpp"
#include "model/numerics_flashnext.hpp"

#include <arbor/kv_cache.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace arbor::cpu {
namespace {

// NEOX RoPE over all n dims at pos with the indexer table.
void rope_all(float* v, int64_t n, int64_t pos, const std::vector<float>& freq) {
    const int64_t half = n / 2;
    for (int64_t i = 0; i < half; ++i) {
        float c, s;
        num::rope_cs(int(pos), freq[size_t(i)], 1.0f, &c, &s);
        num::rope_pair(&v[i], &v[i + half], c, s);
    }
}

float scale_of(int64_t n) { return float(1.0 / std::sqrt(double(n))); }

}  // namespace

void pool_index_block(const KvLayout& kv, const std::vector<uint8_t*>& pages, int layer, int64_t block,
                      const ModelConfig& c, const LayerWeights& L, const std::vector<float>& index_freq, float* v) {
    const int64_t dI = c.index_dim, first = block * kKvPoolCells;
    uint8_t* page = pages[size_t(first / kKvPageCells)];
    const int64_t cell = first % kKvPageCells;
    const size_t row = size_t(dI * kv.elem_bytes);
    const uint8_t* k = page + kv.index_offset(layer) + size_t(cell) * row;
    for (int64_t e = 0; e < dI; ++e)
        v[e] = num::pool_mean4(kv_load(k, e, kv.type), kv_load(k + row, e, kv.type), kv_load(k + 2 * row, e, kv.type),
                               kv_load(k + 3 * row, e, kv.type));
    num::rms_norm(v, L.idx_k_norm.data(), c.rms_eps, int(dI), v);
    rope_all(v, dI, first, index_freq);
    std::memcpy(page + kv.pool_offset(layer) + size_t(cell / kKvPoolCells) * size_t(dI) * 4, v, size_t(dI) * 4);
}

void rebuild_index_pools(const Model& model, KvSequence& seq, int64_t n) {
    const ModelConfig& c = model.config();
    const KvLayout& kv = seq.cache().layout();
    if (kv.index_dim == 0 || !c.is_flashnext()) return;
    std::vector<uint8_t*> pages;
    for (size_t i = 0; i < seq.pages().size(); ++i) pages.push_back(seq.page_data(int64_t(i)));
    std::vector<float> tmp(size_t(c.index_dim));
    const ModelWeights& w = model.weights();
    for (int l = 0; l < int(c.n_layer); ++l)
        for (int64_t b = 0; b < n / kKvPoolCells; ++b)
            pool_index_block(kv, pages, l, b, c, w.layers[size_t(l)], w.index_rope_freq, tmp.data());
}

// Items 0..H_I-1: query head h of every token; item H_I: the head weights; item H_I+1: the
// keys into the cells, then the pooled key of every block completed by a token of the pass.
void run_indexer_proj(const Pass& p, const plan::Stage& s, int64_t item, int worker) {
    const ModelConfig& c = *p.cfg;
    const LayerWeights& L = p.w->layers[size_t(s.layer)];
    const int64_t d = c.n_embd, HI = c.n_index_head, dI = c.index_dim;
    float* v = p.scratch[worker].fx.data();
    for (int64_t t = 0; t < p.n_tokens; ++t) {
        const float* x = p.xn + t * d;
        const BlockQ8A* xq = p.xq + t * (d / 32);
        if (item < HI) {
            const WeightRef& w = L.idx_q;
            quant::dot_rows_isa(p.isa, w.type, w.row(item * dI), w.row_bytes, dI, x, xq, d, v);
            rope_all(v, dI, p.pos[t], p.w->index_rope_freq);
            const float sq = scale_of(dI);
            float* q = p.iq + t * HI * dI + item * dI;
            for (int64_t e = 0; e < dI; ++e) q[e] = num::mul_rn(v[e], sq);
        } else if (item == HI) {
            const WeightRef& w = L.idx_proj;
            quant::dot_rows_isa(p.isa, w.type, w.row(0), w.row_bytes, HI, x, xq, d, v);
            const float sw = scale_of(HI);
            for (int64_t h = 0; h < HI; ++h) p.iw[t * HI + h] = num::mul_rn(v[h], sw);
        } else {
            const WeightRef& w = L.idx_k;
            quant::dot_rows_isa(p.isa, w.type, w.row(0), w.row_bytes, dI, x, xq, d, v);
            kv_store(p.index_row(t, s.layer, p.pos[t]), v, dI, p.kv.type);
        }
    }
    if (item != HI + 1) return;
    for (int64_t t = 0; t < p.n_tokens; ++t)
        if (p.pos[t] % kKvPoolCells == kKvPoolCells - 1)
            pool_index_block(p.kv, p.pages_of(t), s.layer, p.pos[t] / kKvPoolCells, c, L, p.w->index_rope_freq, v);
}

// Item (t, g): scores of blocks [32g, 32g + 32) before token t's own block, for sparse tokens.
void run_index_score(const Pass& p, const plan::Stage& s, int64_t item, int) {
    const ModelConfig& c = *p.cfg;
    const int64_t t = item / p.score_groups, g = item % p.score_groups;
    const int64_t pos = p.pos[t];
    if (!plan::index_sparse(c, pos)) return;
    const int64_t nb = plan::index_blocks_before(pos), b1 = std::min<int64_t>(nb, (g + 1) * plan::kScoreBlocks);
    const int64_t HI = c.n_index_head, dI = c.index_dim;
    const float* q = p.iq + t * HI * dI;
    const float* w = p.iw + t * HI;
    const std::vector<uint8_t*>& pages = p.pages_of(t);
    for (int64_t b = g * plan::kScoreBlocks; b < b1; ++b) {
        const int64_t cell = b * kKvPoolCells;
        const float* key = reinterpret_cast<const float*>(pages[size_t(cell / kKvPageCells)] + p.kv.pool_offset(s.layer) +
                                                          size_t((cell % kKvPageCells) / kKvPoolCells) * size_t(dI) * 4);
        float acc = 0.0f;
        for (int64_t h = 0; h < HI; ++h) acc = fmaf(w[h], num::relu(p.k->dot(q + h * dI, key, int(dI))), acc);
        p.scores[t * p.score_stride + b] = acc;
    }
}

// Item t: Sel[t] = the budget/4 blocks ranked first by (score descending, block ascending),
// listed in increasing block order.
void run_index_select(const Pass& p, const plan::Stage&, int64_t t, int worker) {
    const ModelConfig& c = *p.cfg;
    const int64_t pos = p.pos[t];
    if (!plan::index_sparse(c, pos)) return;
    const int64_t nb = plan::index_blocks_before(pos), K = c.index_top_k / kKvPoolCells;
    const float* sc = p.scores + t * p.score_stride;
    std::vector<int32_t>& order = p.scratch[worker].order;
    order.resize(size_t(nb));
    for (int64_t b = 0; b < nb; ++b) order[size_t(b)] = int32_t(b);
    auto key = [&](int32_t b) { return std::isnan(sc[b]) ? -INFINITY : sc[b]; };
    auto before = [&](int32_t a, int32_t b) {
        const float ka = key(a), kb = key(b);
        return ka > kb || (ka == kb && a < b);
    };
    std::nth_element(order.begin(), order.begin() + (K - 1), order.end(), before);
    std::sort(order.begin(), order.begin() + K);
    std::copy(order.begin(), order.begin() + K, p.sel + t * K);
}

}  // namespace arbor::cpu
