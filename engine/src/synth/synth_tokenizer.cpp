#include "synth/synth_tokenizer.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace arbor::synth {
namespace {

// Text the merges are learned from: ordinary English, a little code and chat vocabulary.
constexpr const char* kCorpus =
    "Once upon a time there was a little robot who lived in a quiet town by the sea. Every morning the "
    "robot walked to the harbour to watch the boats come in, and every evening it walked home again. "
    "The people of the town liked the robot because it was kind and because it could answer questions. "
    "What is the weather like today? It is sunny and warm, with a light wind from the west. "
    "Can you help me write a function that adds two numbers? Of course: def add(a, b): return a + b. "
    "The user asked the assistant a question, and the assistant thought about it before it answered. "
    "Thank you for your help! You are welcome. Is there anything else I can do for you today? "
    "In the beginning the model knew nothing, but it learned from the stories that it read. "
    "There are many ways to solve a problem; the best one is often the simplest one that works. "
    "She said that she would come back tomorrow, and he said that he would be waiting for her there. "
    "The quick brown fox jumps over the lazy dog. 1 2 3 4 5 6 7 8 9 10 100 1000 2026. "
    "system user assistant tool the of and to in is it that for on with as was at by this from ";

// GPT-2's reversible byte-to-text mapping: printable bytes stand for themselves, the others
// are shifted to code points from 256 up.
std::string byte_token(unsigned b) {
    static const auto table = [] {
        std::vector<unsigned> cp(256);
        unsigned next = 256;
        for (unsigned c = 0; c < 256; ++c) {
            const bool keep = (c >= 33 && c <= 126) || (c >= 161 && c <= 172) || (c >= 174 && c <= 255);
            cp[c] = keep ? c : next++;
        }
        return cp;
    }();
    const unsigned c = table[b];
    std::string s;
    if (c < 0x80) {
        s += static_cast<char>(c);
    } else {
        s += static_cast<char>(0xC0 | (c >> 6));
        s += static_cast<char>(0x80 | (c & 0x3F));
    }
    return s;
}

// Splits text into words: an optional leading space followed by letters, or by one digit, or
// by other symbols; runs of whitespace stand alone.
std::vector<std::string> words(const std::string& text) {
    std::vector<std::string> out;
    auto cls = [](unsigned char c) { return std::isalpha(c) ? 1 : std::isdigit(c) ? 2 : std::isspace(c) ? 3 : 4; };
    size_t i = 0;
    while (i < text.size()) {
        size_t j = i;
        if (text[j] == ' ' && j + 1 < text.size() && cls(text[j + 1]) != 3) ++j;
        const int c = cls(text[j]);
        size_t k = j + 1;
        if (c == 1 || c == 3 || c == 4)
            while (k < text.size() && cls(text[k]) == c) ++k;
        out.push_back(text.substr(i, k - i));
        i = k;
    }
    return out;
}

}  // namespace

void add_bpe_tokenizer(GgufWriter& w, uint32_t n_vocab) {
    const std::vector<std::string> specials = {"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>",
                                               "<tool_call>", "</tool_call>"};
    const uint32_t reserved = 256 + static_cast<uint32_t>(specials.size());
    const uint32_t max_merges = n_vocab > reserved ? n_vocab - reserved : 0;

    // Word frequencies, each word as a list of symbols in the byte-to-text form.
    std::map<std::string, int> freq;
    for (const auto& wd : words(kCorpus)) ++freq[wd];
    std::vector<std::pair<std::vector<std::string>, int>> corpus;
    for (const auto& [wd, n] : freq) {
        std::vector<std::string> sym;
        for (unsigned char b : wd) sym.push_back(byte_token(b));
        corpus.push_back({sym, n});
    }
    std::vector<std::string> tokens;
    for (unsigned b = 0; b < 256; ++b) tokens.push_back(byte_token(b));
    std::vector<std::string> merges;
    while (merges.size() < max_merges) {
        std::map<std::pair<std::string, std::string>, int> pairs;
        for (const auto& [sym, n] : corpus)
            for (size_t i = 0; i + 1 < sym.size(); ++i) pairs[{sym[i], sym[i + 1]}] += n;
        // The most frequent pair; ties go to the smallest pair, so training is deterministic.
        const std::pair<std::string, std::string>* best = nullptr;
        int best_n = 1;
        for (const auto& [p, n] : pairs)
            if (n > best_n) best = &p, best_n = n;
        if (!best) break;
        const auto [a, b] = *best;
        merges.push_back(a + " " + b);
        tokens.push_back(a + b);
        for (auto& [sym, n] : corpus) {
            std::vector<std::string> merged;
            for (size_t i = 0; i < sym.size(); ++i) {
                if (i + 1 < sym.size() && sym[i] == a && sym[i + 1] == b) {
                    merged.push_back(a + b);
                    ++i;
                } else {
                    merged.push_back(sym[i]);
                }
            }
            sym = std::move(merged);
        }
    }
    std::vector<int32_t> types(tokens.size(), 1);  // normal
    const int32_t first_special = static_cast<int32_t>(tokens.size());
    for (const auto& s : specials) {
        tokens.push_back(s);
        types.push_back(3);  // control
    }
    for (uint32_t i = 0; tokens.size() < n_vocab; ++i) {
        tokens.push_back("[PAD" + std::to_string(i) + "]");
        types.push_back(5);  // unused
    }
    w.set("tokenizer.ggml.model", GgufWriteValue::string("gpt2"));
    w.set("tokenizer.ggml.pre", GgufWriteValue::string("qwen2"));
    w.set("tokenizer.ggml.tokens", GgufWriteValue::string_array(tokens));
    w.set("tokenizer.ggml.token_type", GgufWriteValue::i32_array(types));
    w.set("tokenizer.ggml.merges", GgufWriteValue::string_array(merges));
    w.set("tokenizer.ggml.bos_token_id", GgufWriteValue::u32(static_cast<uint32_t>(first_special)));      // <|endoftext|>
    w.set("tokenizer.ggml.eos_token_id", GgufWriteValue::u32(static_cast<uint32_t>(first_special + 2)));  // <|im_end|>
    w.set("tokenizer.ggml.padding_token_id", GgufWriteValue::u32(static_cast<uint32_t>(first_special)));
    w.set("tokenizer.ggml.add_bos_token", GgufWriteValue::boolean(false));
    w.set("tokenizer.chat_template",
          GgufWriteValue::string("{%- for message in messages %}{{- '<|im_start|>' + message['role'] + '\\n' + "
                                 "message['content'] + '<|im_end|>' + '\\n' }}{%- endfor %}"
                                 "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"));
}

}  // namespace arbor::synth
