// Binding tensors by name (llm_keys' table) and checking their shapes and types.
#include "model/model_weights.hpp"

#include "gguf/llm_keys.hpp"

#include <arbor/quant.hpp>

#include <cmath>
#include <string>

namespace arbor {
namespace {

std::string shape_str(const GgufTensor& t) {
    std::string s = "[";
    for (uint32_t i = 0; i < t.n_dims; ++i) s += (i ? ", " : "") + std::to_string(t.ne[i]);
    return s + "]";
}

class Binder {
public:
    Binder(const GgufFile& f) : f_(f) {}

    const GgufTensor* find(const std::string& name) const { return f_.tensor(name); }

    // A matrix [cols, rows] (or [cols, rows, n_mat] when n_mat > 0) of a type the row dot reads.
    Status matrix(const std::string& name, int64_t cols, int64_t rows, int64_t n_mat, WeightRef* out) const {
        const GgufTensor* t = find(name);
        if (!t) return make_error(f_.path() + ": tensor '" + name + "' is missing");
        const int64_t want[3] = {cols, rows, n_mat > 0 ? n_mat : 1};
        const bool dims_ok = n_mat > 0 ? t->n_dims == 3 : t->n_dims == 2;
        if (!dims_ok || t->ne[0] != want[0] || t->ne[1] != want[1] || t->ne[2] != want[2] || t->ne[3] != 1) {
            std::string w = "[" + std::to_string(cols) + ", " + std::to_string(rows) +
                            (n_mat > 0 ? ", " + std::to_string(n_mat) : std::string()) + "]";
            return make_error(f_.path() + ": tensor '" + name + "' has shape " + shape_str(*t) + ", expected " + w);
        }
        if (!quant::decodable(t->type)) {
            auto info = tensor_type_info(uint32_t(t->type));
            return make_error(f_.path() + ": tensor '" + name + "' has type " +
                              (info ? std::string(info->name) : std::to_string(uint32_t(t->type))) +
                              ", which this engine cannot compute with");
        }
        auto rb = quant::row_bytes(t->type, cols);
        if (!rb) return make_error(f_.path() + ": tensor '" + name + "': " + rb.message());
        if (quant::uses_q8a(t->type) && cols % 32 != 0)
            return make_error(f_.path() + ": tensor '" + name + "' is quantized with a row of " + std::to_string(cols) +
                              " elements, not a multiple of 32");
        out->data = t->data;
        out->type = t->type;
        out->cols = cols;
        out->rows = rows;
        out->n_mat = want[2];
        out->row_bytes = rb.value();
        out->mat_bytes = rb.value() * size_t(rows);
        out->name = name;
        return {};
    }

