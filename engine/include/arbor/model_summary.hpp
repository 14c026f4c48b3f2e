// What a user wants to know about a GGUF model before loading it (arbor-cli info, the app's
// model library). Computed from the header alone: no tensor data is read.
#pragma once

#include <arbor/gguf.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace arbor {

struct QuantShare {
    std::string type;       // "Q4_K"
    uint64_t tensors = 0;
    uint64_t bytes = 0;
};

struct ModelSummary {
    std::string architecture;
    std::string name;
    uint64_t parameters = 0;
    uint64_t file_size = 0;
    uint64_t tensor_count = 0;
    std::optional<uint64_t> context_length, block_count, embedding_length, head_count, head_count_kv,
        expert_count, expert_used_count, vocab_size;
    std::optional<std::string> tokenizer_model;
    bool has_chat_template = false;
    std::vector<QuantShare> quant_mix;  // by bytes, largest first
    std::string main_type;              // the type holding the most bytes among 2-D weights
};

Result<ModelSummary> summarize_model(const GgufFile& file);

}  // namespace arbor
