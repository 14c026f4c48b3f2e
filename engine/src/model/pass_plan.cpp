// Stage builders: the attention block and the two FFN kinds (dense, experts), shared by every
// architecture; the differences between architectures are data (ModelConfig: q/k norm, biases,
// RoPE style, experts), read by the stages themselves.
#include "model/pass_plan.hpp"

#include <arbor/quant.hpp>

namespace arbor::plan {
namespace {

bool q8(const WeightRef& w) { return w && quant::uses_q8a(w.type); }

class Builder {
public:
    explicit Builder(PassPlan& p) : p_(p) {}
    // A stage at a new level (after everything added so far).
    Stage& add(Op op, int layer, Buf in, Buf out) { return add_at(p_.n_levels++, op, layer, in, out); }
    // A stage at the same level as the previous one (independent of it).
    Stage& add_beside(Op op, int layer, Buf in, Buf out) { return add_at(p_.n_levels - 1, op, layer, in, out); }

private:
    Stage& add_at(int level, Op op, int layer, Buf in, Buf out) {
        Stage s;
        s.op = op;
        s.layer = layer;
        s.level = level;
        s.in = in;
        s.out = out;
        p_.stages.push_back(s);
        return p_.stages.back();
    }
    PassPlan& p_;
};

// The head: the output norm (over the n_out output tokens only, from the stream or streams
// `in`) and the LM head.
void output_head(Builder& b, const ModelWeights& w, Op norm_op, Buf in) {
    Stage& n = b.add(norm_op, -1, in, Buf::XN);
    n.norm = &w.output_norm;
    n.outputs_only = true;
    n.quantize_out = q8(w.output);
    Stage& h = b.add(Op::LmHead, -1, Buf::XN, Buf::Logits);
    h.weight = &w.output;
    h.tile = kHeadTile;
}

// The attention stage (dense or sparse) and the output projection. The attention item covers
// the q heads of one kv head: it can form the Q8A blocks of its own output only when that span
// is made of whole 32-blocks; otherwise a Quantize stage does.
void attention_and_output(Builder& b, const ModelConfig& c, const LayerWeights& L, int layer, Op attn, Op out,
                          Buf out_buf) {
    const int64_t span = (c.n_head / c.n_head_kv) * c.head_dim_v;
    const bool need_q = q8(L.wo);
    b.add(attn, layer, Buf::Q, Buf::Att).quantize_out = need_q && span % 32 == 0;
    if (need_q && span % 32 != 0) b.add(Op::Quantize, layer, Buf::Att, Buf::Att);
    Stage& o = b.add(out, layer, Buf::Att, out_buf);
    o.weight = &L.wo;
    o.tile = kMatTile;
}

void attention_block(Builder& b, const ModelConfig& c, const LayerWeights& L, int layer) {
    Stage& n = b.add(Op::RmsNorm, layer, Buf::X, Buf::XN);
    n.norm = &L.attn_norm;
    n.quantize_out = q8(L.wq) || q8(L.wk) || q8(L.wv);
    b.add(Op::QkvRope, layer, Buf::XN, Buf::Q);
    attention_and_output(b, c, L, layer, Op::Attention, Op::MatMulAdd, Buf::X);
}

void dense_ffn(Builder& b, const LayerWeights& L, int layer) {
    Stage& n = b.add(Op::RmsNorm, layer, Buf::X, Buf::XN);
    n.norm = &L.ffn_norm;
    n.quantize_out = q8(L.ffn_gate) || q8(L.ffn_up);
    Stage& g = b.add(Op::GatedFfn, layer, Buf::XN, Buf::H);
    g.quantize_out = q8(L.ffn_down);
    g.tile = kMatTile;
    Stage& d = b.add(Op::MatMulAdd, layer, Buf::H, Buf::X);
    d.weight = &L.ffn_down;
    d.tile = kMatTile;
}

void expert_ffn(Builder& b, const LayerWeights& L, int layer) {
    Stage& n = b.add(Op::RmsNorm, layer, Buf::X, Buf::XN);
    n.norm = &L.ffn_norm;
    n.quantize_out = q8(L.gate_inp) || q8(L.gate_exps) || q8(L.up_exps);
    b.add(Op::Router, layer, Buf::XN, Buf::Route);
    Stage& g = b.add(Op::ExpertGatedFfn, layer, Buf::XN, Buf::HE);
    g.quantize_out = q8(L.down_exps);
    g.tile = kMatTile;
    b.add(Op::ExpertDownAdd, layer, Buf::HE, Buf::X).tile = kMatTile;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// flashnext: hyper-connection wraps around an attention sublayer with indexer block selection
// and a MoE sublayer with a shared expert; the head combines the streams (docs/MODEL-flashnext.md).
void flashnext_layer(Builder& b, const ModelConfig& c, const LayerWeights& L, int layer) {
    Stage& pa = b.add(Op::HcPre, layer, Buf::X4, Buf::XN);
    pa.norm = &L.attn_norm;
    pa.quantize_out = q8(L.wq) || q8(L.wk) || q8(L.wv) || q8(L.idx_q) || q8(L.idx_k);
    b.add(Op::QkvRope, layer, Buf::XN, Buf::Q);
    b.add_beside(Op::IndexerProj, layer, Buf::XN, Buf::IndexQ);
    b.add(Op::IndexScore, layer, Buf::IndexQ, Buf::Scores);
    b.add(Op::IndexSelect, layer, Buf::Scores, Buf::Sel);
    attention_and_output(b, c, L, layer, Op::SparseAttention, Op::MatMulHcPost, Buf::X4);

    Stage& pf = b.add(Op::HcPre, layer, Buf::X4, Buf::XN);
    pf.norm = &L.ffn_norm;
    pf.quantize_out = q8(L.gate_exps) || q8(L.up_exps) || q8(L.gate_shexp) || q8(L.up_shexp);
    b.add(Op::Router, layer, Buf::XN, Buf::Route);
    b.add_beside(Op::SharedGate, layer, Buf::XN, Buf::GS);
    Stage& sg = b.add_beside(Op::SharedGatedFfn, layer, Buf::XN, Buf::HS);
    sg.quantize_out = q8(L.down_shexp);
    sg.tile = kMatTile;
    Stage& g = b.add(Op::ExpertGatedFfn, layer, Buf::XN, Buf::HE);
    g.quantize_out = q8(L.down_exps);
    g.tile = kMatTile;
    b.add(Op::MoeDownHcPost, layer, Buf::HE, Buf::X4).tile = kMatTile;
}

PassPlan build_flashnext_plan(const ModelConfig& c, const ModelWeights& w) {
    PassPlan p;
    Builder b(p);
    b.add(Op::EmbedHc, -1, Buf::None, Buf::X4);
    b.add_beside(Op::RopeTable, -1, Buf::None, Buf::Rope);
    for (int i = 0; i < int(c.n_layer); ++i) flashnext_layer(b, c, w.layers[size_t(i)], i);
    output_head(b, w, Op::HcPre, Buf::X4);
    return p;
}

}  // namespace

bool index_sparse(const ModelConfig& c, int64_t pos) { return c.index_top_k > 0 && pos + 1 > c.index_top_k + 3; }

PassPlan build_pass_plan(const ModelConfig& c, const ModelWeights& w) {
    if (c.is_flashnext()) return build_flashnext_plan(c, w);
    PassPlan p;
    Builder b(p);
    b.add(Op::Embed, -1, Buf::None, Buf::X);
    b.add_beside(Op::RopeTable, -1, Buf::None, Buf::Rope);
    for (int i = 0; i < int(c.n_layer); ++i) {
        const LayerWeights& L = w.layers[size_t(i)];
        attention_block(b, c, L, i);
        if (L.moe)
            expert_ffn(b, L, i);
        else
            dense_ffn(b, L, i);
    }
    output_head(b, w, Op::RmsNorm, Buf::X);
    return p;
}

int64_t stage_items(const Stage& s, const ModelConfig& c, const PassShape& sh) {
    switch (s.op) {
    case Op::Embed: return sh.n_tokens;
    case Op::RopeTable: return sh.n_tokens;
    case Op::RmsNorm: return s.outputs_only ? sh.n_out : sh.n_tokens;
    case Op::QkvRope: return c.n_head + 2 * c.n_head_kv;
    case Op::Attention: return sh.n_tokens * c.n_head_kv;
    case Op::Quantize: return sh.n_tokens;
    case Op::MatMulAdd: return ceil_div(s.weight->rows, s.tile);
    case Op::GatedFfn: return ceil_div(c.n_ff, s.tile);
    case Op::Router: return sh.n_tokens;
    case Op::ExpertGatedFfn: return c.n_expert * ceil_div(c.n_ff_exp, s.tile);
    case Op::ExpertDownAdd: return ceil_div(c.n_embd, s.tile);
    case Op::LmHead: return sh.n_out == 0 ? 0 : ceil_div(c.n_vocab, s.tile);
    case Op::EmbedHc: return sh.n_tokens;
    case Op::HcPre: return s.outputs_only ? sh.n_out : sh.n_tokens;
    case Op::IndexerProj: return c.n_index_head + 2;
    case Op::IndexScore:
        return index_sparse(c, sh.max_pos) ? sh.n_tokens * ceil_div(index_blocks_before(sh.max_pos), kScoreBlocks) : 0;
    case Op::IndexSelect: return index_sparse(c, sh.max_pos) ? sh.n_tokens : 0;
    case Op::SparseAttention: return sh.n_tokens * c.n_head_kv;
    case Op::MatMulHcPost: return ceil_div(c.n_embd, s.tile);
    case Op::SharedGate: return sh.n_tokens;
    case Op::SharedGatedFfn: return ceil_div(c.n_ff_shexp, s.tile);
    case Op::MoeDownHcPost: return ceil_div(c.n_embd, s.tile);
    }
    return 0;
}

const char* op_name(Op op) {
    switch (op) {
    case Op::Embed: return "embed";
    case Op::RopeTable: return "rope_table";
    case Op::RmsNorm: return "rms_norm";
    case Op::QkvRope: return "qkv_rope";
    case Op::Attention: return "attention";
    case Op::Quantize: return "quantize";
    case Op::MatMulAdd: return "matmul_add";
    case Op::GatedFfn: return "gated_ffn";
    case Op::Router: return "router";
    case Op::ExpertGatedFfn: return "expert_gated_ffn";
    case Op::ExpertDownAdd: return "expert_down_add";
    case Op::LmHead: return "lm_head";
    case Op::EmbedHc: return "embed_hc";
    case Op::HcPre: return "hc_pre";
    case Op::IndexerProj: return "indexer_proj";
    case Op::IndexScore: return "index_score";
    case Op::IndexSelect: return "index_select";
    case Op::SparseAttention: return "sparse_attention";
    case Op::MatMulHcPost: return "matmul_hc_post";
    case Op::SharedGate: return "shared_gate";
    case Op::SharedGatedFfn: return "shared_gated_ffn";
    case Op::MoeDownHcPost: return "moe_down_hc_post";
    }
    return "?";
}

std::string describe(const PassPlan& p) {
    std::string s;
    for (const Stage& st : p.stages) {
        s += 'L';
        s += std::to_string(st.level);
        s += ' ';
        s += op_name(st.op);
        if (st.layer >= 0) {
            s += " layer ";
            s += std::to_string(st.layer);
        }
        if (st.weight) s += " " + st.weight->name;
        if (st.quantize_out) s += " +q8a";
        if (st.outputs_only) s += " (outputs)";
        s += "\n";
    }
    return s;
}

}  // namespace arbor::plan