    // A vector of n floats (any decodable type), decoded. Missing and optional: left empty.
    Status vector(const std::string& name, int64_t n, bool required, std::vector<float>* out) const {
        const GgufTensor* t = find(name);
        if (!t) {
            if (required) return make_error(f_.path() + ": tensor '" + name + "' is missing");
            return {};
        }
        if (t->n_elements() != n || t->ne[0] != n)
            return make_error(f_.path() + ": tensor '" + name + "' has shape " + shape_str(*t) + ", expected [" +
                              std::to_string(n) + "]");
        out->assign(size_t(n), 0.0f);
        if (auto s = quant::dequantize(t->type, t->data, out->data(), n); !s)
            return make_error(f_.path() + ": tensor '" + name + "': " + s.message());
        return {};
    }

private:
    const GgufFile& f_;
};

// A matrix whose row dot reads float activations (F32, F16 or BF16).
Status float_matrix(const Binder& b, const GgufFile& f, const std::string& name, int64_t cols, int64_t rows,
                    WeightRef* out) {
    if (auto s = b.matrix(name, cols, rows, 0, out); !s) return s;
    if (quant::uses_q8a(out->type))
        return make_error(f.path() + ": tensor '" + name + "' must have a float type (F32, F16 or BF16), is " +
                          std::string(tensor_type_info(uint32_t(out->type))->name));
    return {};
}

// flashnext's tensors beyond qwen3moe's: the shared expert, the hyper-connection wraps of
// each sublayer and of the head, and the indexer of each layer (docs/MODEL-flashnext.md).
Status bind_flashnext(const Binder& b, const GgufFile& f, const ModelConfig& c, ModelWeights& w) {
    const int64_t n = c.n_hc, d = c.n_embd, n_mix = 2 * n + n * n, HI = c.n_index_head, dI = c.index_dim;
    if (auto s = float_matrix(b, f, llm_tensor_name(LlmTensor::OutputHcFn), n * d, n, &w.output_hc_fn); !s) return s;
    if (auto s = b.vector(llm_tensor_name(LlmTensor::OutputHcBase), n, true, &w.output_hc_base); !s) return s;
    if (auto s = b.vector(llm_tensor_name(LlmTensor::OutputHcScale), 1, true, &w.output_hc_scale); !s) return s;
    for (int i = 0; i < int(c.n_layer); ++i) {
        LayerWeights& L = w.layers[size_t(i)];
        auto name = [&](LlmTensor t) { return llm_tensor_name(t, i); };
        if (!L.moe) return make_error(f.path() + ": flashnext layer " + std::to_string(i) + " has no router (ffn_gate_inp)");
        const Status st[] = {
            b.matrix(name(LlmTensor::FfnGateShexp), d, c.n_ff_shexp, 0, &L.gate_shexp),
            b.matrix(name(LlmTensor::FfnUpShexp), d, c.n_ff_shexp, 0, &L.up_shexp),
            b.matrix(name(LlmTensor::FfnDownShexp), c.n_ff_shexp, d, 0, &L.down_shexp),
            b.vector(name(LlmTensor::FfnGateInpShexp), d, true, &L.gate_inp_shexp),
            float_matrix(b, f, name(LlmTensor::HcAttnFn), n * d, n_mix, &L.hc_attn_fn),
            b.vector(name(LlmTensor::HcAttnBase), n_mix, true, &L.hc_attn_base),
            b.vector(name(LlmTensor::HcAttnScale), 3, true, &L.hc_attn_scale),
            float_matrix(b, f, name(LlmTensor::HcFfnFn), n * d, n_mix, &L.hc_ffn_fn),
            b.vector(name(LlmTensor::HcFfnBase), n_mix, true, &L.hc_ffn_base),
            b.vector(name(LlmTensor::HcFfnScale), 3, true, &L.hc_ffn_scale),
            b.matrix(name(LlmTensor::IndexerAttnQB), d, HI * dI, 0, &L.idx_q),
            b.matrix(name(LlmTensor::IndexerAttnK), d, dI, 0, &L.idx_k),
            float_matrix(b, f, name(LlmTensor::IndexerProj), d, HI, &L.idx_proj),
            b.vector(name(LlmTensor::IndexerKNorm), dI, true, &L.idx_k_norm),
        };
        for (const Status& s : st)
            if (!s) return s;
    }
    w.index_rope_freq.resize(size_t(dI / 2));
    for (int64_t i = 0; i < dI / 2; ++i)
        w.index_rope_freq[size_t(i)] = float(std::pow(double(c.rope_freq_base), -2.0 * double(i) / double(dI)));
    return {};
}

}  // namespace

Result<ModelWeights> bind_weights(const GgufFile& f, ModelConfig& c) {
    Binder b(f);
    ModelWeights w;
    const GgufTensor* emb = b.find(llm_tensor_name(LlmTensor::TokenEmbd));
    if (!emb) return make_error(f.path() + ": tensor 'token_embd.weight' is missing");
    if (emb->n_dims != 2 || emb->ne[0] != c.n_embd)
        return make_error(f.path() + ": tensor 'token_embd.weight' has shape " + shape_str(*emb) + ", expected [" +
                          std::to_string(c.n_embd) + ", n_vocab]");
    c.n_vocab = emb->ne[1];
    if (auto s = b.matrix("token_embd.weight", c.n_embd, c.n_vocab, 0, &w.tok_embd); !s) return s.error();
    if (b.find(llm_tensor_name(LlmTensor::Output))) {
        if (auto s = b.matrix(llm_tensor_name(LlmTensor::Output), c.n_embd, c.n_vocab, 0, &w.output); !s)
            return s.error();
        c.tied_embeddings = false;
    } else {
        w.output = w.tok_embd;
        c.tied_embeddings = true;
    }
    if (auto s = b.vector(llm_tensor_name(LlmTensor::OutputNorm), c.n_embd, true, &w.output_norm); !s) return s.error();

    const int64_t nq = c.n_head * c.head_dim_k, nk = c.n_head_kv * c.head_dim_k, nv = c.n_head_kv * c.head_dim_v;
    w.layers.resize(size_t(c.n_layer));
    for (int i = 0; i < int(c.n_layer); ++i) {
        LayerWeights& L = w.layers[size_t(i)];
        auto name = [&](LlmTensor t, bool bias = false) { return llm_tensor_name(t, i, bias); };
        if (auto s = b.vector(name(LlmTensor::AttnNorm), c.n_embd, true, &L.attn_norm); !s) return s.error();
        if (auto s = b.vector(name(LlmTensor::FfnNorm), c.n_embd, true, &L.ffn_norm); !s) return s.error();
        if (auto s = b.matrix(name(LlmTensor::AttnQ), c.n_embd, nq, 0, &L.wq); !s) return s.error();
        if (auto s = b.matrix(name(LlmTensor::AttnK), c.n_embd, nk, 0, &L.wk); !s) return s.error();
        if (auto s = b.matrix(name(LlmTensor::AttnV), c.n_embd, nv, 0, &L.wv); !s) return s.error();
        if (auto s = b.matrix(name(LlmTensor::AttnOut), c.n_head * c.head_dim_v, c.n_embd, 0, &L.wo); !s)
            return s.error();
        if (c.qk_norm) {
            if (auto s = b.vector(name(LlmTensor::AttnQNorm), c.head_dim_k, true, &L.q_norm); !s) return s.error();
            if (auto s = b.vector(name(LlmTensor::AttnKNorm), c.head_dim_k, true, &L.k_norm); !s) return s.error();
        }
        // Biases are optional everywhere (qwen2 has them, llama may).
        if (auto s = b.vector(name(LlmTensor::AttnQ, true), nq, false, &L.bq); !s) return s.error();
        if (auto s = b.vector(name(LlmTensor::AttnK, true), nk, false, &L.bk); !s) return s.error();
        if (auto s = b.vector(name(LlmTensor::AttnV, true), nv, false, &L.bv); !s) return s.error();
        L.moe = c.n_expert > 0 && b.find(name(LlmTensor::FfnGateInp));
        if (L.moe) {
            if (auto s = b.matrix(name(LlmTensor::FfnGateInp), c.n_embd, c.n_expert, 0, &L.gate_inp); !s)
                return s.error();
            if (auto s = b.matrix(name(LlmTensor::FfnGateExps), c.n_embd, c.n_ff_exp, c.n_expert, &L.gate_exps); !s)
                return s.error();
            if (auto s = b.matrix(name(LlmTensor::FfnUpExps), c.n_embd, c.n_ff_exp, c.n_expert, &L.up_exps); !s)
                return s.error();
            if (auto s = b.matrix(name(LlmTensor::FfnDownExps), c.n_ff_exp, c.n_embd, c.n_expert, &L.down_exps); !s)
                return s.error();
        } else {
            if (c.n_ff <= 0)
                return make_error(f.path() + ": layer " + std::to_string(i) +
                                  " has no router (ffn_gate_inp) and the file gives no feed_forward_length");
            if (auto s = b.matrix(name(LlmTensor::FfnGate), c.n_embd, c.n_ff, 0, &L.ffn_gate); !s) return s.error();
            if (auto s = b.matrix(name(LlmTensor::FfnUp), c.n_embd, c.n_ff, 0, &L.ffn_up); !s) return s.error();
            if (auto s = b.matrix(name(LlmTensor::FfnDown), c.n_ff, c.n_embd, 0, &L.ffn_down); !s) return s.error();
        }
    }
    if (c.is_flashnext())
        if (auto s = bind_flashnext(b, f, c, w); !s) return s.error();
    std::vector<float> factors;
    if (auto s = b.vector(llm_tensor_name(LlmTensor::RopeFreqs), c.n_rot / 2, false, &factors); !s) return s.error();
    if (c.is_flashnext() && !factors.empty())
        return make_error(f.path() + ": flashnext takes no rope_freqs tensor (its RoPE has no frequency factors)");
    c.has_rope_freqs = !factors.empty();
    compute_rope_tables(c, factors, &w.rope_freq, &w.rope_mscale);
    return w;
}

// Per pair i: freq_i = base^(-2i/n_rot), divided by the file's factor i (rope_freqs), then
// scaled: linear divides by the factor; yarn blends interpolation (freq / factor) and
// extrapolation (freq) per pair with the ramp of the YaRN paper (llama.cpp's corr dims), and
// sets mscale = attn_factor * (1 + 0.1 ln(factor)). Host-side double arithmetic, rounded once.
void compute_rope_tables(const ModelConfig& c, const std::vector<float>& factors, std::vector<float>* freq,
                         float* mscale) {
    const int64_t half = c.n_rot / 2;
    freq->assign(size_t(half), 0.0f);
    const double base = c.rope_freq_base, n_rot = double(c.n_rot);
    const double scale = c.rope_scaling == RopeScaling::None ? 1.0 : 1.0 / double(c.rope_scale_factor);
    double low = 0, high = 0;
    if (c.rope_scaling == RopeScaling::Yarn) {
        auto corr_dim = [&](double n) {
            return n_rot * std::log(double(c.rope_orig_ctx) / (n * 2.0 * 3.14159265358979323846)) / (2.0 * std::log(base));
        };
        low = std::max(0.0, std::floor(corr_dim(c.yarn_beta_fast)));
        high = std::min(n_rot - 1, std::ceil(corr_dim(c.yarn_beta_slow)));
    }
    for (int64_t i = 0; i < half; ++i) {
        double f = std::pow(base, -2.0 * double(i) / n_rot);
        if (!factors.empty()) f /= double(factors[size_t(i)]);
        if (c.rope_scaling == RopeScaling::Yarn) {
            const double y = (double(i) - low) / std::max(0.001, high - low);
            const double ramp = 1.0 - std::min(1.0, std::max(0.0, y));
            const double mix = ramp * double(c.yarn_ext_factor);
            f = f * (scale * (1.0 - mix) + mix);
        } else {
            f *= scale;
        }
        (*freq)[size_t(i)] = float(f);
    }
    *mscale = 1.0f;
    if (c.rope_scaling == RopeScaling::Yarn && c.yarn_ext_factor != 0)
        *mscale = float(double(c.yarn_attn_factor) * (1.0 + 0.1 * std::log(double(c.rope_scale_factor))));
}

}  // namespace arbor
