// The case plans of the logits exactness suite: which cases run on which model.
//
// Cost on the device is counted in GPU passes (one persistent-kernel launch each): the full
// plan is about 1,000 passes a model, most of them the max_batch_tokens 1 and 7 cases, so it
// runs on one model per architecture; the weight-type plan is about 50 (nan-kv's 12 of them: three
// runs of four calls).
#include "logits_exact_cases.hpp"

namespace arbor::exact {

CasePlan full_plan() {
    CasePlan p;
    p.kv_types = {KvType::F16, KvType::F32};
    p.prefill = {{300, 256, 256}, {300, 7, 256}, {40, 1, 256}, {300, 256, 7}};
    p.caller_chunks_len = 300;
    p.page_edge = true;
    p.batches = {1, 4, 8};
    p.long_batch = true;
    p.batch_solo = p.batch_a7 = true;
    p.park_lens = {40, 256, 300};
    p.park_reverse = true;
    p.session_park_len = 40;
    p.nan_kv = true;
    return p;
}

CasePlan type_plan() {
    CasePlan p;
    p.kv_types = {KvType::F16};
    p.prefill = {{300, 256, 256}};
    p.caller_chunks_len = 300;
    p.batches = {8};
    p.long_batch = true;
    p.park_lens = {300};
    p.nan_kv = true;
    return p;
}

CasePlan quick_plan(bool small) {
    CasePlan p;
    p.kv_types = small ? std::vector<KvType>{KvType::F16, KvType::F32} : std::vector<KvType>{KvType::F16};
    p.prefill = {{small ? 300 : 40, 7, 256}};
    p.page_edge = small;
    p.batches = {4, 8};
    p.long_batch = small;
    p.batch_solo = true;
    p.park_lens = {small ? 300 : 40};
    p.park_reverse = true;
    p.session_park_len = small ? 40 : 0;
    p.nan_kv = true;
    return p;
}

}  // namespace arbor::exact
