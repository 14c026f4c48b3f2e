// The GPU backend: the engine's Backend over the persistent megakernel. It uploads the weights
// once, keeps the pass buffers in device memory, gives its KV caches managed pages (host and
// device address the same cells, so park, poison and copies work unchanged), and runs each
// pass of the pass plan as ONE megakernel launch: the plan's stages become the kernel's
// program (mk_model.hpp), level by level.
#include "arbor_hip.hpp"
#include "gpu_flashnext.hpp"
#include "gpu_runtime.hpp"
#include "mk_launch.hpp"
#include "mk_model.hpp"
#include "mk_program.hpp"

#include <arbor/gpu.hpp>
#include <arbor/quant.hpp>

#include "model/gpu_backend.hpp"
#include "model/model_weights.hpp"
#include "model/pass_batch.hpp"
#include "model/pass_plan.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace arbor {
namespace {

using gpu::MkPass;
using gpu::MkStage;
using gpu::MkW;
using quant::BlockQ8A;

// Whether NAME=value is in the environment (each caller reads it once per process).
bool env_is(const char* name, const char* value) {
    const char* v = std::getenv(name);
    return v && std::strcmp(v, value) == 0;
}

// An A/B switch: NAME=0 in the environment turns a lever off.
bool env_off(const char* name) { return env_is(name, "0"); }

// NAME's value as a non-negative integer, or def when unset or not a plain decimal number.
long long env_count(const char* name, long long def) {
    const char* v = std::getenv(name);
    if (!v || !*v) return def;
    long long n = 0;
    for (const char* p = v; *p; ++p) {
        if (*p < '0' || *p > '9' || n > (1ll << 40)) return def;
        n = n * 10 + (*p - '0');
    }
    return n;
}

// Weight formats with a tiled MatMulAdd (kernels/mk_tile_ops.hpp). ARBOR_GPU_TILES=0 turns the
// tiles off (the per-token row dots then run every pass).
bool tile_type(TensorType t) {
    static const bool off = env_off("ARBOR_GPU_TILES");
    if (off) return false;
    return t == TensorType::Q4_0 || t == TensorType::Q8_0 || t == TensorType::Q4_K || t == TensorType::Q5_K ||
           t == TensorType::Q6_K || t == TensorType::IQ4_XS;
}

std::string hip_msg(const char* what, hipError_t e) { return std::string(what) + ": " + hipGetErrorString(e); }

std::string gib(double bytes) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
    return b;
}

// KV pages in managed memory: one address for the host and the device.
class ManagedPageMemory final : public KvPageMemory {
public:
    std::string_view name() const override { return "GPU managed"; }
    uint8_t* allocate(size_t bytes) override {
        void* p = nullptr;
        if (hipMallocManaged(&p, bytes, hipMemAttachGlobal) != hipSuccess) return nullptr;
        return static_cast<uint8_t*>(p);
    }
    void free(uint8_t* p) override { (void)hipFree(p); }
    void zero(uint8_t* p, size_t bytes) override {
        (void)hipMemset(p, 0, bytes);
        (void)hipDeviceSynchronize();
    }
    void copy(uint8_t* dst, const uint8_t* src, size_t bytes) override {
        (void)hipMemcpy(dst, src, bytes, hipMemcpyDefault);
        (void)hipDeviceSynchronize();
    }
    void sync() override { (void)hipDeviceSynchronize(); }
};

// A device allocation that frees itself; grows on demand (contents are not kept).
struct DevMem {
    void* p = nullptr;
    size_t bytes = 0;
    DevMem() = default;
    DevMem(const DevMem&) = delete;
    DevMem& operator=(const DevMem&) = delete;
    ~DevMem() {
        if (p) (void)hipFree(p);
    }
    Status reserve(size_t n, const char* what) {
        if (n <= bytes && p) return {};
        if (p) (void)hipFree(p);
        p = nullptr;
        bytes = 0;
        const hipError_t e = hipMalloc(&p, std::max<size_t>(n, 256));
        if (e != hipSuccess) return make_error(hip_msg((std::string("cannot allocate device memory for ") + what).c_str(), e));
        bytes = std::max<size_t>(n, 256);
        return {};
    }
    template <class T>
    T* as() const {
        return static_cast<T*>(p);
    }
};

bool gpu_type_supported(TensorType t) {
    switch (t) {
    case TensorType::F32: case TensorType::F16: case TensorType::BF16: case TensorType::Q4_0: case TensorType::Q4_1:
    case TensorType::Q5_0: case TensorType::Q5_1: case TensorType::Q8_0: case TensorType::Q2_K: case TensorType::Q3_K:
    case TensorType::Q4_K: case TensorType::Q5_K: case TensorType::Q6_K: case TensorType::IQ4_NL:
    case TensorType::IQ4_XS: case TensorType::MXFP4:
        return true;
    default: return false;
    }
}

size_t weight_bytes(const WeightRef& w) {
    return std::max(size_t(w.n_mat) * w.mat_bytes, size_t(w.rows) * w.row_bytes);
}

class GpuBackend final : public Backend {
public:
    GpuBackend(std::shared_ptr<const Model> model, BackendOptions opts) : model_(std::move(model)), opts_(std::move(opts)) {}
    ~GpuBackend() override {
        if (pass_dev_) (void)hipFree(pass_dev_);
    }

    Status init();

    std::string_view name() const override { return "gpu"; }
    std::string device() const override { return device_; }
    const Model& model() const override { return *model_; }
    std::shared_ptr<KvCache> make_kv_cache(KvType type, int64_t max_pages) const override {
        return std::make_shared<KvCache>(model_->config(), type, max_pages, page_mem_);
    }
    Status eval(std::span<const BatchEntry> batch, PassLogits* out) override;
    BackendCounters counters() const override { return counters_; }
    Status set_profiling(bool on, const std::string& trace_path) override {
        profile_ = on;
        trace_path_ = trace_path;
        return {};
    }
    std::vector<std::string> profile_table() const override { return profile_rows_; }

private:
    Status upload_weights();
    Status alloc_buffers();
    Result<MkW> dev_weight(const WeightRef& w) const;
    const float* dev_vector(const std::vector<float>& v);
    Status ensure_chunks(int64_t max_chunks);
    Status run_pass(const PassTokens& pt, float* logits);
    long long kv_stream(const PassTokens& pt) const;
    void build_program(int64_t n_tokens, int64_t n_out, int64_t max_chunks);

    std::shared_ptr<const Model> model_;
    BackendOptions opts_;
    std::shared_ptr<KvPageMemory> page_mem_ = std::make_shared<ManagedPageMemory>();
    gpu::MkRuntime* rt_ = nullptr;
    std::string device_;
    plan::PassPlan plan_;
    BackendCounters counters_;
    bool profile_ = false;
    std::string trace_path_;
    std::vector<std::string> profile_rows_;

