// Metadata keys and tensor names of LLM architectures, as tables (llama.cpp's conventions).
// Code asks for LlmKey::ContextLength and gets "<arch>.context_length"; no scattered literals.
#pragma once

#include <string>
#include <string_view>

namespace arbor {

enum class LlmKey {
    ContextLength, EmbeddingLength, BlockCount, FeedForwardLength, ExpertFeedForwardLength,
    ExpertSharedFeedForwardLength, HeadCount, HeadCountKv, KeyLength, ValueLength,
    RmsEpsilon, RopeFreqBase, RopeDimensionCount, RopeScalingType, RopeScalingFactor,
    RopeScalingOrigContext, ExpertCount, ExpertUsedCount, ExpertSharedCount, VocabSize,
    RopeScalingAttnFactor, RopeScalingYarnLogMul, RopeScalingYarnExtFactor, RopeScalingYarnBetaFast,
    RopeScalingYarnBetaSlow, ExpertWeightsNorm, ExpertGatingFunc, AttentionScale,
    HyperConnectionCount, HyperConnectionSinkhornIterations, HyperConnectionEpsilon,
    IndexerHeadCount, IndexerKeyLength, IndexerTopK, IndexerBlockSize,
};

// "<arch>.<suffix>" for an architecture-scoped key.
std::string llm_key(std::string_view arch, LlmKey key);
std::string_view llm_key_suffix(LlmKey key);

// Tensor names (llama.cpp's GGUF conventions). Per-layer ones are "blk.<i>.<suffix>.weight"
// (or ".bias"); the others have no layer.
enum class LlmTensor {
    TokenEmbd, OutputNorm, Output, RopeFreqs,
    AttnNorm, AttnQ, AttnK, AttnV, AttnOut, AttnQNorm, AttnKNorm,
    FfnNorm, FfnGate, FfnUp, FfnDown, FfnGateInp, FfnGateExps, FfnUpExps, FfnDownExps,
    FfnGateShexp, FfnUpShexp, FfnDownShexp, FfnGateInpShexp,
    HcAttnFn, HcAttnBase, HcAttnScale, HcFfnFn, HcFfnBase, HcFfnScale,
    OutputHcFn, OutputHcBase, OutputHcScale,
    IndexerKNorm, IndexerProj, IndexerAttnK, IndexerAttnQB,
};
// "token_embd.weight", "blk.3.attn_q.weight", "blk.3.attn_q.bias" (bias = true).
std::string llm_tensor_name(LlmTensor t, int layer = -1, bool bias = false);

// General and tokenizer keys (not architecture-scoped).
namespace gguf_keys {
inline constexpr std::string_view kArchitecture = "general.architecture";
inline constexpr std::string_view kName = "general.name";
inline constexpr std::string_view kAlignment = "general.alignment";
inline constexpr std::string_view kTokenizerModel = "tokenizer.ggml.model";
inline constexpr std::string_view kTokenizerPre = "tokenizer.ggml.pre";
inline constexpr std::string_view kTokens = "tokenizer.ggml.tokens";
inline constexpr std::string_view kScores = "tokenizer.ggml.scores";
inline constexpr std::string_view kTokenTypes = "tokenizer.ggml.token_type";
inline constexpr std::string_view kMerges = "tokenizer.ggml.merges";
inline constexpr std::string_view kBosId = "tokenizer.ggml.bos_token_id";
inline constexpr std::string_view kEosId = "tokenizer.ggml.eos_token_id";
inline constexpr std::string_view kChatTemplate = "tokenizer.chat_template";
}  // namespace gguf_keys

}  // namespace arbor
