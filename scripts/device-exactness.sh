#!/bin/sh
# The GPU-vs-CPU logits exactness suite of issue #10 on the device machine, in one call: builds
# arbor-cli and gpu_logits_exact with CUDA and runs the full suite (gpu vs cpu) against the
# carried model folder, printing its output (also written to $OUT/exactness.log when OUT is set).
#
# The model folder, .carry/models (git-ignored), holds GGUF files from the shared data:
#   required: stories260K.gguf, random-qwen3moe-MXFP4_MOE.gguf and, for both qwen3 and qwen3moe,
#             random-<arch>-{bf16,Q4_0,Q4_K_M,Q5_K_M,Q6_K,Q8_0,IQ4_NL,IQ4_XS}.gguf (40.6 MB);
#   also run when present: every other *.gguf there (Q2_K, Q3_K_M, Q4_1, Q5_0, Q5_1,
#             random-llama-bf16). The other architectures (qwen2, llama at the synthetic shape,
#             every architecture `arbor-cli synth` knows) are synthesized at run time.
# Fill it, from the repository root, with `bash scripts/device-carry.sh` (all but
# random-qwen3-F16, whose F16 weights the synthetic llama-F16 model covers, and the qwen3moe
# Q5_0/Q5_1 models, so that a baseline tree fits beside it in the 64 MiB a call may carry).
# Then one device call:
#   run(command="sh scripts/device-exactness.sh", carry=[".carry/models"], timeout_s=600)
# Arguments go to the suite: --quick, --only TEXT, or other backends, e.g.
#   sh scripts/device-exactness.sh --a cpu:threads=16 --b cpu:threads=1,scalar=1
# checks the build and the models on the device without the GPU backend.
# Environment: ARBOR_EXACT_BUILD (build folder, /tmp/b), ARBOR_EXACT_MODELS (.carry/models),
# ARBOR_EXACT_CMAKE_ARGS (more configure arguments, e.g. -DARBOR_CUDA=OFF to build without
# the kernels).
# Exit status: the suite's (0 all equal, 1 a case differs, 2 setup error), or the build's.
set -eu
BUILD=${ARBOR_EXACT_BUILD:-/tmp/b}
MODELS=${ARBOR_EXACT_MODELS:-.carry/models}

if [ ! -d "$MODELS" ]; then
    echo "error: no model folder $MODELS (see the header of $0 for what goes in it)"
    exit 2
fi
mkdir -p "$BUILD"
cmake -S . -B "$BUILD" -G Ninja -DARBOR_APP=OFF -DARBOR_CUDA=ON -DARBOR_GFX1151_CHECK=OFF \
    -DCMAKE_BUILD_TYPE=Release ${ARBOR_EXACT_CMAKE_ARGS:-} >"$BUILD/exactness-configure.log" 2>&1 || { cat "$BUILD/exactness-configure.log"; exit 2; }
ninja -C "$BUILD" arbor-cli gpu_logits_exact >"$BUILD/exactness-build.log" 2>&1 || { tail -n 60 "$BUILD/exactness-build.log"; exit 2; }
nvidia-smi -L 2>/dev/null || echo "(nvidia-smi lists no GPU)"

set -- --a gpu --b cpu --models "$MODELS" --cli "$BUILD/engine/arbor-cli" "$@"
if [ -n "${OUT:-}" ]; then
    status=0
    "$BUILD/tests/gpu/gpu_logits_exact" "$@" >"$OUT/exactness.log" 2>&1 || status=$?
    cat "$OUT/exactness.log"
    exit $status
fi
exec "$BUILD/tests/gpu/gpu_logits_exact" "$@"
