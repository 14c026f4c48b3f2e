// Session::park and Session::wake (arbor/session.hpp): a context to a park file and back.
#include <arbor/park.hpp>
#include <arbor/session.hpp>

#include <chrono>

namespace arbor {

Status Session::park(const std::string& path, const Sampler* sampler) const {
    ParkContents c;
    c.tokens = tokens_;
    c.pending = pending_;
    if (detok_) c.detok_state = StreamDetokenizer::serialize(*detok_);
    if (sampler) c.sampler_state = sampler->serialize();
    c.logits = logits_;
    if (c.logits.empty()) c.logits.assign(size_t(model_->config().n_vocab), 0.0f);
    return write_park_file(path, *model_, *seq_, c);
}

Result<WakeReport> Session::wake(const std::string& path) {
    if (!tokens_.empty() || seq_->size() != 0 || pending_)
        return make_error("wake needs a fresh session (this one already holds a context)");
    prompt_started_ = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    auto r = read_park_file(path, *model_, kv_type_, *seq_);
    if (!r) return r.error();
    ParkRead& pr = r.value();
    WakeReport rep;
    if (!pr.contents.detok_state.empty()) {
        auto st = StreamDetokenizer::deserialize(pr.contents.detok_state);
        if (!st) return make_error(path + ": the held text cannot be read: " + st.message());
        detok_ = st.value();
    }
    if (!pr.contents.sampler_state.empty()) {
        auto smp = Sampler::deserialize(pr.contents.sampler_state);
        if (smp) rep.sampler = std::move(smp.value());
    }
    if (pr.cells_restored) {
        tokens_ = std::move(pr.contents.tokens);
        logits_ = std::move(pr.contents.logits);
        stats_.prompt_tokens += int64_t(tokens_.size());
        rep.restored_cells = pr.cells;
    } else {
        rep.problem = pr.problem;
        if (int64_t(pr.contents.tokens.size()) > seq_->capacity())
            return make_error(path + ": " + std::to_string(pr.contents.tokens.size()) +
                              " parked tokens do not fit the context of " + std::to_string(seq_->capacity()));
        if (auto st = eval_tokens(pr.contents.tokens); !st) return st.error();
        rep.recomputed_cells = int64_t(pr.contents.tokens.size());
    }
    pending_ = pr.contents.pending;
    return rep;
}

}  // namespace arbor
