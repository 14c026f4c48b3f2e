// A context (Session): one sequence of KV cells with its tokens, the logits of its last token,
// and the generation loop that samples, streams text, stops on an end-of-generation token, a
// stop string, a length, a callback or a cancellation, and measures the speeds. Contexts come
// from a pool (arbor/contexts.hpp) that holds the model, the backend and the KV pages, so that
// a fork shares its parent's cells. arbor-cli run is a thin shell around one context.
//
// Threading contract:
//   - One thread at a time drives a context: every non-const call below, and every call on
//     other contexts of the same pool (they share the backend and its page pool). The app's
//     engine worker thread is that thread.
//   - Any thread may call stats() and request_cancel() at any time, also while the driving
//     thread is inside append() or generate(). Nothing else is safe from another thread.
//   - A context keeps its pool alive (shared_ptr): dropping the pool's handle first is fine.
//
// What "continue" means. A context may hold the end of the last generation:
//   - pending(): the last sampled token, accepted by the sampler but not yet fed through the
//     model (its cell does not exist yet). The next append() or generate() feeds it first.
//     After an end-of-generation token that token is pending; after a stop string, the token
//     that completed it is.
//   - held(): text not yet given to the caller (bytes of an incomplete UTF-8 character, and
//     text that may be the start of a stop string), kept when a generate ran with
//     `resumable` or its callback said stop; the stop strings and whether the generation ended.
//   - A generation that ended (end-of-generation token or stop string) stays ended: generate()
//     without new input returns the same reason at once and produces nothing. Appending tokens
//     starts a new generation (the pending token is fed before them).
//   - Held text of a generation that did not end is continued by the next generate(): a
//     resumable generate of 30 tokens followed by one of 50 gives exactly the text and tokens
//     of one generate of 80 (also across park and wake). When tokens are appended in between,
//     the held text can no longer continue: it becomes final and the next generate() gives it
//     first.
#pragma once

#include <arbor/backend.hpp>
#include <arbor/kv_cache.hpp>
#include <arbor/model.hpp>
#include <arbor/result.hpp>
#include <arbor/sampling.hpp>
#include <arbor/tokenizer.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace arbor {

class Contexts;

struct SessionOptions {
    std::string backend = "cpu";
    int threads = 0;                               // 0: all hardware threads
    int64_t n_ctx = 0;                             // 0: the model's context, capped by the budget
    KvType kv_type = KvType::F16;
    int64_t kv_budget_bytes = int64_t(2) << 30;    // caps the default context and the page pool
    int64_t kv_pages = 0;                          // the pool's pages; 0: the budget's (at least one context)
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

// The numeric values are stored in park files (HeldGeneration): only append.
enum class StopReason { Length, EndOfGeneration, StopString, Callback, ContextFull, Cancelled };
std::string_view stop_reason_name(StopReason r);

// Running statistics since the context was made or reset_stats(). A copy; stats() may be
// called from any thread.
struct SessionStats {
    int64_t prompt_tokens = 0;      // tokens appended (prefilled) or restored by a wake
    double prefill_seconds = 0;
    int64_t generated_tokens = 0;   // tokens sampled (end-of-generation tokens not counted)
    int64_t decode_evals = 0;       // generated tokens fed back through the model
    double decode_seconds = 0;      // time in those evaluations
    double ttft_seconds = 0;        // from the first append (or wake, or generate) to the first sampled token
    int64_t context_tokens = 0;     // cells the context holds
    bool busy = false;              // append() or generate() is running

    double prefill_tok_s() const { return prefill_seconds > 0 ? double(prompt_tokens) / prefill_seconds : 0.0; }
    double decode_tok_s() const { return decode_seconds > 0 ? double(decode_evals) / decode_seconds : 0.0; }
};

// One step of generate(): a sampled token and the text that became final with it (possibly
// empty: held for UTF-8 or a possible stop string; possibly more than this token's own
// bytes). A last event with token == kNoToken carries text flushed at the end.
struct TokenEvent {
    TokenId token = kNoToken;
    std::string_view text;
    SessionStats stats;  // after this token
};
// Returns false to stop (StopReason::Callback).
using TokenCallback = std::function<bool(const TokenEvent&)>;

struct GenerateOptions {
    int64_t max_tokens = 256;
    std::vector<std::string> stop;  // stop strings: generation ends before the first match
    bool stop_at_eog = true;        // end-of-generation tokens end it (and are not printed)
    // Keep text that is not final yet (an incomplete UTF-8 character, a possible stop-string
    // start) in the context instead of flushing it at the end, so that the next generate (or
    // a wake of a park file) continues it exactly. A generation that ended flushes anyway.
    bool resumable = false;
    // Another flag to stop on, owned by the caller (set from any thread; never cleared here).
    const std::atomic<bool>* cancel = nullptr;
};

// The end of the last generation that a context keeps (see "What continue means" above).
struct HeldGeneration {
    std::optional<StreamDetokenizer::State> detok;  // the detokenizer between tokens
    std::string text;                  // decoded, not given out yet
    bool text_final = false;           // tokens were appended since: `text` is given out first, unmatched
    std::vector<std::string> stops;    // the stop strings of that generation
    std::optional<StopReason> ended;   // EndOfGeneration or StopString: nothing more without input

