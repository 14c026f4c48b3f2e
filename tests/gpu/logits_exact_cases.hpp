// The cases of the logits exactness suite. Every case runs the same tokens through backend A
// and backend B (the reference) and requires the logits to be equal bit for bit:
//   prefillL-aX-bY   one sequence of L tokens (all rows) in one eval call, A cut into passes of
//                    X tokens by max_batch_tokens, B into passes of Y; then decode steps
//   prefillL-caller37  A fed in eval calls of 37 tokens, B in one call
//   page-edge        255 prompt tokens, then decode steps across the 256-cell page boundary
//   batchN           N sequences of different prompts and lengths in one eval call, decode
//                    steps with all of them at once, a mixed step (some prefill, some decode,
//                    some idle), then decode steps in reversed batch order
//   batch8-vs-solo   A batched, B one sequence per eval call
//   batch8-a7        A batched with max_batch_tokens 7 (entries cut mid-run), B with 256
//   parkL-a>b, -a>a, -b>a  L tokens on the first backend, parked (write_park_file), woken
//                    (read_park_file) into a cache of the second, then decode steps; compared
//                    with B never parked (the woken row is the park file's logits)
//   session-parkL-a>b   the same through Session::park / Session::wake
//   nan-kv           NaN and infinite K and V elements written into the cache of three of
//                    four batched sequences: A and B equal with any NaN equal to any NaN, the
//                    fourth sequence untouched (logits_exact_nan.cpp)
// Each case runs once per KV type of its plan (/f16, /f32). Each side's rows are also checked
// finite and not all equal (nan-kv: B's untouched sequence finite).
#pragma once

#include "logits_exact_backends.hpp"
#include "logits_exact_rows.hpp"
#include "logits_exact_script.hpp"

#include <arbor/kv_cache.hpp>
#include <arbor/model.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace arbor::exact {

struct PrefillCase {
    int64_t len = 0;                    // prompt tokens (every row), then decode steps
    int64_t mbt_a = 256, mbt_b = 256;   // each side's max_batch_tokens
};

// What runs for one model (logits_exact_plans.cpp).
struct CasePlan {
    std::vector<KvType> kv_types;
    std::vector<PrefillCase> prefill;
    int64_t caller_chunks_len = 0;                            // 0: no prefillL-caller37
    bool page_edge = false;
    std::vector<int32_t> batches;                             // sequences per batch case
    bool long_batch = false;                                  // one batch prompt of 270 tokens
    bool batch_solo = false, batch_a7 = false;                // need 8 in batches
    std::vector<int64_t> park_lens;
    bool park_reverse = false;                                // also park on B, wake on A
    int64_t session_park_len = 0;                             // 0: none
    bool nan_kv = false;                                      // the nan-kv case
    // A test of the suite itself: flip the lowest bit of one logit of A's first row in every
    // case, which must then fail every case.
    bool plant_difference = false;
};
// Every case, both KV types: for one model per architecture (and every model with --exhaustive).
CasePlan full_plan();
// The weight-type plan, for the other files of an architecture: what the weights touch (one
// pass across the page boundary, caller chunks, a batch of 8, park to B) with KV f16.
CasePlan type_plan();
// CI's plan: a few seconds over four models; the smallest (`small`) gets the page boundary,
// f32 and Session park.
CasePlan quick_plan(bool small);

// "ok MODEL CASE (S s)" or "FAIL MODEL CASE: why (S s)", where S is the time since the last
// line (shared reference runs count towards the first case that uses them).
class Reporter {
public:
    Reporter();
    void ok(std::string_view model, std::string_view name);
    void fail(std::string_view model, std::string_view name, std::string_view detail);
    int cases() const { return cases_; }
    int failed() const { return failed_; }

private:
    double lap();
    int cases_ = 0, failed_ = 0;
    double last_ = 0;
};

struct CaseEnv {
    std::string label;  // the model, as printed
    std::shared_ptr<const Model> model;
    BackendPool& a;
    BackendPool& b;
    KvType kv;
    std::string tmp_dir;  // for park files
    Reporter& rep;
    bool plant = false;  // CasePlan::plant_difference

    std::string name(std::string_view base) const;  // base + "/f16"
    int64_t n_vocab() const { return model->config().n_vocab; }
};

// Runs a script on a fresh cache of the pool's backend with this max_batch_tokens.
Result<LogitRows> play(BackendPool& p, int64_t max_batch_tokens, KvType kv, const Script& s);
// Flips the lowest bit of the middle logit of the first row (CasePlan::plant_difference).
void plant_difference(LogitRows& r);
// Reports one case: either side's error, a row that is not finite, rows that are all the same
// (the runner would be collecting one row over and over), or the first difference.
void judge(const CaseEnv& env, std::string_view base, const Result<LogitRows>& a, const Result<LogitRows>& b);

void prefill_cases(const CaseEnv& env, const CasePlan& plan);
void batch_cases(const CaseEnv& env, const CasePlan& plan);
void park_cases(const CaseEnv& env, int64_t len, bool reverse);
void session_park_case(const CaseEnv& env, int64_t len);
void nan_kv_case(const CaseEnv& env);

// Every case of the plan, for each of its KV types.
void run_model_cases(const std::string& label, std::shared_ptr<const Model> model, BackendPool& a, BackendPool& b,
                     const CasePlan& plan, const std::string& tmp_dir, Reporter& rep);

}  // namespace arbor::exact
