// Session::fork and Session::deep_copy (arbor/session.hpp): new contexts of the same pool,
// sharing the parent's cells or copying them.
#include <arbor/contexts.hpp>
#include <arbor/session.hpp>

namespace arbor {

std::unique_ptr<Session> Session::sibling(std::unique_ptr<KvSequence> seq) const {
    return std::unique_ptr<Session>(new Session(pool_, std::move(seq)));
}

Result<std::unique_ptr<Session>> Session::fork(int64_t n) const {
    const auto size = int64_t(tokens_.size());
    if (n < 0 || n > size)
        return make_error("fork at token " + std::to_string(n) + ": the context holds " + std::to_string(size) + " tokens");
    if (seq_->size() != size)
        return make_error("fork: the context's cells (" + std::to_string(seq_->size()) + ") do not match its tokens (" +
                          std::to_string(size) + ")");
    if (n == size) {
        // Everything shared: the fork continues exactly as this context would.
        std::unique_ptr<Session> s = sibling(seq_->fork(n));
        copy_state_to(*s);
        return s;
    }
    std::unique_ptr<Session> s = sibling(seq_->fork(n == 0 ? 0 : n - 1));
    if (n > 0) {
        // Cells [0, n-1) shared; token n-1 fed again for the logits of position n-1 (its
        // page is made private first by copy-on-write).
        s->tokens_.assign(tokens_.begin(), tokens_.begin() + (n - 1));
        auto r = s->eval_tokens(std::span<const TokenId>(&tokens_[size_t(n - 1)], 1), false);
        if (!r) return make_error("fork at token " + std::to_string(n) + ": " + r.message());
    }
    s->reset_stats();
    return s;
}

Result<std::unique_ptr<Session>> Session::deep_copy() const {
    auto seq = seq_->deep_copy();
    if (!seq) return make_error("copy of a context: " + seq.message());
    std::unique_ptr<Session> s = sibling(std::move(seq.value()));
    copy_state_to(*s);
    return s;
}

// A context holding the same cells continues exactly as this one: same tokens, logits,
// pending token and held text; its stats start from zero.
void Session::copy_state_to(Session& s) const {
    s.tokens_ = tokens_;
    s.logits_ = logits_;
    s.pending_ = pending_;
    s.held_ = held_;
    s.reset_stats();
}

}  // namespace arbor
