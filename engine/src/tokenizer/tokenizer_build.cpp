// Tokenizer::build: validates TokenizerData and sets up the shared state the way the reference
// loads a vocabulary: per-model defaults, metadata overrides, special-token ids, the tokens it
// recognises by their text (EOT, EOM, FIM, end-of-generation), and the per-model attribute
// rules.
#include "tokenizer/tokenizer_impl.hpp"

#include <algorithm>
#include <cctype>
#include <initializer_list>

namespace arbor {
namespace {

using namespace tok;

uint32_t attr_of_type(int32_t t) {
    switch (static_cast<TokenType>(t)) {
        case TokenType::Unknown: return kAttrUnknown;
        case TokenType::Unused: return kAttrUnused;
        case TokenType::Normal: return kAttrNormal;
        case TokenType::Control: return kAttrControl;
        case TokenType::UserDefined: return kAttrUserDefined;
        case TokenType::Byte: return kAttrByte;
        default: return kAttrUndefined;
    }
}

TokenId find_text(const Tokenizer::Impl& impl, std::string_view s) { return impl.id_of.find(s); }

// The first of `texts` present in the vocabulary (in the list's order), or kNoToken.
TokenId first_present(const Tokenizer::Impl& impl, std::initializer_list<std::string_view> texts) {
    for (std::string_view t : texts) {
        const TokenId id = find_text(impl, t);
        if (id >= 0) return id;
    }
    return kNoToken;
}

void make_control(Tokenizer::Impl& impl, TokenId id) {
    if (id >= 0) impl.attr[static_cast<size_t>(id)] |= kAttrControl;
}

// Tokens the reference recognises by their text when the metadata does not name them.
void detect_by_text(Tokenizer::Impl& impl) {
    auto detect = [&](TokenId& slot, std::initializer_list<std::string_view> texts) {
        if (slot != kNoToken) return;
        slot = first_present(impl, texts);
        make_control(impl, slot);
    };
    detect(impl.eot, {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
                      "<EOT>", "_<EOT>", "[EOT]", "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>",
                      "<end_of_utterance>"});
    detect(impl.eom, {"<|eom_id|>"});
    detect(impl.fim_pre, {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "begin\xEF\xBD\x9C>",
                          "<PRE>", "\xE2\x96\x81<PRE>", "<|code_prefix|>", "<|prefix|>"});
    detect(impl.fim_suf, {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81hole\xEF\xBD\x9C>",
                          "<SUF>", "\xE2\x96\x81<SUF>", "<|code_suffix|>", "<|suffix|>"});
    detect(impl.fim_mid, {"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "end\xEF\xBD\x9C>",
                          "<MID>", "\xE2\x96\x81<MID>", "<|code_middle|>", "<|middle|>"});
    detect(impl.fim_pad, {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"});
    detect(impl.fim_rep, {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"});
    detect(impl.fim_sep, {"<|file_sep|>"});

    // Control tokens named like "unused" are unused.
    for (size_t id = 0; id < impl.text.size(); ++id) {
        if ((impl.attr[id] & kAttrControl) && impl.text[id].find("unused") != std::string::npos) {
            impl.attr[id] |= kAttrUnused;
        }
    }

    // End of generation.
    std::vector<TokenId> eog;
    for (TokenId id : {impl.fim_pad, impl.fim_rep, impl.fim_sep}) {
        if (id >= 0) eog.push_back(id);
    }
    for (std::string_view t : {"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
                               "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]",
                               "[EOS]", "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>",
                               "<|tool_response>",
                               "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>", "[e~["}) {
        const TokenId id = find_text(impl, t);
        if (id < 0) continue;
        eog.push_back(id);
        make_control(impl, id);
    }
    // gpt-oss: these always render.
    for (std::string_view t : {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"}) {
        const TokenId id = find_text(impl, t);
        if (id >= 0) impl.attr[static_cast<size_t>(id)] = kAttrUserDefined;
    }
    for (TokenId id : {impl.eos, impl.eot, impl.eom}) {
        if (id >= 0) eog.push_back(id);
    }
    std::sort(eog.begin(), eog.end());
    eog.erase(std::unique(eog.begin(), eog.end()), eog.end());
    auto in_eog = [&](std::string_view t) {
        const TokenId id = find_text(impl, t);
        return id >= 0 && std::binary_search(eog.begin(), eog.end(), id) ? id : kNoToken;
    };
    auto drop = [&](TokenId id, uint32_t new_attr) {
        eog.erase(std::remove(eog.begin(), eog.end(), id), eog.end());
        impl.attr[static_cast<size_t>(id)] = new_attr;
    };
    // Harmony-style vocabularies: <|end|> ends a message, not the generation.
    const TokenId end = in_eog("<|end|>");
    const bool has_call = in_eog("<|call|>") >= 0 || in_eog("<|calls|>") >= 0;
    if (end >= 0 && has_call && (in_eog("<|return|>") >= 0 || in_eog("<|flush|>") >= 0)) drop(end, kAttrUserDefined);
    const TokenId s_end = in_eog("</s>");
    if (s_end >= 0 && in_eog("<|tool_response>") >= 0) drop(s_end, kAttrNormal);
    impl.eog = std::move(eog);
}

// Per-model attribute rules the reference applies by name.
void apply_name_rules(Tokenizer::Impl& impl, const std::string& pre, const std::string& model_name) {
    std::string name = model_name;
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto set = [&](std::string_view text, uint32_t a, bool on) {
        const TokenId id = find_text(impl, text);
        if (id < 0) return;
        if (on) {
            impl.attr[static_cast<size_t>(id)] |= a;
        } else {
            impl.attr[static_cast<size_t>(id)] &= ~a;
        }
    };
    if (pre == "jina-v2-de" || pre == "jina-v2-es" || pre == "jina-v2-code") {
        set("<mask>", kAttrLstrip, true);
    } else if (name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos) {
        for (TokenId id : impl.special_by_length) impl.attr[static_cast<size_t>(id)] |= kAttrRstrip;
        set("</s>", kAttrRstrip, true);
        for (std::string_view t : {"<unk>", "<s>", "<|endoftext|>"}) set(t, kAttrRstrip, false);
    } else if (name.find("modern-bert") != std::string::npos) {
        set("[MASK]", kAttrLstrip, true);
    }
}

}  // namespace

Result<Tokenizer> Tokenizer::build(TokenizerData d) {
    auto impl = std::make_shared<Impl>();
    Impl& m = *impl;
    const size_t n = d.tokens.size();
    if (n == 0) return make_error("tokenizer.ggml.tokens: the vocabulary is empty");
    if (n > static_cast<size_t>(INT32_MAX)) return make_error("tokenizer.ggml.tokens: too many tokens");
    if (!d.scores.empty() && d.scores.size() < n) {
        return make_error("tokenizer.ggml.scores: " + std::to_string(d.scores.size()) + " scores for " +
                          std::to_string(n) + " tokens");
    }
    if (!d.token_types.empty() && d.token_types.size() < n) {
        return make_error("tokenizer.ggml.token_type: " + std::to_string(d.token_types.size()) + " types for " +
                          std::to_string(n) + " tokens");
    }

    // Model defaults.
    std::optional<int64_t> def_bos, def_eos, def_unk, def_sep, def_pad, def_mask;
    if (d.model == "llama") {
        m.model = TokenizerModel::SentencePiece;
        def_bos = 1, def_eos = 2, def_unk = 0;
        m.add_space_prefix = true, m.clean_spaces = false, m.add_bos = true, m.add_eos = false;
        m.pre_name = "default";
    } else if (d.model == "bert") {
        m.model = TokenizerModel::WordPiece;
        def_bos = 101, def_unk = 100, def_sep = 102, def_pad = 0, def_mask = 103;
        m.clean_spaces = true, m.add_bos = true, m.add_sep = true;
        m.pre_name = "default";
    } else if (d.model == "gpt2") {
        m.model = TokenizerModel::Bpe;
        def_bos = 11, def_eos = 11;
        if (!d.pre || d.pre->empty()) {
            m.warnings.push_back("tokenizer.ggml.pre is missing: using the 'default' pre-tokenizer");
            m.pre_name = "default";
        } else {
            m.pre_name = *d.pre;
        }
        auto pt = tok::pre_tokenizer_for(m.pre_name);
        if (!pt) return pt.error();
        m.pre = std::move(pt.value());
        m.clean_spaces = m.pre.clean_spaces;
        m.ignore_merges = m.pre.ignore_merges;
        m.add_bos = m.pre.add_bos.value_or(false);
        if (m.pre.no_bos) def_bos.reset();
    } else {
        return make_error("tokenizer.ggml.model: unsupported tokenizer model '" + d.model + "'");
    }
    if (d.add_space_prefix) m.add_space_prefix = *d.add_space_prefix;

    // Vocabulary.
    m.text = std::move(d.tokens);
    m.score.assign(n, 0.0f);
    m.attr.assign(n, kAttrNormal);
    std::vector<std::pair<std::string_view, int32_t>> entries;
    entries.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        if (m.text[i].empty()) {
            m.warnings.push_back("tokenizer.ggml.tokens[" + std::to_string(i) + "] is empty");
            m.text[i] = "[EMPTY_" + std::to_string(i) + "]";
        }
        if (!d.scores.empty()) m.score[i] = d.scores[i];
        if (!d.token_types.empty()) m.attr[i] = attr_of_type(d.token_types[i]);
        m.max_token_len = std::max(m.max_token_len, m.text[i].size());
    }
    for (size_t i = 0; i < n; ++i) entries.emplace_back(m.text[i], static_cast<int32_t>(i));
    m.id_of.build(entries);
    for (size_t i = 0; i < n; ++i) {
        const int32_t first = m.id_of.find(m.text[i]);
        if (first != static_cast<int32_t>(i)) {
            return make_error("tokenizer.ggml.tokens: duplicate token '" + m.text[i] + "' at ids " +
                              std::to_string(first) + " and " + std::to_string(i));
        }
    }

    // Special ids: the model default (if in range), replaced by the metadata (if in range).
    auto special = [&](TokenId& slot, std::optional<int64_t> def, std::optional<int64_t> meta, const char* key) {
        slot = (def && *def >= 0 && static_cast<size_t>(*def) < n) ? static_cast<TokenId>(*def) : kNoToken;
        if (!meta) return;
        if (*meta < 0 || static_cast<size_t>(*meta) >= n) {
            m.warnings.push_back(std::string("tokenizer.ggml.") + key + " = " + std::to_string(*meta) +
                                 " is out of range; ignored");
            return;
        }
        slot = static_cast<TokenId>(*meta);
    };
    special(m.bos, def_bos, d.bos_id, "bos_token_id");
    special(m.eos, def_eos, d.eos_id, "eos_token_id");
    special(m.eot, std::nullopt, d.eot_id, "eot_token_id");
    special(m.eom, std::nullopt, d.eom_id, "eom_token_id");
    special(m.unk, def_unk, d.unk_id, "unknown_token_id");
    special(m.sep, def_sep, d.sep_id, "seperator_token_id");
    special(m.pad, def_pad, d.pad_id, "padding_token_id");
    special(m.mask, def_mask, d.mask_id, "mask_token_id");
    special(m.fim_pre, std::nullopt, d.fim_pre_id, "fim_pre_token_id");
    special(m.fim_suf, std::nullopt, d.fim_suf_id, "fim_suf_token_id");
    special(m.fim_mid, std::nullopt, d.fim_mid_id, "fim_mid_token_id");
    special(m.fim_pad, std::nullopt, d.fim_pad_id, "fim_pad_token_id");
    special(m.fim_rep, std::nullopt, d.fim_rep_id, "fim_rep_token_id");
    special(m.fim_sep, std::nullopt, d.fim_sep_id, "fim_sep_token_id");

    if (d.add_bos) m.add_bos = *d.add_bos;
    if (d.add_eos) m.add_eos = *d.add_eos;
    if (d.add_sep) m.add_sep = *d.add_sep;
    if (m.add_bos && m.bos == kNoToken) {
        return make_error("tokenizer.ggml.add_bos_token is true, but tokenizer.ggml.bos_token_id is not set");
    }
    if (m.add_eos && m.eos == kNoToken) {
        return make_error("tokenizer.ggml.add_eos_token is true, but tokenizer.ggml.eos_token_id is not set");
    }
    if (m.add_sep && m.sep == kNoToken) {
        return make_error("tokenizer.ggml.add_sep_token is true, but tokenizer.ggml.seperator_token_id is not set");
    }
    if (d.lowercase) m.lowercase = *d.lowercase;
    m.strip_accents = d.strip_accents.value_or(m.lowercase);

    detect_by_text(m);

    for (size_t id = 0; id < n; ++id) {
        if (m.attr[id] & (kAttrControl | kAttrUserDefined | kAttrUnknown)) {
            m.special_by_length.push_back(static_cast<TokenId>(id));
        }
    }
    std::stable_sort(m.special_by_length.begin(), m.special_by_length.end(), [&](TokenId a, TokenId b) {
        return m.text[static_cast<size_t>(a)].size() > m.text[static_cast<size_t>(b)].size();
    });

    if (m.model == TokenizerModel::Bpe) {
        auto st = tok::build_bpe_tables(m, d.merges);
        if (!st) return st.error();
    }
    if (m.model == TokenizerModel::SentencePiece) tok::build_spm_pairs(m);

    m.piece.resize(n);
    for (size_t id = 0; id < n; ++id) m.piece[id] = piece_for(m, static_cast<TokenId>(id), true);

    apply_name_rules(m, m.pre_name, d.model_name);
    return Tokenizer(std::move(impl));
}

}  // namespace arbor
