// The nan-kv case of the logits exactness suite: cached K and V elements that are NaN or
// infinite.
//
// Four sequences take their prompts in one eval call. Then some of their K and V elements are
// overwritten in the cache (as a bad park file or a stray write could leave them):
//   sequence 0  layer 0, KV head 0: a quiet NaN at cell 5 dim 0 and a signalling NaN with a
//               payload at cell 30 dim 7 (the last dim where the head is narrower);
//   sequence 1  the last layer, the last KV head: +inf in every dim of cell 2, -inf in every dim
//               of cell 20 (no NaN element, but their weighted sums are NaNs);
//   sequence 2  layer 0, the last KV head: a NaN K element at cell 10 dim 3 (its scores are
//               NaNs);
//   sequence 3  untouched.
// Then three more eval calls run all of them (decode steps, and a 3-token step). Every attention
// output dim those cells reach is a NaN on both backends. A quantized weight's dot then takes it
// as 0 (the Q8A contract) and the logits stay finite; a float weight's dot passes the NaN on.
// A and B must agree bit for bit, except that any NaN equals any NaN: the contract does not fix
// a NaN's payload (x86 keeps an operand's, the GPU's multiply-add gives its own). Sequence 3 must
// be finite and equal a run without the writes, and each of sequences 0 to 2 must differ from
// it in every row after the writes (else the writes were not read and the case proves nothing),
// where attention reads every cell: not where an indexer picks the cells (flashnext beyond its
// budget), which may skip the written ones.
// On the GPU, 128-dim heads with F16 KV take ARBOR_MK_O_PIPE's path here (and, where it is
// built, ARBOR_MK_SCORE_PIPE's): its NaN test and the rerun of the cells by the exact rounds.
#include "logits_exact_cases.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace arbor::exact {
namespace {

struct KvWrite {
    int32_t seq;
    bool k;           // else V
    bool last_layer;  // else layer 0
    bool last_head;   // else KV head 0
    int64_t cell;
    int64_t dim;      // -1: every dim of the row
    uint16_t f16;     // the element's bits for each KV type
    uint32_t f32;
};

constexpr KvWrite kWrites[] = {
    {0, false, false, false, 5, 0, 0x7e00, 0x7fc00000u},    // quiet NaN
    {0, false, false, false, 30, 7, 0x7d01, 0x7fa00001u},   // signalling NaN, a payload
    {1, false, true, true, 2, -1, 0x7c00, 0x7f800000u},     // +inf, the row
    {1, false, true, true, 20, -1, 0xfc00, 0xff800000u},    // -inf, the row
    {2, true, false, true, 10, 3, 0x7e00, 0x7fc00000u},     // quiet NaN in K
};
constexpr int32_t kSeqs = 4, kClean = 3;
constexpr int64_t kPrompt[kSeqs] = {40, 33, 23, 35};  // each at least a 16-cell round of the o loop

Status write_kv(KvSequence& s, const KvWrite& w) {
    if (w.cell >= s.size())
        return make_error("cell " + std::to_string(w.cell) + " is beyond the sequence's " + std::to_string(s.size()));
    if (auto st = s.prepare_write(w.cell, w.cell + 1); !st) return st;
    KvCache& c = s.cache();
    c.memory().sync();  // the passes that wrote the cells are done
    const KvLayout& L = c.layout();
    const int64_t layer = w.last_layer ? L.n_layer - 1 : 0, head = w.last_head ? L.n_head_kv - 1 : 0;
    const int64_t hd = w.k ? L.head_dim_k : L.head_dim_v;
    const int64_t d0 = w.dim < 0 ? 0 : std::min(w.dim, hd - 1), d1 = w.dim < 0 ? hd : d0 + 1;
    uint8_t* row = s.page_data(w.cell / kKvPageCells) + (w.k ? L.k_offset(layer, head) : L.v_offset(layer, head)) +
                   size_t((w.cell % kKvPageCells) * hd * L.elem_bytes);
    for (int64_t d = d0; d < d1; ++d) {
        if (L.type == KvType::F16) std::memcpy(row + d * 2, &w.f16, 2);
        else std::memcpy(row + d * 4, &w.f32, 4);
    }
    return {};
}

// The prompts (step 0), the writes (if any), then the other steps.
Result<LogitRows> run(BackendPool& p, KvType kv, const Script& sc, bool writes) {
    const std::vector<ScriptStep>& steps = sc.steps;
    auto be = p.get(256);
    if (!be) return be.error();
    ScriptRunner r(**be, kv, 256);
    if (auto s = r.init(sc.n_seqs, sc.n_ctx); !s) return s.error();
    if (auto s = r.step(steps[0]); !s) return make_error("prompts: " + s.message());
    if (writes)
        for (const KvWrite& w : kWrites)
            if (auto s = write_kv(r.seq(w.seq), w); !s) return make_error("KV write: " + s.message());
    for (size_t i = 1; i < steps.size(); ++i)
        if (auto s = r.step(steps[i]); !s) return make_error("step " + std::to_string(i) + ": " + s.message());
    return std::move(r.rows());
}

// Every NaN as 0x7fc00000.
LogitRows canonical(const LogitRows& r) {
    LogitRows c = r;
    for (float& v : c.data)
        if (std::isnan(v)) v = std::numeric_limits<float>::quiet_NaN();
    return c;
}

LogitRows of_seq(const LogitRows& r, int32_t seq, bool after_writes) {
    LogitRows o;
    o.n_vocab = r.n_vocab;
    for (size_t i = 0; i < r.size(); ++i)
        if (r.keys[i].seq == seq && (!after_writes || r.keys[i].step > 0)) o.add(r.keys[i], r.row(i));
    return o;
}

// "" when every row of `a` differs from the row of the same key in `b`.
std::string all_differ(const LogitRows& a, const LogitRows& b, const std::string& what) {
    for (size_t i = 0; i < a.size(); ++i)
        for (size_t j = 0; j < b.size(); ++j)
            if (a.keys[i].seq == b.keys[j].seq && a.keys[i].pos == b.keys[j].pos &&
                std::memcmp(a.row(i), b.row(j), size_t(a.n_vocab) * sizeof(float)) == 0)
                return what + ": sequence " + std::to_string(a.keys[i].seq) + " position " +
                       std::to_string(a.keys[i].pos) + " equals the run without the writes (were they read?)";
    return {};
}

}  // namespace

