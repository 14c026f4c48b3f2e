#include "model/pass_batch.hpp"

#include <algorithm>
#include <string>

namespace arbor {

Status validate_batch(const ModelConfig& c, std::span<const BatchEntry> batch) {
    const KvLayout want = KvLayout::for_model(c, KvType::F16);
    for (size_t i = 0; i < batch.size(); ++i) {
        const BatchEntry& e = batch[i];
        if (!e.seq) return make_error("batch entry " + std::to_string(i) + " has no sequence");
        const KvLayout& l = e.seq->cache().layout();
        if (l.n_layer != want.n_layer || l.n_head_kv != want.n_head_kv || l.head_dim_k != want.head_dim_k ||
            l.head_dim_v != want.head_dim_v || l.index_dim != want.index_dim)
            return make_error("batch entry " + std::to_string(i) + ": its KV cache was made for another model");
        if (l.type != batch[0].seq->cache().layout().type)
            return make_error("batch entry " + std::to_string(i) + ": its KV cache type differs from entry 0's");
        for (size_t j = 0; j < i; ++j)
            if (batch[j].seq == e.seq)
                return make_error("batch entries " + std::to_string(j) + " and " + std::to_string(i) +
                                  " append to the same sequence");
        for (size_t j = 0; j < e.tokens.size(); ++j)
            if (e.tokens[j] < 0 || e.tokens[j] >= c.n_vocab)
                return make_error("batch entry " + std::to_string(i) + ": token " + std::to_string(j) + " has id " +
                                  std::to_string(e.tokens[j]) + ", outside the vocabulary of " +
                                  std::to_string(c.n_vocab));
        if (e.seq->size() + int64_t(e.tokens.size()) > e.seq->capacity())
            return make_error("context full: " + std::to_string(e.seq->size()) + " + " +
                              std::to_string(e.tokens.size()) + " tokens exceed the context of " +
                              std::to_string(e.seq->capacity()));
    }
    return {};
}

Status run_batch(const ModelConfig& c, std::span<const BatchEntry> batch, int64_t max_tokens, PassLogits* out,
                 const std::function<Status()>& prepared,
                 const std::function<Status(const PassTokens&, float* logits)>& run_pass) {
    if (auto s = validate_batch(c, batch); !s) return s;
    int64_t n_rows = 0;
    for (const BatchEntry& e : batch) {
        if (auto s = e.seq->prepare_write(e.seq->size(), e.seq->size() + int64_t(e.tokens.size())); !s) return s;
        n_rows += e.logits == LogitsMode::All                        ? int64_t(e.tokens.size())
                  : e.logits == LogitsMode::Last && !e.tokens.empty() ? 1
                                                                      : 0;
    }
    if (prepared)
        if (auto s = prepared(); !s) return s;
    out->n_vocab = c.n_vocab;
    out->rows.clear();
    out->data.resize(size_t(n_rows) * size_t(c.n_vocab));
    PassTokens p;
    int64_t rows_done = 0;
    auto flush = [&]() -> Status {
        if (p.tok.empty()) return {};
        if (auto s = run_pass(p, out->data.data() + size_t(rows_done) * size_t(c.n_vocab)); !s) return s;
        rows_done += int64_t(p.out.size());
        p.clear();
        return {};
    };
    for (size_t i = 0; i < batch.size(); ++i) {
        const BatchEntry& e = batch[i];
        const int64_t n = int64_t(e.tokens.size());
        for (int64_t j = 0; j < n; ++j) {
            if (int64_t(p.tok.size()) == max_tokens)
                if (auto s = flush(); !s) return s;
            const bool want = e.logits == LogitsMode::All || (e.logits == LogitsMode::Last && j == n - 1);
            if (want) {
                p.out.push_back(int32_t(p.tok.size()));
                out->rows.push_back({int32_t(i), int32_t(j)});
            }
            p.tok.push_back(e.tokens[size_t(j)]);
            p.pos.push_back(int32_t(e.seq->size() + j));
            p.seq.push_back(int32_t(i));
        }
    }
    if (auto s = flush(); !s) return s;
    for (const BatchEntry& e : batch) e.seq->set_size(e.seq->size() + int64_t(e.tokens.size()));
    return {};
}

}  // namespace arbor
