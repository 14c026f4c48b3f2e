// The KV cache: per-sequence cells in fixed-size, reference-counted pages.
//
// A sequence's cell i holds the keys and values of its token at position i (cells and positions
// are the same numbers). Cells live in pages of kKvPageCells cells; a sequence owns a page table
// (a list of page ids). A page may be shared by several sequences (fork): it is reference
// counted, and the first write into a shared page copies it (copy-on-write), so a fork shares
// its parent's prefix without copying or recomputing it.
//
// Element type: F16 (IEEE half, round to nearest even from the float32 K/V; the default) or F32.
// Page layout, for each layer l in order: the K block [n_head_kv][kKvPageCells][head_dim_k],
// then the V block [n_head_kv][kKvPageCells][head_dim_v]. One (layer, head) of a page is thus a
// contiguous run of 256 rows, which is what the attention stage streams. The page size equals
// the attention chunk of the numerics contract, so chunks never straddle pages.
// Models with an indexer (flashnext, index_dim = d_I > 0) add, after each layer's V block, the
// indexer keys [kKvPageCells][index_dim] (element type) and the pooled block keys
// [kKvPageCells / 4][index_dim] (always float32): derived state, rebuilt from the indexer keys
// (never parked), shared and copied with the page like the cells.
#pragma once

#include <arbor/model.hpp>
#include <arbor/result.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

namespace arbor {

constexpr int64_t kKvPageCells = 256;

enum class KvType { F16, F32 };
std::string_view kv_type_name(KvType t);
int64_t kv_type_bytes(KvType t);

constexpr int64_t kKvPoolCells = 4;  // cells per pooled indexer block

struct KvLayout {
    int64_t n_layer = 0, n_head_kv = 0, head_dim_k = 0, head_dim_v = 0;
    int64_t index_dim = 0;  // indexer key length (0: no indexer)
    KvType type = KvType::F16;
    int64_t elem_bytes = 2;
    size_t page_bytes = 0;

    static KvLayout for_model(const ModelConfig& c, KvType type);
    // Byte offsets inside a page of cell 0 of (layer, kv head); cells follow at
    // head_dim * elem_bytes.
    size_t k_offset(int64_t layer, int64_t head) const {
        return size_t(layer) * layer_bytes() + size_t(head * kKvPageCells * head_dim_k * elem_bytes);
    }
    size_t v_offset(int64_t layer, int64_t head) const {
        return size_t(layer) * layer_bytes() + size_t(n_head_kv * kKvPageCells * head_dim_k * elem_bytes) +
               size_t(head * kKvPageCells * head_dim_v * elem_bytes);
    }
    // Indexer keys of the layer's page: cell c at + c * index_dim * elem_bytes.
    size_t index_offset(int64_t layer) const {
        return size_t(layer) * layer_bytes() + size_t(n_head_kv * kKvPageCells * (head_dim_k + head_dim_v) * elem_bytes);
    }
    // Pooled block keys (float32) of the layer's page: block j at + j * index_dim * 4.
    size_t pool_offset(int64_t layer) const {
        return index_offset(layer) + size_t(kKvPageCells * index_dim * elem_bytes);
    }
    size_t layer_bytes() const {
        return size_t(n_head_kv * kKvPageCells * (head_dim_k + head_dim_v) * elem_bytes) +
               size_t(index_dim * (kKvPageCells * elem_bytes + (kKvPageCells / kKvPoolCells) * 4));
    }
};

// Where a cache's pages live. Host memory by default. A GPU backend supplies memory that both
// the host and its device address (managed or unified memory), so park, poison, copy and
// deep copy keep working on the host while passes read and write the cells on the device.
class KvPageMemory {
public:
    virtual ~KvPageMemory() = default;
    virtual std::string_view name() const = 0;  // "host", "gpu managed", ...
    virtual uint8_t* allocate(size_t bytes) = 0;  // null when out of memory
    virtual void free(uint8_t* p) = 0;
    virtual void zero(uint8_t* p, size_t bytes) = 0;
    virtual void copy(uint8_t* dst, const uint8_t* src, size_t bytes) = 0;
    // Makes writes by earlier device passes visible to host reads (a no-op for host memory).
    virtual void sync() {}
};

// Plain host memory (64-byte aligned).
std::shared_ptr<KvPageMemory> host_page_memory();

// A pool of pages for one model, with a budget. Thread-safe.
class KvCache {
public:
    // max_pages: the budget; allocation beyond it fails with an error. mem: where pages live
    // (null: host memory).
    KvCache(const ModelConfig& cfg, KvType type, int64_t max_pages, std::shared_ptr<KvPageMemory> mem = nullptr);
    ~KvCache();
    KvCache(const KvCache&) = delete;
    KvCache& operator=(const KvCache&) = delete;

