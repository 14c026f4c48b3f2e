// Pre-tokenizer table (tokenizer.ggml.pre -> stages) and the stage driver.
#include "tokenizer/pretokenizer.hpp"

#include "tokenizer/pretokenizer_matchers.hpp"
#include "tokenizer/unicode_props.hpp"

#include <string>

namespace arbor::tok {
namespace {

struct Family {
    const char* family;
    std::initializer_list<const char*> names;
    std::initializer_list<Matcher> stages;
    bool ignore_merges;
    bool clean_spaces;
    int add_bos;  // -1 keep the BPE default, 0/1 set it
    bool no_bos;
};

// The names each set of rules answers to, as the reference maps them.
const Family kFamilies[] = {
    {"default", {"default"},
     {match::punct_default, match::gpt2, match::digit_run, match::ascii_digit_three}, false, true, -1, false},
    {"llama3", {"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano"},
     {match::llama3}, true, true, 1, false},
    {"dbrx", {"dbrx", "smaug-bpe"}, {match::llama3}, false, true, -1, false},
    {"chatglm4", {"glm4", "chatglm-bpe"}, {match::llama3}, false, true, -1, true},
    {"deepseek-llm", {"deepseek-llm"},
     {match::newline_char, match::deepseek_llm_letters, match::deepseek_llm_punct, match::trailing_space,
      match::cjk_hangul, match::digit_run},
     false, false, -1, false},
    {"deepseek-coder", {"deepseek-coder"},
     {match::newline_char, match::space_letters, match::space_punct, match::cjk_hangul, match::digit_one},
     false, false, -1, false},
    {"deepseek-v3", {"deepseek-v3", "hunyuan-dense", "joyai-llm", "hy_v4"},
     {match::digit_three, match::cjk_kana, match::deepseek3_words}, false, false, -1, false},
    {"falcon", {"falcon"}, {match::punct_falcon, match::gpt2, match::ascii_digit_three}, false, true, -1, false},
    {"mpt", {"mpt", "olmo", "jais"}, {match::gpt2}, false, true, -1, false},
    {"trillion", {"trillion", "granite-docling"}, {match::gpt2}, false, false, -1, false},
    {"gpt-2",
     {"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum",
      "modern-bert", "exaone4", "jina-v1-en", "jina-v2-code", "roberta-bpe"},
     {match::gpt2}, false, true, -1, false},
    {"starcoder", {"starcoder", "refact", "codeshell", "exaone", "minerva-7b", "mellum2"},
     {match::digit_one, match::gpt2}, false, true, -1, false},
    {"command-r", {"command-r", "smollm"}, {match::digit_one, match::gpt2}, false, false, -1, false},
    {"qwen2", {"qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "hunyuan", "solar-open", "grok-2"},
     {match::qwen2}, false, false, -1, false},
    {"stablelm2", {"stablelm2", "megrez"}, {match::qwen2}, false, true, -1, false},
    {"qwen35", {"qwen35"}, {match::qwen35}, false, false, -1, false},
    {"seed-coder", {"seed-coder"}, {match::seed_coder}, false, false, -1, false},
    {"bailingmoe", {"bailingmoe", "bailingmoe2", "llada-moe"}, {match::bailingmoe}, false, false, -1, false},
    {"ufakzeka", {"ufakzeka"}, {match::ufakzeka}, false, false, -1, false},
    {"minicpm5", {"minicpm5"}, {match::digit_three, match::llama3_digits_unbounded}, true, true, -1, false},
    {"gpt-4o", {"gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"}, {match::gpt4o}, false, false, -1, false},
    {"tekken", {"tekken"}, {match::tekken}, true, false, 1, false},
    {"bloom", {"bloom", "gpt3-finnish"}, {match::bloom}, false, true, -1, false},
    {"poro", {"poro-chat"}, {match::bloom}, false, false, -1, false},
    {"viking", {"viking"}, {match::bloom, match::digit_one}, false, false, -1, false},
};

}  // namespace

Result<PreTokenizer> pre_tokenizer_for(std::string_view name) {
    for (const Family& f : kFamilies) {
        for (const char* n : f.names) {
            if (name != n) continue;
            PreTokenizer pt;
            pt.family = f.family;
            pt.stages.assign(f.stages.begin(), f.stages.end());
            pt.ignore_merges = f.ignore_merges;
            pt.clean_spaces = f.clean_spaces;
            if (f.add_bos >= 0) pt.add_bos = f.add_bos == 1;
            pt.no_bos = f.no_bos;
            return pt;
        }
    }
    return make_error("tokenizer.ggml.pre: unknown pre-tokenizer '" + std::string(name) + "'");
}

void pre_tokenize(const PreTokenizer& pt, const CpText& t, size_t n, std::vector<uint32_t>& ends) {
    std::vector<uint32_t> cur{static_cast<uint32_t>(n)};
    std::vector<uint32_t> next;
    if (n == 0) return;
    for (Matcher m : pt.stages) {
        next.clear();
        next.reserve(cur.size() * 2);
        size_t start = 0;
        if (m == match::trailing_space) {
            // \s+$ matches first where the piece's trailing whitespace begins; searching for it
            // position by position would be quadratic in long whitespace runs.
            for (uint32_t piece_end : cur) {
                size_t k = piece_end;
                while (k > start && (t.pr[k - 1] & kWhiteSpaceBit)) --k;
                if (k > start) next.push_back(static_cast<uint32_t>(k));
                if (k < piece_end) next.push_back(piece_end);
                start = piece_end;
            }
            cur.swap(next);
            continue;
        }
        for (uint32_t piece_end : cur) {
            size_t gap = start;
            size_t i = start;
            while (i < piece_end) {
                const size_t e = m(t, i, piece_end);
                if (e > i) {
                    if (gap < i) next.push_back(static_cast<uint32_t>(i));
                    next.push_back(static_cast<uint32_t>(e));
                    i = gap = e;
                } else {
                    ++i;
                }
            }
            if (gap < piece_end) next.push_back(piece_end);
            start = piece_end;
        }
        cur.swap(next);
    }
    ends.insert(ends.end(), cur.begin(), cur.end());
}

}  // namespace arbor::tok