void nan_kv_case(const CaseEnv& env) {
    std::mt19937 rng(5000);
    Script sc;
    sc.n_seqs = kSeqs;
    std::vector<ScriptStep>& steps = sc.steps;
    steps.resize(4);
    for (int32_t i = 0; i < kSeqs; ++i) {
        steps[0].push_back({i, random_tokens(rng, env.n_vocab(), kPrompt[i]), LogitsMode::Last});
        steps[1].push_back({i, random_tokens(rng, env.n_vocab(), 1), LogitsMode::Last});
        steps[2].push_back({kSeqs - 1 - i, random_tokens(rng, env.n_vocab(), 1), LogitsMode::Last});
        steps[3].push_back({i, random_tokens(rng, env.n_vocab(), i == 0 ? 3 : 1), LogitsMode::All});
    }
    sc.n_ctx = sc.max_tokens(0);  // (sequence 0 is the longest)
    const std::string name = env.name("nan-kv");
    const std::string an = "A(" + env.a.spec().text + ")", bn = "B(" + env.b.spec().text + ")";
    const auto a = run(env.a, env.kv, sc, true);
    const auto b = run(env.b, env.kv, sc, true);
    const auto clean = run(env.b, env.kv, sc, false);
    if (!a) return env.rep.fail(env.label, name, an + ": " + a.message());
    if (!b) return env.rep.fail(env.label, name, bn + ": " + b.message());
    if (!clean) return env.rep.fail(env.label, name, bn + " without the writes: " + clean.message());
    LogitRows ca = canonical(*a);
    if (env.plant) plant_difference(ca);  // (a NaN stays one with its lowest bit flipped: memcmp tells)
    if (auto why = compare_rows(ca, canonical(*b), an, bn); !why.empty()) return env.rep.fail(env.label, name, why);
    const LogitRows kept = of_seq(*b, kClean, false);
    if (auto why = check_finite(kept, bn); !why.empty()) return env.rep.fail(env.label, name, why);
    if (auto why = compare_rows(kept, of_seq(*clean, kClean, false), bn, bn + " without the writes"); !why.empty())
        return env.rep.fail(env.label, name, "the untouched sequence changed: " + why);
    // Dense attention at every position (docs/MODEL-flashnext.md: while p + 1 <= budget + 3)
    const ModelConfig& c = env.model->config();
    const bool dense = c.index_dim == 0 || sc.n_ctx <= c.index_top_k + 3;
    for (int32_t s = 0; s < kClean && dense; ++s)
        if (auto why = all_differ(of_seq(*b, s, true), *clean, bn); !why.empty())
            return env.rep.fail(env.label, name, why);
    env.rep.ok(env.label, name);
}

}  // namespace arbor::exact