    DevMem weights_, vectors_, layers_;
    std::map<const uint8_t*, size_t> weight_off_;  // host tensor address -> arena offset
    std::vector<float> vec_host_;                   // staged small vectors
    std::map<const float*, size_t> vec_off_;        // host vector data -> offset in floats
    DevMem x_, xn_, xq_, rope_, qkv_, q_, att_, attq_, part_, h_, hq_, router_, ridx_, rw_, he_, heq_,
        logits_, tok_, pos_, seq_, out_, pages_, dep_, ye_;
    MkPass host_pass_{};
    MkPass* pass_dev_ = nullptr;
    int64_t max_chunks_cap_ = 0;
    std::vector<uint8_t*> page_table_;
    int64_t pages_stride_ = 0;
    std::vector<MkStage> program_;
    std::vector<std::string> stage_names_;
    std::unique_ptr<gpu::FlashNextDevice> fn_;  // flashnext's part (gpu_flashnext.hpp), else null
};

Result<MkW> GpuBackend::dev_weight(const WeightRef& w) const {
    MkW m{};
    if (!w) return m;
    auto it = weight_off_.find(w.data);
    if (it == weight_off_.end()) return make_error("tensor " + w.name + " was not uploaded");
    m.data = weights_.as<uint8_t>() + it->second;
    m.row_bytes = w.row_bytes;
    m.mat_bytes = w.mat_bytes;
    m.rows = w.rows;
    m.cols = w.cols;
    m.type = int(w.type);
    return m;
}

const float* GpuBackend::dev_vector(const std::vector<float>& v) {
    if (v.empty()) return nullptr;
    auto it = vec_off_.find(v.data());
    if (it == vec_off_.end()) return nullptr;
    return vectors_.as<float>() + it->second;
}

Status GpuBackend::init() {
    const ModelConfig& c = model_->config();
    auto devs = gpu_devices();
    if (!devs) return make_error("the GPU backend is not available: " + devs.message());
    auto rt = gpu::MkRuntime::get();
    if (!rt) return make_error("the GPU backend is not available: " + rt.message());
    rt_ = rt.value();
    const GpuDevice& d = devs.value()[0];
    device_ = "GPU 0: " + d.name + " (" + d.arch + ", " + gpu_backend_name() + (d.integrated ? ", integrated" : "") +
              "), megakernel " + std::to_string(rt_->grid()) + "x" + std::to_string(rt_->block()) +
              (d.cooperative_launch ? " cooperative" : "");
    if (c.n_expert > 256)
        return make_error("the GPU backend supports up to 256 experts (this model has " + std::to_string(c.n_expert) + ")");
    if ((c.head_dim_k | c.head_dim_v) & 1)
        return make_error("the GPU backend needs even head dimensions");
    if (c.head_dim_k > 256 || c.head_dim_v > 256)
        return make_error("the GPU backend supports head dimensions up to 256 (this model has " +
                          std::to_string(std::max(c.head_dim_k, c.head_dim_v)) + ")");
    // An attention chunk keeps the group's q and scores in the workgroup's shared arena.
    const int64_t group = c.n_head / c.n_head_kv;
    if (group > 16 || gpu::attn_stage_floats(group, c.head_dim_k) < gpu::kMkStageFloats)
        return make_error("the GPU backend supports up to 16 q heads per kv head with their queries and scores in " +
                          std::to_string(gpu::kMkSmemFloats * 4 / 1024) + " KiB (this model has " +
                          std::to_string(group) + " of head dim " + std::to_string(c.head_dim_k) + ")");
    // A K piece holds whole score tiles, whatever share of the group's heads an item takes.
    for (int64_t gh = 1; gh <= group; ++gh)
        if (gpu::attn_stage_floats(gh, c.head_dim_k) < gpu::attn_tile_cells(int(gh)) * (c.head_dim_k + 1))
            return make_error("the GPU backend's attention stage cannot hold one score tile of K rows of head dim " +
                              std::to_string(c.head_dim_k) + " beside " + std::to_string(gh) + " q heads");
    plan_ = plan::build_pass_plan(c, model_->weights());
    for (const plan::Stage& s : plan_.stages) {
        switch (s.op) {
        case plan::Op::Embed: case plan::Op::RopeTable: case plan::Op::RmsNorm: case plan::Op::QkvRope:
        case plan::Op::Attention: case plan::Op::Quantize: case plan::Op::MatMulAdd: case plan::Op::GatedFfn:
        case plan::Op::Router: case plan::Op::ExpertGatedFfn: case plan::Op::ExpertDownAdd: case plan::Op::LmHead:
            break;
        default:
            if (c.is_flashnext() && gpu::FlashNextDevice::builds(s.op)) break;
            return make_error("the GPU backend does not run the " + c.arch_name + " architecture yet (stage " +
                              plan::op_name(s.op) + ")");
        }
    }
    if (auto s = upload_weights(); !s) return s;
    if (auto s = alloc_buffers(); !s) return s;
    if (!c.is_flashnext()) return {};
    fn_ = std::make_unique<gpu::FlashNextDevice>();
    if (auto s = fn_->init(
            c, model_->weights(), opts_.max_batch_tokens, [this](const WeightRef& r) { return dev_weight(r); },
            [this](const std::vector<float>& v) { return dev_vector(v); });
        !s)
        return s;
    host_pass_.fn = fn_->device();
    return {};
}

