#include "chat/EngineWorker.h"

#include "chat/StoreThread.h"
#include "engine/ReasoningSplitter.h"

#include <QElapsedTimer>
#include <QMutexLocker>

namespace arbor::app {

EngineWorker::EngineWorker(std::unique_ptr<ChatBackend> backend, StoreThread* store, QObject* parent)
    : QThread(parent), m_backend(std::move(backend)), m_store(store), m_parking(*m_backend, store) {
    setObjectName(QStringLiteral("arbor-engine"));
    qRegisterMetaType<arbor::app::BackendInfo>();
    qRegisterMetaType<arbor::app::ReplyProgress>();
    qRegisterMetaType<arbor::app::ReplyResult>();
    qRegisterMetaType<arbor::app::ContextSwitch>();
}

EngineWorker::~EngineWorker() { shutdown(); }

void EngineWorker::shutdown() {
    {
        QMutexLocker lock(&m_mutex);
        m_stopping = true;
        for (const Request& r : m_queue)
            if (r.kind == Request::Kind::Generate) m_cancelled.insert(r.generate.replyId);
        if (m_current) m_cancelFlag = true;
        m_preempt = true;
        m_wake.wakeAll();
    }
    wait();
}

void EngineWorker::push(Request r) {
    QMutexLocker lock(&m_mutex);
    m_queue.push_back(std::move(r));
    m_preempt = true;
    m_wake.wakeOne();
}

void EngineWorker::requestLoad(const QString& modelPath) { push(Request{Request::Kind::Load, modelPath, {}}); }

void EngineWorker::requestGenerate(const GenerateRequest& request) { push(Request{Request::Kind::Generate, {}, request}); }

void EngineWorker::requestActivate(qint64 conversationId, qint64 leafId, const QVector<ChatTurn>& turns, const GenerationParams& params) {
    GenerateRequest r;
    r.conversationId = conversationId;
    r.parentId = leafId;
    r.turns = turns;
    r.params = params;
    push(Request{Request::Kind::Activate, {}, r});
}

ContextSwitch EngineWorker::lastSwitch() const {
    QMutexLocker lock(&m_mutex);
    return m_lastSwitch;
}

void EngineWorker::cancel(qint64 replyId) {
    QMutexLocker lock(&m_mutex);
    m_cancelled.insert(replyId);
    if (m_current == replyId) m_cancelFlag = true;
}

void EngineWorker::setContentionSource(std::function<QString()> source) {
    QMutexLocker lock(&m_mutex);
    m_contention = std::move(source);
}

BackendInfo EngineWorker::info() const {
    QMutexLocker lock(&m_mutex);
    return m_info;
}

void EngineWorker::run() {
    for (;;) {
        Request r;
        {
            QMutexLocker lock(&m_mutex);
            while (m_queue.empty() && !m_stopping) m_wake.wait(&m_mutex);
            if (m_queue.empty()) break;
            r = std::move(m_queue.front());
            m_queue.pop_front();
            m_preempt = !m_queue.empty() || m_stopping;
            // On shutdown, queued loads and switches are skipped; queued replies are still
            // finished (as interrupted) so none stays 'streaming'.
            if (m_stopping && r.kind != Request::Kind::Generate) continue;
        }
        switch (r.kind) {
        case Request::Kind::Load: load(r.path); break;
        case Request::Kind::Generate: generate(r.generate); break;
        case Request::Kind::Activate: activate(r.generate, true); break;
        }
    }
    // Quitting: the held context goes to its park file (the store is still open: the
    // controller stops it after this thread), so the next start wakes it.
    if (m_backend->isLoaded()) {
        ContextSwitch report;
        m_parking.beforeQuit(&report);
        QMutexLocker lock(&m_mutex);
        m_lastSwitch = report;
    }
}

void EngineWorker::activate(const GenerateRequest& r, bool prefill) {
    if (!m_backend->isLoaded()) return;
    ContextSwitch report;
    if (!m_parking.switchTo(r.conversationId, r.parentId, r.turns, r.params, prefill, m_preempt, &report)) return;
    {
        QMutexLocker lock(&m_mutex);
        m_lastSwitch = report;
    }
    emit contextSwitched(report);
}

void EngineWorker::load(const QString& path) {
    if (m_backend->isLoaded() && info().modelPath != path) {
        ContextSwitch report;  // the held context is dropped with its model: park it first
        m_parking.beforeModelChange(&report);
    }
    emit modelLoading(path);
    BackendInfo info;
    QString why;
    if (!m_backend->load(path, &info, &why)) {
        emit modelLoadFailed(path, why);
        return;
    }
    {
        QMutexLocker lock(&m_mutex);
        m_info = info;
    }
    emit modelLoaded(info);
}

namespace {

// Ranks contention labels: anything over "quiet", in the telemetry's order of precedence.
int labelRank(const QString& l) {
    static const char* order[] = {"quiet", "power-limited", "thermal-limited", "cpu-busy", "other-gpu-process"};
    for (int i = 0; i < 5; ++i)
        if (l == QLatin1String(order[i])) return i;
    return -1;
}

}  // namespace

void EngineWorker::generate(const GenerateRequest& req) {
    QElapsedTimer clock;
    clock.start();
    std::function<QString()> contentionSource;
    {
        QMutexLocker lock(&m_mutex);
        m_current = req.replyId;
        m_cancelFlag = m_cancelled.contains(req.replyId);
        contentionSource = m_contention;
    }
    m_progressInFlight = false;  // a new reply: nothing of it is waiting for the UI
    emit generationStarted(req.conversationId, req.replyId);
    if (!m_cancelFlag) activate(req, false);  // generate() prefills what the woken context lacks

    ReplyResult res;
    res.conversationId = req.conversationId;
    res.replyId = req.replyId;
    res.contextLength = m_backend->contextLength();
    QString contention;
    auto noteContention = [&] {
        if (!contentionSource) return;
        const QString l = contentionSource();
        if (labelRank(l) > labelRank(contention)) contention = l;
    };
    noteContention();

    const int reserve = replyReserve(res.contextLength, req.params.maxTokens);
    const ContextFit fit = m_cancelFlag ? ContextFit{} :
        fitContext(req.turns, res.contextLength, reserve, req.policy, [&](const QVector<ChatTurn>& t, QString* why) {
            return m_backend->promptTokens(t, req.params, why);
        });

    ReasoningSplitter splitter;
    ReplyProgress pending;
    pending.replyId = req.replyId;
    pending.contextLength = res.contextLength;
    qint64 firstPieceNs = -1, lastPieceNs = -1, lastFlushMs = -1, lastCheckpointMs = 0;
    int pieces = 0;
    auto liveStats = [&] {
        pending.generatedTokens = pieces;
        pending.ttftMs = firstPieceNs >= 0 ? firstPieceNs / 1e6 : 0;
        pending.decodeTokS = pieces > 1 && lastPieceNs > firstPieceNs ? (pieces - 1) / ((lastPieceNs - firstPieceNs) / 1e9) : 0;
    };
    auto flush = [&] {
        liveStats();
        if (m_flowControl) m_progressInFlight = true;
        emit replyProgress(pending);
        pending.contentDelta.clear();
        pending.reasoningDelta.clear();
        lastFlushMs = clock.elapsed();
    };
    auto take = [&](const ReasoningSplitter::Delta& d) {
        res.content += d.content;
        res.reasoning += d.reasoning;
        pending.contentDelta += d.content;
        pending.reasoningDelta += d.reasoning;
    };

    GenerationOutcome out;
    if (m_cancelFlag) {
        out.end = GenerationOutcome::End::Cancelled;
        out.stopReason = QStringLiteral("cancelled");
    } else if (!fit.ok) {
        out.end = GenerationOutcome::End::Failed;
        out.stopReason = QStringLiteral("context-overflow");
        out.error = fit.why;
    } else {
        res.droppedTurns = fit.droppedTurns;
        out = m_backend->generate(
            fit.turns, req.params, m_cancelFlag,
            [&](const PromptFacts& facts) {
                if (facts.opensReasoning) splitter.startInReasoning();
                res.promptTokens = facts.promptTokens;
                pending.contextUsed = facts.promptTokens;
                emit promptReady(req.replyId, facts.promptTokens, res.contextLength, fit.droppedTurns);
            },
            [&](const QString& piece) {
                const qint64 ns = clock.nsecsElapsed();
                if (firstPieceNs < 0) firstPieceNs = ns;
                lastPieceNs = ns;
                ++pieces;
                ++pending.contextUsed;
                take(splitter.feed(piece));
                const qint64 ms = clock.elapsed();
                if ((lastFlushMs < 0 || ms - lastFlushMs >= m_batchMs) && !(m_flowControl && m_progressInFlight)) flush();
                if (ms - lastCheckpointMs >= m_checkpointMs) {
                    lastCheckpointMs = ms;
                    noteContention();
                    const qint64 id = req.replyId;
                    const QString c = res.content, r = res.reasoning;
                    m_store->post([id, c, r](StoreContext& s) { s.chats.checkpointReply(id, c, r); });
                }
                return !m_cancelFlag.load();
            });
    }
    take(splitter.finish());
    flush();
    noteContention();

    if (m_backend->isLoaded()) m_parking.generated(req.conversationId, out.generatedTokens > 0 ? req.replyId : req.parentId);
    res.error = out.error;
    res.contextUsed = out.contextUsed;
    if (res.promptTokens == 0) res.promptTokens = out.promptTokens;
    switch (out.end) {
    case GenerationOutcome::End::Finished: res.state = QStringLiteral("complete"); break;
    case GenerationOutcome::End::Cancelled: res.state = QStringLiteral("interrupted"); break;
    case GenerationOutcome::End::Failed: res.state = QStringLiteral("error"); break;
    }
    GenerationStats& st = res.stats;
    st.tokenCount = out.generatedTokens;
    st.ttftMs = pending.ttftMs;
    st.decodeTokS = pending.decodeTokS;
    st.prefillTokS = out.prefillSeconds > 0 ? out.promptTokens / out.prefillSeconds : 0;
    st.stopReason = out.stopReason;
    if (out.end == GenerationOutcome::End::Failed && !out.error.isEmpty())
        st.stopReason = QStringLiteral("%1: %2").arg(out.stopReason, out.error);
    const BackendInfo bi = info();
    st.backend = bi.device.isEmpty() ? bi.backend : QStringLiteral("%1 · %2").arg(bi.backend, bi.device);
    st.contention = contention;

    const ReplyResult done = res;
    m_store->post([done](StoreContext& s) { s.chats.finishReply(done.replyId, done.content, done.reasoning, done.state, done.stats); });
    {
        QMutexLocker lock(&m_mutex);
        m_current = 0;
        m_cancelled.remove(req.replyId);
    }
    emit generationFinished(res);
}

}  // namespace arbor::app
