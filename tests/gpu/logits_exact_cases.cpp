// The prefill and batch cases of the logits exactness suite, and the per-model driver.
#include "logits_exact_cases.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <list>

namespace arbor::exact {

namespace {
double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
}  // namespace

Reporter::Reporter() : last_(now_s()) {}

double Reporter::lap() {
    const double t = now_s(), d = t - last_;
    last_ = t;
    return d;
}

void Reporter::ok(std::string_view model, std::string_view name) {
    ++cases_;
    std::printf("ok %.*s %.*s (%.2f s)\n", int(model.size()), model.data(), int(name.size()), name.data(), lap());
    std::fflush(stdout);
}

void Reporter::fail(std::string_view model, std::string_view name, std::string_view detail) {
    ++cases_;
    ++failed_;
    std::printf("FAIL %.*s %.*s: %.*s (%.2f s)\n", int(model.size()), model.data(), int(name.size()), name.data(),
                int(detail.size()), detail.data(), lap());
    std::fflush(stdout);
}

std::string CaseEnv::name(std::string_view base) const { return std::string(base) + "/" + std::string(kv_type_name(kv)); }

Result<LogitRows> play(BackendPool& p, int64_t max_batch_tokens, KvType kv, const Script& s) {
    auto be = p.get(max_batch_tokens);
    if (!be) return be.error();
    ScriptRunner r(**be, kv, max_batch_tokens);
    if (auto st = r.run(s); !st) return st.error();
    return std::move(r.rows());
}

namespace {

bool all_rows_equal(const LogitRows& r) {
    for (size_t i = 1; i < r.size(); ++i)
        if (std::memcmp(r.row(0), r.row(i), size_t(r.n_vocab) * sizeof(float)) != 0) return false;
    return true;
}

}  // namespace

void plant_difference(LogitRows& r) {
    uint32_t u;
    float& v = r.data[size_t(r.n_vocab / 2)];
    std::memcpy(&u, &v, 4);
    u ^= 1u;
    std::memcpy(&v, &u, 4);
}

void judge(const CaseEnv& env, std::string_view base, const Result<LogitRows>& a, const Result<LogitRows>& b) {
    const std::string name = env.name(base);
    const std::string an = "A(" + env.a.spec().text + ")", bn = "B(" + env.b.spec().text + ")";
    if (!a) return env.rep.fail(env.label, name, an + ": " + a.message());
    if (!b) return env.rep.fail(env.label, name, bn + ": " + b.message());
    if (a->size() == 0) return env.rep.fail(env.label, name, "the case produced no logits rows");
    for (const auto& [rows, side] : {std::pair{&*a, an}, std::pair{&*b, bn}}) {
        if (auto why = check_finite(*rows, side); !why.empty()) return env.rep.fail(env.label, name, why);
        if (rows->size() > 1 && all_rows_equal(*rows))
            return env.rep.fail(env.label, name, side + ": all " + std::to_string(rows->size()) + " rows are equal");
    }
    const LogitRows* got = &*a;
    LogitRows planted;
    if (env.plant) {
        planted = *a;
        plant_difference(planted);
        got = &planted;
    }
    if (auto why = compare_rows(*got, *b, an, bn); !why.empty()) return env.rep.fail(env.label, name, why);
    env.rep.ok(env.label, name);
}

namespace {

// One sequence: `len` prompt tokens (every row), three decode steps, then a 2-token step.
Script prefill_script(int64_t n_vocab, int64_t len, uint32_t seed) {
    std::mt19937 rng(seed);
    Script s;
    s.n_seqs = 1;
    s.n_ctx = len + 8;
    s.steps.push_back({{0, random_tokens(rng, n_vocab, len), LogitsMode::All}});
    for (int i = 0; i < 3; ++i) s.steps.push_back({{0, random_tokens(rng, n_vocab, 1), LogitsMode::Last}});
    s.steps.push_back({{0, random_tokens(rng, n_vocab, 2), LogitsMode::All}});
    return s;
}

// n sequences with prompts of different lengths in one eval call (every other one all rows),
// four decode steps of all of them, a mixed step, then two decode steps in reversed order.
Script batch_script(int64_t n_vocab, int32_t n, bool long_prompt, uint32_t seed) {
    static constexpr int64_t kLens[8] = {23, 5, 33, 1, 17, 9, 41, 2};
    std::mt19937 rng(seed);
    Script s;
    s.n_seqs = n;
    ScriptStep prompts;
    for (int32_t i = 0; i < n; ++i) {
        const int64_t len = i == 0 && long_prompt ? 270 : kLens[i % 8];
        prompts.push_back({i, random_tokens(rng, n_vocab, len), i % 2 == 0 ? LogitsMode::All : LogitsMode::Last});
    }
    s.steps.push_back(std::move(prompts));
    auto decode = [&](bool reversed) {
        ScriptStep st;
        for (int32_t k = 0; k < n; ++k) {
            const int32_t i = reversed ? n - 1 - k : k;
            st.push_back({i, random_tokens(rng, n_vocab, 1), LogitsMode::Last});
        }
        s.steps.push_back(std::move(st));
    };
    for (int k = 0; k < 4; ++k) decode(false);
    ScriptStep mixed;
    for (int32_t i = 0; i < n; ++i) {
        if (i % 3 == 0) mixed.push_back({i, random_tokens(rng, n_vocab, 5), LogitsMode::All});
        else if (i % 3 == 1) mixed.push_back({i, random_tokens(rng, n_vocab, 1), LogitsMode::Last});
    }
    s.steps.push_back(std::move(mixed));
    for (int k = 0; k < 2; ++k) decode(true);
    int64_t longest = 0;
    for (int32_t i = 0; i < n; ++i) longest = std::max(longest, s.max_tokens(i));
    s.n_ctx = longest;
    return s;
}

}  // namespace

void prefill_cases(const CaseEnv& env, const CasePlan& plan) {
    // One script per prompt length, and B's rows per max_batch_tokens, shared by the cases.
    struct Ref {
        int64_t len;
        Script script;
        std::list<std::pair<int64_t, Result<LogitRows>>> b;
    };
    std::list<Ref> refs;
    auto ref = [&](int64_t len, int64_t mbt) -> std::pair<const Script*, const Result<LogitRows>*> {
        auto it = std::find_if(refs.begin(), refs.end(), [&](const Ref& r) { return r.len == len; });
        if (it == refs.end()) it = refs.insert(refs.end(), Ref{len, prefill_script(env.n_vocab(), len, 1000 + uint32_t(len)), {}});
        for (auto& [m, r] : it->b)
            if (m == mbt) return {&it->script, &r};
        it->b.emplace_back(mbt, play(env.b, mbt, env.kv, it->script));
        return {&it->script, &it->b.back().second};
    };
    for (const PrefillCase& c : plan.prefill) {
        auto [s, r] = ref(c.len, c.mbt_b);
        judge(env, "prefill" + std::to_string(c.len) + "-a" + std::to_string(c.mbt_a) + "-b" + std::to_string(c.mbt_b),
              play(env.a, c.mbt_a, env.kv, *s), *r);
    }
    if (const int64_t L = plan.caller_chunks_len; L > 0) {
        auto [s, r] = ref(L, 256);
        judge(env, "prefill" + std::to_string(L) + "-caller37", play(env.a, 256, env.kv, split_entries(*s, 37)), *r);
    }
    if (plan.page_edge) {
        const Script edge = prefill_script(env.n_vocab(), kKvPageCells - 1, 77);
        judge(env, "page-edge", play(env.a, 256, env.kv, edge), play(env.b, 256, env.kv, edge));
    }
}

void batch_cases(const CaseEnv& env, const CasePlan& plan) {
    for (int32_t n : plan.batches) {
        const Script s = batch_script(env.n_vocab(), n, plan.long_batch && n > 1, 2000 + uint32_t(n));
        const auto ref = play(env.b, 256, env.kv, s);
        const auto got = play(env.a, 256, env.kv, s);
        judge(env, "batch" + std::to_string(n), got, ref);
        if (n != 8) continue;
        if (plan.batch_solo) judge(env, "batch8-vs-solo", got, play(env.b, 256, env.kv, solo(s)));
        if (plan.batch_a7) judge(env, "batch8-a7", play(env.a, 7, env.kv, s), ref);
    }
}

void run_model_cases(const std::string& label, std::shared_ptr<const Model> model, BackendPool& a, BackendPool& b,
                     const CasePlan& plan, const std::string& tmp_dir, Reporter& rep) {
    for (KvType kv : plan.kv_types) {
        const CaseEnv env{label, model, a, b, kv, tmp_dir, rep, plan.plant_difference};
        prefill_cases(env, plan);
        batch_cases(env, plan);
        for (int64_t len : plan.park_lens) park_cases(env, len, plan.park_reverse);
        if (plan.session_park_len > 0) session_park_case(env, plan.session_park_len);
        if (plan.nan_kv) nan_kv_case(env);
    }
}

}  // namespace arbor::exact