Status GpuBackend::upload_weights() {
    const ModelConfig& c = model_->config();
    const ModelWeights& w = model_->weights();
    std::vector<const WeightRef*> refs{&w.tok_embd, &w.output};
    for (const LayerWeights& L : w.layers)
        for (const WeightRef* r : {&L.wq, &L.wk, &L.wv, &L.wo, &L.ffn_gate, &L.ffn_up, &L.ffn_down, &L.gate_inp,
                                   &L.gate_exps, &L.up_exps, &L.down_exps})
            refs.push_back(r);
    if (c.is_flashnext())
        for (const WeightRef* r : gpu::FlashNextDevice::weight_refs(w)) refs.push_back(r);
    size_t total = 0;
    std::vector<const WeightRef*> unique;
    for (const WeightRef* r : refs) {
        if (!*r || weight_off_.count(r->data)) continue;
        if (!gpu_type_supported(r->type))
        {
            auto info = tensor_type_info(uint32_t(r->type));
            return make_error("the GPU backend cannot read tensor " + r->name + " of type " +
                              (info ? std::string(info->name) : std::to_string(int(r->type))));
        }
        weight_off_[r->data] = total;
        unique.push_back(r);
        total += (weight_bytes(*r) + 255) / 256 * 256;
    }
    // The small vectors: norms, biases, RoPE frequencies.
    auto stage_vec = [&](const std::vector<float>& v) {
        if (v.empty() || vec_off_.count(v.data())) return;
        vec_off_[v.data()] = vec_host_.size();
        vec_host_.insert(vec_host_.end(), v.begin(), v.end());
        while (vec_host_.size() % 64) vec_host_.push_back(0.0f);
    };
    stage_vec(w.output_norm);
    stage_vec(w.rope_freq);
    for (const LayerWeights& L : w.layers)
        for (const std::vector<float>* v : {&L.attn_norm, &L.ffn_norm, &L.q_norm, &L.k_norm, &L.bq, &L.bk, &L.bv})
            stage_vec(*v);
    if (c.is_flashnext())
        for (const std::vector<float>* v : gpu::FlashNextDevice::vectors(w)) stage_vec(*v);

    size_t free_b = 0, total_b = 0;
    if (hipMemGetInfo(&free_b, &total_b) == hipSuccess) {
        const double need = double(total) + double(vec_host_.size()) * 4 + 256.0 * 1024 * 1024;  // + buffers, roughly
        if (need > double(free_b))
            return make_error("the model does not fit on the GPU: its weights need " + gib(double(total)) + ", the device has " +
                              gib(double(free_b)) + " free of " + gib(double(total_b)));
    }
    if (auto s = weights_.reserve(total, "the weights"); !s) return s;
    int integrated = 0;
    (void)hipDeviceGetAttribute(&integrated, hipDeviceAttributeIntegrated, 0);
    const long page = sysconf(_SC_PAGESIZE);
    const size_t step = size_t(64) << 20;
    int64_t done = 0;
    if (opts_.on_upload) opts_.on_upload(0, int64_t(total));
    for (const WeightRef* r : unique) {
        const size_t n = weight_bytes(*r);
        for (size_t at = 0; at < n; at += step) {
            const size_t len = std::min(step, n - at);
            const hipError_t e = hipMemcpy(weights_.as<uint8_t>() + weight_off_[r->data] + at, r->data + at, len, hipMemcpyHostToDevice);
            if (e != hipSuccess) return make_error(hip_msg(("cannot upload tensor " + r->name).c_str(), e));
            done += int64_t(len);
            if (opts_.on_upload) opts_.on_upload(done, int64_t(total));
        }
        // On an integrated GPU the device copy lives in the same memory as the mapping: drop
        // the mapped pages again so the weights are not held twice.
        if (integrated && page > 0) {
            const uintptr_t b = (reinterpret_cast<uintptr_t>(r->data) + uintptr_t(page) - 1) / uintptr_t(page) * uintptr_t(page);
            const uintptr_t e = (reinterpret_cast<uintptr_t>(r->data) + n) / uintptr_t(page) * uintptr_t(page);
            if (e > b) (void)madvise(reinterpret_cast<void*>(b), e - b, MADV_DONTNEED);
        }
    }
    if (auto s = vectors_.reserve(vec_host_.size() * 4, "the norm vectors"); !s) return s;
    if (!vec_host_.empty())
        if (hipMemcpy(vectors_.p, vec_host_.data(), vec_host_.size() * 4, hipMemcpyHostToDevice) != hipSuccess)
            return make_error("cannot upload the norm vectors");

    std::vector<gpu::MkLayerW> lw(w.layers.size());
    for (size_t i = 0; i < w.layers.size(); ++i) {
        const LayerWeights& L = w.layers[i];
        gpu::MkLayerW& o = lw[i];
        const std::pair<gpu::MkW*, const WeightRef*> mats[] = {
            {&o.wq, &L.wq}, {&o.wk, &L.wk}, {&o.wv, &L.wv}, {&o.wo, &L.wo}, {&o.gate, &L.ffn_gate}, {&o.up, &L.ffn_up},
            {&o.down, &L.ffn_down}, {&o.gate_inp, &L.gate_inp}, {&o.gate_exps, &L.gate_exps}, {&o.up_exps, &L.up_exps},
            {&o.down_exps, &L.down_exps}};
        for (const auto& [dst, src] : mats) {
            auto m = dev_weight(*src);
            if (!m) return m.error();
            *dst = m.value();
        }
        o.attn_norm = dev_vector(L.attn_norm);
        o.ffn_norm = dev_vector(L.ffn_norm);
        o.q_norm = c.qk_norm ? dev_vector(L.q_norm) : nullptr;
        o.k_norm = c.qk_norm ? dev_vector(L.k_norm) : nullptr;
        o.bq = dev_vector(L.bq);
        o.bk = dev_vector(L.bk);
        o.bv = dev_vector(L.bv);
    }
    if (auto s = layers_.reserve(lw.size() * sizeof(gpu::MkLayerW), "the layer table"); !s) return s;
    if (hipMemcpy(layers_.p, lw.data(), lw.size() * sizeof(gpu::MkLayerW), hipMemcpyHostToDevice) != hipSuccess)
        return make_error("cannot upload the layer table");

    MkPass& P = host_pass_;
    P.d.n_embd = c.n_embd;
    P.d.n_head = c.n_head;
    P.d.n_head_kv = c.n_head_kv;
    P.d.hd_k = c.head_dim_k;
    P.d.hd_v = c.head_dim_v;
    P.d.n_rot = c.n_rot;
    P.d.n_ff = c.n_ff;
    P.d.n_vocab = c.n_vocab;
    P.d.n_expert = c.n_expert;
    P.d.n_used = c.n_expert_used;
    P.d.n_ff_exp = c.n_ff_exp;
    P.d.rms_eps = c.rms_eps;
    P.d.attn_scale = c.attn_scale;
    P.d.rope_mscale = w.rope_mscale;
    P.d.rope_neox = c.rope_style == RopeStyle::Neox;
    P.d.qk_norm = c.qk_norm;
    P.d.norm_topk = c.expert_weights_norm;
    P.layers = layers_.as<gpu::MkLayerW>();
    auto te = dev_weight(w.tok_embd);
    auto out = dev_weight(w.output);
    if (!te) return te.error();
    if (!out) return out.error();
    P.tok_embd = te.value();
    P.output = out.value();
    P.output_norm = dev_vector(w.output_norm);
    P.rope_freq = dev_vector(w.rope_freq);
    return {};
}

