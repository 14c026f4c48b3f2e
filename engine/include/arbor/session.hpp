// A single-sequence generation session: a model, a backend, one sequence of KV cells, and the
// loop that feeds a prompt, samples, streams text, stops on an end-of-generation token or a
// stop string, and measures the speeds. arbor-cli run is a thin shell around it.
#pragma once

#include <arbor/backend.hpp>
#include <arbor/kv_cache.hpp>
#include <arbor/model.hpp>
#include <arbor/result.hpp>
#include <arbor/sampling.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace arbor {

struct SessionOptions {
    std::string backend = "cpu";
    int threads = 0;                               // 0: all hardware threads
    int64_t n_ctx = 0;                             // 0: the model's context, capped by the budget
    KvType kv_type = KvType::F16;
    int64_t kv_budget_bytes = int64_t(2) << 30;    // caps the default context
    int64_t prefill_chunk = 256;                   // tokens per prefill pass
};

// The context a session gets: n_ctx when given, else the model's training context capped so
// that its KV cells fit the budget (a whole number of pages, at least one).
int64_t default_context(const Model& model, const SessionOptions& opts);

// Tokenizes a prompt: BOS first when `bos` says so (nullopt: the model's add_bos_token
// setting) unless the text already starts with it; special-token text becomes special tokens
// only with parse_special (chat templates). An empty result is an error (no BOS, no text).
Result<std::vector<TokenId>> prompt_tokens(const Model& model, std::string_view text, std::optional<bool> bos,
                                           bool parse_special);

struct GenerateOptions {
    int64_t max_tokens = 256;
    std::vector<std::string> stop;  // stop strings: generation ends before the first match
    bool stop_at_eog = true;        // end-of-generation tokens end it (and are not printed)
    // For parking: the last sampled token stays pending (the next feed or generate feeds it
    // first) and the detokenizer's held bytes stay in the session instead of being flushed, so
    // a later generate continues the text exactly as one longer run would.
    bool resumable = false;
};

// What a wake did: cells restored from the file, or recomputed (re-prefilled) because the
// file's cells could not be used (`problem` says why).
struct WakeReport {
    int64_t restored_cells = 0;
    int64_t recomputed_cells = 0;
    std::string problem;
    std::optional<Sampler> sampler;  // the parked sampler, when its section was valid
};

enum class StopReason { Length, EndOfGeneration, StopString, Callback, ContextFull };
std::string_view stop_reason_name(StopReason r);

struct SessionStats {
    int64_t prompt_tokens = 0;
    double prefill_seconds = 0;
    int64_t generated_tokens = 0;
    int64_t decode_evals = 0;       // generated tokens fed back through the model
    double decode_seconds = 0;      // time in those evaluations (decode_evals / it = tok/s)
    double ttft_seconds = 0;        // from the start of the prompt to the first sampled token
};

class Session {
public:
    static Result<std::unique_ptr<Session>> create(std::shared_ptr<const Model> model, const SessionOptions& opts);

    const Model& model() const { return *model_; }
    Backend& backend() { return *backend_; }
    KvSequence& sequence() { return *seq_; }
    int64_t n_ctx() const { return seq_->capacity(); }
    const std::vector<TokenId>& tokens() const { return tokens_; }
    const SessionStats& stats() const { return stats_; }

    // Appends tokens (in prefill_chunk passes) and keeps the logits of the last one. Reading
    // poisoned cells (KvSequence::poison) is an error, never NaN logits.
    Status feed(std::span<const TokenId> tokens);
    std::span<const float> last_logits() const { return {logits_.data(), logits_.size()}; }

    // Samples up to max_tokens tokens from the current logits, feeding each one back except
    // the last. on_text receives the text as it becomes final (UTF-8 complete and clear of any
    // stop string); returning false stops. The sampler's history should already hold the
    // prompt (the caller decides what counts).
    Result<StopReason> generate(Sampler& sampler, const GenerateOptions& opts,
                                const std::function<bool(std::string_view)>& on_text);

    // Parks the context (tokens, pending token, held text, the sampler, logits, KV cells) into
    // a park file (arbor/park.hpp), atomically.
    Status park(const std::string& path, const Sampler* sampler) const;
    // Wakes a parked context into this session, which must be empty. An error only when the
    // file's tokens cannot be read; a file whose cells are unusable is re-prefilled.
    Result<WakeReport> wake(const std::string& path);
    std::optional<TokenId> pending() const { return pending_; }

private:
    Session() = default;
    Status eval_tokens(std::span<const TokenId> tokens);
    // After a pass: NaN logits mean poisoned (invalidated) KV cells were read. Drops the
    // pass's cells (back to size_before) and names the first poisoned cell.
    Status check_logits(int64_t size_before);
    Status check_cells() const;  // an error when the sequence holds poisoned cells
    std::shared_ptr<const Model> model_;
    std::unique_ptr<Backend> backend_;
    std::shared_ptr<KvCache> cache_;
    std::unique_ptr<KvSequence> seq_;
    std::vector<TokenId> tokens_;
    std::vector<float> logits_;
    PassLogits pass_;
    int64_t chunk_ = 256;
    SessionStats stats_;
    double prompt_started_ = 0;
    KvType kv_type_ = KvType::F16;
    std::optional<TokenId> pending_;                   // sampled, not yet fed
    std::optional<StreamDetokenizer::State> detok_;    // held text of a resumable generate
};

}  // namespace arbor
