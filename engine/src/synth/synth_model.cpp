// Synthetic models: metadata and tensor layout of each architecture (llama.cpp's names), random
// weights of sane scale generated row by row (so the bytes do not depend on the thread count),
// quantized by round-to-nearest, streamed into the file.
#include <arbor/quant.hpp>
#include <arbor/synth.hpp>

#include "core/splitmix64.hpp"
#include "gguf/llm_keys.hpp"
#include "synth/synth_tokenizer.hpp"

#include <arbor/gguf.hpp>

#include <algorithm>
#include <cmath>
#include <thread>

namespace arbor {
namespace {

enum class Init { Ones, Uniform };

struct Spec {
    std::string name;
    std::vector<int64_t> shape;
    TensorType type;
    Init init;
    float scale;  // uniform half-width
};

// Weight types by role for a shape's default release mix, or one type for all matrices.
struct Mix {
    std::optional<TensorType> all;
    bool moe;
    bool tied;  // token_embd is also the output head, and gets the output's type
    TensorType pick(const std::string& role) const {
        if (all) return *all;
        if (role == "output" || (tied && role == "token_embd")) return TensorType::Q6_K;
        if (moe) return role == "token_embd" ? TensorType::Q4_K : TensorType::IQ4_XS;  // UD-IQ4_XS-like
        if (role == "attn_v" || role == "ffn_down") return TensorType::Q6_K;          // Q4_K_M-like
        return TensorType::Q4_K;
    }
};

// flashnext's tensors beyond qwen3moe's (docs/MODEL-flashnext.md): the shared expert, the two
// hyper-connection wraps and the indexer of layer prefix b.
void flashnext_layer(std::vector<Spec>& v, const std::string& b, const SynthShape& s, const Mix& mix, float in_e,
                     float depth) {
    const int64_t E = s.n_embd, FS = s.n_ff_shexp, HI = s.n_index_head, DI = s.index_dim;
    const float in_fs = std::sqrt(3.0f / static_cast<float>(FS)), in_hc = std::sqrt(3.0f / static_cast<float>(4 * E));
    auto f32 = [&](std::string name, std::vector<int64_t> shape, float scale) {
        v.push_back({std::move(name), std::move(shape), TensorType::F32, Init::Uniform, scale});
    };
    v.push_back({b + "ffn_gate_shexp.weight", {E, FS}, mix.pick("shexp"), Init::Uniform, in_e});
    v.push_back({b + "ffn_up_shexp.weight", {E, FS}, mix.pick("shexp"), Init::Uniform, in_e});
    v.push_back({b + "ffn_down_shexp.weight", {FS, E}, mix.pick("shexp"), Init::Uniform, in_fs * depth});
    f32(b + "ffn_gate_inp_shexp.weight", {E}, in_e);
    for (const char* w : {"hc_attn_", "hc_ffn_"}) {
        f32(b + w + "fn.weight", {4 * E, 24}, in_hc);
        f32(b + w + "base.weight", {24}, 1.0f);
        f32(b + w + "scale.weight", {3}, 1.0f);
    }
    v.push_back({b + "indexer.attn_q_b.weight", {E, HI * DI}, mix.pick("indexer"), Init::Uniform, in_e});
    v.push_back({b + "indexer.attn_k.weight", {E, DI}, mix.pick("indexer"), Init::Uniform, in_e});
    f32(b + "indexer.proj.weight", {E, HI}, in_e);
    v.push_back({b + "indexer.k_norm.weight", {DI}, TensorType::F32, Init::Ones, 0});
}

std::vector<Spec> layout(const std::string& arch, const SynthShape& s, const Mix& mix) {
    std::vector<Spec> v;
    const int64_t E = s.n_embd, H = s.n_head, KV = s.n_head_kv, D = s.head_dim, F = s.n_ff, V = s.n_vocab;
    const float in_e = std::sqrt(3.0f / static_cast<float>(E));
    // Output projections are scaled down with depth so the residual stream stays O(1).
    const float depth = 1.0f / std::sqrt(2.0f * static_cast<float>(s.n_layer));
    auto mat = [&](std::string name, int64_t in, int64_t out, const std::string& role, float gain = 1.0f) {
        v.push_back({std::move(name), {in, out}, mix.pick(role), Init::Uniform, std::sqrt(3.0f / static_cast<float>(in)) * gain});
    };
    auto ones = [&](std::string name, int64_t n) { v.push_back({std::move(name), {n}, TensorType::F32, Init::Ones, 0}); };
    v.push_back({"token_embd.weight", {E, V}, mix.pick("token_embd"), Init::Uniform, in_e});
    ones("output_norm.weight", E);
    if (!s.tied_embeddings) mat("output.weight", E, V, "output");
    if (arch == "flashnext") {
        v.push_back({"output_hc_fn.weight", {4 * E, 4}, TensorType::F32, Init::Uniform, std::sqrt(3.0f / static_cast<float>(4 * E))});
        v.push_back({"output_hc_base.weight", {4}, TensorType::F32, Init::Uniform, 1.0f});
        v.push_back({"output_hc_scale.weight", {1}, TensorType::F32, Init::Uniform, 1.0f});
    }
    for (uint32_t l = 0; l < s.n_layer; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        ones(b + "attn_norm.weight", E);
        mat(b + "attn_q.weight", E, H * D, "attn_q");
        mat(b + "attn_k.weight", E, KV * D, "attn_k");
        mat(b + "attn_v.weight", E, KV * D, "attn_v");
        mat(b + "attn_output.weight", H * D, E, "attn_output", depth);
        if (arch == "qwen2")
            for (auto [n, len] : {std::pair{"attn_q.bias", H * D}, std::pair{"attn_k.bias", KV * D}, std::pair{"attn_v.bias", KV * D}})
                v.push_back({b + n, {len}, TensorType::F32, Init::Uniform, 0.02f});
        if (arch == "qwen3" || arch == "qwen3moe" || arch == "flashnext") {
            ones(b + "attn_q_norm.weight", D);
            ones(b + "attn_k_norm.weight", D);
        }
        ones(b + "ffn_norm.weight", E);
        if (arch == "flashnext") flashnext_layer(v, b, s, mix, in_e, depth);
        if (s.n_expert) {
            const int64_t X = s.n_expert, FE = s.n_ff_expert;
            v.push_back({b + "ffn_gate_inp.weight", {E, X}, TensorType::F32, Init::Uniform, in_e});
            v.push_back({b + "ffn_gate_exps.weight", {E, FE, X}, mix.pick("experts"), Init::Uniform, in_e});
            v.push_back({b + "ffn_up_exps.weight", {E, FE, X}, mix.pick("experts"), Init::Uniform, in_e});
            v.push_back({b + "ffn_down_exps.weight", {FE, E, X}, mix.pick("ffn_down_exps"), Init::Uniform,
                         std::sqrt(3.0f / static_cast<float>(FE)) * depth});
        } else {
            mat(b + "ffn_gate.weight", E, F, "ffn_gate");
            mat(b + "ffn_up.weight", E, F, "ffn_up");
            mat(b + "ffn_down.weight", F, E, "ffn_down", depth);
        }
    }
    return v;
}

void add_metadata(GgufWriter& w, const std::string& arch, const SynthShape& s) {
    auto k = [&](LlmKey key) { return llm_key(arch, key); };
    w.set("general.architecture", GgufWriteValue::string(arch));
    w.set("general.name", GgufWriteValue::string("synthetic " + arch + " " + s.name));
    w.set("general.alignment", GgufWriteValue::u32(32));
    w.set(k(LlmKey::ContextLength), GgufWriteValue::u32(s.n_ctx));
    w.set(k(LlmKey::EmbeddingLength), GgufWriteValue::u32(s.n_embd));
    w.set(k(LlmKey::BlockCount), GgufWriteValue::u32(s.n_layer));
    w.set(k(LlmKey::FeedForwardLength), GgufWriteValue::u32(s.n_ff));
    w.set(k(LlmKey::HeadCount), GgufWriteValue::u32(s.n_head));
    w.set(k(LlmKey::HeadCountKv), GgufWriteValue::u32(s.n_head_kv));
    w.set(k(LlmKey::KeyLength), GgufWriteValue::u32(s.head_dim));
    w.set(k(LlmKey::ValueLength), GgufWriteValue::u32(s.head_dim));
    w.set(k(LlmKey::RopeFreqBase), GgufWriteValue::f32(s.rope_base));
    w.set(k(LlmKey::RopeDimensionCount), GgufWriteValue::u32(s.head_dim));
    w.set(k(LlmKey::RmsEpsilon), GgufWriteValue::f32(s.rms_eps));
    if (s.n_expert) {
        w.set(k(LlmKey::ExpertCount), GgufWriteValue::u32(s.n_expert));
        w.set(k(LlmKey::ExpertUsedCount), GgufWriteValue::u32(s.n_expert_used));
        w.set(k(LlmKey::ExpertFeedForwardLength), GgufWriteValue::u32(s.n_ff_expert));
    }
    if (arch == "flashnext") {
        w.set(k(LlmKey::ExpertSharedFeedForwardLength), GgufWriteValue::u32(s.n_ff_shexp));
        w.set(k(LlmKey::HyperConnectionCount), GgufWriteValue::u32(4));
        w.set(k(LlmKey::HyperConnectionSinkhornIterations), GgufWriteValue::u32(20));
        w.set(k(LlmKey::HyperConnectionEpsilon), GgufWriteValue::f32(1e-6f));
        w.set(k(LlmKey::IndexerHeadCount), GgufWriteValue::u32(s.n_index_head));
        w.set(k(LlmKey::IndexerKeyLength), GgufWriteValue::u32(s.index_dim));
        w.set(k(LlmKey::IndexerTopK), GgufWriteValue::u32(s.index_top_k));
        w.set(k(LlmKey::IndexerBlockSize), GgufWriteValue::u32(4));
    }
}

// Fills a tensor: rows are generated from (seed, tensor, row) alone and quantized row by row.
Status fill_tensor(const Spec& sp, uint64_t seed, uint64_t tensor_index, int threads, uint8_t* dst, uint64_t nbytes) {
    const int64_t n = sp.shape[0];
    int64_t rows = 1;
    for (size_t d = 1; d < sp.shape.size(); ++d) rows *= sp.shape[d];
    auto rb = quant::row_bytes(sp.type, n);
    if (!rb) return rb.error();
    if (*rb * static_cast<uint64_t>(rows) != nbytes) return make_error("internal: tensor size mismatch");
    const int nt = std::max<int64_t>(1, std::min<int64_t>(threads, rows / 16 + 1));
    std::vector<std::thread> pool;
    std::vector<Status> status(nt);
    for (int t = 0; t < nt; ++t) {
        pool.emplace_back([&, t] {
            std::vector<float> row(n);
            for (int64_t r = t; r < rows; r += nt) {
                uint64_t st = seed * 0x100000001B3ull ^ (tensor_index << 40) ^ static_cast<uint64_t>(r);
                splitmix64(st);
                for (int64_t i = 0; i < n; ++i) {
                    if (sp.init == Init::Ones) {
                        row[i] = 1.0f;
                    } else {
                        const double u = static_cast<double>(splitmix64(st) >> 11) * (1.0 / 9007199254740992.0);
                        row[i] = static_cast<float>((2.0 * u - 1.0) * sp.scale);
                    }
                }
                auto s = quant::quantize(sp.type, row.data(), dst + static_cast<uint64_t>(r) * *rb, n);
                if (!s) {
                    status[t] = s;
                    return;
                }
            }
        });
    }
    for (auto& th : pool) th.join();
    for (auto& s : status)
        if (!s) return s;
    return {};
}

}  // namespace

Status synthesize_model(const SynthOptions& opt, const std::string& out_path) {
    auto shape = synth_shape(opt.arch, opt.shape);
    if (!shape) return shape.error();
    if (opt.type && !quant::decodable(*opt.type))
        return make_error("synth: cannot write weights of type " + std::string(tensor_type_info(static_cast<uint32_t>(*opt.type))->name));
    const Mix mix{opt.type, shape->n_expert > 0, shape->tied_embeddings};
    GgufWriter w(32);
    add_metadata(w, opt.arch, *shape);
    synth::add_bpe_tokenizer(w, shape->n_vocab);
    const int threads = opt.threads > 0 ? opt.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const auto specs = layout(opt.arch, *shape, mix);
    for (size_t i = 0; i < specs.size(); ++i) {
        const Spec& sp = specs[i];
        auto info = tensor_type_info(static_cast<uint32_t>(sp.type));
        if (sp.shape[0] % info->block_size)
            return make_error("synth: tensor " + sp.name + " row length " + std::to_string(sp.shape[0]) +
                              " is not a multiple of the " + std::string(info->name) + " block size");
        // routed: what a token's routing depends on when the rest is zero (x stays its embedding,
        // the router reads it through the RMSNorms): the embeddings, the norm weights (and every
        // other one-dimensional tensor, all small) and the routers.
        const bool hole = opt.zero_data && !(opt.routed && (sp.name == "token_embd.weight" || sp.shape.size() == 1 ||
                                                            sp.name.find("ffn_gate_inp") != std::string::npos));
        Status s = hole
                       ? w.add_tensor(sp.name, sp.shape, sp.type, {})
                       : w.add_tensor_generated(sp.name, sp.shape, sp.type, [sp, i, &opt, threads](uint8_t* dst, uint64_t nbytes) {
                             return fill_tensor(sp, opt.seed, i, threads, dst, nbytes);
                         });
        if (!s) return s;
    }
    return w.write(out_path, opt.zero_data && !opt.routed);  // (routed: holes beside the random tensors)
}

}  // namespace arbor
