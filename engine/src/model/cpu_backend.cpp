// The CPU backend: owns the pass plan, the thread pool and the pass buffers (allocated once,
// for max_batch_tokens), splits a batch into passes and runs each pass level by level.
#include <arbor/backend.hpp>

#include "model/cpu_pass.hpp"
#include "model/gpu_backend.hpp"
#include "model/pass_batch.hpp"
#include "model/thread_pool.hpp"

#include <algorithm>

namespace arbor {
namespace {

using cpu::WorkerScratch;
using plan::Op;
using quant::BlockQ8A;

class CpuBackend final : public Backend {
public:
    CpuBackend(std::shared_ptr<const Model> model, int threads, int64_t max_tokens, bool scalar)
        : model_(std::move(model)),
          pool_(threads),
          max_tokens_(max_tokens),
          k_(scalar ? &cpu::scalar_kernels() : &cpu::best_kernels()),
          isa_(scalar ? quant::Isa::Scalar : quant::best_isa()) {
        const ModelConfig& c = model_->config();
        plan_ = plan::build_pass_plan(c, model_->weights());
        for (size_t i = 0; i < plan_.stages.size(); ++i) {
            const int lv = plan_.stages[i].level;
            if (size_t(lv) >= level_begin_.size()) level_begin_.resize(size_t(lv) + 1, int32_t(i));
        }
        level_begin_.push_back(int32_t(plan_.stages.size()));
        size_t widest = 1;
        for (size_t lv = 0; lv + 1 < level_begin_.size(); ++lv)
            widest = std::max(widest, size_t(level_begin_[lv + 1] - level_begin_[lv]));
        level_items_.resize(widest);
        const size_t T = size_t(max_tokens_), K = size_t(std::max<int64_t>(c.n_expert_used, 1));
        x_.resize(T * size_t(c.n_embd));
        xn_.resize(T * size_t(c.n_embd));
        xq_.resize(T * size_t(c.n_embd / 32 + 1));
        rope_.resize(T * size_t(c.n_rot));
        q_.resize(T * size_t(c.n_head * c.head_dim_k));
        att_.resize(T * size_t(c.n_head * c.head_dim_v));
        attq_.resize(T * size_t(c.n_head * c.head_dim_v / 32 + 1));
        h_.resize(T * size_t(c.n_ff));
        hq_.resize(T * size_t(c.n_ff / 32 + 1));
        if (c.is_moe()) {
            route_idx_.resize(T * K);
            route_w_.resize(T * K);
            he_.resize(T * K * size_t(c.n_ff_exp));
            heq_.resize(T * K * size_t(c.n_ff_exp / 32 + 1));
        }
        if (c.is_flashnext()) {
            x4_.resize(T * 4 * size_t(c.n_embd));
            hc_.resize(T * 24);
            iq_.resize(T * size_t(c.n_index_head * c.index_dim));
            iw_.resize(T * size_t(c.n_index_head));
            sel_.resize(T * size_t(c.index_top_k / kKvPoolCells));
            gs_.resize(T);
            hs_.resize(T * size_t(c.n_ff_shexp));
            hsq_.resize(T * size_t(c.n_ff_shexp / 32 + 1));
        }
        const int64_t tmp = std::max({int64_t(plan::kHeadTile), c.head_dim_k, c.head_dim_v,
                                      int64_t(K) * plan::kMatTile, c.n_expert});
        const int64_t fx = c.is_flashnext() ? std::max({4 * c.n_embd, c.index_dim, c.n_index_head}) : 0;
        const size_t gather = c.is_flashnext() ? size_t(kKvPageCells * (c.head_dim_k + c.head_dim_v) * 4) : 0;
        scratch_.resize(size_t(pool_.size()));
        for (WorkerScratch& s : scratch_) {
            s.a.resize(size_t(tmp));
            s.b.resize(size_t(tmp));
            s.scores.resize(size_t(c.n_head / c.n_head_kv) * size_t(num_attn_chunk()));
            s.fx.resize(size_t(fx));
            s.gather.resize(gather);
        }
    }

    std::string_view name() const override { return "cpu"; }
    std::string device() const override {
        return "CPU, " + std::to_string(pool_.size()) + " thread" + (pool_.size() == 1 ? "" : "s") + ", " + k_->name +
               " kernels, " + quant::isa_name(isa_) + " row dots";
    }
    const Model& model() const override { return *model_; }

    Status eval(std::span<const BatchEntry> batch, PassLogits* out) override;
    BackendCounters counters() const override { return counters_; }

private:
    static int64_t num_attn_chunk() { return kKvPageCells; }
    void run_pass(const PassTokens& pt, float* logits);
    void run_item(const plan::Stage& s, const cpu::Pass& p, int64_t item, int worker) const;

