// The GPU backend's flashnext part: upload lists, the device layer table and pass block, the
// pass buffers, and the plan-stage -> device-stage decomposition of flashnext's own ops.
//
// Device levels of a flashnext layer (plan level -> kernel levels; docs/GPU.md):
//   HcPre            hc dots (T x 12 items) | mix + combine + attn_norm (T)
//   QkvRope || IndexerProj   Q/K/V and indexer dots (keys stored) | q/k norm + RoPE, indexer
//                    query RoPE + scale, weights, pooled keys of completed blocks
//   IndexScore       block scores (T x 8 max_chunks)            only when a token is sparse
//   IndexSelect      top budget/4 blocks per token (T)          only when a token is sparse
//   SparseAttention  chunks | in-order combine (+ Quantize when the span is not whole blocks)
//   MatMulHcPost     attn_output rows with the stream update in the epilogue
//   HcPre            as above, with ffn_norm
//   Router || SharedGate || SharedGatedFfn   router logits, shared gate, shared FFN rows |
//                    router top-k, shared FFN Q8A
//   ExpertGatedFfn   expert rows | Q8A
//   MoeDownHcPost    routed + shared down rows with the stream update in the epilogue
#include "gpu_flashnext.hpp"

#include "arbor_hip.hpp"
#include "model/numerics_flashnext.hpp"

#include <arbor/kv_cache.hpp>
#include <arbor/quant.hpp>

#include <cmath>
#include <cstdlib>
#include <string>

