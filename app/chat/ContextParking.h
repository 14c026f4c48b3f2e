// Parking and waking conversation contexts for the engine worker, on the worker's thread.
//
// The backend holds one context: the cells of the conversation it last worked on (its owner),
// ending at a message (its node). When the worker turns to another conversation, the held
// context is written to DIR/c<conversation>-m<node>.park and recorded in the store's
// park_files table for that node (ancestors' files are superseded and deleted); then the
// target's deepest parked node on its path is looked up and woken, restoring its cells. A
// missing, evicted, corrupt or foreign file falls back to prefilling the conversation, and the
// reason is reported (ContextSwitch::problem) and logged. After each park the files are held to
// the disk budget, least recently used evicted first.
//
// Store lookups are made with StoreThread::runAndWait: the worker waits, the UI never does.
#pragma once

#include "engine/ChatBackend.h"

#include <QMetaType>
#include <QString>
#include <QStringList>

#include <atomic>

namespace arbor::app {

class StoreThread;

// What one switch did, for the status bar, the log and tests.
struct ContextSwitch {
    qint64 fromConversation = 0, toConversation = 0;
    QString parkedFile;          // written for the conversation left ("" when nothing was)
    int parkedCells = 0;
    QString parkError;           // why the context left could not be parked
    QString wokenFile;           // the file looked up for the target ("" when none)
    int restoredCells = 0;       // cells read back from it
    int recomputedCells = 0;     // cells prefilled because there was no usable file
    QString problem;             // why the target's file was not used (bad, missing, foreign)
    QStringList evicted;         // files removed to keep to the budget
    double parkMs = 0, wakeMs = 0;
};

class ContextParking {
public:
    ContextParking(ChatBackend& backend, StoreThread* store) : m_backend(backend), m_store(store) {}

    // dir empty: off (the backend keeps one context and re-prefills what differs).
    void configure(const QString& dir, qint64 budgetBytes);
    bool enabled() const { return !m_dir.isEmpty(); }
    qint64 owner() const { return m_owner; }

    // Makes the held context `conversationId`'s, parking the current owner's first. `leafId`
    // is the message the target's context should end at; `turns` the conversation up to it.
    // `prefill`: when no file can be woken, prefill `turns` now (stopping when `preempt`).
    // Returns false when the target already owns the context (nothing was done).
    bool switchTo(qint64 conversationId, qint64 leafId, const QVector<ChatTurn>& turns, const GenerationParams& params, bool prefill,
                  const std::atomic<bool>& preempt, ContextSwitch* report);
    // A generation for `conversationId` ran: the context now ends at `nodeId`.
    void generated(qint64 conversationId, qint64 nodeId);
    // Another model is about to be loaded: parks the held context, which the load drops.
    void beforeModelChange(ContextSwitch* report);
    // The app is quitting: parks the held context so the next start wakes it instead of
    // prefilling it again.
    void beforeQuit(ContextSwitch* report);

private:
    void park(ContextSwitch* report);
    QString fileFor(qint64 conversationId, qint64 nodeId) const;

    ChatBackend& m_backend;
    StoreThread* m_store;
    QString m_dir;
    qint64 m_budget = 0;
    qint64 m_owner = 0;       // the conversation the held context belongs to
    qint64 m_node = 0;        // the message it ends at
    QString m_cleanFile;      // the file the held context was woken from, while unchanged
};

}  // namespace arbor::app

Q_DECLARE_METATYPE(arbor::app::ContextSwitch)
