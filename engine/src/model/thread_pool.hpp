// A fixed pool of worker threads that runs one parallel loop at a time. The caller's thread
// takes part, so a pool of n threads starts n-1 workers. Items are claimed dynamically, which
// is fine for exactness because every item writes its own outputs with a fixed reduction
// order: which thread runs an item never changes a bit.
//
// Progress never waits for a thread that is not running: the caller claims items too and only
// waits for items already claimed, so on a busy machine a descheduled worker costs nothing.
// The claim word holds the job number and the next index, and the size word the job number
// and the item count, so a worker waking late for an old job can neither claim an item of a
// new one nor judge an old claim against a new job's size. Idle workers spin briefly, then sleep on a futex
// (a raw futex on Linux: libstdc++ 12's std::atomic::wait has known lost-wakeup bugs), so an
// idle engine costs no CPU.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace arbor {

class ThreadPool {
public:
    using ItemFn = void (*)(void* ctx, int64_t item, int worker);

    explicit ThreadPool(int threads);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const { return int(workers_.size()) + 1; }

    // Calls fn(ctx, i, worker) for every i in [0, n) and returns when all calls returned.
    // worker is in [0, size()); 0 is the calling thread. n < 2^31.
    void run(int64_t n, ItemFn fn, void* ctx);

    template <class F>
    void parallel_for(int64_t n, F&& f) {
        run(n, [](void* c, int64_t i, int w) { (*static_cast<std::remove_reference_t<F>*>(c))(i, w); }, &f);
    }

    // The number of hardware threads (at least 1).
    static int hardware_threads();

private:
    void worker_main(int id);
    void work(uint32_t job, int id);

    std::vector<std::thread> workers_;
    alignas(64) std::atomic<uint32_t> epoch_{0};   // job number; bumped to wake workers
    alignas(64) std::atomic<uint64_t> claim_{0};   // (job << 32) | next item
    alignas(64) std::atomic<uint32_t> done_{0};    // items finished in the current job
    alignas(64) std::atomic<uint64_t> size_{0};  // (job << 32) | items in that job
    ItemFn fn_ = nullptr;
    void* ctx_ = nullptr;
    std::atomic<bool> stop_{false};
    alignas(64) std::atomic<int> sleepers_{0};      // workers inside futex_wait(epoch_)
    std::atomic<bool> caller_sleeps_{false};        // the caller inside futex_wait(done_)
};

}  // namespace arbor
