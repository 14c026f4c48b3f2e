// Pass scripts and their runner for the logits exactness suite.
#include "logits_exact_script.hpp"

#include <algorithm>
#include <string>

namespace arbor::exact {

int64_t Script::max_tokens(int32_t seq) const {
    int64_t n = 0;
    for (const ScriptStep& st : steps)
        for (const ScriptEntry& e : st)
            if (e.seq == seq) n += int64_t(e.tokens.size());
    return n;
}

Script solo(const Script& s) {
    Script r = s;
    r.steps.clear();
    for (const ScriptStep& st : s.steps)
        for (const ScriptEntry& e : st) r.steps.push_back({e});
    return r;
}

Script split_entries(const Script& s, int64_t chunk) {
    Script r = s;
    r.steps.clear();
    for (const ScriptStep& st : s.steps) {
        size_t longest = 0;
        for (const ScriptEntry& e : st) longest = std::max(longest, e.tokens.size());
        const size_t pieces = std::max<size_t>(1, (longest + size_t(chunk) - 1) / size_t(chunk));
        for (size_t k = 0; k < pieces; ++k) {
            ScriptStep out;
            for (const ScriptEntry& e : st) {
                const size_t from = k * size_t(chunk);
                if (from >= e.tokens.size() && !(k == 0 && e.tokens.empty())) continue;
                const size_t to = std::min(e.tokens.size(), from + size_t(chunk));
                ScriptEntry p{e.seq, {e.tokens.begin() + long(from), e.tokens.begin() + long(to)}, e.mode};
                if (e.mode == LogitsMode::Last && to != e.tokens.size()) p.mode = LogitsMode::None;
                out.push_back(std::move(p));
            }
            r.steps.push_back(std::move(out));
        }
    }
    return r;
}

std::vector<TokenId> random_tokens(std::mt19937& rng, int64_t n_vocab, int64_t n) {
    std::uniform_int_distribution<TokenId> d(0, TokenId(n_vocab - 1));
    std::vector<TokenId> t(static_cast<size_t>(n));
    for (TokenId& x : t) x = d(rng);
    return t;
}

Status ScriptRunner::init(int32_t n_seqs, int64_t n_ctx) {
    const int64_t pages_per_seq = (n_ctx + kKvPageCells - 1) / kKvPageCells;
    cache_ = be_.make_kv_cache(kv_, pages_per_seq * n_seqs + 1);
    if (!cache_) return make_error("make_kv_cache(" + std::string(kv_type_name(kv_)) + ") returned no cache");
    seqs_.clear();
    for (int32_t i = 0; i < n_seqs; ++i) seqs_.push_back(std::make_unique<KvSequence>(cache_, n_ctx));
    rows_ = LogitRows{};
    rows_.n_vocab = be_.model().config().n_vocab;
    steps_done_ = 0;
    return {};
}

Status ScriptRunner::step(const ScriptStep& entries) {
    const int32_t step_no = steps_done_++;
    const std::string where = "step " + std::to_string(step_no);
    std::vector<BatchEntry> batch;
    std::vector<int64_t> before;
    std::vector<PassLogits::Row> want;
    for (size_t i = 0; i < entries.size(); ++i) {
        const ScriptEntry& e = entries[i];
        if (e.seq < 0 || size_t(e.seq) >= seqs_.size())
            return make_error(where + ": the script names sequence " + std::to_string(e.seq));
        batch.push_back({seqs_[size_t(e.seq)].get(), e.tokens, e.mode});
        before.push_back(seqs_[size_t(e.seq)]->size());
        const int32_t n = int32_t(e.tokens.size());
        if (e.mode == LogitsMode::All)
            for (int32_t t = 0; t < n; ++t) want.push_back({int32_t(i), t});
        else if (e.mode == LogitsMode::Last && n > 0)
            want.push_back({int32_t(i), n - 1});
    }
    out_ = PassLogits{};
    const BackendCounters c0 = be_.counters();
    if (auto s = be_.eval(batch, &out_); !s) return make_error(where + ": eval failed: " + s.message());
    const BackendCounters c1 = be_.counters();
    int64_t tokens = 0;
    for (const ScriptEntry& e : entries) tokens += int64_t(e.tokens.size());
    const int64_t passes = c1.passes - c0.passes, launches = c1.launches - c0.launches;
    if (passes < (tokens + mbt_ - 1) / mbt_)
        return make_error(where + ": " + std::to_string(passes) + " passes for " + std::to_string(tokens) +
                          " tokens with max_batch_tokens " + std::to_string(mbt_));
    if (be_.name() != "cpu" && launches != passes)
        return make_error(where + ": " + std::to_string(launches) + " kernel launches for " + std::to_string(passes) +
                          " passes (the contract is one per pass)");
    if (out_.n_vocab != rows_.n_vocab)
        return make_error(where + ": n_vocab " + std::to_string(out_.n_vocab) + ", the model has " +
                          std::to_string(rows_.n_vocab));
    if (out_.rows.size() != want.size() || out_.data.size() != want.size() * size_t(out_.n_vocab))
        return make_error(where + ": " + std::to_string(out_.rows.size()) + " logits rows (" +
                          std::to_string(out_.data.size()) + " floats), the batch asks for " + std::to_string(want.size()));
    for (size_t r = 0; r < want.size(); ++r)
        if (out_.rows[r].entry != want[r].entry || out_.rows[r].token != want[r].token)
            return make_error(where + ": row " + std::to_string(r) + " is (entry " + std::to_string(out_.rows[r].entry) +
                              ", token " + std::to_string(out_.rows[r].token) + "), batch order wants (entry " +
                              std::to_string(want[r].entry) + ", token " + std::to_string(want[r].token) + ")");
    for (size_t i = 0; i < entries.size(); ++i) {
        const int64_t got = batch[i].seq->size(), expect = before[i] + int64_t(entries[i].tokens.size());
        if (got != expect)
            return make_error(where + ": sequence " + std::to_string(entries[i].seq) + " holds " + std::to_string(got) +
                              " cells after the pass, expected " + std::to_string(expect));
    }
    for (size_t r = 0; r < want.size(); ++r) {
        const ScriptEntry& e = entries[size_t(want[r].entry)];
        rows_.add({e.seq, before[size_t(want[r].entry)] + want[r].token, step_no}, out_.row(r));
    }
    return {};
}

Status ScriptRunner::run(const Script& s) {
    if (auto st = init(s.n_seqs, s.n_ctx); !st) return st;
    for (const ScriptStep& st : s.steps)
        if (auto r = step(st); !r) return r;
    return {};
}

}  // namespace arbor::exact
