// The engine worker: a thread that owns the generation backend. The UI thread queues requests
// (load a model, generate a reply); the worker runs them in order and reports through queued
// signals. Text streams in batches, at most one per frame (16 ms), so a fast model does not
// flood the event loop; with flow control on, a new batch waits until the UI has taken the
// previous one (acknowledgeProgress()), so a slow UI gets fewer, larger batches instead of a
// growing queue. A streaming reply is checkpointed through the store thread at least
// every checkpoint interval (1 s), and finished there (complete, interrupted or error) before
// generationFinished is emitted. cancel() takes effect within one token.
//
// Conversations share the backend's one context: turning to another conversation (opening it,
// or generating in it) parks the current one to disk and wakes the target's (ContextParking),
// on this thread, in request order. The UI thread only queues requests and gets signals.
#pragma once

#include "chat/ContextParking.h"
#include "engine/ChatBackend.h"
#include "engine/ContextWindow.h"
#include "store/ChatStore.h"

#include <QMetaType>
#include <QMutex>
#include <QThread>
#include <QWaitCondition>

#include <atomic>
#include <deque>
#include <functional>
#include <memory>

namespace arbor::app {

class StoreThread;

struct GenerateRequest {
    qint64 conversationId = 0;
    qint64 parentId = 0;  // the message replied to (where a woken context may end)
    qint64 replyId = 0;   // the 'streaming' message already committed by the store
    QVector<ChatTurn> turns;
    GenerationParams params;
    ContextPolicy policy = ContextPolicy::KeepNewest;
};

// One batch of a streaming reply, with the live numbers for the status bar.
struct ReplyProgress {
    qint64 replyId = 0;
    QString contentDelta, reasoningDelta;
    int generatedTokens = 0;
    double decodeTokS = 0, ttftMs = 0;
    int contextUsed = 0, contextLength = 0;
};

struct ReplyResult {
    qint64 conversationId = 0, replyId = 0;
    QString state;  // 'complete', 'interrupted', 'error'
    QString content, reasoning, error;
    GenerationStats stats;
    int promptTokens = 0, droppedTurns = 0;
    int contextUsed = 0, contextLength = 0;
};

class EngineWorker : public QThread {
    Q_OBJECT

public:
    // `store` receives checkpoints and the finished reply; it must outlive the worker's run.
    EngineWorker(std::unique_ptr<ChatBackend> backend, StoreThread* store, QObject* parent = nullptr);
    ~EngineWorker() override;  // cancels, finishes the current reply, joins

    void requestLoad(const QString& modelPath);
    void requestGenerate(const GenerateRequest& request);
    // Makes `conversationId` the held context ahead of its next reply: parks the current one
    // and wakes this one's (or prefills `turns`, the conversation up to `leafId`, when it has
    // no usable park file). A later request cuts that prefill short.
    void requestActivate(qint64 conversationId, qint64 leafId, const QVector<ChatTurn>& turns, const GenerationParams& params);
    // Park files go to `dir` (created when needed), kept under `budgetBytes`; empty: no parking.
    // Call before start().
    void setParking(const QString& dir, qint64 budgetBytes) { m_parking.configure(dir, budgetBytes); }
    // Stops the reply `replyId` (queued or running) within one token.
    void cancel(qint64 replyId);
    void shutdown();

    void setBatchIntervalMs(int ms) { m_batchMs = ms; }
    void setFlowControl(bool on) { m_flowControl = on; }
    // The UI has applied the last replyProgress (thread-safe).
    void acknowledgeProgress() { m_progressInFlight = false; }
    void setCheckpointIntervalMs(int ms) { m_checkpointMs = ms; }
    // Returns the current contention label (thread-safe; called on the worker thread).
    void setContentionSource(std::function<QString()> source);

    BackendInfo info() const;
    // The last conversation switch (thread-safe).
    ContextSwitch lastSwitch() const;
    ChatBackend* backend() const { return m_backend.get(); }  // for tests; used only on the worker

signals:
    void modelLoading(const QString& path);
    void modelLoaded(const arbor::app::BackendInfo& info);
    void modelLoadFailed(const QString& path, const QString& why);
    void generationStarted(qint64 conversationId, qint64 replyId);
    void promptReady(qint64 replyId, int promptTokens, int contextLength, int droppedTurns);
    void replyProgress(const arbor::app::ReplyProgress& progress);
    void generationFinished(const arbor::app::ReplyResult& result);
    // The held context changed conversation (parked, woken, or re-prefilled).
    void contextSwitched(const arbor::app::ContextSwitch& report);

protected:
    void run() override;

private:
    struct Request {
        enum class Kind { Load, Generate, Activate } kind;
        QString path;
        GenerateRequest generate;  // for Activate: the conversation, its leaf (parentId), turns, params
    };
    void push(Request r);
    void load(const QString& path);
    void generate(const GenerateRequest& r);
    void activate(const GenerateRequest& r, bool prefill);

    std::unique_ptr<ChatBackend> m_backend;
    StoreThread* m_store;
    mutable QMutex m_mutex;
    QWaitCondition m_wake;
    std::deque<Request> m_queue;
    bool m_stopping = false;
    BackendInfo m_info;
    qint64 m_current = 0;          // reply being generated
    QSet<qint64> m_cancelled;      // replies cancelled before or while running
    std::atomic<bool> m_cancelFlag{false};
    std::atomic<bool> m_preempt{false};  // a request is waiting: cut a background prefill short
    ContextParking m_parking;
    ContextSwitch m_lastSwitch;
    std::function<QString()> m_contention;
    int m_batchMs = 16;
    std::atomic<bool> m_flowControl{false};
    std::atomic<bool> m_progressInFlight{false};
    int m_checkpointMs = 1000;
};

}  // namespace arbor::app

Q_DECLARE_METATYPE(arbor::app::BackendInfo)
Q_DECLARE_METATYPE(arbor::app::ReplyProgress)
Q_DECLARE_METATYPE(arbor::app::ReplyResult)
