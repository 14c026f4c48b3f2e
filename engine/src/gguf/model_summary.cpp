#include <arbor/model_summary.hpp>

#include "gguf/llm_keys.hpp"

#include <algorithm>
#include <map>

namespace arbor {

Result<ModelSummary> summarize_model(const GgufFile& f) {
    ModelSummary s;
    s.architecture = f.architecture();
    auto name = f.get_string(gguf_keys::kName);
    if (!name) return name.error();
    s.name = name.value().value_or("");
    s.file_size = f.file_size();
    s.tensor_count = f.tensors().size();

    std::map<std::string, QuantShare> mix;
    std::map<std::string, uint64_t> matrix_bytes;
    for (const auto& t : f.tensors()) {
        s.parameters += static_cast<uint64_t>(t.n_elements());
        const std::string tn(tensor_type_info(static_cast<uint32_t>(t.type))->name);
        auto& m = mix[tn];
        m.type = tn;
        m.tensors += 1;
        m.bytes += t.nbytes;
        if (t.n_dims >= 2) matrix_bytes[tn] += t.nbytes;
    }
    for (auto& [k, v] : mix) s.quant_mix.push_back(v);
    std::stable_sort(s.quant_mix.begin(), s.quant_mix.end(),
                     [](const QuantShare& a, const QuantShare& b) { return a.bytes > b.bytes; });
    uint64_t best = 0;
    for (auto& [k, v] : matrix_bytes)
        if (v > best) best = v, s.main_type = k;

    const std::string& arch = s.architecture;
    auto u = [&](LlmKey key, std::optional<uint64_t>* out) -> Status {
        if (arch.empty()) return {};
        auto r = f.get_uint(llm_key(arch, key));
        if (!r) return r.error();
        *out = r.value();
        return {};
    };
    for (auto [key, out] : {std::pair{LlmKey::ContextLength, &s.context_length}, std::pair{LlmKey::BlockCount, &s.block_count},
                            std::pair{LlmKey::EmbeddingLength, &s.embedding_length}, std::pair{LlmKey::HeadCount, &s.head_count},
                            std::pair{LlmKey::HeadCountKv, &s.head_count_kv}, std::pair{LlmKey::ExpertCount, &s.expert_count},
                            std::pair{LlmKey::ExpertUsedCount, &s.expert_used_count}, std::pair{LlmKey::VocabSize, &s.vocab_size}}) {
        // head_count_kv may legitimately be a per-layer array in some files: take the first entry.
        const GgufValue* v = arch.empty() ? nullptr : f.find(llm_key(arch, key));
        if (v && v->is_array() && v->length > 0 && v->elem_type != GgufValueType::STRING) {
            *out = static_cast<uint64_t>(v->int_at(0));
            continue;
        }
        if (auto st = u(key, out); !st) return st.error();
    }
    if (!s.vocab_size) {
        if (const GgufValue* tok = f.find(gguf_keys::kTokens); tok && tok->is_array()) s.vocab_size = tok->length;
    }
    auto tm = f.get_string(gguf_keys::kTokenizerModel);
    if (!tm) return tm.error();
    s.tokenizer_model = tm.value();
    const GgufValue* ct = f.find(gguf_keys::kChatTemplate);
    s.has_chat_template = ct && ct->type == GgufValueType::STRING && !ct->str.empty();
    return s;
}

}  // namespace arbor
