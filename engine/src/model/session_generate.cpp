// The generation loop of arbor/session.hpp: sample, stream final text, feed back, stop; and
// what the context keeps of a generation's end (pending token, held text, ended).
#include <arbor/session.hpp>

#include <algorithm>

namespace arbor {
namespace {

// Length of the longest suffix of `text` that is a proper prefix of some stop string.
size_t held_back(std::string_view text, const std::vector<std::string>& stops) {
    size_t keep = 0;
    for (const std::string& s : stops) {
        if (s.empty()) continue;
        for (size_t k = std::min(text.size(), s.size() - 1); k > keep; --k)
            if (text.substr(text.size() - k) == std::string_view(s).substr(0, k)) {
                keep = k;
                break;
            }
    }
    return keep;
}

// Where the first stop string starts in `text`, or npos.
size_t stop_match(std::string_view text, const std::vector<std::string>& stops) {
    size_t hit = std::string::npos;
    for (const std::string& s : stops)
        if (!s.empty()) hit = std::min(hit, text.find(s));
    return hit;
}

}  // namespace

Result<StopReason> Session::generate(Sampler& sampler, const GenerateOptions& opts,
                                     const std::function<bool(std::string_view)>& on_text) {
    return generate(sampler, opts, TokenCallback([&](const TokenEvent& e) { return e.text.empty() || on_text(e.text); }));
}

Result<StopReason> Session::generate(Sampler& sampler, const GenerateOptions& opts, const TokenCallback& on_token) {
    const BusyScope busy(this);
    return generate_loop(sampler, opts, on_token);
}

Result<StopReason> Session::generate_loop(Sampler& sampler, const GenerateOptions& opts, const TokenCallback& on_token) {
    // A generation that ended stays ended until tokens are appended.
    if (held_.ended) return *held_.ended;
    note_prompt_start();
    if (pending_) {
        if (cancel_requested(&opts)) return StopReason::Cancelled;
        if (seq_->size() + 1 > seq_->capacity()) return StopReason::ContextFull;
        if (auto st = eval_one(*pending_); !st) return st.error();
        pending_.reset();
    }
    if (logits_.empty()) return make_error("nothing to continue from: feed a prompt first");
    if (auto st = check_cells(); !st) return st.error();

    const Tokenizer& tok = model().tokenizer();
    auto event = [&](TokenId id, std::string_view text) {
        TokenEvent e;
        e.token = id;
        e.text = text;
        e.stats = stats();
        return on_token(e);
    };
    // The generated text begins a text when nothing but special tokens (BOS) came before it:
    // then SentencePiece's leading space is dropped, as a whole-sequence detokenize does.
    const bool text_start = std::all_of(tokens_.begin(), tokens_.end(), [&](TokenId t) { return tok.is_special(t); });
    StreamDetokenizer detok(tok, true, text_start);
    if (held_.detok)
        if (auto st = detok.restore(*held_.detok); !st) return st.error();
    std::string text;  // decoded, not given out yet
    if (held_.text_final) {
        if (!held_.text.empty() && !event(kNoToken, held_.text)) {
            held_ = HeldGeneration{};
            held_.stops = opts.stop;
            return StopReason::Callback;
        }
    } else {
        text = held_.text;
    }
    held_ = HeldGeneration{};
    held_.stops = opts.stop;

    std::optional<TokenId> unfed;
    StopReason reason = StopReason::Length;
    for (int64_t i = 0; i < opts.max_tokens; ++i) {
        if (cancel_requested(&opts)) {
            reason = StopReason::Cancelled;
            break;
        }
        const TokenId id = sampler.sample(last_logits());
        if (ttft_pending_) {
            ttft_pending_ = false;
            std::lock_guard lock(stats_mu_);
            stats_.ttft_seconds = clock_seconds() - prompt_started_;
        }
        sampler.accept(id);
        unfed = id;
        if (opts.stop_at_eog && tok.is_eog(id)) {
            reason = StopReason::EndOfGeneration;
            break;
        }
        {
            std::lock_guard lock(stats_mu_);
            ++stats_.generated_tokens;
        }
        text += detok.push(id);
        if (const size_t hit = stop_match(text, opts.stop); hit != std::string::npos) {
            text.resize(hit);
            event(id, text);
            text.clear();
            reason = StopReason::StopString;
            break;
        }
        const size_t final_bytes = text.size() - held_back(text, opts.stop);
        const std::string out = text.substr(0, final_bytes);
        text.erase(0, final_bytes);
        if (!event(id, out)) {
            reason = StopReason::Callback;
            break;
        }
        if (i + 1 == opts.max_tokens) break;
        if (seq_->size() + 1 > seq_->capacity()) {
            reason = StopReason::ContextFull;
            break;
        }
        if (auto st = eval_one(id); !st) {
            pending_ = unfed;  // sampled and accepted: it belongs to the context
            return st.error();
        }
        unfed.reset();
    }
    pending_ = unfed;
    if (reason == StopReason::EndOfGeneration || reason == StopReason::StopString) {
        // The generation is over: its text is final (after a stop string, nothing follows).
        if (reason == StopReason::EndOfGeneration) text += detok.finish();
        if (!text.empty()) event(kNoToken, text);
        held_.ended = reason;
    } else if (opts.resumable || reason == StopReason::Callback) {
        // Kept for the next generate (a callback that said stop is not called again).
        held_.detok = detok.state();
        held_.text = std::move(text);
    } else {
        text += detok.finish();
        if (!text.empty()) event(kNoToken, text);
    }
    return reason;
}

}  // namespace arbor
