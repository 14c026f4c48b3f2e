// What every backend does with a batch before and around its passes: check it, make the
// sequences' cells writable, cut the tokens into passes of at most max_tokens (in batch order;
// by the exactness property the cut changes no bit), route the logits rows, and grow the
// sequences once every pass succeeded.
#pragma once

#include <arbor/backend.hpp>

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace arbor {

// The tokens of one pass: token t belongs to batch entry seq[t] at position pos[t]; out lists
// the pass's tokens whose logits are wanted, in row order.
struct PassTokens {
    std::vector<TokenId> tok;
    std::vector<int32_t> pos, seq, out;
    void clear() { tok.clear(), pos.clear(), seq.clear(), out.clear(); }
};

// Checks a batch against the model: sequences present and distinct, KV layout of this model
// and one KV type, token ids in the vocabulary, room in each context.
Status validate_batch(const ModelConfig& c, std::span<const BatchEntry> batch);

// Validates, prepares every sequence for writing, then calls run_pass for each pass with the
// place its logits rows go; on success every sequence grows by its tokens. `prepared` (may be
// empty) runs once after prepare_write, before the first pass (page tables are final then).
Status run_batch(const ModelConfig& c, std::span<const BatchEntry> batch, int64_t max_tokens, PassLogits* out,
                 const std::function<Status()>& prepared,
                 const std::function<Status(const PassTokens&, float* logits)>& run_pass);

}  // namespace arbor