namespace arbor::gpu {
namespace {

using plan::Op;

bool float_type(TensorType t) { return t == TensorType::F32 || t == TensorType::F16 || t == TensorType::BF16; }

float inv_sqrt(int64_t n) { return float(1.0 / std::sqrt(double(n))); }

}  // namespace

FlashNextDevice::~FlashNextDevice() {
    for (void* p : owned_) (void)hipFree(p);
    if (host_.scores) (void)hipFree(host_.scores);
}

std::vector<const WeightRef*> FlashNextDevice::weight_refs(const ModelWeights& w) {
    std::vector<const WeightRef*> v{&w.output_hc_fn};
    for (const LayerWeights& L : w.layers)
        for (const WeightRef* r : {&L.gate_shexp, &L.up_shexp, &L.down_shexp, &L.hc_attn_fn, &L.hc_ffn_fn, &L.idx_q,
                                   &L.idx_k, &L.idx_proj})
            v.push_back(r);
    return v;
}

std::vector<const std::vector<float>*> FlashNextDevice::vectors(const ModelWeights& w) {
    std::vector<const std::vector<float>*> v{&w.output_hc_base, &w.index_rope_freq};
    for (const LayerWeights& L : w.layers)
        for (const std::vector<float>* x : {&L.gate_inp_shexp, &L.hc_attn_base, &L.hc_attn_scale, &L.hc_ffn_base,
                                            &L.hc_ffn_scale, &L.idx_k_norm})
            v.push_back(x);
    return v;
}

bool FlashNextDevice::builds(Op op) {
    switch (op) {
    case Op::EmbedHc: case Op::HcPre: case Op::IndexerProj: case Op::IndexScore: case Op::IndexSelect:
    case Op::SparseAttention: case Op::MatMulHcPost: case Op::SharedGate: case Op::SharedGatedFfn:
    case Op::MoeDownHcPost:
        return true;
    default: return false;
    }
}

Status FlashNextDevice::alloc(void** p, size_t bytes, const char* what) {
    *p = nullptr;
    const hipError_t e = hipMalloc(p, bytes < 256 ? 256 : bytes);
    if (e != hipSuccess)
        return make_error(std::string("cannot allocate device memory for ") + what + ": " + hipGetErrorString(e));
    owned_.push_back(*p);
    return {};
}

Status FlashNextDevice::upload_pass() {
    if (hipMemcpy(dev_, &host_, sizeof(MkFnPass), hipMemcpyHostToDevice) != hipSuccess)
        return make_error("cannot upload the flashnext pass block");
    return {};
}

Status FlashNextDevice::init(const ModelConfig& c, const ModelWeights& w, int64_t max_tokens, const WeightFn& dev_weight,
                             const VectorFn& dev_vector) {
    cfg_ = &c;
    w_ = &w;
    max_tokens_ = max_tokens;
    if (c.n_hc != 4 || c.index_dim <= 0 || c.index_dim % 2 != 0 || c.n_index_head < 1 || c.index_top_k <= 0 ||
        c.index_top_k % kKvPoolCells != 0 || c.n_ff_shexp <= 0)
        return make_error("the GPU backend cannot run this flashnext model: unexpected hyper-connection, indexer or shared "
                          "expert dimensions");
    // The hc fn rows are dotted with float vectors formed on the fly (mk_flashnext_ops.hpp).
    for (const WeightRef* r : {&w.output_hc_fn})
        if (!float_type(r->type)) return make_error("the GPU backend needs a float type for tensor " + r->name);
    std::vector<MkFnLayerW> lw(w.layers.size());
    for (size_t i = 0; i < w.layers.size(); ++i) {
        const LayerWeights& L = w.layers[i];
        MkFnLayerW& o = lw[i];
        for (const WeightRef* r : {&L.hc_attn_fn, &L.hc_ffn_fn})
            if (!float_type(r->type)) return make_error("the GPU backend needs a float type for tensor " + r->name);
        const std::pair<MkW*, const WeightRef*> mats[] = {
            {&o.hc_fn[kFnWrapAttn], &L.hc_attn_fn}, {&o.hc_fn[kFnWrapFfn], &L.hc_ffn_fn}, {&o.idx_q, &L.idx_q},
            {&o.idx_proj, &L.idx_proj}, {&o.idx_k, &L.idx_k}, {&o.gate_shexp, &L.gate_shexp},
            {&o.up_shexp, &L.up_shexp}, {&o.down_shexp, &L.down_shexp}};
        for (const auto& [dst, src] : mats) {
            auto m = dev_weight(*src);
            if (!m) return m.error();
            *dst = m.value();
        }
        o.hc_base[kFnWrapAttn] = dev_vector(L.hc_attn_base);
        o.hc_scale[kFnWrapAttn] = dev_vector(L.hc_attn_scale);
        o.hc_base[kFnWrapFfn] = dev_vector(L.hc_ffn_base);
        o.hc_scale[kFnWrapFfn] = dev_vector(L.hc_ffn_scale);
        o.idx_k_norm = dev_vector(L.idx_k_norm);
        o.gate_inp_shexp = dev_vector(L.gate_inp_shexp);
        if (!o.hc_base[0] || !o.hc_scale[0] || !o.hc_base[1] || !o.hc_scale[1] || !o.idx_k_norm || !o.gate_inp_shexp)
            return make_error("flashnext layer " + std::to_string(i) + ": a hyper-connection, indexer or shared-gate "
                              "vector was not uploaded");
    }
    void* p = nullptr;
    if (auto s = alloc(&p, lw.size() * sizeof(MkFnLayerW), "the flashnext layer table"); !s) return s;
    layers_ = static_cast<MkFnLayerW*>(p);
    if (hipMemcpy(layers_, lw.data(), lw.size() * sizeof(MkFnLayerW), hipMemcpyHostToDevice) != hipSuccess)
        return make_error("cannot upload the flashnext layer table");

    MkFnPass& F = host_;
    F.layers = layers_;
    auto out_fn = dev_weight(w.output_hc_fn);
    if (!out_fn) return out_fn.error();
    F.out_hc_fn = out_fn.value();
    F.out_hc_base = dev_vector(w.output_hc_base);
    F.index_freq = dev_vector(w.index_rope_freq);
    if (!F.out_hc_base || !F.index_freq || w.output_hc_scale.empty())
        return make_error("the flashnext head or indexer RoPE vectors were not uploaded");
    F.out_hc_scale = w.output_hc_scale[0];
    F.hc_eps = c.hc_eps;
    F.idx_q_scale = inv_sqrt(c.index_dim);
    F.idx_w_scale = inv_sqrt(c.n_index_head);
    F.sinkhorn = int(c.hc_sinkhorn_iters);
    F.n_idx_head = c.n_index_head;
    F.idx_dim = c.index_dim;
    F.budget = c.index_top_k;
    F.n_ff_shexp = c.n_ff_shexp;
    // What scoring costs without the block-key cache (issue 12's measurement): ARBOR_FN_REPOOL=1
    // makes every score item pool its 32 blocks from their keys again before scoring them (the
    // same function, so the same bits as the cached keys).
    const char* repool = std::getenv("ARBOR_FN_REPOOL");
    F.repool = repool && std::string(repool) == "1";

    const size_t T = size_t(max_tokens), d = size_t(c.n_embd), HI = size_t(c.n_index_head), dI = size_t(c.index_dim);
    const size_t Fs = size_t(c.n_ff_shexp), K = size_t(c.index_top_k / kKvPoolCells);
    struct A {
        void** p;
        size_t bytes;
        const char* what;
    };
    const A allocs[] = {
        {reinterpret_cast<void**>(&F.x4), T * 4 * d * 4, "the hyper-connection streams"},
        {reinterpret_cast<void**>(&F.hcm), T * 24 * 4, "the hyper-connection dots"},
        {reinterpret_cast<void**>(&F.hc), T * 24 * 4, "the hyper-connection mixes"},
        {reinterpret_cast<void**>(&F.idx_raw), T * (HI * dI + HI) * 4, "the indexer projections"},
        {reinterpret_cast<void**>(&F.iq), T * HI * dI * 4, "the indexer queries"},
        {reinterpret_cast<void**>(&F.iw), T * HI * 4, "the indexer head weights"},
        {reinterpret_cast<void**>(&F.sel), T * K * 4, "the selected blocks"},
        {reinterpret_cast<void**>(&F.gs), T * 4, "the shared-expert gates"},
        {reinterpret_cast<void**>(&F.hs), T * Fs * 4, "the shared-expert activations"},
        {reinterpret_cast<void**>(&F.hsq), T * (Fs / 32 + 1) * sizeof(quant::BlockQ8A), "the shared-expert Q8A"},
    };
    for (const A& a : allocs)
        if (auto s = alloc(a.p, a.bytes, a.what); !s) return s;
    if (hipMalloc(reinterpret_cast<void**>(&dev_), sizeof(MkFnPass)) != hipSuccess)
        return make_error("cannot allocate the flashnext pass block");
    owned_.push_back(dev_);
    return prepare(0);
}

Status FlashNextDevice::prepare(int64_t max_pos) {
    max_pos_ = max_pos;
    const int64_t chunks = max_pos / kKvPageCells + 1;
    if (chunks <= score_chunks_) return {};
    if (host_.scores) (void)hipFree(host_.scores);
    host_.scores = nullptr;
    score_chunks_ = 0;
    const size_t bytes = size_t(max_tokens_) * size_t(chunks) * size_t(kKvPageCells / kKvPoolCells) * 4;
    const hipError_t e = hipMalloc(reinterpret_cast<void**>(&host_.scores), bytes);
    if (e != hipSuccess)
        return make_error(std::string("cannot allocate device memory for the indexer scores: ") + hipGetErrorString(e));
    score_chunks_ = chunks;
    return upload_pass();
}

void FlashNextDevice::steps(const plan::Stage& s, const MkModelStage& base, int64_t T, int64_t n_out, int64_t MC,
                            std::vector<FnStep>& out) const {
    const ModelConfig& c = *cfg_;
    MkModelStage a = base;
    const bool sparse = plan::index_sparse(c, max_pos_);
    switch (s.op) {
    case Op::EmbedHc: out.push_back({kOpFnEmbedHc, T, a, ""}); break;
    case Op::HcPre: {
        int wrap = kFnWrapHead;
        if (!s.outputs_only) wrap = s.norm == &w_->layers[size_t(s.layer)].attn_norm ? kFnWrapAttn : kFnWrapFfn;
        a.out_buf = wrap;
        const int64_t rows = s.outputs_only ? n_out : T;
        const int64_t outs = wrap == kFnWrapHead ? num::kHcStreams : num::kHcMix;  // a dot an item
        out.push_back({kOpFnHcDots, rows * outs, a, " dots"});
        out.push_back({kOpFnHcFinish, rows, a, " mix+norm"});
        break;
    }
    case Op::IndexerProj: {
        const int64_t HI = c.n_index_head, dI = c.index_dim;
        out.push_back({kOpFnIdxDots, HI * dI / 2 + (HI + 1) / 2 + dI / 2, a, " dots"});
        out.push_back({kOpFnIdxFinish, T * (HI + 2), a, " rope+pool"});
        break;
    }
    // A pass whose tokens all attend densely builds no score or select stage: no level either.
    case Op::IndexScore:
        if (sparse) out.push_back({kOpFnIdxScore, T * (kMkFnBlocksPerPage / kMkFnScoreBlocks) * MC, a, ""});
        break;
    case Op::IndexSelect:
        if (sparse) out.push_back({kOpFnIdxSelect, T, a, ""});
        break;
    case Op::SparseAttention:
        out.push_back({kOpFnAttnChunk, c.n_head_kv * T * MC * a.head_parts, a, " chunks"});
        out.push_back({kOpFnAttnCombine, attn_combine_items(c.n_head_kv, T, c.n_head / c.n_head_kv, c.head_dim_v), a, " combine"});
        break;
    case Op::MatMulHcPost: out.push_back({kOpFnMatMulHcPost, (c.n_embd + 1) / 2, a, ""}); break;
    case Op::SharedGate: out.push_back({kOpFnSharedGate, T, a, ""}); break;
    case Op::SharedGatedFfn:
        out.push_back({kOpFnSharedFfn, c.n_ff_shexp, a, ""});
        if (s.quantize_out) out.push_back({kOpFnSharedQuantize, T, a, " q8a"});
        break;
    case Op::MoeDownHcPost: out.push_back({kOpFnMoeDownHcPost, (c.n_embd + 1) / 2, a, ""}); break;
    default: break;
    }
}

}  // namespace arbor::gpu
