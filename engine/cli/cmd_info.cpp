// arbor-cli info FILE.gguf [--json] [--tensors] [--full]
// What a user wants to see before loading a model. Reads the header only, so it is instant
// even on a multi-gigabyte file.
#include "cli.hpp"

#include <arbor/gguf.hpp>
#include <arbor/json.hpp>
#include <arbor/model_summary.hpp>

#include <cinttypes>
#include <cstdio>

namespace arbor::cli {
namespace {

json::Value scalar_json(GgufValueType t, const GgufValue& v) {
    switch (t) {
        case GgufValueType::BOOL: return json::Value(v.u != 0);
        case GgufValueType::F32: return json::Value::from_float32(static_cast<float>(v.f));
        case GgufValueType::F64: return json::Value(v.f);
        case GgufValueType::U64: return json::Value(static_cast<unsigned long long>(v.u));
        case GgufValueType::STRING: return json::Value(v.str);
        default: return json::Value(static_cast<long long>(v.i));
    }
}

json::Value value_json(const GgufValue& v, bool full) {
    if (!v.is_array()) return scalar_json(v.type, v);
    if (v.length > 64 && !full) {
        json::Value o = json::Value::object();
        o["type"] = std::string(gguf_value_type_name(v.elem_type));
        o["length"] = static_cast<unsigned long long>(v.length);
        return o;
    }
    json::Value a = json::Value::array();
    for (uint64_t i = 0; i < v.length; ++i) {
        if (v.elem_type == GgufValueType::STRING) {
            a.push_back(json::Value(v.strings[i]));
        } else if (v.elem_type == GgufValueType::F32) {
            a.push_back(json::Value::from_float32(static_cast<float>(v.float_at(i))));
        } else if (v.elem_type == GgufValueType::F64) {
            a.push_back(json::Value(v.float_at(i)));
        } else if (v.elem_type == GgufValueType::BOOL) {
            a.push_back(json::Value(v.int_at(i) != 0));
        } else if (v.elem_type == GgufValueType::U64) {
            a.push_back(json::Value(static_cast<unsigned long long>(v.int_at(i))));
        } else {
            a.push_back(json::Value(static_cast<long long>(v.int_at(i))));
        }
    }
    return a;
}

template <class T>
json::Value opt(const std::optional<T>& o) {
    if (!o) return json::Value(nullptr);
    return json::Value(*o);
}

json::Value shape_json(const GgufTensor& t) {
    json::Value a = json::Value::array();
    for (uint32_t d = 0; d < t.n_dims; ++d) a.push_back(json::Value(static_cast<long long>(t.ne[d])));
    return a;
}

std::string type_name(TensorType t) { return std::string(tensor_type_info(static_cast<uint32_t>(t))->name); }

std::string human_count(uint64_t n) {
    char b[32];
    if (n >= 1000000000ull) std::snprintf(b, sizeof b, "%.2fB", n / 1e9);
    else if (n >= 1000000ull) std::snprintf(b, sizeof b, "%.2fM", n / 1e6);
    else if (n >= 1000ull) std::snprintf(b, sizeof b, "%.1fK", n / 1e3);
    else std::snprintf(b, sizeof b, "%" PRIu64, n);
    return b;
}

std::string human_bytes(uint64_t n) {
    char b[32];
    if (n >= (1ull << 30)) std::snprintf(b, sizeof b, "%.2f GiB", n / double(1ull << 30));
    else if (n >= (1ull << 20)) std::snprintf(b, sizeof b, "%.2f MiB", n / double(1ull << 20));
    else if (n >= 1024) std::snprintf(b, sizeof b, "%.1f KiB", n / 1024.0);
    else std::snprintf(b, sizeof b, "%" PRIu64 " B", n);
    return b;
}

template <class T>
std::string show(const std::optional<T>& o) {
    return o ? std::to_string(*o) : std::string("-");
}

int run_info(std::vector<std::string> argv) {
    Args args(std::move(argv));
    const bool as_json = args.flag("--json");
    const bool tensors = args.flag("--tensors");
    const bool full = args.flag("--full");
    auto pos = args.positionals();
    args.finish();
    if (pos.size() != 1) throw UsageError("expected exactly one GGUF file");

    auto file = GgufFile::open(pos[0]);
    if (!file) throw InputError(file.message());
    const GgufFile& f = **file;
    auto sum = summarize_model(f);
    if (!sum) throw InputError(sum.message());
    const ModelSummary& s = *sum;

    if (as_json) {
        json::Value o = json::Value::object();
        o["architecture"] = s.architecture.empty() ? json::Value(nullptr) : json::Value(s.architecture);
        o["name"] = s.name.empty() ? json::Value(nullptr) : json::Value(s.name);
        o["parameters"] = static_cast<unsigned long long>(s.parameters);
        o["file_size"] = static_cast<unsigned long long>(s.file_size);
        o["tensor_count"] = static_cast<unsigned long long>(s.tensor_count);
        o["gguf_version"] = static_cast<long long>(f.version());
        o["split_count"] = static_cast<unsigned long long>(f.split_count());
        o["context_length"] = opt(s.context_length);
        o["block_count"] = opt(s.block_count);
        o["embedding_length"] = opt(s.embedding_length);
        o["head_count"] = opt(s.head_count);
        o["head_count_kv"] = opt(s.head_count_kv);
        o["expert_count"] = opt(s.expert_count);
        o["expert_used_count"] = opt(s.expert_used_count);
        o["vocab_size"] = opt(s.vocab_size);
        o["tokenizer_model"] = opt(s.tokenizer_model);
        o["has_chat_template"] = s.has_chat_template;
        o["main_type"] = s.main_type.empty() ? json::Value(nullptr) : json::Value(s.main_type);
        json::Value mix = json::Value::array();
        for (const auto& q : s.quant_mix) {
            json::Value m = json::Value::object();
            m["type"] = q.type;
            m["tensors"] = static_cast<unsigned long long>(q.tensors);
            m["bytes"] = static_cast<unsigned long long>(q.bytes);
            mix.push_back(std::move(m));
        }
        o["quant_mix"] = std::move(mix);
        json::Value md = json::Value::object();
        for (const auto& [k, v] : f.metadata()) md[k] = value_json(v, full);
        o["metadata"] = std::move(md);
        json::Value ts = json::Value::array();
        for (const auto& t : f.tensors()) {
            json::Value j = json::Value::object();
            j["name"] = std::string(t.name);
            j["type"] = type_name(t.type);
            j["shape"] = shape_json(t);
            j["offset"] = static_cast<unsigned long long>(t.offset);
            ts.push_back(std::move(j));
        }
        o["tensors"] = std::move(ts);
        write_stdout(json::dump(o) + "\n");
        return 0;
    }

    std::string out;
    auto line = [&](const char* k, const std::string& v) {
        char b[64];
        std::snprintf(b, sizeof b, "%-18s ", k);
        out += b + v + "\n";
    };
    line("file", f.path() + (f.split_count() > 1 ? " (" + std::to_string(f.split_count()) + " parts)" : ""));
    line("architecture", s.architecture.empty() ? "-" : s.architecture);
    line("name", s.name.empty() ? "-" : s.name);
    line("parameters", human_count(s.parameters) + " (" + std::to_string(s.parameters) + ")");
    line("file size", human_bytes(s.file_size) + " (" + std::to_string(s.file_size) + " bytes)");
    line("gguf version", std::to_string(f.version()));
    line("context length", show(s.context_length));
    line("layers", show(s.block_count));
    line("embedding", show(s.embedding_length));
    line("heads / kv heads", show(s.head_count) + " / " + show(s.head_count_kv));
    if (s.expert_count) line("experts / active", show(s.expert_count) + " / " + show(s.expert_used_count));
    line("vocab", show(s.vocab_size) + " (" + s.tokenizer_model.value_or("no tokenizer") + ")");
    line("chat template", s.has_chat_template ? "yes" : "no");
    std::string mix;
    for (const auto& q : s.quant_mix) {
        if (!mix.empty()) mix += ", ";
        mix += q.type + " " + std::to_string(q.tensors) + " tensors " + human_bytes(q.bytes);
    }
    line("quant mix", mix.empty() ? "-" : mix);
    line("tensors", std::to_string(s.tensor_count));
    if (tensors) {
        for (const auto& t : f.tensors()) {
            std::string shape;
            for (uint32_t d = 0; d < t.n_dims; ++d) shape += (d ? " x " : "") + std::to_string(t.ne[d]);
            char b[512];
            std::snprintf(b, sizeof b, "  %-40.*s %-7s %-24s @%" PRIu64 "\n", static_cast<int>(t.name.size()), t.name.data(),
                          type_name(t.type).c_str(), shape.c_str(), t.offset);
            out += b;
        }
    }
    write_stdout(out);
    return 0;
}

const Command kInfo("info", "show a GGUF model's architecture, size, quant mix and metadata",
                    "FILE.gguf [--json] [--tensors] [--full]", run_info);

}  // namespace
}  // namespace arbor::cli
