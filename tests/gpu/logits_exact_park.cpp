// The park and wake cases of the logits exactness suite: a context built on one backend,
// parked, woken into a cache of another (or the same) backend and continued must give the
// logits of a context that was never parked.
#include "logits_exact_cases.hpp"

#include <arbor/park.hpp>
#include <arbor/session.hpp>

#include <cstring>

namespace arbor::exact {
namespace {

// After the prompt: three decode steps, a 3-token step (every row), one more decode step.
std::vector<ScriptStep> continuation(int64_t n_vocab, std::mt19937& rng) {
    std::vector<ScriptStep> steps;
    for (int i = 0; i < 3; ++i) steps.push_back({{0, random_tokens(rng, n_vocab, 1), LogitsMode::Last}});
    steps.push_back({{0, random_tokens(rng, n_vocab, 3), LogitsMode::All}});
    steps.push_back({{0, random_tokens(rng, n_vocab, 1), LogitsMode::Last}});
    return steps;
}

// Runs the prompt on the pool's backend and parks the sequence with its last logits.
Status park_from(const CaseEnv& env, BackendPool& p, const std::vector<TokenId>& prompt, int64_t n_ctx,
                 const std::string& path) {
    auto be = p.get(256);
    if (!be) return be.error();
    ScriptRunner r(**be, env.kv, 256);
    if (auto s = r.init(1, n_ctx); !s) return s;
    if (auto s = r.step({{0, prompt, LogitsMode::Last}}); !s) return make_error("prompt: " + s.message());
    ParkContents c;
    c.tokens = prompt;
    c.logits.assign(r.rows().row(0), r.rows().row(0) + r.rows().n_vocab);
    if (auto s = write_park_file(path, *env.model, r.seq(0), c); !s) return make_error("park: " + s.message());
    return {};
}

// Wakes the park file into a fresh cache of the pool's backend and plays the continuation.
// The first row (step -1) is the park file's logits of the last prompt token.
Result<LogitRows> wake_and_continue(const CaseEnv& env, BackendPool& p, const std::vector<TokenId>& prompt,
                                    int64_t n_ctx, const std::string& path, const std::vector<ScriptStep>& cont) {
    auto be = p.get(256);
    if (!be) return be.error();
    ScriptRunner r(**be, env.kv, 256);
    if (auto s = r.init(1, n_ctx); !s) return s.error();
    auto read = read_park_file(path, *env.model, env.kv, r.seq(0));
    if (!read) return make_error("wake: " + read.message());
    const ParkRead& pr = *read;
    if (!pr.cells_restored) return make_error("wake: the cells were not restored: " + pr.problem);
    const int64_t L = int64_t(prompt.size());
    if (pr.cells != L || r.seq(0).size() != L)
        return make_error("wake: " + std::to_string(pr.cells) + " cells restored, sequence holds " +
                          std::to_string(r.seq(0).size()) + ", parked " + std::to_string(L));
    if (pr.contents.tokens != prompt) return make_error("wake: the park file's tokens differ from the prompt");
    if (int64_t(pr.contents.logits.size()) != env.n_vocab())
        return make_error("wake: the park file holds " + std::to_string(pr.contents.logits.size()) + " logits");
    r.rows().add({0, L - 1, -1}, pr.contents.logits.data());
    for (const ScriptStep& st : cont)
        if (auto s = r.step(st); !s) return make_error("after wake: " + s.message());
    return std::move(r.rows());
}

}  // namespace

void park_cases(const CaseEnv& env, int64_t len, bool reverse) {
    std::mt19937 rng(3000 + uint32_t(len));
    const std::vector<TokenId> prompt = random_tokens(rng, env.n_vocab(), len);
    const std::vector<ScriptStep> cont = continuation(env.n_vocab(), rng);
    Script never;
    never.n_seqs = 1;
    never.steps.push_back({{0, prompt, LogitsMode::Last}});
    never.steps.insert(never.steps.end(), cont.begin(), cont.end());
    never.n_ctx = never.max_tokens(0);
    const auto ref = play(env.b, 256, env.kv, never);

    const std::string base = "park" + std::to_string(len);
    const std::string kv(kv_type_name(env.kv));
    const std::string from_a = env.tmp_dir + "/a-" + kv + ".park", from_b = env.tmp_dir + "/b-" + kv + ".park";
    if (auto s = park_from(env, env.a, prompt, never.n_ctx, from_a); !s) {
        const std::string why = "A(" + env.a.spec().text + "): " + s.message();
        env.rep.fail(env.label, env.name(base + "-a>b"), why);
        env.rep.fail(env.label, env.name(base + "-a>a"), why);
    } else {
        judge(env, base + "-a>b", wake_and_continue(env, env.b, prompt, never.n_ctx, from_a, cont), ref);
        judge(env, base + "-a>a", wake_and_continue(env, env.a, prompt, never.n_ctx, from_a, cont), ref);
    }
    if (!reverse) return;
    if (auto s = park_from(env, env.b, prompt, never.n_ctx, from_b); !s)
        env.rep.fail(env.label, env.name(base + "-b>a"), "B(" + env.b.spec().text + "): " + s.message());
    else
        judge(env, base + "-b>a", wake_and_continue(env, env.a, prompt, never.n_ctx, from_b, cont), ref);
}

namespace {

SessionOptions session_options(const BackendSpec& spec, KvType kv, int64_t n_ctx) {
    SessionOptions o;
    o.backend = spec.name;
    o.threads = spec.threads;
    o.n_ctx = n_ctx;
    o.kv_type = kv;
    return o;
}

// Feeds the continuation one call per step, keeping each call's last logits.
Status feed_all(Session& s, const std::vector<ScriptStep>& cont, int32_t first_step, LogitRows& rows) {
    for (size_t i = 0; i < cont.size(); ++i) {
        const auto& toks = cont[i][0].tokens;
        if (auto st = s.feed(toks); !st) return make_error("feed " + std::to_string(i) + ": " + st.message());
        rows.add({0, int64_t(s.tokens().size()) - 1, first_step + int32_t(i)}, s.last_logits().data());
    }
    return {};
}

// Session B never parked: the prompt, then the continuation.
Result<LogitRows> session_reference(const CaseEnv& env, const std::vector<TokenId>& prompt,
                                    const std::vector<ScriptStep>& cont, int64_t n_ctx) {
    auto s = Session::create(env.model, session_options(env.b.spec(), env.kv, n_ctx));
    if (!s) return s.error();
    LogitRows rows;
    rows.n_vocab = env.n_vocab();
    if (auto st = (*s)->feed(prompt); !st) return make_error("prompt: " + st.message());
    rows.add({0, int64_t(prompt.size()) - 1, 0}, (*s)->last_logits().data());
    if (auto st = feed_all(**s, cont, 1, rows); !st) return st.error();
    return rows;
}

// Session A takes the prompt and parks; a fresh session B wakes and takes the continuation.
Result<LogitRows> session_parked(const CaseEnv& env, const std::vector<TokenId>& prompt,
                                 const std::vector<ScriptStep>& cont, int64_t n_ctx, const std::string& path) {
    auto sa = Session::create(env.model, session_options(env.a.spec(), env.kv, n_ctx));
    if (!sa) return make_error("A(" + env.a.spec().text + "): " + sa.message());
    if (auto st = (*sa)->feed(prompt); !st) return make_error("A prompt: " + st.message());
    if (auto st = (*sa)->park(path, nullptr); !st) return make_error("A park: " + st.message());
    auto sb = Session::create(env.model, session_options(env.b.spec(), env.kv, n_ctx));
    if (!sb) return sb.error();
    auto rep = (*sb)->wake(path);
    if (!rep) return make_error("B wake: " + rep.message());
    if (rep->restored_cells != int64_t(prompt.size()) || !rep->problem.empty())
        return make_error("B wake restored " + std::to_string(rep->restored_cells) + " cells, recomputed " +
                          std::to_string(rep->recomputed_cells) + (rep->problem.empty() ? "" : ": " + rep->problem));
    LogitRows rows;
    rows.n_vocab = env.n_vocab();
    rows.add({0, int64_t(prompt.size()) - 1, -1}, (*sb)->last_logits().data());
    if (auto st = feed_all(**sb, cont, 0, rows); !st) return make_error("B after wake: " + st.message());
    return rows;
}

}  // namespace

void session_park_case(const CaseEnv& env, int64_t len) {
    std::mt19937 rng(4000 + uint32_t(len));
    const std::vector<TokenId> prompt = random_tokens(rng, env.n_vocab(), len);
    const std::vector<ScriptStep> cont = continuation(env.n_vocab(), rng);
    const int64_t n_ctx = kKvPageCells;
    const std::string path = env.tmp_dir + "/session-" + std::string(kv_type_name(env.kv)) + ".park";
    // Session options carry the backend name and threads only (not scalar); the A side's spec
    // must say which backend parks.
    judge(env, "session-park" + std::to_string(len) + "-a>b", session_parked(env, prompt, cont, n_ctx, path),
          session_reference(env, prompt, cont, n_ctx));
}

}  // namespace arbor::exact