Status GpuBackend::alloc_buffers() {
    const ModelConfig& c = model_->config();
    const size_t T = size_t(opts_.max_batch_tokens), K = size_t(std::max<int64_t>(c.n_expert_used, 1));
    const size_t E = size_t(std::max<int64_t>(c.n_expert, 1));
    const size_t qkv_w = size_t(c.n_head * c.head_dim_k + c.n_head_kv * (c.head_dim_k + c.head_dim_v));
    const size_t att_w = size_t(c.n_head * c.head_dim_v);
    struct A {
        DevMem* m;
        size_t bytes;
        const char* what;
    };
    const A allocs[] = {
        {&x_, T * size_t(c.n_embd) * 4, "the residual"},
        {&xn_, T * size_t(c.n_embd) * 4, "the normalised rows"},
        {&xq_, T * size_t(c.n_embd / 32 + 1) * sizeof(BlockQ8A), "the Q8A rows"},
        {&rope_, T * size_t(c.n_rot + 2) * 4, "the RoPE table"},
        {&qkv_, T * qkv_w * 4, "the projections"},
        {&q_, T * size_t(c.n_head * c.head_dim_k) * 4, "the queries"},
        {&att_, T * att_w * 4, "the attention output"},
        {&attq_, T * (att_w / 32 + 1) * sizeof(BlockQ8A), "the attention Q8A"},
        {&h_, T * size_t(std::max<int64_t>(c.n_ff, 1)) * 4, "the FFN activations"},
        {&hq_, T * size_t(c.n_ff / 32 + 1) * sizeof(BlockQ8A), "the FFN Q8A"},
        {&router_, T * E * 4, "the router"},
        {&ridx_, T * K * 4, "the routes"},
        {&rw_, T * K * 4, "the route weights"},
        {&he_, T * K * size_t(std::max<int64_t>(c.n_ff_exp, 1)) * 4, "the expert activations"},
        {&heq_, T * K * size_t(c.n_ff_exp / 32 + 1) * sizeof(BlockQ8A), "the expert Q8A"},
        {&logits_, T * size_t(c.n_vocab) * 4, "the logits"},
        {&tok_, T * 4, "the tokens"},
        {&pos_, T * 4, "the positions"},
        {&seq_, T * 4, "the sequence ids"},
        {&out_, T * 4, "the output rows"},
        // The dependency tails' counters (ARBOR_MK_FUSE_TAILS, ARBOR_MK_DOWN_SPLIT builds): a Q/K/V
        // head's, an H block's (every token), an HE block's or an expert down row pair's.
        {&dep_, ARBOR_MK_DEP_TAILS ? std::max({size_t(c.n_head + 2 * c.n_head_kv), size_t(c.n_ff / 32 + 1),
                                               T * K * size_t(c.n_ff_exp / 32 + 1),
                                               size_t(gpu::kMkDownSplitTokens) * size_t(c.n_embd / 2 + 1)}) * 4
                                   : 0,
         "the dependency counters"},
        // The expert down dots: ARBOR_MK_DOWN_SPLIT's (passes of up to kMkDownSplitTokens tokens)
        // and ARBOR_MK_EXPERT_MAJOR's (every token of a pass).
        {&ye_, c.n_expert > 0 ? std::max(ARBOR_MK_DOWN_SPLIT ? size_t(gpu::kMkDownSplitTokens) : size_t(0),
                                         ARBOR_MK_EXPERT_MAJOR ? size_t(T) : size_t(0)) * K * size_t(c.n_embd) * 4
                              : 0,
         "the expert down dots"},
    };
    for (const A& a : allocs)
        if (auto s = a.m->reserve(a.bytes, a.what); !s) return s;
    MkPass& P = host_pass_;
    P.x = x_.as<float>();
    P.xn = xn_.as<float>();
    P.xq = xq_.as<BlockQ8A>();
    P.rope = rope_.as<float>();
    P.qkv = qkv_.as<float>();
    P.q = q_.as<float>();
    P.att = att_.as<float>();
    P.attq = attq_.as<BlockQ8A>();
    P.h = h_.as<float>();
    P.hq = hq_.as<BlockQ8A>();
    P.router = router_.as<float>();
    P.route_idx = ridx_.as<int>();
    P.route_w = rw_.as<float>();
    P.he = he_.as<float>();
    P.heq = heq_.as<BlockQ8A>();
    P.logits = logits_.as<float>();
    P.token = tok_.as<int>();
    P.pos = pos_.as<int>();
    P.seq = seq_.as<int>();
    P.out_token = out_.as<int>();
    P.dep = dep_.as<unsigned>();
    P.ye = ye_.as<float>();
    if (hipMemset(dep_.p, 0, dep_.bytes) != hipSuccess) return make_error("cannot clear the dependency counters");
    if (hipMalloc(reinterpret_cast<void**>(&pass_dev_), sizeof(MkPass)) != hipSuccess)
        return make_error("cannot allocate the pass block");
    return ensure_chunks(1);
}

Status GpuBackend::ensure_chunks(int64_t max_chunks) {
    if (max_chunks <= max_chunks_cap_) return {};
    const ModelConfig& c = model_->config();
    const size_t group = size_t(c.n_head / c.n_head_kv);
    const size_t bytes = size_t(opts_.max_batch_tokens) * size_t(c.n_head_kv) * size_t(max_chunks) * group *
                         size_t(c.head_dim_v + 2) * 4;
    if (auto s = part_.reserve(bytes, "the attention chunks"); !s) return s;
    host_pass_.attn_part = part_.as<float>();
    max_chunks_cap_ = max_chunks;
    return {};
}

