// The store thread: the one thread that opens the database and runs every read and write of
// the app (the UI thread has no connection at all). Work is posted as jobs, run in order; a
// query's result comes back to a receiver on its own thread through a queued call.
//
// Opening runs the migrations, marks replies left 'streaming' by a crash as 'interrupted' and
// purges conversations deleted in an earlier run. stop() finishes the queued jobs, purges the
// conversations deleted in this run (their undo ends with the app) and closes the database.
// Receivers of query() results must outlive the store thread's running (stop() first).
#pragma once

#include <QList>
#include <QMetaObject>
#include <QMutex>
#include <QObject>
#include <QSet>
#include <QThread>
#include <QWaitCondition>

#include <deque>
#include <functional>

namespace arbor::app {

class ChatStore;
class Database;
class ModelRecords;
class ParkRecords;

struct StoreContext {
    Database& db;
    ChatStore& chats;
    ModelRecords& models;
    ParkRecords& parks;
};

class StoreThread : public QThread {
    Q_OBJECT

public:
    using Job = std::function<void(StoreContext&)>;

    explicit StoreThread(QObject* parent = nullptr);
    ~StoreThread() override;

    // Starts the thread and opens `dbPath` on it; waits for the outcome. `recovered` gets the
    // number of interrupted replies found (a crash), `purged` the conversations purged.
    bool open(const QString& dbPath, QString* why, int* recovered = nullptr, int* purged = nullptr);
    // Runs what is queued, purges soft-deleted conversations, closes and joins. Idempotent.
    void stop();
    bool isOpen() const;

    void post(Job job);
    // Runs `job` on the store thread and hands its result to `done` on `receiver`'s thread.
    template <class Fn, class Done>
    void query(Fn job, QObject* receiver, Done done) {
        post([job = std::move(job), receiver, done = std::move(done)](StoreContext& c) mutable {
            auto result = job(c);
            QMetaObject::invokeMethod(
                receiver, [done = std::move(done), result = std::move(result)]() mutable { done(std::move(result)); },
                Qt::QueuedConnection);
        });
    }
    // Runs `job` on the store thread and waits for it; false (nothing ran) when the store is
    // not open or is stopping. For other worker threads (the engine worker), never the UI.
    bool runAndWait(const Job& job);
    // Blocks until every job posted before this call has run (tests, shutdown).
    void waitIdle();

    // For tests: the threads jobs ran on, and how many ran.
    QSet<QThread*> jobThreads() const;
    int jobsRun() const;

protected:
    void run() override;

private:
    void serve(Database& db, bool ok);

private:
    mutable QMutex m_mutex;
    QWaitCondition m_wake;
    QWaitCondition m_idle;
    std::deque<Job> m_jobs;
    bool m_stopping = false;
    bool m_busy = false;
    // Open handshake.
    QString m_path;
    bool m_opened = false, m_openDone = false;
    QString m_openError;
    int m_recovered = 0, m_purged = 0;
    QSet<QThread*> m_jobThreads;
    int m_jobsRun = 0;
};

}  // namespace arbor::app
