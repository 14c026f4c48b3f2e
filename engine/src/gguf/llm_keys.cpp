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
        case LlmKey::RopeScalingAttnFactor: return "rope.scaling.attn_factor";
        case LlmKey::RopeScalingYarnLogMul: return "rope.scaling.yarn_log_multiplier";
        case LlmKey::RopeScalingYarnExtFactor: return "rope.scaling.yarn_ext_factor";
        case LlmKey::RopeScalingYarnBetaFast: return "rope.scaling.yarn_beta_fast";
        case LlmKey::RopeScalingYarnBetaSlow: return "rope.scaling.yarn_beta_slow";
        case LlmKey::ExpertWeightsNorm: return "expert_weights_norm";
        case LlmKey::ExpertGatingFunc: return "expert_gating_func";
        case LlmKey::AttentionScale: return "attention.scale";
        case LlmKey::HyperConnectionCount: return "hyper_connection.count";
        case LlmKey::HyperConnectionSinkhornIterations: return "hyper_connection.sinkhorn_iterations";
        case LlmKey::HyperConnectionEpsilon: return "hyper_connection.epsilon";
        case LlmKey::IndexerHeadCount: return "attention.indexer.head_count";
        case LlmKey::IndexerKeyLength: return "attention.indexer.key_length";
        case LlmKey::IndexerTopK: return "attention.indexer.top_k";
        case LlmKey::IndexerBlockSize: return "attention.indexer.block_size";
    }
    return "";
}

std::string llm_tensor_name(LlmTensor t, int layer, bool bias) {
    std::string_view s;
    bool global = false;
    switch (t) {
        case LlmTensor::TokenEmbd: s = "token_embd", global = true; break;
        case LlmTensor::OutputNorm: s = "output_norm", global = true; break;
        case LlmTensor::Output: s = "output", global = true; break;
        case LlmTensor::RopeFreqs: s = "rope_freqs", global = true; break;
        case LlmTensor::AttnNorm: s = "attn_norm"; break;
        case LlmTensor::AttnQ: s = "attn_q"; break;
        case LlmTensor::AttnK: s = "attn_k"; break;
        case LlmTensor::AttnV: s = "attn_v"; break;
        case LlmTensor::AttnOut: s = "attn_output"; break;
        case LlmTensor::AttnQNorm: s = "attn_q_norm"; break;
        case LlmTensor::AttnKNorm: s = "attn_k_norm"; break;
        case LlmTensor::FfnNorm: s = "ffn_norm"; break;
        case LlmTensor::FfnGate: s = "ffn_gate"; break;
        case LlmTensor::FfnUp: s = "ffn_up"; break;
        case LlmTensor::FfnDown: s = "ffn_down"; break;
        case LlmTensor::FfnGateInp: s = "ffn_gate_inp"; break;
        case LlmTensor::FfnGateExps: s = "ffn_gate_exps"; break;
        case LlmTensor::FfnUpExps: s = "ffn_up_exps"; break;
        case LlmTensor::FfnDownExps: s = "ffn_down_exps"; break;
        case LlmTensor::FfnGateShexp: s = "ffn_gate_shexp"; break;
        case LlmTensor::FfnUpShexp: s = "ffn_up_shexp"; break;
        case LlmTensor::FfnDownShexp: s = "ffn_down_shexp"; break;
        case LlmTensor::FfnGateInpShexp: s = "ffn_gate_inp_shexp"; break;
        case LlmTensor::HcAttnFn: s = "hc_attn_fn"; break;
        case LlmTensor::HcAttnBase: s = "hc_attn_base"; break;
        case LlmTensor::HcAttnScale: s = "hc_attn_scale"; break;
        case LlmTensor::HcFfnFn: s = "hc_ffn_fn"; break;
        case LlmTensor::HcFfnBase: s = "hc_ffn_base"; break;
        case LlmTensor::HcFfnScale: s = "hc_ffn_scale"; break;
        case LlmTensor::OutputHcFn: s = "output_hc_fn", global = true; break;
        case LlmTensor::OutputHcBase: s = "output_hc_base", global = true; break;
        case LlmTensor::OutputHcScale: s = "output_hc_scale", global = true; break;
        case LlmTensor::IndexerKNorm: s = "indexer.k_norm"; break;
        case LlmTensor::IndexerProj: s = "indexer.proj"; break;
        case LlmTensor::IndexerAttnK: s = "indexer.attn_k"; break;
        case LlmTensor::IndexerAttnQB: s = "indexer.attn_q_b"; break;
    }
    std::string name;
    if (!global) name = "blk." + std::to_string(layer) + ".";
    name += s;
    name += bias ? ".bias" : ".weight";
    return name;
}

std::string llm_key(std::string_view arch, LlmKey key) {
    std::string s(arch);
    s += '.';
    s += llm_key_suffix(key);
    return s;
}

}  // namespace arbor
