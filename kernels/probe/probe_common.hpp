// What the measurement probes (kernels/probe/*.hip) share.
#pragma once

#include "arbor_hip.hpp"

#include <cstdio>

namespace arbor::probe {

// A runtime call's result: true on success, else a line on stderr naming the tool, the step and
// the runtime's message.
inline bool ok(const char* tool, hipError_t e, const char* what) {
    if (e == hipSuccess) return true;
    std::fprintf(stderr, "%s: %s: %s\n", tool, what, hipGetErrorString(e));
    return false;
}

}  // namespace arbor::probe
