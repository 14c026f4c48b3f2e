// KV pages: the pool (allocation, refcounts, copy-on-write) and a sequence's page table.
#include <arbor/kv_cache.hpp>

#include <algorithm>
#include <cstring>
#include <new>

namespace arbor {

std::string_view kv_type_name(KvType t) { return t == KvType::F32 ? "f32" : "f16"; }
int64_t kv_type_bytes(KvType t) { return t == KvType::F32 ? 4 : 2; }

KvLayout KvLayout::for_model(const ModelConfig& c, KvType type) {
    KvLayout l;
    l.n_layer = c.n_layer;
    l.n_head_kv = c.n_head_kv;
    l.head_dim_k = c.head_dim_k;
    l.head_dim_v = c.head_dim_v;
    l.index_dim = c.index_dim;
    l.type = type;
    l.elem_bytes = kv_type_bytes(type);
    l.page_bytes = size_t(c.n_layer) * l.layer_bytes();
    return l;
}

namespace {

class HostPageMemory final : public KvPageMemory {
public:
    std::string_view name() const override { return "host"; }
    uint8_t* allocate(size_t bytes) override {
        return static_cast<uint8_t*>(::operator new[](bytes, std::align_val_t(64), std::nothrow));
    }
    void free(uint8_t* p) override { ::operator delete[](p, std::align_val_t(64)); }
    void zero(uint8_t* p, size_t bytes) override { std::memset(p, 0, bytes); }
    void copy(uint8_t* dst, const uint8_t* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
};

}  // namespace

std::shared_ptr<KvPageMemory> host_page_memory() { return std::make_shared<HostPageMemory>(); }

KvCache::KvCache(const ModelConfig& cfg, KvType type, int64_t max_pages, std::shared_ptr<KvPageMemory> mem)
    : layout_(KvLayout::for_model(cfg, type)), max_pages_(max_pages), mem_(mem ? std::move(mem) : host_page_memory()) {}

KvCache::~KvCache() {
    for (Page& p : pages_)
        if (p.mem) mem_->free(p.mem);
}

int64_t KvCache::pages_in_use() const {
    std::lock_guard lock(mu_);
    return in_use_;
}

Result<int32_t> KvCache::allocate() {
    std::lock_guard lock(mu_);
    if (in_use_ >= max_pages_)
        return make_error("KV cache budget exhausted (" + std::to_string(max_pages_) + " pages of " +
                          std::to_string(kKvPageCells) + " cells in use)");
    int32_t id;
    if (!free_.empty()) {
        id = free_.back();
        free_.pop_back();
    } else {
        id = int32_t(pages_.size());
        pages_.emplace_back();
    }
    Page& p = pages_[size_t(id)];
    if (!p.mem) {
        p.mem = mem_->allocate(layout_.page_bytes);
        if (!p.mem) {
            free_.push_back(id);
            return make_error("out of memory allocating a KV page of " + std::to_string(layout_.page_bytes) +
                              " bytes (" + std::string(mem_->name()) + " memory)");
        }
    }
    mem_->zero(p.mem, layout_.page_bytes);
    p.refs = 1;
    ++in_use_;
    return id;
}

void KvCache::retain(int32_t page) {
    std::lock_guard lock(mu_);
    ++pages_[size_t(page)].refs;
}

void KvCache::release(int32_t page) {
    std::lock_guard lock(mu_);
    Page& p = pages_[size_t(page)];
    if (--p.refs == 0) {
        free_.push_back(page);
        --in_use_;
    }
}

int32_t KvCache::refcount(int32_t page) const {
    std::lock_guard lock(mu_);
    return pages_[size_t(page)].refs;
}

Result<int32_t> KvCache::copy(int32_t page) {
    auto fresh = allocate();
    if (!fresh) return fresh.error();
    mem_->copy(data(fresh.value()), data(page), layout_.page_bytes);
    return fresh;
}

KvSequence::KvSequence(std::shared_ptr<KvCache> cache, int64_t n_ctx) : cache_(std::move(cache)), n_ctx_(n_ctx) {}

KvSequence::~KvSequence() {
    for (int32_t p : pages_) cache_->release(p);
}

Status KvSequence::prepare_write(int64_t from, int64_t to) {
    if (to > n_ctx_)
        return make_error("context full: " + std::to_string(to) + " cells needed, the context holds " +
                          std::to_string(n_ctx_));
    if (from >= to) return {};
    const int64_t first = from / kKvPageCells, last = (to - 1) / kKvPageCells;
    while (int64_t(pages_.size()) <= last) {
        auto p = cache_->allocate();
        if (!p) return p.error();
        pages_.push_back(p.value());
    }
    for (int64_t i = first; i <= last; ++i) {
        const int32_t p = pages_[size_t(i)];
        if (cache_->refcount(p) > 1) {
            auto c = cache_->copy(p);
            if (!c) return c.error();
            cache_->release(p);
            pages_[size_t(i)] = c.value();
        }
    }
    return {};
}

void KvSequence::truncate(int64_t n) {
    if (n < 0) n = 0;
    if (n < size_) size_ = n;
    if (poisoned_from_ >= n) poisoned_from_ = -1;
    const size_t keep = size_t((n + kKvPageCells - 1) / kKvPageCells);
    while (pages_.size() > keep) {
        cache_->release(pages_.back());
        pages_.pop_back();
    }
}

std::unique_ptr<KvSequence> KvSequence::fork(int64_t n) const {
    if (n > size_) n = size_;
    auto s = std::make_unique<KvSequence>(cache_, n_ctx_);
    const size_t share = size_t((n + kKvPageCells - 1) / kKvPageCells);
    for (size_t i = 0; i < share; ++i) {
        cache_->retain(pages_[i]);
        s->pages_.push_back(pages_[i]);
    }
    s->size_ = n;
    if (poisoned_from_ >= 0 && poisoned_from_ < n) s->poisoned_from_ = poisoned_from_;
    return s;
}

Result<std::unique_ptr<KvSequence>> KvSequence::deep_copy() const {
    auto s = std::make_unique<KvSequence>(cache_, n_ctx_);
    const size_t used = size_t((size_ + kKvPageCells - 1) / kKvPageCells);
    for (size_t i = 0; i < used; ++i) {
        auto c = cache_->copy(pages_[i]);
        if (!c) return c.error();  // s releases what it got
        s->pages_.push_back(c.value());
    }
    s->size_ = size_;
    s->poisoned_from_ = poisoned_from_;
    return s;
}

namespace {

constexpr uint16_t kF16Nan = 0x7E00;
constexpr uint32_t kF32Nan = 0x7FC00000u;

bool is_nan_at(const uint8_t* p, KvType t) {
    if (t == KvType::F16) {
        uint16_t h;
        std::memcpy(&h, p, 2);
        return (h & 0x7C00) == 0x7C00 && (h & 0x03FF) != 0;
    }
    uint32_t f;
    std::memcpy(&f, p, 4);
    return (f & 0x7F800000u) == 0x7F800000u && (f & 0x007FFFFFu) != 0;
}

}  // namespace

Status KvSequence::poison(int64_t from, int64_t to) {
    if (from < 0 || to > size_ || from > to)
        return make_error("poison: cells [" + std::to_string(from) + ", " + std::to_string(to) + ") are not within [0, " +
                          std::to_string(size_) + ")");
    if (from == to) return {};
    if (auto st = prepare_write(from, to); !st) return st;
    poisoned_from_ = poisoned_from_ < 0 ? from : std::min(poisoned_from_, from);
    const KvLayout& L = cache_->layout();
    std::vector<uint8_t> nan_row(size_t(std::max(L.head_dim_k, L.head_dim_v) * L.elem_bytes));
    for (size_t i = 0; i < nan_row.size(); i += size_t(L.elem_bytes)) {
        if (L.type == KvType::F16) std::memcpy(&nan_row[i], &kF16Nan, 2);
        else std::memcpy(&nan_row[i], &kF32Nan, 4);
    }
    const size_t krow = size_t(L.head_dim_k * L.elem_bytes), vrow = size_t(L.head_dim_v * L.elem_bytes);
    for (int64_t c = from; c < to; ++c) {
        uint8_t* page = page_data(c / kKvPageCells);
        const size_t cell = size_t(c % kKvPageCells);
        for (int64_t l = 0; l < L.n_layer; ++l)
            for (int64_t h = 0; h < L.n_head_kv; ++h) {
                std::memcpy(page + L.k_offset(l, h) + cell * krow, nan_row.data(), krow);
                std::memcpy(page + L.v_offset(l, h) + cell * vrow, nan_row.data(), vrow);
            }
    }
    if (L.index_dim > 0) poison_index(from, to);
    return {};
}

// The indexer keys of cells [from, to) and the pooled keys of the blocks holding them.
void KvSequence::poison_index(int64_t from, int64_t to) {
    const KvLayout& L = cache_->layout();
    const size_t irow = size_t(L.index_dim * L.elem_bytes), prow = size_t(L.index_dim) * 4;
    std::vector<uint8_t> nan_row(std::max(irow, prow));
    for (size_t i = 0; i < irow; i += size_t(L.elem_bytes)) {
        if (L.type == KvType::F16) std::memcpy(&nan_row[i], &kF16Nan, 2);
        else std::memcpy(&nan_row[i], &kF32Nan, 4);
    }
    std::vector<uint8_t> nan_pool(prow);
    for (size_t i = 0; i < prow; i += 4) std::memcpy(&nan_pool[i], &kF32Nan, 4);
    for (int64_t c = from; c < to; ++c) {
        uint8_t* page = page_data(c / kKvPageCells);
        const size_t cell = size_t(c % kKvPageCells), block = cell / size_t(kKvPoolCells);
        for (int64_t l = 0; l < L.n_layer; ++l) {
            std::memcpy(page + L.index_offset(l) + cell * irow, nan_row.data(), irow);
            std::memcpy(page + L.pool_offset(l) + block * prow, nan_pool.data(), prow);
        }
    }
}

int64_t KvSequence::first_poisoned(int64_t from, int64_t to) const {
    const KvLayout& L = cache_->layout();
    to = std::min(to, int64_t(pages_.size()) * kKvPageCells);
    const size_t krow = size_t(L.head_dim_k * L.elem_bytes), vrow = size_t(L.head_dim_v * L.elem_bytes);
    for (int64_t c = std::max<int64_t>(from, 0); c < to; ++c) {
        const uint8_t* page = page_data(c / kKvPageCells);
        const size_t cell = size_t(c % kKvPageCells);
        for (int64_t l = 0; l < L.n_layer; ++l)
            for (int64_t h = 0; h < L.n_head_kv; ++h)
                if (is_nan_at(page + L.k_offset(l, h) + cell * krow, L.type) ||
                    is_nan_at(page + L.v_offset(l, h) + cell * vrow, L.type))
                    return c;
    }
    return -1;
}

}  // namespace arbor