// The program of one pass: each plan level becomes one or more kernel levels (a stage whose
// GPU form needs an inner barrier, such as the projections before their RoPE, takes two).
void GpuBackend::build_program(int64_t T, int64_t n_out, int64_t MC) {
    const ModelConfig& c = model_->config();
    program_.clear();
    stage_names_.clear();
    const int64_t K = c.n_expert_used, E = c.n_expert;
    const int64_t qkv_rows = c.n_head * c.head_dim_k + c.n_head_kv * (c.head_dim_k + c.head_dim_v);
    struct Step {
        int op;
        int64_t items;
        gpu::MkModelStage a;
        const char* suffix;  // profile label: the plan stage's name + this
        const plan::Stage* stage;
    };
    int gl = 0;
    size_t i = 0;
    const long long n_layers = static_cast<long long>(model_->weights().layers.size());
    while (i < plan_.stages.size()) {
        const int lv = plan_.stages[i].level;
        std::vector<std::vector<Step>> per;
        for (; i < plan_.stages.size() && plan_.stages[i].level == lv; ++i) {
            const plan::Stage& s = plan_.stages[i];
            gpu::MkModelStage a{};
            a.pass = pass_dev_;
            a.layer = s.layer;
            a.quantize_out = s.quantize_out;
            a.outputs_only = s.outputs_only;
            a.norm = s.norm ? dev_vector(*s.norm) : nullptr;
            a.buf = s.in == plan::Buf::Att ? gpu::kBufAtt : s.in == plan::Buf::H ? gpu::kBufH : gpu::kBufXN;
            // A profiling probe (ARBOR_GPU_PROBE_REPEAT=1): the RMSNorm, router select and (unfolded)
            // attention chunk stages, each idempotent, run again as stages of their own, so the
            // profile shows each stage cold (its code and data fetched) and then warm. It adds
            // levels; bits are unchanged.
            static const bool probe_repeat = env_is("ARBOR_GPU_PROBE_REPEAT", "1");
            static const bool split_off = env_off("ARBOR_GPU_HEAD_SPLIT");  // every chunk item takes all its heads
            // ARBOR_MK_FUSE_TAILS builds: ARBOR_GPU_FUSE_TAILS=0 gives the finish and the Q8A
            // blocks their levels back (an A/B switch; the bits are the same either way).
            static const bool fuse_tails_on = ARBOR_MK_FUSE_TAILS && !env_off("ARBOR_GPU_FUSE_TAILS");
            // Decode-sized passes only: a tail runs a dependency's finish for every token in series.
            const bool fuse_tails = fuse_tails_on && T < gpu::kTileTokens;
            // ARBOR_MK_DOWN_SPLIT builds: ARBOR_GPU_DOWN_SPLIT=0 runs the expert down as before.
            static const bool down_split = ARBOR_MK_DOWN_SPLIT && !env_off("ARBOR_GPU_DOWN_SPLIT");
            // ARBOR_MK_EXPERT_MAJOR builds: passes of at least ARBOR_GPU_EXPERT_MAJOR_MIN tokens
            // (default 16; 0 turns it off) take the expert FFN by (expert, row) items.
            static const long long major_min = ARBOR_MK_EXPERT_MAJOR ? env_count("ARBOR_GPU_EXPERT_MAJOR_MIN", 16) : 0;
            const bool expert_major = major_min > 0 && T >= major_min && !(down_split && T <= gpu::kMkDownSplitTokens);
#if ARBOR_MK_EXPERT_PAIRS
            // Expert-major items take their expert's pairs two at a time (one pass over the rows for
            // both pairs' dots; ARBOR_GPU_EXPERT_PAIRS=1: one pair at a time).
            static const int pair_batch = env_count("ARBOR_GPU_EXPERT_PAIRS", 2) == 1 ? 1 : 2;
            a.pair_batch = pair_batch;
#endif
            a.head_parts = split_off ? 1 : gpu::attn_head_parts(c.n_head_kv * T * MC, c.n_head / c.n_head_kv,
                                                                      c.head_dim_v, rt_->grid());
#if ARBOR_MK_ATTN_TOKENS
            int64_t attn_nt = 1;  // tokens a dense chunk item takes
            // A pass of many tokens over several chunks: a chunk item takes up to kMkAttnRows
            // rows of (token, head), so a whole earlier chunk's K and V are staged once for that
            // many tokens (mk_attn_chunk_tokens), as far as the stage still holds a score tile and
            // kMkStageFloats (more than 16 rows: 8 K rows, a piece of attn_score_tiles_qreg<8, 4>)
            // and a thread's o registers cover its rows (attn_o_write: at most 16 heads a thread);
            // ARBOR_GPU_ATTN_TOKENS=N caps the tokens (1: one a chunk item).
            {
                static const long long cap = env_count("ARBOR_GPU_ATTN_TOKENS", gpu::kMkAttnRows);
                const int64_t gh = c.n_head / c.n_head_kv;  // the whole group: no head split here
                int64_t nt = T > 1 && MC > 1 && a.head_parts <= 1 ? std::min<int64_t>(cap, gpu::kMkAttnRows / gh) : 1;
                auto fits = [&](int64_t rows) {
                    const long long st = gpu::attn_stage_floats(rows, c.head_dim_k);
                    const int64_t slices = gpu::kMkBlockThreads / c.head_dim_v;  // head_dim_v <= 256
                    return st >= gpu::kMkStageFloats && st >= gpu::attn_tile_cells(int(rows)) * (c.head_dim_k + 1) &&
                           (rows <= 16 || (st >= 8 * (c.head_dim_k + 1) && (rows + slices - 1) / slices <= 16));
                };
                while (nt > 1 && !fits(nt * gh)) --nt;
                attn_nt = std::max<int64_t>(nt, 1);
            }
#endif
            // ARBOR_MK_FOLD_FINISH builds: a one-token pass's Q/K/V finish runs in its attention
            // chunk items (no level of its own; ARBOR_GPU_FOLD_FINISH=0 gives the level back).
            static const bool fold_on = ARBOR_MK_FOLD_FINISH && !env_off("ARBOR_GPU_FOLD_FINISH");
            const bool fold = fold_on && T == 1 && !fuse_tails && !fn_;
            if (s.weight) a.w = dev_weight(*s.weight).value();
            std::vector<Step> st;
            auto q_step = [&](int buf, int64_t rows) {  // one item per Q8A block
                gpu::MkModelStage b = a;
                b.buf = buf;
                const int64_t width = buf == gpu::kBufAtt ? c.n_head * c.head_dim_v
                                      : buf == gpu::kBufH ? c.n_ff
                                                          : c.n_ff_exp;
                st.push_back({gpu::kOpQuantize, rows * (width / 32), b, " q8a", &s});
            };
            // Passes of kTileTokens or more tokens run weight tiles (kernels/mk_tile_ops.hpp) of
            // `per` rows by kTileTokens tokens: the item count of `rows` rows.
            const bool many = T >= gpu::kTileTokens;
            auto tiles = [&](int64_t rows, int64_t per) {
                return (rows + per - 1) / per * ((T + gpu::kTileTokens - 1) / gpu::kTileTokens);
            };
            // A stage whose items count into P.dep, its tail run by the completing warp (mk_dep_tail).
            auto tail_step = [&](int op, int64_t items, const char* suffix) {
                gpu::MkModelStage f = a;
                f.dep_tail = 1;
                st.push_back({op, items, f, suffix, &s});
            };
            switch (s.op) {
            case plan::Op::Embed: st.push_back({gpu::kOpEmbed, T, a, "", &s}); break;
            case plan::Op::RopeTable: st.push_back({gpu::kOpRopeTable, T, a, "", &s}); break;
            case plan::Op::RmsNorm: {
                // A pass of few rows (a decode step's) splits each row's norm over several items
                // (mk_norm_parts); ARBOR_GPU_NORM_SPLIT=0: one item a row. Builds with barrier tails
                // on keep one item a row, so that the norm can be a tail (kMkTailItems).
                static const bool norm_split = !env_off("ARBOR_GPU_NORM_SPLIT") &&
                                               !(ARBOR_MK_BARRIER_TAILS && !env_off("ARBOR_GPU_BARRIER_TAILS"));
                gpu::MkModelStage r = a;
                const int64_t rows = s.outputs_only ? n_out : T;
                r.norm_parts = norm_split ? gpu::mk_norm_parts(rows, c.n_embd, rt_->grid()) : 1;
                st.push_back({gpu::kOpRmsNorm, rows * r.norm_parts, r, r.norm_parts > 1 ? " split" : "", &s});
                if (probe_repeat) st.push_back({gpu::kOpRmsNorm, rows * r.norm_parts, r, " again", &s});
                break;
            }
            case plan::Op::QkvRope:
                if (const LayerWeights& Lw = model_->weights().layers[size_t(s.layer)];
                    many && tile_type(Lw.wq.type) && tile_type(Lw.wk.type) && tile_type(Lw.wv.type) &&
                    Lw.wq.rows % gpu::kTileRows == 0 && Lw.wk.rows % gpu::kTileRows == 0 &&
                    Lw.wv.rows % gpu::kTileRows == 0) {
                    st.push_back({gpu::kOpQkvDotsTile, tiles(qkv_rows, gpu::kTileRows), a, " dot tiles", &s});
                } else if (fuse_tails) {  // the finish as the dots' tail
                    tail_step(gpu::kOpQkvDots, qkv_rows / 2, " dots+norm+rope");
                    break;
                } else {
                    st.push_back({gpu::kOpQkvDots, qkv_rows / 2, a, " dots", &s});
                    if (fold) break;  // the attention chunk items finish Q, K and V
                }
                st.push_back({gpu::kOpQkvFinish, (c.n_head + 2 * c.n_head_kv) * T, a, " norm+rope", &s});
                break;
            case plan::Op::Attention:
                a.fold_finish = fold ? 1 : 0;
                if (MC == 1) {  // one chunk per token: the chunk is the attention (no combine level)
                    gpu::MkModelStage one = a;
                    one.direct = 1;
                    st.push_back({gpu::kOpAttnChunk, c.n_head_kv * T * a.head_parts, one, fold ? " one chunk+finish" : " one chunk", &s});
                } else {
#if ARBOR_MK_ATTN_TOKENS
                    if (attn_nt > 1 && !fold) {  // items of attn_nt tokens (mk_attn_chunk_tokens)
                        gpu::MkModelStage grouped = a;
                        grouped.attn_tokens = int(attn_nt);
                        st.push_back({gpu::kOpAttnChunk, c.n_head_kv * ((T + attn_nt - 1) / attn_nt) * MC * a.head_parts, grouped,
                                      " chunks by tokens", &s});
                    } else
#endif
                    st.push_back({gpu::kOpAttnChunk, c.n_head_kv * T * MC * a.head_parts, a, fold ? " chunks+finish" : " chunks", &s});
                }
                // The probe repeat: the chunk stage just pushed, whichever it is, again (a folded
                // item finishes Q, K and V in place, so it is not repeated).
                if (probe_repeat && !fold) {
                    Step again = st.back();
                    again.suffix = " chunks again";
                    st.push_back(again);
                }
                if (MC > 1)
                    st.push_back({gpu::kOpAttnCombine, gpu::attn_combine_items(c.n_head_kv, T, c.n_head / c.n_head_kv, c.head_dim_v), a, " combine", &s});
                break;
            case plan::Op::Quantize: q_step(gpu::kBufAtt, T); break;
            case plan::Op::MatMulAdd:
                if (many && tile_type(s.weight->type)) {
                    st.push_back({gpu::kOpMatMulAddTile, tiles(s.weight->rows, gpu::kTileRows), a, " tiles", &s});
                } else {
                    st.push_back({gpu::kOpMatMulAdd, (s.weight->rows + 1) / 2, a, "", &s});
                }
                break;
            case plan::Op::GatedFfn:
                if (const LayerWeights& Lw = model_->weights().layers[size_t(s.layer)];
                    many && Lw.ffn_gate.type == Lw.ffn_up.type && tile_type(Lw.ffn_gate.type)) {
                    st.push_back({gpu::kOpGatedFfnTile, tiles(c.n_ff, gpu::kTileRows / 2), a, " tiles", &s});
                } else if (fuse_tails && s.quantize_out && c.n_ff % 32 == 0) {  // Q8A blocks as the tail
                    tail_step(gpu::kOpGatedFfn, c.n_ff, " +q8a");
                    break;
                } else {
                    st.push_back({gpu::kOpGatedFfn, c.n_ff, a, "", &s});
                }
                if (s.quantize_out) q_step(gpu::kBufH, T);
                break;
            case plan::Op::Router: {
                gpu::MkModelStage r = a;
                const TensorType rt = model_->weights().layers[size_t(s.layer)].gate_inp.type;
                r.w = dev_weight(model_->weights().layers[size_t(s.layer)].gate_inp).value();
                r.out_buf = gpu::kBufRouter;
                // A float router (its E rows are few items for the grid): one row an item, each with
                // twice the loads in flight (ARBOR_GPU_ROUTER_ROWS=0: two rows an item).
                static const bool row_items = !env_off("ARBOR_GPU_ROUTER_ROWS");
                r.row_items = row_items && (rt == TensorType::F32 || rt == TensorType::F16 || rt == TensorType::BF16);
                // A pass of many tokens: an item per token and row (pair), where an item walking
                // the T tokens left most of the grid idle (ARBOR_GPU_ROUTER_TOKENS=0: the walk).
                // A one-token pass keeps its items as they were (the same map either way).
                static const bool token_items = !env_off("ARBOR_GPU_ROUTER_TOKENS");
                r.token_items = token_items && T > 1 ? 1 : 0;
                const long long units = r.row_items ? E : (E + 1) / 2;
                st.push_back({gpu::kOpMatMulStore, r.token_items ? units * T : units, r, " logits", &s});
                st.push_back({gpu::kOpRouterSelect, T, a, " top-k", &s});
                if (probe_repeat) st.push_back({gpu::kOpRouterSelect, T, a, " top-k again", &s});
                break;
            }
            case plan::Op::ExpertGatedFfn:
                if (expert_major) {  // (expert, row) items, every pair routed to the expert
                    // ARBOR_MK_MAJOR_ROWS=2 builds: an item takes two rows (where the pairs are
                    // batched and the rows come in twos). Only these items read major_rows; other
                    // stages keep a{}'s 0.
                    a.major_rows = ARBOR_MK_MAJOR_ROWS == 2 && a.pair_batch == 2 && c.n_ff_exp % 2 == 0 ? 2 : 1;
                    st.push_back({gpu::kOpExpertGatedFfnMajor, E * (c.n_ff_exp / a.major_rows), a, " by expert", &s});
                    if (s.quantize_out) q_step(gpu::kBufHE, T * K);
                    break;
                }
                if (fuse_tails && s.quantize_out && c.n_ff_exp % 32 == 0) {  // Q8A blocks as the tail
                    tail_step(gpu::kOpExpertGatedFfn, T * K * c.n_ff_exp, " +q8a");
                    break;
                }
                st.push_back({gpu::kOpExpertGatedFfn, T * K * c.n_ff_exp, a, "", &s});
                if (s.quantize_out) q_step(gpu::kBufHE, T * K);
                break;
            case plan::Op::ExpertDownAdd:
                if (expert_major) {  // (expert, row pair) dots into YE, then the slot-order combine
                    st.push_back({gpu::kOpExpertDownMajor, E * ((c.n_embd + 1) / 2), a, " by expert", &s});
                    st.push_back({gpu::kOpExpertDownCombine, T * ((c.n_embd + 31) / 32), a, " combine", &s});
                    break;
                }
                if (down_split && T <= gpu::kMkDownSplitTokens) {  // (row pair, slot) items, the combine as their tail
                    tail_step(gpu::kOpExpertDownDots, (c.n_embd + 1) / 2 * T * K, " split");
                    break;
                }
                st.push_back({gpu::kOpExpertDownAdd, (c.n_embd + 1) / 2, a, "", &s});
                break;
            case plan::Op::LmHead: {
                gpu::MkModelStage h = a;
                h.out_buf = gpu::kBufLogits;
                st.push_back({gpu::kOpMatMulStore, n_out == 0 ? 0 : (c.n_vocab + 1) / 2, h, "", &s});
                break;
            }
            default:  // flashnext's own ops (other ops are refused at init)
                if (fn_) {
                    std::vector<gpu::FnStep> fs;
                    fn_->steps(s, a, T, n_out, MC, fs);
                    for (const gpu::FnStep& f : fs) st.push_back({f.op, f.items, f.a, f.suffix, &s});
                }
                break;
            }
            per.push_back(std::move(st));
        }
        size_t depth = 0;
        for (const auto& st : per) depth = std::max(depth, st.size());
        for (size_t k = 0; k < depth; ++k)
            for (const auto& st : per) {
                if (k >= st.size()) continue;
                MkStage m{};
                m.op = st[k].op;
                m.level = gl + int(k);
                m.items = st[k].items;
                m.model = st[k].a;
                m.model.lw = m.model.layer >= 0 && m.model.layer < n_layers ? layers_.as<gpu::MkLayerW>() + m.model.layer
                                                                             : nullptr;
                program_.push_back(m);
                if (profile_) {  // labels only when someone reads them
                    const plan::Stage& ps = *st[k].stage;
                    stage_names_.push_back(std::string(plan::op_name(ps.op)) +
                                           (ps.layer >= 0 ? " L" + std::to_string(ps.layer) : "") + st[k].suffix);
                }
            }
        gl += int(depth);
    }
    // Whether stage k is its level's only one (the barrier tails and the prologues below).
    auto alone = [&](size_t k) {
        return (k == 0 || program_[k - 1].level != program_[k].level) &&
               (k + 1 == program_.size() || program_[k + 1].level != program_[k].level);
    };
    // Barrier tails (ARBOR_MK_BARRIER_TAILS; ARBOR_GPU_BARRIER_TAILS=0 turns them off in such a
    // build): a level of one RMSNorm or router select stage of at most kMkTailItems items, neither
    // the first level nor the last, runs in the last workgroup to arrive at the barrier before it.
    static const bool tails = ARBOR_MK_BARRIER_TAILS && !env_off("ARBOR_GPU_BARRIER_TAILS");
    if (tails && !program_.empty()) {
        const int last_level = program_.back().level;
        for (size_t k = 0; k < program_.size(); ++k) {
            gpu::MkStage& m = program_[k];
            m.tail = alone(k) && m.level > 0 && m.level < last_level && m.items <= gpu::kMkTailItems &&
                             (m.op == gpu::kOpRmsNorm || m.op == gpu::kOpRouterSelect)
                         ? gpu::kMkStageTail
                         : 0;
        }
    }
#if ARBOR_MK_PROLOGUES
    // Prologues (ARBOR_MK_PROLOGUES builds; ARBOR_GPU_PROLOGUES=N, bit 1 the norms', bit 2 the
    // router select's, default 2): in a one-token pass, a workgroup stage alone in its level whose
    // next level is one consumer stage becomes that stage's prologue, in its level: every
    // workgroup runs it whole, then its share of the consumer, and the levels after move up by
    // one. An RMSNorm before the Q/K/V dots, a dense gated FFN, the router logits or the LM head
    // (then one item a row); a router select before the expert gated FFN, when its slots stay in
    // lanes (n_used <= 32: the other form divides the weights in place, so a workgroup could read
    // weights another had already divided). A prologue's writes are the same bytes from every
    // workgroup, and each reads its own.
    static const long long which = env_count("ARBOR_GPU_PROLOGUES", 2);
    const bool norm_prologues = (which & 1) != 0, select_prologues = (which & 2) != 0;
    if ((norm_prologues || select_prologues) && T == 1) {
        for (size_t k = 0; k + 1 < program_.size(); ++k) {
            gpu::MkStage& m = program_[k];
            if (!alone(k) || !alone(k + 1)) continue;  // (levels have no gaps: k + 1 is the next level)
            const int next = program_[k + 1].op;
            const bool norm = norm_prologues && m.op == gpu::kOpRmsNorm &&
                              (next == gpu::kOpQkvDots || next == gpu::kOpGatedFfn || next == gpu::kOpMatMulStore);
            const bool select = select_prologues && m.op == gpu::kOpRouterSelect && next == gpu::kOpExpertGatedFfn &&
                                K <= 32;
            if (!norm && !select) continue;
            if (norm) {
                m.items /= std::max(1, m.model.norm_parts);
                m.model.norm_parts = 1;
            }
            m.tail = gpu::kMkStageEvery;
        }
        int shift = 0;  // each prologue joins its consumer's level, and the later levels move up
        for (gpu::MkStage& m : program_) {
            m.level -= shift;
            if (m.tail == gpu::kMkStageEvery) ++shift;
        }
    }
#else
    static const bool warned = std::getenv("ARBOR_GPU_PROLOGUES") &&
                               std::fprintf(stderr, "arbor: ARBOR_GPU_PROLOGUES ignored: this build has no prologues "
                                                    "(NVIDIA builds without barrier tails have them)\n") > 0;
    (void)warned;
#endif
}

