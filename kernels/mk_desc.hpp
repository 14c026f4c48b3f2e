// The descriptor cache of ARBOR_MK_SMEM_DESC (mk_model.hpp): a workgroup's shared copy of the
// next level's first stages, of the pass they run and of their layer's weight record. Every
// item of a stage begins with a chain of dependent loads (the stage, its pass, the layer
// record, then the weights); after a grid barrier, with the weights streamed through L1, each of
// them is a trip to L2. Copied while the workgroup waits at the barrier, those loads come from
// shared memory. The program is constant for the launch, so the copy may run before the level
// is released. The fill begins with a workgroup barrier: between the arrival and the fill, the
// L2 prefetch (ARBOR_MK_L2_PREFETCH) may still read the cached stages.
#pragma once

#include "arbor_hip.hpp"
#include "mk_program.hpp"

namespace arbor::gpu {

constexpr int kMkDescStages = 4;  // a level's stages cached (later ones are read from global memory)

struct MkDescCache {
    MkStage st[kMkDescStages];
    MkPass pass;
    MkLayerW layer;
    int first;  // program index of st[0]
    int n;      // stages cached
};

// Copies `bytes` (a multiple of 4, both sides 4-byte aligned) with the workgroup's threads.
__device__ inline void mk_desc_copy(void* dst, const void* src, int bytes) {
    const unsigned* s = static_cast<const unsigned*>(src);
    unsigned* d = static_cast<unsigned*>(dst);
    for (int i = static_cast<int>(threadIdx.x); i < bytes / 4; i += static_cast<int>(blockDim.x)) d[i] = s[i];
}

// Fills the cache with stages first.. of prog (all threads of the workgroup; ends synchronized).
// The cached stages whose pass and layer record are the first stage's are pointed at the copies.
__device__ inline void mk_desc_fill(const MkProgram& prog, int first, MkDescCache* dc) {
    __syncthreads();  // no warp still reads the cache (the L2 prefetch reads it after the arrival)
    const int n = first < prog.n_stages ? min(kMkDescStages, prog.n_stages - first) : 0;
    mk_desc_copy(dc->st, prog.stages + first, n * static_cast<int>(sizeof(MkStage)));
    if (threadIdx.x == 0) dc->first = first, dc->n = n;
    __syncthreads();
    const bool model = n > 0 && dc->st[0].op >= kOpEmbed;
    const MkPass* gp = model ? dc->st[0].model.pass : nullptr;
    const MkLayerW* gl = model ? dc->st[0].model.lw : nullptr;
    if (gp) mk_desc_copy(&dc->pass, gp, static_cast<int>(sizeof(MkPass)));
    if (gl) mk_desc_copy(&dc->layer, gl, static_cast<int>(sizeof(MkLayerW)));
    __syncthreads();
    if (threadIdx.x == 0)
        for (int j = 0; j < n; ++j) {
            MkStage& st = dc->st[j];
            if (st.op < kOpEmbed) continue;
            if (gp && st.model.pass == gp) st.model.pass = &dc->pass;
            if (gl && st.model.lw == gl) st.model.lw = &dc->layer;
        }
    __syncthreads();
}

// Stage si: the cached copy when it is cached.
__device__ inline const MkStage& mk_desc_stage(const MkProgram& prog, const MkDescCache& dc, int si) {
    return si >= dc.first && si < dc.first + dc.n ? dc.st[si - dc.first] : prog.stages[si];
}

}  // namespace arbor::gpu
