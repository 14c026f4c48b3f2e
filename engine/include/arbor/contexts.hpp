// The session API for the app: a loaded model with its backend and one pool of KV pages, from
// which contexts (arbor::Session, arbor/session.hpp) are made. Contexts of one pool can share
// cells: a fork shares its parent's prefix through reference-counted copy-on-write pages.
//
//   auto pool = Contexts::load("model.gguf", opts);          // load a model
//   auto a = pool.value()->create_context();                  // create
//   a.value()->feed(prompt); a.value()->generate(...);        // append, generate
//   auto b = a.value()->fork(n);                              // fork at token n
//   auto c = a.value()->deep_copy();                          // copy
//   a.value()->park(file, &sampler);                          // park
//   auto w = pool.value()->wake_context(file);                // wake into a new context
//   a.value().reset();                                        // destroy (releases its pages)
//
// Threading: the pool is made on any thread; afterwards one thread at a time drives it and all
// its contexts (they share the backend). model(), n_ctx(), kv_type(), pages_in_use() and
// max_pages() are safe from any thread, like each context's stats() and request_cancel().
#pragma once

#include <arbor/backend.hpp>
#include <arbor/kv_cache.hpp>
#include <arbor/model.hpp>
#include <arbor/result.hpp>
#include <arbor/session.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

namespace arbor {

class Contexts : public std::enable_shared_from_this<Contexts> {
public:
    // Loads the model file, then create().
    static Result<std::shared_ptr<Contexts>> load(const std::string& model_path, const SessionOptions& opts);
    // A backend (opts.backend, opts.threads) and a page pool of opts.kv_pages pages (0: as many
    // as opts.kv_budget_bytes holds, at least one whole context) for contexts of
    // default_context(model, opts) cells.
    static Result<std::shared_ptr<Contexts>> create(std::shared_ptr<const Model> model, const SessionOptions& opts);

    const Model& model() const { return *model_; }
    const std::shared_ptr<const Model>& model_ptr() const { return model_; }
    Backend& backend() { return *backend_; }
    int64_t n_ctx() const { return n_ctx_; }
    KvType kv_type() const { return kv_type_; }
    int64_t prefill_chunk() const { return chunk_; }
    int64_t pages_in_use() const { return cache_->pages_in_use(); }
    int64_t max_pages() const { return cache_->max_pages(); }
    const std::shared_ptr<KvCache>& cache() const { return cache_; }

    // An empty context of n_ctx() cells.
    Result<std::unique_ptr<Session>> create_context();
    // A new context woken from a park file (Session::wake), with the report.
    Result<std::pair<std::unique_ptr<Session>, WakeReport>> wake_context(const std::string& path);

private:
    Contexts() = default;
    std::shared_ptr<const Model> model_;
    std::unique_ptr<Backend> backend_;
    std::shared_ptr<KvCache> cache_;
    int64_t n_ctx_ = 0;
    int64_t chunk_ = 256;
    KvType kv_type_ = KvType::F16;
};

}  // namespace arbor