// 1 when pass pt is a decode step (one token a sequence) whose sequences' cells, over every
// layer, are at least the L2's size (MkPass::kv_stream). ARBOR_GPU_KV_STREAM=1 (a check, not a
// lever) sets it for every decode step, so that the exactness suite's short contexts run the
// evict-first copies too.
long long GpuBackend::kv_stream(const PassTokens& pt) const {
    static const bool forced = env_is("ARBOR_GPU_KV_STREAM", "1");
    if (!forced) {  // the cells first: most passes stop here, before the decode test below
        const double cell_bytes = double(model_->kv_bytes_per_cell(int64_t(host_pass_.d.kv_elem_bytes)));
        double cells = 0;
        for (int32_t p : pt.pos) cells += double(p) + 1;
        if (rt_->l2_bytes() <= 0 || cells * cell_bytes < double(rt_->l2_bytes())) return 0;
    }
    std::vector<int32_t> seqs(pt.seq);
    std::sort(seqs.begin(), seqs.end());
    return std::adjacent_find(seqs.begin(), seqs.end()) == seqs.end() ? 1 : 0;
}

Status GpuBackend::run_pass(const PassTokens& pt, float* logits) {
    const ModelConfig& c = model_->config();
    const int64_t T = int64_t(pt.tok.size()), n_out = int64_t(pt.out.size());
    int64_t max_pos = 0;
    for (int32_t p : pt.pos) max_pos = std::max<int64_t>(max_pos, p);
    const int64_t MC = max_pos / kKvPageCells + 1;
    if (auto s = ensure_chunks(MC); !s) return s;
    if (fn_)
        if (auto s = fn_->prepare(max_pos); !s) return s;
    MkPass& P = host_pass_;
    P.n_tokens = T;
    P.n_out = n_out;
    P.max_chunks = MC;
    P.kv_stream = ARBOR_MK_KV_EVICT_FIRST ? kv_stream(pt) : 0;
    P.pages = pages_.as<uint8_t*>();
    P.pages_stride = pages_stride_;
    struct Up {
        void* dst;
        const void* src;
        size_t n;
    };
    const Up ups[] = {{tok_.p, pt.tok.data(), size_t(T) * 4}, {pos_.p, pt.pos.data(), size_t(T) * 4},
                      {seq_.p, pt.seq.data(), size_t(T) * 4}, {out_.p, pt.out.data(), size_t(n_out) * 4},
                      {pass_dev_, &P, sizeof(MkPass)}};
    for (const Up& u : ups)
        if (u.n && hipMemcpy(u.dst, u.src, u.n, hipMemcpyHostToDevice) != hipSuccess)
            return make_error("cannot upload the pass's tokens");
    build_program(T, n_out, MC);
    gpu::RunOptions ro;
    // A wait is bounded by about a second for decode-sized passes; a long prefill pass may
    // legitimately keep a level busy longer, so its bound grows with the tokens (to 10 s,
    // well under the ~15 s at which an AMD gfx ring starves).
    ro.timeout_s = std::min(10.0, opts_.gpu_wait_timeout_s * std::max(1.0, double(T) / 32.0));
    ro.watchdog_s = opts_.gpu_watchdog_s;
    ro.profile = profile_;
    ro.trace_path = trace_path_;
    if (profile_) ro.stage_names = stage_names_;
    gpu::LaunchInfo info;
    if (auto s = rt_->run(program_, ro, &info); !s) {
        // A failed pass may leave dependency counts behind (dependency tails): clear them.
        if (ARBOR_MK_DEP_TAILS) (void)hipMemset(dep_.p, 0, dep_.bytes);
        return s;
    }
    ++counters_.passes;
    counters_.launches += info.launches;
    counters_.device_ms += info.ms;
    if (profile_) profile_rows_ = info.profile_rows;
    if (n_out > 0) {
        const hipError_t e = hipMemcpy(logits, logits_.p, size_t(n_out) * size_t(c.n_vocab) * 4, hipMemcpyDeviceToHost);
        if (e != hipSuccess) return make_error(hip_msg("cannot download the logits", e));
    }
    return {};
}

