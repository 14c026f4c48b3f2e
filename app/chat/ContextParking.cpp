#include "chat/ContextParking.h"

#include "chat/StoreThread.h"
#include "store/ParkRecords.h"

#include <arbor/park.hpp>

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QLoggingCategory>

namespace arbor::app {
namespace {

Q_LOGGING_CATEGORY(lcPark, "arbor.park")

}  // namespace

void ContextParking::configure(const QString& dir, qint64 budgetBytes) {
    m_dir = dir;
    m_budget = budgetBytes;
}

QString ContextParking::fileFor(qint64 conversationId, qint64 nodeId) const {
    return QDir(m_dir).filePath(QStringLiteral("c%1-m%2.park").arg(conversationId).arg(nodeId));
}

void ContextParking::park(ContextSwitch* report) {
    const int cells = m_backend.contextTokens();
    if (!m_owner || !m_node || cells == 0) return;
    if (!m_cleanFile.isEmpty() && QFileInfo::exists(m_cleanFile)) {
        // Unchanged since it was woken: its file still holds it.
        report->parkedFile = m_cleanFile;
        report->parkedCells = cells;
        return;
    }
    QElapsedTimer clock;
    clock.start();
    QDir().mkpath(m_dir);
    const QString path = fileFor(m_owner, m_node);
    ContextPark parked;
    if (!m_backend.parkContext(path, &parked)) {
        report->parkError = parked.why;
        qCWarning(lcPark, "could not park conversation %lld: %s", m_owner, qPrintable(parked.why));
        return;
    }
    const QString fingerprint = m_backend.modelFingerprint();
    const qint64 node = m_node;
    bool recorded = false;
    QStringList superseded;
    m_store->runAndWait([&](StoreContext& s) { recorded = s.parks.record(node, path, fingerprint, parked.bytes, &superseded); });
    if (!recorded) {
        QFile::remove(path);  // nothing refers to it (the message is gone, or the store is closing)
        report->parkError = QStringLiteral("the store did not record %1").arg(path);
        return;
    }
    for (const QString& old : std::as_const(superseded)) QFile::remove(old);
    report->parkedFile = path;
    report->parkedCells = parked.cells;

    auto evicted = enforce_park_budget(m_dir.toStdString(), quint64(std::max<qint64>(0, m_budget)), path.toStdString());
    if (!evicted) {
        qCWarning(lcPark, "park budget: %s", evicted.message().c_str());
    } else if (!evicted.value().removed.empty()) {
        for (const std::string& f : evicted.value().removed) report->evicted << QString::fromStdString(f);
        const QStringList gone = report->evicted;
        m_store->runAndWait([&](StoreContext& s) { s.parks.forget(gone); });
    }
    report->parkMs = clock.nsecsElapsed() / 1e6;
}

bool ContextParking::switchTo(qint64 conversationId, qint64 leafId, const QVector<ChatTurn>& turns, const GenerationParams& params,
                              bool prefill, const std::atomic<bool>& preempt, ContextSwitch* report) {
    if (conversationId == m_owner) return false;
    report->fromConversation = m_owner;
    report->toConversation = conversationId;
    if (!enabled()) {  // one context, shared: the next prompt re-prefills what differs
        m_owner = conversationId;
        m_node = 0;
        return true;
    }
    park(report);

    QElapsedTimer clock;
    clock.start();
    const QString fingerprint = m_backend.modelFingerprint();
    ParkRef ref;
    if (leafId && !fingerprint.isEmpty())
        m_store->runAndWait([&](StoreContext& s) { ref = s.parks.findOnPath(leafId, fingerprint); });
    QString missing;
    if (!ref.path.isEmpty() && !QFileInfo::exists(ref.path)) {
        missing = QStringLiteral("%1 is gone (evicted or deleted)").arg(ref.path);
        const QStringList gone{ref.path};
        m_store->runAndWait([&](StoreContext& s) { s.parks.forget(gone); });
        ref = {};
    }
    const ContextWake w = m_backend.wakeContext(ref.path, turns, params, prefill, preempt);
    report->wokenFile = ref.path;
    report->restoredCells = w.restoredCells;
    report->recomputedCells = w.recomputedCells;
    report->problem = missing.isEmpty() ? w.problem : w.problem.isEmpty() ? missing : missing + QStringLiteral("; ") + w.problem;

    m_owner = conversationId;
    m_cleanFile.clear();
    if (w.restoredCells > 0) {
        if (auto st = touch_park_file(ref.path.toStdString()); !st) qCWarning(lcPark, "%s", st.message().c_str());
        const qint64 node = ref.messageId;
        m_store->runAndWait([&](StoreContext& s) { s.parks.touch(node); });
        m_node = ref.messageId;  // the context ends where it was parked
        m_cleanFile = ref.path;
    } else {
        if (!ref.path.isEmpty()) {  // unusable: it would fail again
            QFile::remove(ref.path);
            const QStringList bad{ref.path};
            m_store->runAndWait([&](StoreContext& s) { s.parks.forget(bad); });
        }
        m_node = w.recomputedCells > 0 ? leafId : 0;
    }
    report->wakeMs = clock.nsecsElapsed() / 1e6;
    if (!report->problem.isEmpty())
        qCInfo(lcPark, "conversation %lld: re-prefilled %d cells: %s", conversationId, report->recomputedCells, qPrintable(report->problem));
    else if (report->restoredCells > 0)
        qCInfo(lcPark, "conversation %lld: woke %d cells from %s in %.1f ms", conversationId, report->restoredCells,
               qPrintable(report->wokenFile), report->wakeMs);
    return true;
}

void ContextParking::generated(qint64 conversationId, qint64 nodeId) {
    m_owner = conversationId;
    m_node = nodeId;
    m_cleanFile.clear();
}

void ContextParking::beforeQuit(ContextSwitch* report) {
    report->fromConversation = m_owner;
    if (enabled()) park(report);
}

void ContextParking::beforeModelChange(ContextSwitch* report) {
    report->fromConversation = m_owner;
    if (enabled()) park(report);
    m_owner = 0;
    m_node = 0;
    m_cleanFile.clear();
}

}  // namespace arbor::app
