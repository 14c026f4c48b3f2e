#include "model/thread_pool.hpp"

#include <ctime>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ARBOR_PAUSE() _mm_pause()
#else
#define ARBOR_PAUSE() ((void)0)
#endif

namespace arbor {
namespace {
constexpr int kSpin = 4000;  // pause iterations before sleeping (tens of microseconds)

// Sleeps while *a == old (returns at once when it already differs, spuriously, or after the
// timeout: callers re-check their condition, so a lost wake-up costs at most that long).
void futex_wait(std::atomic<uint32_t>& a, uint32_t old, long timeout_ns) {
#if defined(__linux__)
    timespec ts{0, timeout_ns};
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&a), FUTEX_WAIT_PRIVATE, old, &ts, nullptr, 0);
#else
    a.wait(old, std::memory_order_acquire);
#endif
}

void futex_wake_all(std::atomic<uint32_t>& a) {
#if defined(__linux__)
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&a), FUTEX_WAKE_PRIVATE, 0x7fffffff, nullptr, nullptr, 0);
#else
    a.notify_all();
#endif
}

static_assert(sizeof(std::atomic<uint32_t>) == 4 && std::atomic<uint32_t>::is_always_lock_free);
}  // namespace

int ThreadPool::hardware_threads() {
    const unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 1 : int(n);
}

ThreadPool::ThreadPool(int threads) {
    if (threads < 1) threads = 1;
    workers_.reserve(size_t(threads - 1));
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker_main(i); });
}

ThreadPool::~ThreadPool() {
    stop_.store(true, std::memory_order_release);
    epoch_.fetch_add(1, std::memory_order_release);
    futex_wake_all(epoch_);
    for (auto& t : workers_) t.join();
}

// Claims and runs items of job `job` until none are left (or the job is no longer current).
void ThreadPool::work(uint32_t job, int id) {
    for (;;) {
        uint64_t c = claim_.load(std::memory_order_acquire);
        if (uint32_t(c >> 32) != job) return;
        const uint64_t size = size_.load(std::memory_order_acquire);
        if (uint32_t(size >> 32) != job) return;  // a newer job's size: ours is over
        const int64_t n = int64_t(size & 0xffffffffu);
        if (int64_t(c & 0xffffffffu) >= n) return;
        if (!claim_.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel)) continue;
        // The job cannot finish before this item does, so fn_ and ctx_ are this job's.
        fn_(ctx_, int64_t(c & 0xffffffffu), id);
        if (int64_t(done_.fetch_add(1, std::memory_order_seq_cst)) + 1 == n &&
            caller_sleeps_.load(std::memory_order_seq_cst))
            futex_wake_all(done_);
    }
}

void ThreadPool::worker_main(int id) {
    uint32_t seen = 0;
    for (;;) {
        uint32_t e = epoch_.load(std::memory_order_acquire);
        for (int spin = 0; e == seen && spin < kSpin; ++spin) {
            ARBOR_PAUSE();
            e = epoch_.load(std::memory_order_acquire);
        }
        while (e == seen) {
            sleepers_.fetch_add(1, std::memory_order_seq_cst);
            futex_wait(epoch_, seen, 50000000);  // 50 ms
            sleepers_.fetch_sub(1, std::memory_order_seq_cst);
            e = epoch_.load(std::memory_order_acquire);
        }
        seen = e;
        if (stop_.load(std::memory_order_acquire)) return;
        work(e, id);
    }
}

void ThreadPool::run(int64_t n, ItemFn fn, void* ctx) {
    if (n <= 0) return;
    if (workers_.empty() || n == 1) {
        for (int64_t i = 0; i < n; ++i) fn(ctx, i, 0);
        return;
    }
    const uint32_t job = epoch_.load(std::memory_order_relaxed) + 1;
    size_.store((uint64_t(job) << 32) | uint64_t(n), std::memory_order_release);
    fn_ = fn;
    ctx_ = ctx;
    done_.store(0, std::memory_order_relaxed);
    claim_.store(uint64_t(job) << 32, std::memory_order_release);
    epoch_.store(job, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) futex_wake_all(epoch_);
    work(job, 0);
    uint32_t d = done_.load(std::memory_order_acquire);
    for (int spin = 0; int64_t(d) != n && spin < kSpin * 4; ++spin) {
        ARBOR_PAUSE();
        d = done_.load(std::memory_order_acquire);
    }
    while (int64_t(d) != n) {
        caller_sleeps_.store(true, std::memory_order_seq_cst);
        d = done_.load(std::memory_order_seq_cst);
        if (int64_t(d) != n) futex_wait(done_, d, 2000000);  // 2 ms
        caller_sleeps_.store(false, std::memory_order_seq_cst);
        d = done_.load(std::memory_order_acquire);
    }
}

}  // namespace arbor
