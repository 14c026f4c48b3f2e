#include "engine/FakeChatBackend.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QMutexLocker>
#include <QRegularExpression>
#include <QThread>

#include <algorithm>
#include <climits>

namespace arbor::app {

void FakeChatBackend::noteThread() {
    QMutexLocker lock(&m_mutex);
    m_threads.insert(QThread::currentThread());
}

QSet<QThread*> FakeChatBackend::callThreads() const {
    QMutexLocker lock(&m_mutex);
    return m_threads;
}

bool FakeChatBackend::pause(int ms, const std::atomic<bool>& cancel) {
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < ms) {
        if (cancel.load()) return false;
        QThread::msleep(std::min<qint64>(2, ms - t.elapsed()));
    }
    return !cancel.load();
}

bool FakeChatBackend::load(const QString& path, BackendInfo* info, QString* why) {
    noteThread();
    QThread::msleep(static_cast<unsigned long>(m_script.loadMs));
    if (!m_script.loadError.isEmpty()) {
        *why = m_script.loadError;
        m_loaded = false;
        return false;
    }
    if (!QFileInfo::exists(path)) {
        *why = QStringLiteral("%1: the file does not exist (moved or deleted?)").arg(path);
        m_loaded = false;
        return false;
    }
    info->modelPath = path;
    info->modelName = m_script.modelName;
    info->architecture = m_script.architecture;
    info->backend = m_script.backend;
    info->device = m_script.device;
    info->gpuNote = QStringLiteral("the fake engine uses no GPU");
    info->contextLength = m_script.contextLength;
    info->thinkingSupported = m_script.thinking;
    m_loaded = true;
    return true;
}

int FakeChatBackend::countTokens(const QVector<ChatTurn>& turns) {
    int n = 2;
    for (const ChatTurn& t : turns) n += 2 + int(t.content.split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts).size());
    return n;
}

int FakeChatBackend::promptTokens(const QVector<ChatTurn>& turns, const GenerationParams&, QString* why) {
    noteThread();
    if (!m_loaded) {
        *why = QStringLiteral("no model is loaded");
        return -1;
    }
    return countTokens(turns);
}

GenerationOutcome FakeChatBackend::generate(const QVector<ChatTurn>& turns, const GenerationParams& params,
                                            const std::atomic<bool>& cancel,
                                            const std::function<void(const PromptFacts&)>& onPrefilled,
                                            const std::function<bool(const QString&)>& onPiece) {
    noteThread();
    GenerationOutcome out;
    if (!m_loaded) {
        out.end = GenerationOutcome::End::Failed;
        out.stopReason = QStringLiteral("error");
        out.error = QStringLiteral("no model is loaded");
        return out;
    }
    const int n = ++m_generations;
    QString lastUser;
    for (const ChatTurn& t : turns)
        if (t.role == QLatin1String("user")) lastUser = t.content;
    const FakeReply& reply = m_script.replyFor(lastUser);
    out.promptTokens = countTokens(turns);
    QElapsedTimer prefill;
    prefill.start();
    if (!pause(m_script.prefillMs, cancel)) {
        out.end = GenerationOutcome::End::Cancelled;
        out.stopReason = QStringLiteral("cancelled");
        out.contextUsed = out.promptTokens;
        return out;
    }
    out.prefillSeconds = std::max(prefill.nsecsElapsed() * 1e-9, 1e-6);
    PromptFacts facts;
    facts.promptTokens = out.promptTokens;
    onPrefilled(facts);

    const int tokenMs = reply.tokenMs >= 0 ? reply.tokenMs : m_script.tokenMs;
    const int limit = std::min(params.maxTokens > 0 ? params.maxTokens : INT_MAX, m_script.contextLength - out.promptTokens);
    auto finish = [&](GenerationOutcome::End end, const QString& reason) {
        out.end = end;
        out.stopReason = reason;
        out.contextUsed = out.promptTokens + out.generatedTokens;
        return out;
    };
    for (int r = 0; r < reply.repeat; ++r) {
        for (QString piece : reply.tokens) {
            if (!pause(tokenMs, cancel)) return finish(GenerationOutcome::End::Cancelled, QStringLiteral("cancelled"));
            if (out.generatedTokens >= limit)
                return finish(GenerationOutcome::End::Finished,
                              out.generatedTokens >= m_script.contextLength - out.promptTokens ? QStringLiteral("context-full")
                                                                                              : QStringLiteral("length"));
            piece.replace(QLatin1String("{last_user}"), lastUser).replace(QLatin1String("{n}"), QString::number(n));
            ++out.generatedTokens;
            if (!onPiece(piece)) return finish(GenerationOutcome::End::Cancelled, QStringLiteral("cancelled"));
        }
    }
    if (!reply.error.isEmpty()) {
        finish(GenerationOutcome::End::Failed, QStringLiteral("error"));
        out.error = reply.error;
        return out;
    }
    return finish(GenerationOutcome::End::Finished, reply.stopReason);
}

}  // namespace arbor::app
