// The generation backend the engine worker drives: it loads a model, measures and renders a
// conversation as a prompt, and generates a reply piece by piece. Two implementations:
// FakeChatBackend (a JSON script, for UI tests) and EngineChatBackend (the real engine).
//
// Every call is made on the engine worker's thread, one at a time; nothing here is called from
// the UI thread.
#pragma once

#include <QString>
#include <QVector>

#include <atomic>
#include <functional>

namespace arbor::app {

// One message of the conversation as the model sees it.
struct ChatTurn {
    QString role;  // "system", "user" or "assistant"
    QString content;
};

// What a loaded model is, for the header and the status bar.
struct BackendInfo {
    QString modelPath;
    QString modelName;
    QString architecture;
    QString backend;  // "cpu", "gpu", "fake"
    QString device;   // "CPU, 16 threads, avx2"
    QString gpuNote;  // why no GPU is used, when that is so
    int contextLength = 0;
    bool thinkingSupported = false;  // the template has an enable_thinking switch
};

struct GenerationParams {
    double temperature = 0.8;
    int topK = 40;
    double topP = 0.95;
    double minP = 0.05;
    double repeatPenalty = 1.0;
    quint64 seed = 0;
    int maxTokens = 512;
    bool enableThinking = true;
};

// How a generation ended.
struct GenerationOutcome {
    enum class End { Finished, Cancelled, Failed };
    End end = End::Finished;
    QString stopReason;  // "eog", "length", "context-full", "cancelled", "error"
    QString error;       // for Failed: what went wrong
    int promptTokens = 0;
    int generatedTokens = 0;
    double prefillSeconds = 0;
    int contextUsed = 0;  // cells of the context in use at the end
};

// Facts about the prompt, known once it has been fed.
struct PromptFacts {
    int promptTokens = 0;
    int reusedTokens = 0;          // a cached prefix that did not need prefilling again
    bool opensReasoning = false;   // the rendered prompt ends inside <think>
};

// A context written to a park file (parkContext).
struct ContextPark {
    int cells = 0;
    qint64 bytes = 0;
    QString why;  // when it failed
};

// What waking a conversation's context did (wakeContext).
struct ContextWake {
    int parkedCells = 0;      // cells the park file holds
    int restoredCells = 0;    // read back from it, not recomputed
    int matchedTokens = 0;    // of those, how many the conversation's tokens start with
    int recomputedCells = 0;  // prefilled again because the file could not be used
    QString problem;          // why the file was not used (empty: it was, or there was none)
};

class ChatBackend {
public:
    virtual ~ChatBackend() = default;

    // Loads (or keeps, when it is the same file) the model at `path`.
    virtual bool load(const QString& path, BackendInfo* info, QString* why) = 0;
    virtual bool isLoaded() const = 0;
    virtual int contextLength() const = 0;

    // Tokens the prompt for `turns` takes, generation prompt included; -1 with `why` on error.
    virtual int promptTokens(const QVector<ChatTurn>& turns, const GenerationParams& params, QString* why) = 0;

    // Generates a reply to `turns`. `onPiece` receives text as it becomes final; returning
    // false stops. `cancel` is checked before every token (and between prefill chunks), so a
    // cancel takes effect within one token. `onPrefilled` is called once the prompt is in.
    virtual GenerationOutcome generate(const QVector<ChatTurn>& turns, const GenerationParams& params,
                                       const std::atomic<bool>& cancel,
                                       const std::function<void(const PromptFacts&)>& onPrefilled,
                                       const std::function<bool(const QString& piece)>& onPiece) = 0;

    // Parking, for switching conversations (a backend without it keeps one context and
    // re-prefills what differs). The context is the cells the next generate() starts from.
    virtual int contextTokens() const { return 0; }
    // The loaded model's identity (size and tensor table hash), which park references carry.
    virtual QString modelFingerprint() const { return {}; }
    // Writes the context to `path` atomically; false with out->why when it cannot.
    virtual bool parkContext(const QString& path, ContextPark* out) {
        out->why = QStringLiteral("this backend does not park contexts");
        return false;
    }
    // Drops the context and takes the park file's instead (an empty path: none). Its cells
    // are kept when the file is sound and written for this model; else the file is reported
    // in `problem` and, when `prefill` is set, `turns` are prefilled (stopping early when
    // `preempt` is raised; generate() feeds whatever is missing).
    virtual ContextWake wakeContext(const QString& path, const QVector<ChatTurn>& turns, const GenerationParams& params,
                                    bool prefill, const std::atomic<bool>& preempt) {
        (void)path, (void)turns, (void)params, (void)prefill, (void)preempt;
        return {};
    }
};

}  // namespace arbor::app
