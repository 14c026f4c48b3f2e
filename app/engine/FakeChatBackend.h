// A backend that follows a FakeScript instead of running a model: fixed tokens at a fixed pace,
// errors on demand. A token is a whitespace-separated word of the prompt (plus two per turn),
// so context overflow can be tested with a small "context_length".
//
// It records the thread of every call, so tests can check that it only ever runs on the
// engine worker's thread.
#pragma once

#include "engine/ChatBackend.h"
#include "engine/FakeScript.h"

#include <QMutex>
#include <QSet>

class QThread;

namespace arbor::app {

class FakeChatBackend : public ChatBackend {
public:
    explicit FakeChatBackend(FakeScript script) : m_script(std::move(script)) {}

    bool load(const QString& path, BackendInfo* info, QString* why) override;
    bool isLoaded() const override { return m_loaded; }
    int contextLength() const override { return m_script.contextLength; }
    int promptTokens(const QVector<ChatTurn>& turns, const GenerationParams& params, QString* why) override;
    GenerationOutcome generate(const QVector<ChatTurn>& turns, const GenerationParams& params, const std::atomic<bool>& cancel,
                               const std::function<void(const PromptFacts&)>& onPrefilled,
                               const std::function<bool(const QString&)>& onPiece) override;

    // Threads that called into this backend (thread-safe; for tests).
    QSet<QThread*> callThreads() const;
    int generations() const { return m_generations; }

    // The fake tokenizer: words, plus two per turn and two for the generation prompt.
    static int countTokens(const QVector<ChatTurn>& turns);

private:
    void noteThread();
    // Sleeps `ms` in small steps; false when cancelled meanwhile.
    static bool pause(int ms, const std::atomic<bool>& cancel);

    FakeScript m_script;
    bool m_loaded = false;
    std::atomic<int> m_generations{0};
    mutable QMutex m_mutex;
    QSet<QThread*> m_threads;
};

}  // namespace arbor::app
