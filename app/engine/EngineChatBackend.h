// The real engine behind the chat: a loaded model (shared, immutable), a backend (GPU when
// asked and available, else the CPU with the reason noted), one KV sequence, the model's chat
// template (ChatML when it has none or it fails), and the generation loop: sample, stream
// text, stop on end-of-generation tokens (or ChatML markers under the fallback template).
//
// The KV cells of the last conversation are kept: a new prompt that starts with the same
// tokens (the next turn, or a regenerate) only prefills what is new. Switching conversations
// parks those cells to a park file (arbor/park.hpp) and wakes another's (EngineChatBackendPark.cpp).
#pragma once

#include "engine/ChatBackend.h"

#include <arbor/backend.hpp>
#include <arbor/chat_template.hpp>
#include <arbor/kv_cache.hpp>
#include <arbor/model.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace arbor::app {

class EngineChatBackend : public ChatBackend {
public:
    // preference: "auto" (GPU if it can, else CPU), "gpu" or "cpu"; threads 0: all.
    EngineChatBackend(QString preference, int threads) : m_preference(std::move(preference)), m_threads(threads) {}

    bool load(const QString& path, BackendInfo* info, QString* why) override;
    bool isLoaded() const override { return m_model != nullptr; }
    int contextLength() const override { return int(m_nCtx); }
    int promptTokens(const QVector<ChatTurn>& turns, const GenerationParams& params, QString* why) override;
    GenerationOutcome generate(const QVector<ChatTurn>& turns, const GenerationParams& params, const std::atomic<bool>& cancel,
                               const std::function<void(const PromptFacts&)>& onPrefilled,
                               const std::function<bool(const QString&)>& onPiece) override;

    int contextTokens() const override { return int(m_tokens.size()); }
    QString modelFingerprint() const override { return m_fingerprint; }
    bool parkContext(const QString& path, ContextPark* out) override;
    ContextWake wakeContext(const QString& path, const QVector<ChatTurn>& turns, const GenerationParams& params, bool prefill,
                            const std::atomic<bool>& preempt) override;

    // The prompt text for `turns` (tests); without the generation prompt: the conversation so far.
    std::optional<std::string> renderPrompt(const QVector<ChatTurn>& turns, const GenerationParams& params, QString* why,
                                            bool generationPrompt = true);
    int cachedTokens() const { return int(m_tokens.size()); }

private:
    std::optional<std::vector<TokenId>> tokenize(const QVector<ChatTurn>& turns, const GenerationParams& params, std::string* text,
                                                  QString* why, bool generationPrompt = true);
    // Feeds ids[from, to) into the context in chunks, the last with logits; false on failure
    // (with `why`) or when `stop` is raised between chunks (why stays empty).
    bool feed(const std::vector<TokenId>& ids, size_t from, size_t to, const std::atomic<bool>& stop, QString* why);

    QString m_preference;
    int m_threads = 0;
    QString m_path;
    std::shared_ptr<const Model> m_model;
    std::unique_ptr<Backend> m_backend;
    std::shared_ptr<KvCache> m_cache;
    std::unique_ptr<KvSequence> m_seq;
    std::vector<TokenId> m_tokens;  // what m_seq holds, in order
    size_t m_logitsFor = 0;         // m_pass holds the logits of token m_logitsFor-1 (0: none)
    KvType m_kvType = KvType::F16;
    QString m_fingerprint;
    int64_t m_nCtx = 0;
    std::optional<ChatTemplate> m_template;
    bool m_chatmlFallback = false;
    bool m_thinking = false;
    PassLogits m_pass;
    BackendInfo m_info;
};

}  // namespace arbor::app
