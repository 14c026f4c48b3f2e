#include "chat/StoreThread.h"

#include "store/ChatStore.h"
#include "store/Database.h"
#include "store/ModelRecords.h"
#include "store/ParkRecords.h"

#include <QMutexLocker>

#include <atomic>

namespace arbor::app {
namespace {
std::atomic<int> g_connectionCounter{0};  // unique connection names per StoreThread
}

StoreThread::StoreThread(QObject* parent) : QThread(parent) { setObjectName(QStringLiteral("arbor-store")); }

StoreThread::~StoreThread() { stop(); }

bool StoreThread::open(const QString& dbPath, QString* why, int* recovered, int* purged) {
    {
        QMutexLocker lock(&m_mutex);
        m_path = dbPath;
        m_openDone = false;
        m_stopping = false;
    }
    start();
    QMutexLocker lock(&m_mutex);
    while (!m_openDone) m_idle.wait(&m_mutex);
    if (!m_opened) {
        if (why) *why = m_openError;
        lock.unlock();
        wait();
        return false;
    }
    if (recovered) *recovered = m_recovered;
    if (purged) *purged = m_purged;
    return true;
}

bool StoreThread::isOpen() const {
    QMutexLocker lock(&m_mutex);
    return m_opened && !m_stopping;
}

void StoreThread::stop() {
    {
        QMutexLocker lock(&m_mutex);
        if (!isRunning()) return;
        m_stopping = true;
        m_wake.wakeAll();
    }
    wait();
}

void StoreThread::post(Job job) {
    QMutexLocker lock(&m_mutex);
    if (!m_opened || m_stopping) return;  // nothing runs after stop(): the caller is shutting down
    m_jobs.push_back(std::move(job));
    m_wake.wakeOne();
}

bool StoreThread::runAndWait(const Job& job) {
    QMutex doneMutex;
    QWaitCondition doneCond;
    bool done = false;
    {
        QMutexLocker lock(&m_mutex);
        if (!m_opened || m_stopping) return false;
        m_jobs.push_back([&](StoreContext& c) {
            job(c);
            QMutexLocker l(&doneMutex);
            done = true;
            doneCond.wakeAll();
        });
        m_wake.wakeOne();
    }
    // Jobs queued before stop() still run, so this always returns.
    QMutexLocker l(&doneMutex);
    while (!done) doneCond.wait(&doneMutex);
    return true;
}

void StoreThread::waitIdle() {
    QMutexLocker lock(&m_mutex);
    while (isRunning() && (m_busy || !m_jobs.empty())) m_idle.wait(&m_mutex);
}

QSet<QThread*> StoreThread::jobThreads() const {
    QMutexLocker lock(&m_mutex);
    return m_jobThreads;
}

int StoreThread::jobsRun() const {
    QMutexLocker lock(&m_mutex);
    return m_jobsRun;
}

void StoreThread::run() {
    Database db;
    QString path;
    {
        QMutexLocker lock(&m_mutex);
        path = m_path;
    }
    const QString connection = QStringLiteral("arbor-store-%1").arg(++g_connectionCounter);
    const bool ok = db.open(path, connection);
    serve(db, ok);
    db.close();
}

void StoreThread::serve(Database& db, bool ok) {
    // The stores hold copies of the connection: they must be gone before it is closed.
    ChatStore chats(db.handle());
    ModelRecords models(db.handle());
    ParkRecords parks(db.handle());
    int recovered = 0, purged = 0;
    if (ok) {
        recovered = chats.recoverInterrupted();
        purged = chats.purgeDeleted();
        models.refreshMissing();
    }
    {
        QMutexLocker lock(&m_mutex);
        m_opened = ok;
        m_openError = ok ? QString() : db.error();
        m_recovered = recovered;
        m_purged = purged;
        m_openDone = true;
        m_idle.wakeAll();
    }
    if (!ok) return;

    StoreContext ctx{db, chats, models, parks};
    for (;;) {
        Job job;
        {
            QMutexLocker lock(&m_mutex);
            while (m_jobs.empty() && !m_stopping) m_wake.wait(&m_mutex);
            if (m_jobs.empty()) break;  // stopping, and everything queued has run
            job = std::move(m_jobs.front());
            m_jobs.pop_front();
            m_busy = true;
        }
        job(ctx);
        QMutexLocker lock(&m_mutex);
        m_busy = false;
        m_jobThreads.insert(QThread::currentThread());
        ++m_jobsRun;
        if (m_jobs.empty()) m_idle.wakeAll();
    }
    chats.purgeDeleted();
    {
        QMutexLocker lock(&m_mutex);
        m_opened = false;
        m_idle.wakeAll();
    }
}

}  // namespace arbor::app
