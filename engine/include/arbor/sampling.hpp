// Choosing the next token from logits: greedy, or a seeded random draw after penalties,
// top-k, top-p, min-p and temperature. Everything is specified down to the float operation,
// with our own PRNG and exp, so the same seed and settings give the same tokens on every
// machine and backend.
//
// The chain, in order:
//  1. Penalties over the last penalty_last_n accepted tokens (prompt included): a token seen c
//     times gets l = l > 0 ? l / repeat : l * repeat (when repeat != 1), then
//     l = l - (c * frequency + presence).
//  2. temperature <= 0: greedy, the largest logit (ties: lower id). Done.
//  3. Candidates sorted by logit, descending (ties: lower id); top_k > 0 keeps the first top_k.
//  4. top_p < 1: with e_i = exp(l_i - l_0) and S their sequential sum over the candidates, keep
//     the shortest prefix whose sequential sum of e_i reaches top_p * S (at least one).
//  5. min_p > 0: keep candidates with e_i >= min_p (that is p_i >= min_p * p_max; at least one).
//  6. Temperature: l_i = l_i / temperature.
//  7. Draw: e_i = exp(l_i - l_0), S = sequential sum; u = uniform() * S; the first candidate
//     whose running sum exceeds u (the last one if rounding leaves none).
// exp is numerics' exp_f. uniform() = (next_u64() >> 40) * 2^-24, in [0, 1).
// The PRNG is xoshiro256** seeded by four successive splitmix64 outputs of the seed.
#pragma once

#include <arbor/result.hpp>
#include <arbor/tokenizer.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace arbor {

struct SamplerParams {
    float temperature = 0.8f;
    int32_t top_k = 40;
    float top_p = 0.95f;
    float min_p = 0.05f;
    float repeat_penalty = 1.0f;     // 1: off
    float frequency_penalty = 0.0f;  // 0: off
    float presence_penalty = 0.0f;   // 0: off
    int32_t penalty_last_n = 64;     // window of the penalties
    uint64_t seed = 0;

    // An error naming the first parameter out of range.
    Status validate() const;
};

class Rng {
public:
    explicit Rng(uint64_t seed = 0);
    uint64_t next_u64();
    float uniform();  // [0, 1), 24 random bits
    uint64_t state[4];
};

class Sampler {
public:
    Sampler(SamplerParams params, int64_t n_vocab);

    const SamplerParams& params() const { return params_; }
    void set_params(const SamplerParams& p);  // keeps the RNG state and history

    // Picks a token from the logits (n_vocab floats; not modified). Does not accept it.
    TokenId sample(std::span<const float> logits);
    // Adds a token to the penalty history (prompt tokens too).
    void accept(TokenId id);
    void accept(std::span<const TokenId> ids);
    void reset_history() { history_.clear(); }

    // The whole state (params, RNG, history) as bytes, and back: for parking a context.
    std::string serialize() const;
    static Result<Sampler> deserialize(std::string_view bytes);

    bool operator==(const Sampler& o) const;

private:
    SamplerParams params_;
    int64_t n_vocab_;
    Rng rng_;
    std::vector<TokenId> history_;  // the last penalty_last_n accepted tokens
    // Scratch (not state).
    std::vector<float> work_;
    std::vector<int32_t> idx_;
};

}  // namespace arbor
