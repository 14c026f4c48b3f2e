// What the megakernel executes: a program of stages grouped in dependency levels (the device
// form of a pass plan). Shared by host and device code; plain data only.
#pragma once

#include "mk_control.hpp"
#include "mk_model.hpp"

#include <cstdint>

namespace arbor::quant {
struct BlockQ8A;
}

namespace arbor::gpu {

enum MkOp : int {
    kOpDotRows = 1,     // out[r] = dot_row(type, W row r, x | xq), one warp per row      items: rows
    kOpSignal = 2,      // counters[c] += 1, once                                          items: 1
    kOpWaitCounter = 3, // wait until counters[c] >= target, then nothing                  items: 1
};

struct MkDotRows {
    const uint8_t* w;
    unsigned long long row_bytes;
    long long rows;
    long long n;
    int type;  // arbor::TensorType
    const float* x;
    const quant::BlockQ8A* xq;
    float* out;
};

struct MkCounterOp {
    int counter;
    unsigned target;
};

// MkStage::tail values (a stage is at most one of them; the host sets either only on the
// workgroup ops it names, gpu_backend.hip build_program).
constexpr int kMkStageTail = 1;   // ARBOR_MK_BARRIER_TAILS: the last workgroup to arrive runs it
constexpr int kMkStageEvery = 2;  // ARBOR_MK_PROLOGUES: every workgroup runs it, then its level's next stage

struct MkStage {
    int op;
    int level;
    // kMkStageTail (ARBOR_MK_BARRIER_TAILS): this stage is its level's only one, and the last
    // workgroup to arrive at the grid barrier before it runs all of its items (megakernel.hip).
    // kMkStageEvery (ARBOR_MK_PROLOGUES): every workgroup runs all of this workgroup stage's items
    // before the next stage of its level (a decode step's router select ahead of the expert FFN).
    int tail;
    long long items;
    union {
        MkDotRows dot;
        MkCounterOp counter;
        MkModelStage model;  // op >= kOpEmbed (mk_model.hpp)
    };
};

struct MkProgram {
    const MkStage* stages;  // device memory, in level order
    int n_stages;
    int n_levels;
    MkEvent* events;        // null: profiling off; else [grid][max_events]
    int max_events;
};

}  // namespace arbor::gpu
