// Model::load: map, read the hyperparameters, bind the tensors, build the tokenizer.
#include <arbor/model.hpp>

#include "model/model_weights.hpp"

namespace arbor {

Model::~Model() = default;

Result<std::shared_ptr<const Model>> Model::load(const std::string& path) {
    auto file = GgufFile::open(path);
    if (!file) return file.error();
    auto cfg = read_model_config(*file.value());
    if (!cfg) return cfg.error();
    std::shared_ptr<Model> m(new Model());
    m->config_ = std::move(cfg.value());
    auto w = bind_weights(*file.value(), m->config_);
    if (!w) return w.error();
    m->weights_ = std::make_unique<ModelWeights>(std::move(w.value()));
    auto tok = Tokenizer::from_gguf(*file.value());
    if (!tok) return make_error(path + ": tokenizer: " + tok.message());
    m->tokenizer_ = std::make_unique<Tokenizer>(std::move(tok.value()));
    m->gguf_ = std::move(file.value());
    return std::shared_ptr<const Model>(std::move(m));
}

int64_t Model::kv_bytes_per_cell(int64_t elem_bytes) const {
    // Indexer models add each cell's indexer key and a quarter of a float32 pooled block key.
    return config_.n_layer * (config_.n_head_kv * (config_.head_dim_k + config_.head_dim_v) * elem_bytes +
                              config_.index_dim * (elem_bytes + 1));
}

}  // namespace arbor
