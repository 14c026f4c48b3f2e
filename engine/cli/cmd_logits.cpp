// arbor-cli logits: the model's logits for a prompt as one JSON object, for comparing engines
// and for the exactness checks (thread counts, chunking, backends).
#include "cli.hpp"

#include <arbor/backend.hpp>
#include <arbor/json.hpp>
#include <arbor/session.hpp>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <optional>
#include <numeric>

namespace arbor::cli {
namespace {

constexpr const char* kUsage =
    "-m M.gguf -p TEXT [--bos|--no-bos] [-n N] [--threads N] [--backend cpu|gpu] [--chunk N] "
    "[--kv-type f16|f32] [--all] [--profile TRACE.json]";

json::Value top5(const float* l, int64_t n_vocab) {
    std::vector<int32_t> idx(static_cast<size_t>(n_vocab));
    std::iota(idx.begin(), idx.end(), 0);
    const int64_t k = std::min<int64_t>(5, n_vocab);
    std::partial_sort(idx.begin(), idx.begin() + k, idx.end(),
                      [l](int32_t a, int32_t b) { return l[a] > l[b] || (l[a] == l[b] && a < b); });
    json::Value out = json::Value::array();
    for (int64_t i = 0; i < k; ++i) {
        json::Value pair = json::Value::array();
        pair.push_back(json::Value(idx[size_t(i)]));
        pair.push_back(json::Value::from_float32(l[idx[size_t(i)]]));
        out.push_back(std::move(pair));
    }
    return out;
}

json::Value floats(const float* l, int64_t n) {
    json::Value a = json::Value::array();
    for (int64_t i = 0; i < n; ++i) a.push_back(json::Value::from_float32(l[i]));
    return a;
}

// Invalid UTF-8 (a byte token cut off mid-character) as U+FFFD, so the JSON stays valid.
std::string valid_utf8(const std::string& s) {
    std::string out;
    size_t i = 0;
    while (i < s.size()) {
        const auto c = uint8_t(s[i]);
        const int len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
        bool ok = len > 0 && i + size_t(len) <= s.size();
        for (int k = 1; ok && k < len; ++k) ok = (uint8_t(s[i + size_t(k)]) & 0xc0) == 0x80;
        if (ok && len > 1) {
            uint32_t cp = c & (0xff >> (len + 1));
            for (int k = 1; k < len; ++k) cp = (cp << 6) | (uint8_t(s[i + size_t(k)]) & 0x3f);
            const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
            ok = cp >= min[len] && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff);
        }
        if (ok) {
            out.append(s, i, size_t(len));
            i += size_t(len);
        } else {
            out += "\xEF\xBF\xBD";
            ++i;
        }
    }
    return out;
}

int32_t argmax(const float* l, int64_t n) {
    int32_t best = 0;
    for (int32_t i = 1; i < int32_t(n); ++i)
        if (l[i] > l[best]) best = i;
    return best;
}

int logits(std::vector<std::string> argv) {
    Args a(std::move(argv));
    const auto prompt = a.value("-p", "--prompt");
    const auto model_path = a.value("-m", "--model");
    const bool bos = a.flag("--bos"), no_bos = a.flag("--no-bos");
    const int64_t n = a.integer("-n", "--n-predict").value_or(8);
    const auto threads = a.integer("--threads");
    const std::string backend = a.value("--backend").value_or("cpu");
    const int64_t chunk = a.integer("--chunk").value_or(256);
    const std::string kv = a.value("--kv-type").value_or("f16");
    const bool all = a.flag("--all");
    const std::optional<std::string> profile = a.value("--profile");
    a.finish();

    if (!model_path) throw UsageError("missing -m MODEL.gguf");
    if (!prompt) throw UsageError("missing -p TEXT");
    if (n < 0) throw UsageError("-n must be >= 0");
    if (bos && no_bos) throw UsageError("--bos and --no-bos exclude each other");
    if (threads && (*threads < 1 || *threads > 256)) throw UsageError("--threads must be between 1 and 256");
    if (chunk < 1 || chunk > 65536) throw UsageError("--chunk must be between 1 and 65536");
    if (backend != "cpu" && backend != "gpu") throw UsageError("--backend must be cpu or gpu");
    if (kv != "f16" && kv != "f32") throw UsageError("--kv-type must be f16 or f32");

    auto model = Model::load(*model_path);
    if (!model) throw InputError(model.message());
    const Model& m = *model.value();
    std::optional<bool> want_bos;
    if (bos) want_bos = true;
    if (no_bos) want_bos = false;
    auto ids = prompt_tokens(m, *prompt, want_bos, false);
    if (!ids) throw InputError(ids.message());
    const std::vector<TokenId>& toks = ids.value();
    const int64_t n_ctx = int64_t(toks.size()) + n;
    if (n_ctx > m.config().n_ctx_train)
        throw InputError("prompt and continuation need " + std::to_string(n_ctx) + " positions, more than the model's " +
                         std::to_string(m.config().n_ctx_train));

    BackendOptions bo;
    bo.threads = int(threads.value_or(0));
    bo.max_batch_tokens = chunk;
    auto be = make_backend(backend, model.value(), bo);
    if (!be) throw RuntimeFailure(be.message());
    std::fprintf(stderr, "device: %s\n", be.value()->device().c_str());
    auto cache = be.value()->make_kv_cache(kv == "f32" ? KvType::F32 : KvType::F16,
                                           (n_ctx + kKvPageCells - 1) / kKvPageCells);
    KvSequence seq(cache, n_ctx);
    const int64_t V = m.config().n_vocab;

    // The prompt in passes of --chunk tokens, all positions' logits.
    std::vector<float> all_logits;
    PassLogits pass;
    for (size_t at = 0; at < toks.size(); at += size_t(chunk)) {
        const size_t len = std::min(toks.size() - at, size_t(chunk));
        BatchEntry e{&seq, std::span<const TokenId>(toks).subspan(at, len), LogitsMode::All};
        if (auto st = be.value()->eval(std::span<const BatchEntry>(&e, 1), &pass); !st) throw RuntimeFailure(st.message());
        all_logits.insert(all_logits.end(), pass.data.begin(), pass.data.end());
    }
    json::Value out = json::Value::object();
    json::Value tj = json::Value::array();
    for (TokenId t : toks) tj.push_back(json::Value(t));
    out["tokens"] = std::move(tj);
    json::Value per = json::Value::array();
    for (size_t i = 0; i < toks.size(); ++i) per.push_back(top5(all_logits.data() + i * size_t(V), V));
    out["per_position_top5"] = std::move(per);
    const float* last = all_logits.data() + (toks.size() - 1) * size_t(V);
    out["last_logits"] = floats(last, V);
    if (all) {
        json::Value rows = json::Value::array();
        for (size_t i = 0; i < toks.size(); ++i) rows.push_back(floats(all_logits.data() + i * size_t(V), V));
        out["all_logits"] = std::move(rows);
    }
    // Greedy continuation, one token per pass.
    std::vector<TokenId> greedy;
    std::vector<float> cur(last, last + V);
    for (int64_t i = 0; i < n; ++i) {
        const TokenId id = argmax(cur.data(), V);
        greedy.push_back(id);
        if (i + 1 == n) break;
        // --profile: the kernel's per-stage profile of the last decode pass (GPU).
        if (profile && i + 2 == n)
            if (auto st = be.value()->set_profiling(true, *profile); !st) throw RuntimeFailure(st.message());
        BatchEntry e{&seq, std::span<const TokenId>(&greedy.back(), 1), LogitsMode::Last};
        const BackendCounters before = be.value()->counters();
        const auto t0 = std::chrono::steady_clock::now();
        if (auto st = be.value()->eval(std::span<const BatchEntry>(&e, 1), &pass); !st) throw RuntimeFailure(st.message());
        if (profile && i + 2 == n) {
            const BackendCounters after = be.value()->counters();
            std::fprintf(stderr, "profile: decode pass at %" PRId64 " tokens: %.3f ms wall, %.3f ms device, %" PRId64
                         " launch(es)\n", seq.size() - 1,
                         std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(),
                         after.device_ms - before.device_ms, after.launches - before.launches);
            for (const std::string& row : be.value()->profile_table()) std::fprintf(stderr, "  %s\n", row.c_str());
            (void)be.value()->set_profiling(false, "");
        }
        cur.assign(pass.row(0), pass.row(0) + V);
    }
    json::Value gj = json::Value::array();
    for (TokenId t : greedy) gj.push_back(json::Value(t));
    out["greedy"] = std::move(gj);
    out["greedy_text"] = valid_utf8(m.tokenizer().detokenize(greedy));
    out["backend"] = std::string(be.value()->name());
    write_stdout(json::dump(out) + "\n");
    return 0;
}

const Command kLogits("logits", "print a prompt's logits as JSON (per-position top 5, last logits, greedy ids)", kUsage,
                      logits);

}  // namespace
}  // namespace arbor::cli
