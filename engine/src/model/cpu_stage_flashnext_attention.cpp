// CPU work item of flashnext's attention: a token that sees at most budget + 3 cells attends
// densely (the qwen3 item itself); any other token attends to the cells of its selected blocks
// plus its own block, in increasing position, cut at the absolute 256-cell chunk boundaries of
// the numerics contract, chunks without an attended cell skipped. Each chunk's attended K and
// V rows are gathered into contiguous rows and run through the same kernels as a dense chunk,
// so selecting every block gives the dense bits.
#include "model/cpu_pass.hpp"
#include "model/numerics.hpp"

#include <cstring>

namespace arbor::cpu {

void run_sparse_attention(const Pass& p, const plan::Stage& s, int64_t item, int worker) {
    const ModelConfig& c = *p.cfg;
    const int64_t g = item / p.n_tokens, t = item % p.n_tokens;
    const int64_t pos = p.pos[t];
    if (!plan::index_sparse(c, pos)) {
        run_attention(p, s, item, worker);
        return;
    }
    const int group = int(c.n_head / c.n_head_kv);
    const int hdk = int(c.head_dim_k), hdv = int(c.head_dim_v);
    const int64_t K = c.index_top_k / kKvPoolCells, own = plan::index_blocks_before(pos) * kKvPoolCells;
    const int32_t* sel = p.sel + t * K;
    WorkerScratch& ws = p.scratch[worker];
    float* sc = ws.scores.data();
    float* res = ws.chunks.data();  // [chunk][head][hdv + 2]: o[hdv], m, l
    const size_t res_stride = size_t(hdv + 2);
    const float* q = p.q + t * p.q_width() + g * group * hdk;
    const size_t k_row = size_t(hdk * p.kv.elem_bytes), v_row = size_t(hdv * p.kv.elem_bytes);
    uint8_t* kg = ws.gather.data();
    uint8_t* vg = kg + size_t(num::kAttnChunk) * k_row;

    // Attended cells in increasing position: the selected blocks, then cells own..pos.
    int64_t next_sel = 0, cell = sel[0] * kKvPoolCells;
    auto advance = [&](int64_t from) -> int64_t {  // the attended cell after `from`, or -1
        const int64_t n = from + 1;
        if (n >= own) return n <= pos ? n : -1;
        if (n % kKvPoolCells != 0) return n;
        ++next_sel;
        return next_sel < K ? sel[next_sel] * kKvPoolCells : own;
    };
    int64_t n_chunks = 0;
    while (cell >= 0) {
        const int64_t chunk = cell / num::kAttnChunk;
        int n = 0;
        while (cell >= 0 && cell / num::kAttnChunk == chunk) {
            std::memcpy(kg + size_t(n) * k_row, p.kv_row(t, s.layer, g, cell, false), k_row);
            std::memcpy(vg + size_t(n) * v_row, p.kv_row(t, s.layer, g, cell, true), v_row);
            ++n;
            cell = advance(cell);
        }
        p.k->scores(q, group, hdk, kg, k_row, p.kv.type, n, hdk, c.attn_scale, sc);
        attention_chunk_heads(p, sc, n, vg, v_row, group, res + size_t(n_chunks) * size_t(group) * res_stride);
        ++n_chunks;
    }
    combine_attention_chunks(p, s, res, n_chunks, t, g);
}

}  // namespace arbor::cpu