    bool empty() const { return !detok && text.empty() && !ended; }
    // A byte form for park files (the TOKS section's held-text field), and its reader; the
    // reader also takes a bare StreamDetokenizer::serialize (older park files).
    std::string serialize() const;
    static Result<HeldGeneration> deserialize(std::string_view bytes);
};

// What a wake did: cells restored from the file, or recomputed (re-prefilled) because the
// file's cells could not be used (`problem` says why).
struct WakeReport {
    int64_t restored_cells = 0;
    int64_t recomputed_cells = 0;
    std::string problem;
    std::optional<Sampler> sampler;  // the parked sampler, when its section was valid
};

class Session {
public:
    // A context in a pool of its own (Contexts::create + create_context).
    static Result<std::unique_ptr<Session>> create(std::shared_ptr<const Model> model, const SessionOptions& opts);
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    const Model& model() const;
    Backend& backend();
    Contexts& pool() { return *pool_; }
    KvSequence& sequence() { return *seq_; }
    int64_t n_ctx() const { return seq_->capacity(); }
    const std::vector<TokenId>& tokens() const { return tokens_; }  // fed tokens (cells [0, n))
    std::optional<TokenId> pending() const { return pending_; }
    const HeldGeneration& held() const { return held_; }
    std::span<const float> last_logits() const { return {logits_.data(), logits_.size()}; }

    SessionStats stats() const;  // any thread
    void reset_stats();

    // Cancellation: any thread may request it; the running append() or generate() stops at
    // its next chunk or token boundary and clears the request. A request made while nothing
    // runs stops the next call at once, unless clear_cancel() drops it first.
    void request_cancel() { cancel_.store(true, std::memory_order_relaxed); }
    void clear_cancel() { cancel_.store(false, std::memory_order_relaxed); }

    // Appends tokens (the pending token first) in prefill_chunk passes and keeps the logits of
    // the last one. Reading poisoned cells (KvSequence::poison) is an error, never NaN logits.
    Status feed(std::span<const TokenId> tokens);
    // feed() that checks for cancellation between passes: the number of tokens fed (all of
    // them unless cancelled; what was fed is kept, with its logits).
    Result<int64_t> append(std::span<const TokenId> tokens);

    // Samples up to max_tokens tokens from the current logits, feeding each one back except
    // the last (it stays pending). on_token sees every sampled token. The sampler's history
    // should already hold the prompt (the caller decides what counts).
    Result<StopReason> generate(Sampler& sampler, const GenerateOptions& opts, const TokenCallback& on_token);
    // The same with the text only: on_text receives each non-empty piece of final text.
    Result<StopReason> generate(Sampler& sampler, const GenerateOptions& opts,
                                const std::function<bool(std::string_view)>& on_text);

    // A new context of the same pool holding tokens [0, n) (n <= tokens().size()). Cells
    // [0, n-1) are shared with this one (copy-on-write pages: not copied, not recomputed).
    // With n == tokens().size() the last cell is shared too and the fork takes the logits,
    // the pending token and the held text: it continues exactly as this one would. With a
    // smaller n, token n-1 is fed again (one token) to give the fork the logits of position
    // n-1, since a context keeps only its last logits; the fork starts a new generation.
    Result<std::unique_ptr<Session>> fork(int64_t n) const;
    // An independent context of the same pool: every cell copied into pages of its own, and
    // the tokens, logits, pending token and held text.
    Result<std::unique_ptr<Session>> deep_copy() const;

    // Parks the context (tokens, pending token, held text, the sampler, logits, KV cells) into
    // a park file (arbor/park.hpp), atomically.
    Status park(const std::string& path, const Sampler* sampler) const;
    // Wakes a parked context into this context, which must be empty. An error only when the
    // file's tokens cannot be read; a file whose cells are unusable is re-prefilled, and the
    // report says why.
    Result<WakeReport> wake(const std::string& path);

private:
    friend class Contexts;
    Session(std::shared_ptr<Contexts> pool, std::unique_ptr<KvSequence> seq);
    // Feeds tokens in chunks; with `cancellable` stops between chunks on a cancel request.
    Result<int64_t> eval_tokens(std::span<const TokenId> tokens, bool cancellable);
    Status eval_one(TokenId id);  // a generated token fed back (decode stats)
    Status run_pass(std::span<const TokenId> tokens, LogitsMode mode);
    // After a pass: NaN logits mean poisoned (invalidated) KV cells were read. Drops the
    // pass's cells (back to size_before) and names the first poisoned cell.
    Status check_logits(int64_t size_before);
    Status check_cells() const;  // an error when the sequence holds poisoned cells
    bool cancel_requested(const GenerateOptions* opts);
    void end_held_text();        // tokens are being appended: held text becomes final
    void note_prompt_start();
    static double clock_seconds();
    void set_busy(bool on);
    struct BusyScope {  // stats().busy while a call runs
        explicit BusyScope(Session* s) : s_(s) { s_->set_busy(true); }
        ~BusyScope() { s_->set_busy(false); }
        Session* s_;
    };
    Result<StopReason> generate_loop(Sampler& sampler, const GenerateOptions& opts, const TokenCallback& on_token);
    std::unique_ptr<Session> sibling(std::unique_ptr<KvSequence> seq) const;
    void copy_state_to(Session& s) const;

    std::shared_ptr<Contexts> pool_;
    std::unique_ptr<KvSequence> seq_;
    std::vector<TokenId> tokens_;
    std::vector<float> logits_;
    PassLogits pass_;
    std::optional<TokenId> pending_;  // sampled, not yet fed
    HeldGeneration held_;
    double prompt_started_ = -1;      // < 0: not yet since the last reset_stats
    bool ttft_pending_ = true;        // no token sampled since the last reset_stats
    std::atomic<bool> cancel_{false};
    mutable std::mutex stats_mu_;
    SessionStats stats_;
};

}  // namespace arbor