Status GpuBackend::eval(std::span<const BatchEntry> batch, PassLogits* out) {
    for (size_t i = 0; i < batch.size(); ++i)
        if (batch[i].seq && &batch[i].seq->cache().memory() != page_mem_.get() &&
            batch[i].seq->cache().memory().name() != page_mem_->name())
            return make_error("batch entry " + std::to_string(i) +
                              ": its KV cache lives in host memory; make GPU caches with the GPU backend's make_kv_cache");
    auto prepared = [&]() -> Status {
        int64_t stride = 1;
        for (const BatchEntry& e : batch) stride = std::max<int64_t>(stride, int64_t(e.seq->pages().size()));
        pages_stride_ = stride;
        page_table_.assign(batch.size() * size_t(stride), nullptr);
        for (size_t i = 0; i < batch.size(); ++i)
            for (size_t pg = 0; pg < batch[i].seq->pages().size(); ++pg)
                page_table_[i * size_t(stride) + pg] = batch[i].seq->page_data(int64_t(pg));
        if (auto s = pages_.reserve(page_table_.size() * sizeof(uint8_t*), "the page table"); !s) return s;
        if (!page_table_.empty() &&
            hipMemcpy(pages_.p, page_table_.data(), page_table_.size() * sizeof(uint8_t*), hipMemcpyHostToDevice) != hipSuccess)
            return make_error("cannot upload the page table");
        if (!batch.empty()) {
            const KvLayout& l = batch[0].seq->cache().layout();
            host_pass_.d.kv_elem_bytes = l.elem_bytes;
            host_pass_.d.kv_layer_bytes = l.layer_bytes();
        }
        return {};
    };
    return run_batch(model_->config(), batch, opts_.max_batch_tokens, out, prepared,
                     [&](const PassTokens& p, float* logits) { return run_pass(p, logits); });
}

}  // namespace

Result<std::unique_ptr<Backend>> make_gpu_backend(std::shared_ptr<const Model> model, BackendOptions opts) {
    if (!model) return make_error("no model");
    if (opts.max_batch_tokens < 1 || opts.max_batch_tokens > 65536)
        return make_error("max_batch_tokens must be between 1 and 65536");
    auto b = std::make_unique<GpuBackend>(std::move(model), std::move(opts));
    if (auto s = b->init(); !s) return s.error();
    return std::unique_ptr<Backend>(std::move(b));
}

}  // namespace arbor
