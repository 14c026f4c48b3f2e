// The GPU backend's flashnext part (docs/MODEL-flashnext.md, docs/GPU.md): the weights the
// architecture adds to the upload, its device pass block (MkFnPass) and buffers, and the device
// stages of the plan ops only flashnext has. gpu_backend.hip owns one of these for a flashnext
// model and asks it for the steps of those plan stages; the ops flashnext shares with qwen3moe
// (QkvRope, Router, ExpertGatedFfn, Quantize, LmHead) stay the backend's own.
#pragma once

#include "mk_flashnext.hpp"
#include "mk_model.hpp"

#include <arbor/model.hpp>
#include <arbor/result.hpp>

#include "model/model_weights.hpp"
#include "model/pass_plan.hpp"

#include <cstdint>
#include <functional>
#include <vector>

namespace arbor::gpu {

// One device stage of a plan stage: op, work items, arguments, profile label suffix.
struct FnStep {
    int op;
    int64_t items;
    MkModelStage a;
    const char* suffix;
};

class FlashNextDevice {
public:
    using WeightFn = std::function<Result<MkW>(const WeightRef&)>;
    using VectorFn = std::function<const float*(const std::vector<float>&)>;

    FlashNextDevice() = default;
    FlashNextDevice(const FlashNextDevice&) = delete;
    FlashNextDevice& operator=(const FlashNextDevice&) = delete;
    ~FlashNextDevice();

    // The matrices and the small vectors flashnext adds to the backend's upload.
    static std::vector<const WeightRef*> weight_refs(const ModelWeights& w);
    static std::vector<const std::vector<float>*> vectors(const ModelWeights& w);
    // Whether a plan op is built here.
    static bool builds(plan::Op op);

    // After the upload: the layer table, the pass block and the buffers for max_tokens.
    // dev_weight / dev_vector: the backend's device addresses of uploaded tensors.
    Status init(const ModelConfig& c, const ModelWeights& w, int64_t max_tokens, const WeightFn& dev_weight,
                const VectorFn& dev_vector);
    const MkFnPass* device() const { return dev_; }
    // Before a pass whose largest position is max_pos: grows the score buffer when needed.
    Status prepare(int64_t max_pos);
    // The device steps of plan stage s (builds(s.op)); `base` carries the stage's pass, layer,
    // norm, weight and flags as gpu_backend.hip fills them.
    void steps(const plan::Stage& s, const MkModelStage& base, int64_t T, int64_t n_out, int64_t max_chunks,
               std::vector<FnStep>& out) const;

private:
    Status alloc(void** p, size_t bytes, const char* what);
    Status upload_pass();

    const ModelConfig* cfg_ = nullptr;
    const ModelWeights* w_ = nullptr;
    int64_t max_tokens_ = 0;
    int64_t max_pos_ = 0;
    int64_t score_chunks_ = 0;  // the score buffer holds rows of 64 * score_chunks_ blocks
    MkFnPass host_{};
    MkFnPass* dev_ = nullptr;
    MkFnLayerW* layers_ = nullptr;
    std::vector<void*> owned_;  // device allocations, freed at the end
};

}  // namespace arbor::gpu
