// The context pool of arbor/contexts.hpp: one model, one backend, one pool of KV pages.
#include <arbor/contexts.hpp>

#include <algorithm>

namespace arbor {

Result<std::shared_ptr<Contexts>> Contexts::load(const std::string& model_path, const SessionOptions& opts) {
    auto model = Model::load(model_path);
    if (!model) return model.error();
    return create(model.value(), opts);
}

Result<std::shared_ptr<Contexts>> Contexts::create(std::shared_ptr<const Model> model, const SessionOptions& opts) {
    if (!model) return make_error("no model");
    if (opts.prefill_chunk < 1) return make_error("the prefill chunk must be at least 1 token");
    if (opts.kv_pages < 0) return make_error("kv_pages must be >= 0");
    BackendOptions bo;
    bo.threads = opts.threads;
    bo.max_batch_tokens = opts.prefill_chunk;
    auto be = make_backend(opts.backend, model, bo);
    if (!be) return be.error();
    std::shared_ptr<Contexts> c(new Contexts());
    c->n_ctx_ = default_context(*model, opts);
    const int64_t one_context = (c->n_ctx_ + kKvPageCells - 1) / kKvPageCells;
    int64_t pages = opts.kv_pages;
    if (pages == 0) {
        const auto page_bytes = int64_t(KvLayout::for_model(model->config(), opts.kv_type).page_bytes);
        pages = std::max(one_context, page_bytes > 0 ? opts.kv_budget_bytes / page_bytes : one_context);
    }
    c->backend_ = std::move(be.value());
    c->cache_ = c->backend_->make_kv_cache(opts.kv_type, pages);
    c->chunk_ = opts.prefill_chunk;
    c->kv_type_ = opts.kv_type;
    c->model_ = std::move(model);
    return c;
}

Result<std::unique_ptr<Session>> Contexts::create_context() {
    return std::unique_ptr<Session>(new Session(shared_from_this(), std::make_unique<KvSequence>(cache_, n_ctx_)));
}

Result<std::pair<std::unique_ptr<Session>, WakeReport>> Contexts::wake_context(const std::string& path) {
    auto s = create_context();
    if (!s) return s.error();
    auto rep = s.value()->wake(path);
    if (!rep) return rep.error();
    return std::make_pair(std::move(s.value()), std::move(rep.value()));
}

}  // namespace arbor
