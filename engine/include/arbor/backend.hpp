// Backends run passes of a model: a batch of token runs, each appended to its own sequence,
// in one evaluation of the model's pass plan. The CPU backend is the reference; every other
// backend must produce the same bits (see docs/ARCHITECTURE.md, numerics contract).
//
// Exactness: the logits of a token depend only on the model, its sequence's tokens and its
// position; never on the thread count, on which other sequences share the pass, or on how a
// prompt was cut into chunks. A batch larger than the backend's max_batch_tokens is split into
// several passes, which by the same property changes no bit.
#pragma once

#include <arbor/kv_cache.hpp>
#include <arbor/model.hpp>
#include <arbor/result.hpp>
#include <arbor/tokenizer.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace arbor {

enum class LogitsMode { None, Last, All };

// One run of tokens appended to a sequence: they take positions seq->size() onwards.
struct BatchEntry {
    KvSequence* seq = nullptr;
    std::span<const TokenId> tokens;
    LogitsMode logits = LogitsMode::Last;
};

// The logits a pass produced: rows in batch order (entry 0's rows first), each n_vocab floats.
struct PassLogits {
    struct Row {
        int32_t entry;  // index into the batch
        int32_t token;  // index into that entry's tokens
    };
    int64_t n_vocab = 0;
    std::vector<Row> rows;
    std::vector<float> data;

    size_t size() const { return rows.size(); }
    const float* row(size_t i) const { return data.data() + i * size_t(n_vocab); }
    std::span<const float> row_span(size_t i) const { return {row(i), size_t(n_vocab)}; }
};

struct BackendOptions {
    int threads = 0;                  // 0: the machine's hardware threads
    int64_t max_batch_tokens = 256;   // tokens per pass (scratch is sized for this)
    bool scalar = false;              // CPU: the scalar reference kernels only (same bits, slower)
    // GPU: weights upload progress (bytes done, bytes in all), called on the creating thread.
    std::function<void(int64_t done, int64_t total)> on_upload;
    double gpu_wait_timeout_s = 1.0;  // GPU: bound on any cross-workgroup wait inside a pass
    double gpu_watchdog_s = 30.0;     // GPU: the host aborts a pass that runs longer
};

// Counters a backend keeps over its passes (cumulative; take differences around a region).
struct BackendCounters {
    int64_t passes = 0;        // model passes run (a batch larger than max_batch_tokens is several)
    int64_t launches = 0;      // GPU kernel launches made for those passes (the contract: 1 per pass)
    double device_ms = 0;      // GPU time of those passes, measured by the device (0 on the CPU)
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual std::string_view name() const = 0;  // "cpu"
    virtual std::string device() const = 0;     // e.g. "CPU, 2 threads, avx2"
    virtual const Model& model() const = 0;
    // A KV cache whose pages this backend's passes can read and write: host memory for the
    // CPU, memory the device addresses for the GPU. Sequences passed to eval must live in a
    // cache made by this backend (or, for the CPU, any host cache).
    virtual std::shared_ptr<KvCache> make_kv_cache(KvType type, int64_t max_pages) const {
        return std::make_shared<KvCache>(model().config(), type, max_pages);
    }
    // Appends every entry's tokens to its sequence and fills `out` with the logits asked for.
    // On error nothing is appended (sequences keep their size).
    virtual Status eval(std::span<const BatchEntry> batch, PassLogits* out) = 0;

    virtual BackendCounters counters() const { return {}; }
    // Profiling of the next passes (GPU): a per-stage event ring written inside the kernel.
    // trace_path: where each profiled pass writes its Chrome/Perfetto trace JSON (empty: none).
    // profile_table() is the per-stage table (and per-level waits) of the last profiled pass.
    virtual Status set_profiling(bool on, const std::string& trace_path) {
        (void)trace_path;
        if (on) return make_error("the " + std::string(name()) + " backend has no kernel profiler (use --backend gpu)");
        return {};
    }
    virtual std::vector<std::string> profile_table() const { return {}; }
};

Result<std::unique_ptr<Backend>> make_cpu_backend(std::shared_ptr<const Model> model, BackendOptions opts = {});
// "cpu", or "gpu" (an error naming why when this build or machine has no usable GPU backend).
Result<std::unique_ptr<Backend>> make_backend(std::string_view name, std::shared_ptr<const Model> model,
                                              BackendOptions opts = {});

}  // namespace arbor