    std::shared_ptr<const Model> model_;
    ThreadPool pool_;
    int64_t max_tokens_;
    const cpu::Kernels* k_;
    quant::Isa isa_;
    plan::PassPlan plan_;
    std::vector<int32_t> level_begin_;
    std::vector<int64_t> level_items_;  // items per stage of the level being run

    std::vector<float> x_, xn_, rope_, q_, att_, h_, he_, route_w_;
    std::vector<BlockQ8A> xq_, attq_, hq_, heq_;
    std::vector<int32_t> route_idx_;
    std::vector<float> x4_, hc_, iq_, iw_, scores_, gs_, hs_;  // flashnext
    std::vector<BlockQ8A> hsq_;
    std::vector<int32_t> sel_;
    int64_t score_stride_ = 0;
    std::vector<WorkerScratch> scratch_;
    cpu::ExpertRoutes routes_;
    KvLayout kv_;
    BackendCounters counters_;

    // The current batch's page tables.
    std::vector<std::vector<uint8_t*>> seq_pages_;
};

Status CpuBackend::eval(std::span<const BatchEntry> batch, PassLogits* out) {
    const ModelConfig& c = model_->config();
    auto prepared = [&]() -> Status {
        int64_t max_pos = 0;
        for (const BatchEntry& e : batch)
            max_pos = std::max<int64_t>(max_pos, e.seq->size() + int64_t(e.tokens.size()));
        if (!batch.empty()) kv_ = batch[0].seq->cache().layout();
        const size_t chunk_floats =
            size_t((max_pos / kKvPageCells + 1) * (c.n_head / c.n_head_kv) * (c.head_dim_v + 2));
        for (WorkerScratch& s : scratch_)
            if (s.chunks.size() < chunk_floats) s.chunks.resize(chunk_floats);
        if (c.is_flashnext()) {
            // Block scores and the selection's ranking, for the largest position of the batch.
            score_stride_ = std::max<int64_t>(1, plan::index_blocks_before(max_pos));
            if (scores_.size() < size_t(max_tokens_ * score_stride_)) scores_.resize(size_t(max_tokens_ * score_stride_));
            for (WorkerScratch& s : scratch_)
                if (s.order.size() < size_t(score_stride_)) s.order.resize(size_t(score_stride_));
        }
        seq_pages_.resize(batch.size());
        for (size_t i = 0; i < batch.size(); ++i) {
            seq_pages_[i].clear();
            for (size_t pg = 0; pg < batch[i].seq->pages().size(); ++pg)
                seq_pages_[i].push_back(batch[i].seq->page_data(int64_t(pg)));
        }
        return {};
    };
    return run_batch(c, batch, max_tokens_, out, prepared, [&](const PassTokens& p, float* logits) -> Status {
        run_pass(p, logits);
        return {};
    });
}

void CpuBackend::run_item(const plan::Stage& s, const cpu::Pass& p, int64_t item, int worker) const {
    switch (s.op) {
    case Op::Embed: cpu::run_embed(p, item); break;
    case Op::RopeTable: cpu::run_rope_table(p, item); break;
    case Op::RmsNorm: cpu::run_rms_norm(p, s, item); break;
    case Op::QkvRope: cpu::run_qkv_rope(p, s, item, worker); break;
    case Op::Attention: cpu::run_attention(p, s, item, worker); break;
    case Op::Quantize: cpu::run_quantize(p, s, item); break;
    case Op::MatMulAdd: cpu::run_matmul_add(p, s, item, worker); break;
    case Op::GatedFfn: cpu::run_gated_ffn(p, s, item, worker); break;
    case Op::Router: cpu::run_router(p, s, item, worker); break;
    case Op::ExpertGatedFfn: cpu::run_expert_gated_ffn(p, s, item, worker); break;
    case Op::ExpertDownAdd: cpu::run_expert_down_add(p, s, item, worker); break;
    case Op::LmHead: cpu::run_lm_head(p, s, item, worker); break;
    case Op::EmbedHc: cpu::run_embed_hc(p, item); break;
    case Op::HcPre: cpu::run_hc_pre(p, s, item, worker); break;
    case Op::IndexerProj: cpu::run_indexer_proj(p, s, item, worker); break;
    case Op::IndexScore: cpu::run_index_score(p, s, item, worker); break;
    case Op::IndexSelect: cpu::run_index_select(p, s, item, worker); break;
    case Op::SparseAttention: cpu::run_sparse_attention(p, s, item, worker); break;
    case Op::MatMulHcPost: cpu::run_matmul_hc_post(p, s, item, worker); break;
    case Op::SharedGate: cpu::run_shared_gate(p, s, item, worker); break;
    case Op::SharedGatedFfn: cpu::run_shared_gated_ffn(p, s, item, worker); break;
    case Op::MoeDownHcPost: cpu::run_moe_down_hc_post(p, s, item, worker); break;
    }
}

void CpuBackend::run_pass(const PassTokens& pt, float* logits) {
    const int64_t n_tokens = int64_t(pt.tok.size()), n_out = int64_t(pt.out.size());
    const ModelConfig& c = model_->config();
    cpu::Pass p;
    p.cfg = &c;
    p.w = &model_->weights();
    p.k = k_;
    p.kv = kv_;
    p.isa = isa_;
    p.n_tokens = n_tokens;
    p.token = pt.tok.data();
    p.pos = pt.pos.data();
    p.seq = pt.seq.data();
    p.seq_pages = &seq_pages_;
    p.n_out = n_out;
    p.out_token = pt.out.data();
    p.x = x_.data(), p.xn = xn_.data(), p.xq = xq_.data(), p.rope = rope_.data(), p.q = q_.data();
    p.att = att_.data(), p.attq = attq_.data(), p.h = h_.data(), p.hq = hq_.data();
    p.route_idx = route_idx_.data(), p.route_w = route_w_.data(), p.he = he_.data(), p.heq = heq_.data();
    p.logits = logits;
    p.routes = &routes_;
    p.scratch = scratch_.data();
    int64_t max_pos = 0;
    for (int64_t t = 0; t < n_tokens; ++t) max_pos = std::max<int64_t>(max_pos, p.pos[t]);
    if (c.is_flashnext()) {
        p.x4 = x4_.data(), p.hc = hc_.data(), p.iq = iq_.data(), p.iw = iw_.data(), p.sel = sel_.data();
        p.gs = gs_.data(), p.hs = hs_.data(), p.hsq = hsq_.data();
        p.scores = scores_.data();
        p.score_stride = score_stride_;
        p.score_groups = (plan::index_blocks_before(max_pos) + plan::kScoreBlocks - 1) / plan::kScoreBlocks;
    }
    const plan::PassShape shape{n_tokens, n_out, max_pos};
    ++counters_.passes;
    for (int32_t lv = 0; lv + 1 < int32_t(level_begin_.size()); ++lv) {
        const int32_t b = level_begin_[size_t(lv)], e = level_begin_[size_t(lv) + 1];
        int64_t* items = level_items_.data();
        int64_t total = 0;
        for (int32_t i = b; i < e; ++i) {
            const plan::Stage& s = plan_.stages[size_t(i)];
            if (s.op == Op::ExpertGatedFfn) cpu::build_expert_routes(p);
            items[i - b] = plan::stage_items(s, c, shape);
            total += items[i - b];
        }
        if (total == 0) continue;
        if (e - b == 1) {
            const plan::Stage& s = plan_.stages[size_t(b)];
            pool_.parallel_for(total, [&](int64_t item, int worker) { run_item(s, p, item, worker); });
        } else {
            pool_.parallel_for(total, [&](int64_t item, int worker) {
                int32_t i = b;
                while (item >= items[i - b]) item -= items[i - b], ++i;
                run_item(plan_.stages[size_t(i)], p, item, worker);
            });
        }
    }
}

}  // namespace

Result<std::unique_ptr<Backend>> make_cpu_backend(std::shared_ptr<const Model> model, BackendOptions opts) {
    if (!model) return make_error("no model");
    int threads = opts.threads > 0 ? opts.threads : ThreadPool::hardware_threads();
    if (threads > 256) return make_error("thread count " + std::to_string(threads) + " is too large (at most 256)");
    if (opts.max_batch_tokens < 1 || opts.max_batch_tokens > 65536)
        return make_error("max_batch_tokens must be between 1 and 65536");
    return std::unique_ptr<Backend>(new CpuBackend(std::move(model), threads, opts.max_batch_tokens, opts.scalar));
}

Result<std::unique_ptr<Backend>> make_backend(std::string_view name, std::shared_ptr<const Model> model,
                                              BackendOptions opts) {
    if (name == "cpu") return make_cpu_backend(std::move(model), opts);
    if (name == "gpu") return make_gpu_backend(std::move(model), opts);
    return make_error("unknown backend '" + std::string(name) + "' (cpu or gpu)");
}

}  // namespace arbor
