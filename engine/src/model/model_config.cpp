// Hyperparameters from GGUF metadata, with the per-architecture defaults real files rely on.
#include <arbor/model.hpp>

#include "gguf/llm_keys.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

namespace arbor {
namespace {

struct ArchTraits {
    Architecture arch;
    std::string_view name;
    RopeStyle rope;
    bool qk_norm;
    bool qkv_bias;
    float default_eps;
};

constexpr ArchTraits kArchs[] = {
    {Architecture::Llama, "llama", RopeStyle::Normal, false, false, 1e-5f},
    {Architecture::Qwen2, "qwen2", RopeStyle::Neox, false, true, 1e-6f},
    {Architecture::Qwen3, "qwen3", RopeStyle::Neox, true, false, 1e-6f},
    {Architecture::Qwen3Moe, "qwen3moe", RopeStyle::Neox, true, false, 1e-6f},
    {Architecture::FlashNext, "flashnext", RopeStyle::Neox, true, false, 1e-6f},
};

class Reader {
public:
    Reader(const GgufFile& f, std::string arch) : f_(f), arch_(std::move(arch)) {}

    // An integer key that may also be a per-layer array with one value for every layer.
    Result<std::optional<int64_t>> count(LlmKey key) const {
        const std::string k = llm_key(arch_, key);
        const GgufValue* v = f_.find(k);
        if (!v) return std::optional<int64_t>{};
        if (v->is_array()) {
            if (v->length == 0 || v->elem_type == GgufValueType::STRING || v->elem_type == GgufValueType::ARRAY)
                return make_error(f_.path() + ": metadata key '" + k + "' is an array that is not a list of counts");
            const int64_t first = v->int_at(0);
            for (uint64_t i = 1; i < v->length; ++i)
                if (v->int_at(i) != first)
                    return make_error(f_.path() + ": metadata key '" + k + "' differs between layers (" +
                                      std::to_string(first) + " and " + std::to_string(v->int_at(i)) +
                                      "), which this engine does not support");
            return std::optional<int64_t>(first);
        }
        auto r = f_.get_int(k);
        if (!r) return r.error();
        return r.value();
    }
    Result<std::optional<double>> number(LlmKey key) const { return f_.get_float(llm_key(arch_, key)); }
    Result<std::optional<std::string>> string(LlmKey key) const { return f_.get_string(llm_key(arch_, key)); }
    Result<std::optional<bool>> boolean(LlmKey key) const { return f_.get_bool(llm_key(arch_, key)); }
    std::string key(LlmKey k) const { return llm_key(arch_, k); }

private:
    const GgufFile& f_;
    std::string arch_;
};

#define ARBOR_TRY_ASSIGN(var, expr)        \
    auto var##_r = (expr);                 \
    if (!var##_r) return var##_r.error();  \
    auto var = var##_r.value()

}  // namespace

std::string_view architecture_name(Architecture a) {
    for (const auto& t : kArchs)
        if (t.arch == a) return t.name;
    return "?";
}

Result<ModelConfig> read_model_config(const GgufFile& f) {
    const std::string arch = f.architecture();
    const ArchTraits* tr = nullptr;
    for (const auto& t : kArchs)
        if (t.name == arch) tr = &t;
    if (!tr) {
        std::string known;
        for (const auto& t : kArchs) known += (known.empty() ? "" : ", ") + std::string(t.name);
        return make_error(f.path() + ": architecture '" + arch + "' is not supported (supported: " + known + ")");
    }
    ModelConfig c;
    c.arch = tr->arch;
    c.arch_name = arch;
    c.rope_style = tr->rope;
    c.qk_norm = tr->qk_norm;
    c.qkv_bias = tr->qkv_bias;
    Reader r(f, arch);
    auto need = [&](LlmKey k, int64_t* out) -> Status {
        auto v = r.count(k);
        if (!v) return v.error();
        if (!v.value()) return make_error(f.path() + ": metadata key '" + r.key(k) + "' is missing");
        if (*v.value() <= 0)
            return make_error(f.path() + ": metadata key '" + r.key(k) + "' must be positive, is " +
                              std::to_string(*v.value()));
        *out = *v.value();
        return {};
    };
    auto opt = [&](LlmKey k, int64_t* out, int64_t def) -> Status {
        auto v = r.count(k);
        if (!v) return v.error();
        *out = v.value().value_or(def);
        if (*out < 0)
            return make_error(f.path() + ": metadata key '" + r.key(k) + "' is negative (" + std::to_string(*out) + ")");
        return {};
    };
    if (auto s = need(LlmKey::EmbeddingLength, &c.n_embd); !s) return s.error();
    if (auto s = need(LlmKey::BlockCount, &c.n_layer); !s) return s.error();
    if (auto s = need(LlmKey::HeadCount, &c.n_head); !s) return s.error();
    if (auto s = opt(LlmKey::HeadCountKv, &c.n_head_kv, c.n_head); !s) return s.error();
    if (c.n_head_kv <= 0 || c.n_head % c.n_head_kv != 0)
        return make_error(f.path() + ": head_count " + std::to_string(c.n_head) + " is not a multiple of head_count_kv " +
                          std::to_string(c.n_head_kv));
    if (auto s = opt(LlmKey::KeyLength, &c.head_dim_k, c.n_embd / c.n_head); !s) return s.error();
    if (auto s = opt(LlmKey::ValueLength, &c.head_dim_v, c.head_dim_k); !s) return s.error();
    if (c.head_dim_k <= 0 || c.head_dim_v <= 0) return make_error(f.path() + ": attention key/value length is zero");
    if (c.head_dim_k > 1024 || c.head_dim_v > 1024)
        return make_error(f.path() + ": attention key/value length " + std::to_string(std::max(c.head_dim_k, c.head_dim_v)) +
                          " is larger than this engine supports (1024)");
    if (auto s = opt(LlmKey::FeedForwardLength, &c.n_ff, 0); !s) return s.error();
    if (auto s = opt(LlmKey::ContextLength, &c.n_ctx_train, 2048); !s) return s.error();
    if (c.n_ctx_train == 0) c.n_ctx_train = 2048;
    if (auto s = opt(LlmKey::ExpertCount, &c.n_expert, 0); !s) return s.error();
    if (auto s = opt(LlmKey::ExpertUsedCount, &c.n_expert_used, 0); !s) return s.error();
    if (auto s = opt(LlmKey::ExpertFeedForwardLength, &c.n_ff_exp, c.n_ff); !s) return s.error();
    if ((c.arch == Architecture::Qwen3Moe || c.arch == Architecture::FlashNext) && c.n_expert == 0)
        return make_error(f.path() + ": " + arch + " needs '" + r.key(LlmKey::ExpertCount) + "'");
    if (c.n_expert > 0) {
        if (c.n_expert_used <= 0 || c.n_expert_used > c.n_expert)
            return make_error(f.path() + ": expert_used_count " + std::to_string(c.n_expert_used) +
                              " must be between 1 and expert_count " + std::to_string(c.n_expert));
        if (c.n_ff_exp <= 0) return make_error(f.path() + ": '" + r.key(LlmKey::ExpertFeedForwardLength) + "' is missing");
        ARBOR_TRY_ASSIGN(norm, r.boolean(LlmKey::ExpertWeightsNorm));
        c.expert_weights_norm = norm.value_or(true);
        ARBOR_TRY_ASSIGN(gating, r.count(LlmKey::ExpertGatingFunc));
        if (gating && *gating != 1)
            return make_error(f.path() + ": '" + r.key(LlmKey::ExpertGatingFunc) + "' = " + std::to_string(*gating) +
                              " (only softmax gating, 1, is supported)");
    } else if (c.n_ff <= 0) {
        return make_error(f.path() + ": metadata key '" + r.key(LlmKey::FeedForwardLength) + "' is missing");
    }
    if (c.n_expert > 64 * 1024) return make_error(f.path() + ": expert_count is implausibly large");

    ARBOR_TRY_ASSIGN(eps, r.number(LlmKey::RmsEpsilon));
    c.rms_eps = float(eps.value_or(tr->default_eps));
    if (!(c.rms_eps > 0)) return make_error(f.path() + ": '" + r.key(LlmKey::RmsEpsilon) + "' must be positive");
    ARBOR_TRY_ASSIGN(ascale, r.number(LlmKey::AttentionScale));
    c.attn_scale = ascale && *ascale != 0 ? float(*ascale) : 1.0f / std::sqrt(float(c.head_dim_k));

    if (auto s = opt(LlmKey::RopeDimensionCount, &c.n_rot, c.head_dim_k); !s) return s.error();
    if (c.n_rot <= 0 || c.n_rot > c.head_dim_k || c.n_rot % 2 != 0)
        return make_error(f.path() + ": rope.dimension_count " + std::to_string(c.n_rot) +
                          " must be even and at most the key length " + std::to_string(c.head_dim_k));
    ARBOR_TRY_ASSIGN(base, r.number(LlmKey::RopeFreqBase));
    c.rope_freq_base = float(base.value_or(10000.0));
    if (!(c.rope_freq_base > 1)) return make_error(f.path() + ": rope.freq_base must be greater than 1");
    ARBOR_TRY_ASSIGN(stype, r.string(LlmKey::RopeScalingType));
    ARBOR_TRY_ASSIGN(sfactor, r.number(LlmKey::RopeScalingFactor));
    const std::string st = stype.value_or(sfactor && *sfactor > 1 ? "linear" : "none");
    if (st == "none") {
        c.rope_scaling = RopeScaling::None;
    } else if (st == "linear") {
        c.rope_scaling = RopeScaling::Linear;
    } else if (st == "yarn") {
        c.rope_scaling = RopeScaling::Yarn;
    } else {
        return make_error(f.path() + ": rope scaling type '" + st + "' is not supported (none, linear, yarn)");
    }
    c.rope_scale_factor = float(sfactor.value_or(1.0));
    if (!(c.rope_scale_factor > 0)) return make_error(f.path() + ": rope.scaling.factor must be positive");
    if (c.rope_scaling == RopeScaling::None) c.rope_scale_factor = 1.0f;
    if (auto s = opt(LlmKey::RopeScalingOrigContext, &c.rope_orig_ctx, c.n_ctx_train); !s) return s.error();
    ARBOR_TRY_ASSIGN(ext, r.number(LlmKey::RopeScalingYarnExtFactor));
    c.yarn_ext_factor = float(ext.value_or(c.rope_scaling == RopeScaling::Yarn ? 1.0 : 0.0));
    ARBOR_TRY_ASSIGN(attn_factor, r.number(LlmKey::RopeScalingAttnFactor));
    c.yarn_attn_factor = float(attn_factor.value_or(1.0));
    ARBOR_TRY_ASSIGN(bfast, r.number(LlmKey::RopeScalingYarnBetaFast));
    c.yarn_beta_fast = float(bfast.value_or(32.0));
    ARBOR_TRY_ASSIGN(bslow, r.number(LlmKey::RopeScalingYarnBetaSlow));
    c.yarn_beta_slow = float(bslow.value_or(1.0));
    if (c.arch == Architecture::FlashNext) {
        auto fail = [&](LlmKey k, const std::string& why) {
            return make_error(f.path() + ": metadata key '" + r.key(k) + "' " + why);
        };
        if (auto s = need(LlmKey::ExpertSharedFeedForwardLength, &c.n_ff_shexp); !s) return s.error();
        if (auto s = need(LlmKey::HyperConnectionCount, &c.n_hc); !s) return s.error();
        if (c.n_hc != 4) return fail(LlmKey::HyperConnectionCount, "is " + std::to_string(c.n_hc) + "; flashnext has 4 streams");
        if (auto s = need(LlmKey::HyperConnectionSinkhornIterations, &c.hc_sinkhorn_iters); !s) return s.error();
        if (c.hc_sinkhorn_iters > 1000) return fail(LlmKey::HyperConnectionSinkhornIterations, "is implausibly large");
        ARBOR_TRY_ASSIGN(hc_eps, r.number(LlmKey::HyperConnectionEpsilon));
        if (!hc_eps) return fail(LlmKey::HyperConnectionEpsilon, "is missing");
        c.hc_eps = float(*hc_eps);
        if (!(c.hc_eps > 0)) return fail(LlmKey::HyperConnectionEpsilon, "must be positive");
        if (auto s = need(LlmKey::IndexerHeadCount, &c.n_index_head); !s) return s.error();
        if (auto s = need(LlmKey::IndexerKeyLength, &c.index_dim); !s) return s.error();
        if (c.index_dim % 2 != 0 || c.index_dim > 1024)
            return fail(LlmKey::IndexerKeyLength, "is " + std::to_string(c.index_dim) + "; it must be even and at most 1024");
        if (c.n_index_head > 256) return fail(LlmKey::IndexerHeadCount, "is larger than this engine supports (256)");
        if (auto s = need(LlmKey::IndexerTopK, &c.index_top_k); !s) return s.error();
        if (auto s = opt(LlmKey::IndexerBlockSize, &c.index_block, 4); !s) return s.error();
        if (c.index_block != 4) return fail(LlmKey::IndexerBlockSize, "is " + std::to_string(c.index_block) + "; flashnext blocks are 4 cells");
        if (c.index_top_k % c.index_block != 0)
            return fail(LlmKey::IndexerTopK, "is " + std::to_string(c.index_top_k) + ", not a multiple of the block size 4");
        if (c.rope_scaling != RopeScaling::None)
            return make_error(f.path() + ": flashnext supports no rope scaling (the file asks for '" + st + "')");
    }
    return c;
}

}  // namespace arbor
