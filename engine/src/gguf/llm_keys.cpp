#include "gguf/llm_keys.hpp"

namespace arbor {

std::string_view llm_key_suffix(LlmKey key) {
    switch (key) {
        case LlmKey::ContextLength: return "context_length";
        case LlmKey::EmbeddingLength: return "embedding_length";
        case LlmKey::BlockCount: return "block_count";
        case LlmKey::FeedForwardLength: return "feed_forward_length";
        case LlmKey::ExpertFeedForwardLength: return "expert_feed_forward_length";
        case LlmKey::ExpertSharedFeedForwardLength: return "expert_shared_feed_forward_length";
        case LlmKey::HeadCount: return "attention.head_count";
        case LlmKey::HeadCountKv: return "attention.head_count_kv";
        case LlmKey::KeyLength: return "attention.key_length";
        case LlmKey::ValueLength: return "attention.value_length";
        case LlmKey::RmsEpsilon: return "attention.layer_norm_rms_epsilon";
        case LlmKey::RopeFreqBase: return "rope.freq_base";
        case LlmKey::RopeDimensionCount: return "rope.dimension_count";
        case LlmKey::RopeScalingType: return "rope.scaling.type";
        case LlmKey::RopeScalingFactor: return "rope.scaling.factor";
        case LlmKey::RopeScalingOrigContext: return "rope.scaling.original_context_length";
        case LlmKey::ExpertCount: return "expert_count";
        case LlmKey::ExpertUsedCount: return "expert_used_count";
        case LlmKey::ExpertSharedCount: return "expert_shared_count";
        case LlmKey::VocabSize: return "vocab_size";
    }
    return "";
}

std::string llm_key(std::string_view arch, LlmKey key) {
    std::string s(arch);
    s += '.';
    s += llm_key_suffix(key);
    return s;
}

}  // namespace arbor