    const KvLayout& layout() const { return layout_; }
    int64_t max_pages() const { return max_pages_; }
    int64_t pages_in_use() const;

    // Page operations (used by KvSequence).
    Result<int32_t> allocate();               // a zeroed page with refcount 1
    void retain(int32_t page);
    void release(int32_t page);
    int32_t refcount(int32_t page) const;
    Result<int32_t> copy(int32_t page);        // a new page with the same bytes
    uint8_t* data(int32_t page) { return pages_[size_t(page)].mem; }
    const uint8_t* data(int32_t page) const { return pages_[size_t(page)].mem; }
    KvPageMemory& memory() const { return *mem_; }

private:
    struct Page {
        uint8_t* mem = nullptr;
        int32_t refs = 0;
    };
    KvLayout layout_;
    int64_t max_pages_;
    std::shared_ptr<KvPageMemory> mem_;
    mutable std::mutex mu_;
    std::vector<Page> pages_;
    std::vector<int32_t> free_;
    int64_t in_use_ = 0;
};

// One sequence's cells: a page table into a KvCache. Cells [0, size()) hold data.
class KvSequence {
public:
    KvSequence(std::shared_ptr<KvCache> cache, int64_t n_ctx);
    ~KvSequence();
    KvSequence(const KvSequence&) = delete;
    KvSequence& operator=(const KvSequence&) = delete;

    int64_t size() const { return size_; }
    int64_t capacity() const { return n_ctx_; }
    KvCache& cache() const { return *cache_; }
    const std::shared_ptr<KvCache>& cache_ptr() const { return cache_; }
    const std::vector<int32_t>& pages() const { return pages_; }

    // Makes cells [from, to) writable: allocates missing pages and copies shared ones. Fails
    // when `to` exceeds the capacity or the cache's budget.
    Status prepare_write(int64_t from, int64_t to);
    // Marks cells [0, n) as filled (after a pass wrote them).
    void set_size(int64_t n) { size_ = n; }
    // Drops cells >= n; pages wholly beyond n are released.
    void truncate(int64_t n);
    // A new sequence sharing cells [0, n) with this one (n <= size()), copy-on-write.
    std::unique_ptr<KvSequence> fork(int64_t n) const;
    // An independent sequence with a copy of cells [0, size()) in fresh pages: nothing shared.
    Result<std::unique_ptr<KvSequence>> deep_copy() const;

    // Invalidates cells [from, to) (to <= size()), for example when the text behind them was
    // edited: their pages are made private first (a fork keeps its own valid copy), then every
    // K and V element of those cells in every layer and head becomes NaN (and, with an indexer,
    // their indexer keys and the pooled key of every block holding one of them).
    Status poison(int64_t from, int64_t to);
    // The first poisoned cell in [from, to) (a NaN at the start of any K or V row), or -1:
    // a scan of the data, for cells that came from elsewhere (a park file).
    int64_t first_poisoned(int64_t from, int64_t to) const;
    // The lowest cell poisoned through this sequence (or inherited by fork or copy) that it
    // still holds, or -1. Attention reads every held cell, so a pass over a sequence with one
    // would read poison (and quantized matmuls could turn NaN into finite garbage): callers
    // refuse such passes.
    int64_t poisoned_from() const { return poisoned_from_; }

    uint8_t* page_data(int64_t page_index) { return cache_->data(pages_[size_t(page_index)]); }
    const uint8_t* page_data(int64_t page_index) const { return cache_->data(pages_[size_t(page_index)]); }

private:
    void poison_index(int64_t from, int64_t to);

    std::shared_ptr<KvCache> cache_;
    int64_t n_ctx_;
    int64_t size_ = 0;
    int64_t poisoned_from_ = -1;
    std::vector<int32_t> pages_;
};

}  // namespace arbor
