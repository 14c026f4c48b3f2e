// Small programs the GPU suites run through the real megakernel: row dots of every weight
// format (bit-exactness against the CPU), a planted hang, and a satisfied counter hand-off.
#include "arbor_hip.hpp"
#include "gpu_runtime.hpp"
#include "mk_launch.hpp"

#include <cstring>

namespace arbor::gpu {
namespace {

// A device buffer that frees itself.
struct DevBuf {
    void* p = nullptr;
    ~DevBuf() {
        if (p) (void)hipFree(p);
    }
    Status alloc_copy(const void* src, size_t n) {
        hipError_t e = hipMalloc(&p, n ? n : 1);
        if (e != hipSuccess) return make_error(std::string("device allocation failed: ") + hipGetErrorString(e));
        if (src && n && (e = hipMemcpy(p, src, n, hipMemcpyHostToDevice)) != hipSuccess)
            return make_error(std::string("upload failed: ") + hipGetErrorString(e));
        return {};
    }
};

}  // namespace

Status mk_dot_rows(TensorType t, const void* w, size_t row_bytes, int64_t rows, int64_t n, const float* x,
                   const quant::BlockQ8A* xq, float* out, const RunOptions& opt, LaunchInfo* info) {
    // The packed sub-block terms (quant_blocks_packed.hpp) read the blocks in 2- or 4-byte words,
    // the wide loads (mk_dot.hpp) Q4_K and Q5_K blocks in 16-byte words and IQ4_XS blocks in
    // 8-byte words, and the float rows (float_chains) one word an element: every row must start at
    // such a boundary (the buffer itself is 256-byte aligned). Whole-block rows always do.
    const size_t align = (t == TensorType::Q4_K || t == TensorType::Q5_K) ? 16
                         : t == TensorType::IQ4_XS                         ? 8
                         : t == TensorType::F32                            ? 4
                         : (t == TensorType::Q4_0 || t == TensorType::Q8_0 || t == TensorType::Q6_K ||
                            t == TensorType::IQ4_NL || t == TensorType::F16 || t == TensorType::BF16)
                             ? 2
                             : 1;
    if (row_bytes % align != 0)
        return make_error("rows of " + std::to_string(row_bytes) + " bytes break the " + std::to_string(align) +
                          "-byte alignment the GPU row dot needs for this type");
    auto rt = MkRuntime::get();
    if (!rt) return rt.error();
    DevBuf dw, dx, dq, dout;
    if (auto s = dw.alloc_copy(w, row_bytes * size_t(rows)); !s) return s;
    if (auto s = dx.alloc_copy(x, x ? sizeof(float) * size_t(n) : 0); !s) return s;
    if (auto s = dq.alloc_copy(xq, xq ? sizeof(quant::BlockQ8A) * size_t(n / 32) : 0); !s) return s;
    if (auto s = dout.alloc_copy(nullptr, sizeof(float) * size_t(rows)); !s) return s;
    MkStage st{};
    st.op = kOpDotRows;
    st.level = 0;
    st.items = rows;
    st.dot = MkDotRows{static_cast<const uint8_t*>(dw.p), row_bytes, rows, n, static_cast<int>(t),
                       x ? static_cast<const float*>(dx.p) : nullptr,
                       xq ? static_cast<const quant::BlockQ8A*>(dq.p) : nullptr, static_cast<float*>(dout.p)};
    if (auto s = (*rt)->run({st}, opt, info); !s) return s;
    hipError_t e = hipMemcpy(out, dout.p, sizeof(float) * size_t(rows), hipMemcpyDeviceToHost);
    if (e != hipSuccess) return make_error(std::string("download failed: ") + hipGetErrorString(e));
    return {};
}

Status mk_planted_hang(const RunOptions& opt, LaunchInfo* info) {
    auto rt = MkRuntime::get();
    if (!rt) return rt.error();
    // Level 0 signals counter 0 once; level 1 waits for counter 1, which nothing signals.
    MkStage a{}, b{};
    a.op = kOpSignal;
    a.level = 0;
    a.items = 1;
    a.counter = MkCounterOp{0, 0};
    b.op = kOpWaitCounter;
    b.level = 1;
    b.items = 1;
    b.counter = MkCounterOp{1, 1};
    return (*rt)->run({a, b}, opt, info);
}

Status mk_counter_handoff(const RunOptions& opt, LaunchInfo* info) {
    auto rt = MkRuntime::get();
    if (!rt) return rt.error();
    MkStage a{}, b{};
    a.op = kOpSignal;
    a.level = 0;
    a.items = 1;
    a.counter = MkCounterOp{2, 0};
    b.op = kOpWaitCounter;
    b.level = 1;
    b.items = 1;
    b.counter = MkCounterOp{2, 1};
    return (*rt)->run({a, b}, opt, info);
}

}  // namespace arbor::gpu
