// Scripts of passes for the logits exactness suite: which tokens each sequence appends in each
// eval call, and a runner that plays one on a backend (its own KV cache, made by the backend)
// and collects the logits rows keyed by (sequence, position).
#pragma once

#include "logits_exact_rows.hpp"

#include <arbor/backend.hpp>
#include <arbor/kv_cache.hpp>
#include <arbor/result.hpp>

#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <vector>

namespace arbor::exact {

struct ScriptEntry {
    int32_t seq = 0;
    std::vector<TokenId> tokens;
    LogitsMode mode = LogitsMode::Last;
};
using ScriptStep = std::vector<ScriptEntry>;  // one eval call, entries in batch order

struct Script {
    int32_t n_seqs = 1;
    int64_t n_ctx = 512;  // per sequence
    std::vector<ScriptStep> steps;

    int64_t max_tokens(int32_t seq) const;  // the tokens a sequence holds at the end
};

// The same tokens, each entry in an eval call of its own (a batch of one), in the same order.
Script solo(const Script& s);
// Every entry cut into pieces of at most `chunk` tokens by the caller: step k of the result
// holds piece k of each entry of the original step that has one. An All entry stays All; a
// Last entry asks for its last piece's last row only.
Script split_entries(const Script& s, int64_t chunk);

// Random token ids in [0, n_vocab) from a seeded generator.
std::vector<TokenId> random_tokens(std::mt19937& rng, int64_t n_vocab, int64_t n);

// Plays steps on one backend. Each step checks the backend's contract: rows in batch order with
// the (entry, token) the modes ask for, n_vocab right, every sequence grown by its tokens, at
// least ceil(tokens / max_batch_tokens) passes (so a case meant to cut a prompt into passes
// really does), and, on a backend other than the CPU, one kernel launch per pass.
class ScriptRunner {
public:
    ScriptRunner(Backend& be, KvType kv, int64_t max_batch_tokens) : be_(be), kv_(kv), mbt_(max_batch_tokens) {}
    // A fresh cache from be.make_kv_cache with room for n_seqs sequences of n_ctx cells.
    Status init(int32_t n_seqs, int64_t n_ctx);
    Status step(const ScriptStep& entries);
    Status run(const Script& s);  // init + every step

    KvSequence& seq(int32_t i) { return *seqs_[size_t(i)]; }
    LogitRows& rows() { return rows_; }
    const LogitRows& rows() const { return rows_; }
    Backend& backend() { return be_; }

private:
    Backend& be_;
    KvType kv_;
    int64_t mbt_;
    std::shared_ptr<KvCache> cache_;
    std::vector<std::unique_ptr<KvSequence>> seqs_;
    LogitRows rows_;
    PassLogits out_;
    int32_t steps_done_ = 0;
};

}  // namespace arbor::exact
