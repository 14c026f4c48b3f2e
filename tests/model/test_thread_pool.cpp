// The engine's thread pool: every item of every job runs exactly once, jobs of changing sizes
// back to back (the pattern that once let a late worker judge an old claim against a new
// job's size), any thread count, and destruction with idle workers.
#include "model/thread_pool.hpp"

#include <QtTest>

#include <atomic>
#include <vector>

using arbor::ThreadPool;

class TestThreadPool : public QObject {
    Q_OBJECT

private slots:
    void exactlyOnce_data() {
        QTest::addColumn<int>("threads");
        for (int t : {1, 2, 3, 7}) QTest::newRow(qPrintable(QString("%1 threads").arg(t))) << t;
    }
    void exactlyOnce() {
        QFETCH(int, threads);
        ThreadPool pool(threads);
        QCOMPARE(pool.size(), threads);
        std::vector<std::atomic<int>> hits(256);
        std::atomic<int> bad_worker{0};
        uint32_t s = 7;
        for (int job = 0; job < 20000; ++job) {
            s = s * 1664525u + 1013904223u;
            const int64_t n = 1 + (s >> 8) % 200;  // sizes change every job
            for (auto& h : hits) h.store(0, std::memory_order_relaxed);
            pool.parallel_for(n, [&](int64_t i, int w) {
                if (w < 0 || w >= threads) bad_worker.fetch_add(1);
                hits[size_t(i)].fetch_add(1, std::memory_order_relaxed);
            });
            for (int64_t i = 0; i < 256; ++i)
                if (hits[size_t(i)].load() != (i < n ? 1 : 0))
                    QFAIL(qPrintable(QString("job %1 (n=%2): item %3 ran %4 times").arg(job).arg(n).arg(i).arg(hits[size_t(i)].load())));
        }
        QCOMPARE(bad_worker.load(), 0);
        pool.parallel_for(0, [&](int64_t, int) { bad_worker.fetch_add(1); });
        QCOMPARE(bad_worker.load(), 0);
    }

    void idleDestruction() {
        for (int i = 0; i < 20; ++i) {
            ThreadPool pool(4);
            std::atomic<int> n{0};
            pool.parallel_for(10, [&](int64_t, int) { n.fetch_add(1); });
            QCOMPARE(n.load(), 10);
        }
        QVERIFY(ThreadPool::hardware_threads() >= 1);
    }
};

QTEST_GUILESS_MAIN(TestThreadPool)
#include "test_thread_pool.moc"
