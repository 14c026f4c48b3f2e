// Reading a tokenizer from GGUF metadata (tokenizer.ggml.* and general.name).
#include <arbor/gguf.hpp>
#include <arbor/tokenizer.hpp>

namespace arbor {
namespace {

bool is_signed(GgufValueType t) {
    return t == GgufValueType::I8 || t == GgufValueType::I16 || t == GgufValueType::I32 || t == GgufValueType::I64;
}
bool is_unsigned(GgufValueType t) {
    return t == GgufValueType::U8 || t == GgufValueType::U16 || t == GgufValueType::U32 || t == GgufValueType::U64;
}

std::string type_error(std::string_view key, std::string_view want, const GgufValue& v) {
    std::string got(gguf_value_type_name(v.type));
    if (v.is_array()) got += " of " + std::string(gguf_value_type_name(v.elem_type));
    return std::string(key) + ": expected " + std::string(want) + ", found " + got;
}

struct Reader {
    const GgufFile& g;
    std::string where;

    Error err(std::string msg) const { return make_error(where + ": " + msg); }

    Result<std::optional<std::string>> str(std::string_view key) const {
        const GgufValue* v = g.find(key);
        if (!v) return std::optional<std::string>{};
        if (v->type != GgufValueType::STRING) return err(type_error(key, "a string", *v));
        return std::optional<std::string>(std::string(v->str));
    }
    Result<std::optional<int64_t>> integer(std::string_view key) const {
        const GgufValue* v = g.find(key);
        if (!v) return std::optional<int64_t>{};
        if (is_signed(v->type)) return std::optional<int64_t>(v->i);
        if (is_unsigned(v->type)) {
            if (v->u > static_cast<uint64_t>(INT64_MAX)) return std::optional<int64_t>(INT64_MAX);
            return std::optional<int64_t>(static_cast<int64_t>(v->u));
        }
        return err(type_error(key, "an integer", *v));
    }
    Result<std::optional<bool>> boolean(std::string_view key) const {
        const GgufValue* v = g.find(key);
        if (!v) return std::optional<bool>{};
        if (v->type == GgufValueType::BOOL || is_unsigned(v->type)) return std::optional<bool>(v->u != 0);
        if (is_signed(v->type)) return std::optional<bool>(v->i != 0);
        return err(type_error(key, "a bool", *v));
    }
    Result<std::vector<std::string>> strings(std::string_view key, bool required) const {
        const GgufValue* v = g.find(key);
        if (!v) {
            if (required) return err(std::string(key) + ": missing");
            return std::vector<std::string>{};
        }
        if (!v->is_array() || v->elem_type != GgufValueType::STRING) return err(type_error(key, "an array of strings", *v));
        std::vector<std::string> out;
        out.reserve(v->strings.size());
        for (std::string_view s : v->strings) out.emplace_back(s);
        return out;
    }
};

}  // namespace

Result<TokenizerData> Tokenizer::read_gguf(const GgufFile& g) {
    const Reader r{g, g.path().empty() ? std::string("gguf") : g.path()};
    TokenizerData d;
    {
        auto v = r.str("tokenizer.ggml.model");
        if (!v) return v.error();
        if (!*v) return r.err("tokenizer.ggml.model: missing (the file has no tokenizer)");
        d.model = **v;
    }
    {
        auto v = r.str("tokenizer.ggml.pre");
        if (!v) return v.error();
        d.pre = *v;
    }
    {
        auto v = r.str("general.name");
        if (!v) return v.error();
        d.model_name = v->value_or("");
    }
    {
        auto v = r.strings("tokenizer.ggml.tokens", true);
        if (!v) return v.error();
        d.tokens = std::move(v.value());
    }
    {
        auto v = r.strings("tokenizer.ggml.merges", false);
        if (!v) return v.error();
        d.merges = std::move(v.value());
        if (d.model == "gpt2" && !g.find("tokenizer.ggml.merges")) return r.err("tokenizer.ggml.merges: missing");
    }
    if (const GgufValue* v = g.find("tokenizer.ggml.scores")) {
        if (!v->is_array() || (v->elem_type != GgufValueType::F32 && v->elem_type != GgufValueType::I32)) {
            return r.err(type_error("tokenizer.ggml.scores", "an array of f32", *v));
        }
        d.scores.resize(v->length);
        for (uint64_t i = 0; i < v->length; ++i) {
            d.scores[i] = v->elem_type == GgufValueType::F32 ? static_cast<float>(v->float_at(i))
                                                             : static_cast<float>(v->int_at(i));
        }
    }
    if (const GgufValue* v = g.find("tokenizer.ggml.token_type")) {
        if (!v->is_array() || v->elem_type != GgufValueType::I32) {
            return r.err(type_error("tokenizer.ggml.token_type", "an array of i32", *v));
        }
        d.token_types.resize(v->length);
        for (uint64_t i = 0; i < v->length; ++i) d.token_types[i] = static_cast<int32_t>(v->int_at(i));
    }
    struct IdKey {
        const char* key;
        std::optional<int64_t> TokenizerData::*field;
    };
    static constexpr IdKey kIds[] = {
        {"tokenizer.ggml.bos_token_id", &TokenizerData::bos_id},
        {"tokenizer.ggml.eos_token_id", &TokenizerData::eos_id},
        {"tokenizer.ggml.eot_token_id", &TokenizerData::eot_id},
        {"tokenizer.ggml.eom_token_id", &TokenizerData::eom_id},
        {"tokenizer.ggml.unknown_token_id", &TokenizerData::unk_id},
        {"tokenizer.ggml.seperator_token_id", &TokenizerData::sep_id},
        {"tokenizer.ggml.padding_token_id", &TokenizerData::pad_id},
        {"tokenizer.ggml.mask_token_id", &TokenizerData::mask_id},
        {"tokenizer.ggml.prefix_token_id", &TokenizerData::fim_pre_id},  // older names first,
        {"tokenizer.ggml.suffix_token_id", &TokenizerData::fim_suf_id},  // the fim_* keys win
        {"tokenizer.ggml.middle_token_id", &TokenizerData::fim_mid_id},
        {"tokenizer.ggml.fim_pre_token_id", &TokenizerData::fim_pre_id},
        {"tokenizer.ggml.fim_suf_token_id", &TokenizerData::fim_suf_id},
        {"tokenizer.ggml.fim_mid_token_id", &TokenizerData::fim_mid_id},
        {"tokenizer.ggml.fim_pad_token_id", &TokenizerData::fim_pad_id},
        {"tokenizer.ggml.fim_rep_token_id", &TokenizerData::fim_rep_id},
        {"tokenizer.ggml.fim_sep_token_id", &TokenizerData::fim_sep_id},
    };
    for (const IdKey& k : kIds) {
        auto v = r.integer(k.key);
        if (!v) return v.error();
        if (*v) d.*(k.field) = *v;
    }
    struct BoolKey {
        const char* key;
        std::optional<bool> TokenizerData::*field;
    };
    static constexpr BoolKey kBools[] = {
        {"tokenizer.ggml.add_bos_token", &TokenizerData::add_bos},
        {"tokenizer.ggml.add_eos_token", &TokenizerData::add_eos},
        {"tokenizer.ggml.add_sep_token", &TokenizerData::add_sep},
        {"tokenizer.ggml.add_space_prefix", &TokenizerData::add_space_prefix},
        {"tokenizer.ggml.normalizer.lowercase", &TokenizerData::lowercase},
        {"tokenizer.ggml.normalizer.strip_accents", &TokenizerData::strip_accents},
    };
    for (const BoolKey& k : kBools) {
        auto v = r.boolean(k.key);
        if (!v) return v.error();
        if (*v) d.*(k.field) = *v;
    }
    return d;
}

Result<Tokenizer> Tokenizer::from_gguf(const GgufFile& g) {
    auto d = read_gguf(g);
    if (!d) return d.error();
    auto t = build(std::move(d.value()));
    if (!t) return make_error((g.path().empty() ? std::string("gguf") : g.path()) + ": " + t.message());
    return t;
}

}  // namespace arbor
