#!/bin/bash
# Builds the CUDA engine here (nvcc, no Qt) with extra CUDA flags, and packs arbor-cli and the GPU
# exactness programs, stripped and gzipped, into .carry/bin for a device call, so that the call
# spends no device time building (a build there takes about 330 s of the session's 1800).
# Usage: bash scripts/device-local-build.sh "CUDA FLAGS"     e.g.
#   bash scripts/device-local-build.sh "-DARBOR_MK_SOME_SWITCH=1"
# Builds with run-time A/B switches (=2 modes) let one binary time both paths in one call.
# About 20 minutes on two cores from nothing (the megakernel's translation unit alone about 12),
# then a relink. The binaries link libstdc++ dynamically: they need glibc 2.34 and GLIBCXX_3.4.29
# (objdump -T lists what they ask for); the device image's versions were not yet seen (the first
# call that carries them says). The carry must stay under 64 MiB: with .carry/models whole it
# does not, so this drops the models the suite does not require (random-llama-bf16, qwen3moe
# Q2_K and Q3_K_M; tests/gpu/logits_exact_models.cpp lists the required ones): those cases are
# left out of that call's gpu_logits_exact, and of every later call until
# `bash scripts/device-carry.sh` puts them back (gpu-next20 ran 356 of 371 cases so). On the device:
#   B=/tmp/x; mkdir -p $B; for f in arbor-cli gpu_logits_exact gpu_megakernel_exact; do
#     gzip -dc .carry/bin/$f.gz > $B/$f; chmod +x $B/$f; done
#   $B/gpu_logits_exact --a gpu --b cpu --models $PWD/.carry/models --cli $B/arbor-cli
#   ARBOR_GPU_MODELS=$PWD/.carry/models $B/gpu_megakernel_exact
# (carry [".carry/models", ".carry/bin"]).
set -euo pipefail
cd "$(dirname "$0")/.."
flags=${1:-}
build=${ARBOR_LOCAL_BUILD:-/tmp/arbor-local-build}
command -v nvcc >/dev/null || { echo "error: no nvcc here"; exit 2; }
cmake -S . -B "$build" -G Ninja -DARBOR_APP=OFF -DARBOR_CUDA=ON -DARBOR_GFX1151_CHECK=OFF \
    -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CUDA_FLAGS=$flags" >"$build.configure.log" 2>&1 ||
    { echo "error: configure failed (see $build.configure.log)"; exit 1; }
nice ninja -C "$build" arbor-cli gpu_logits_exact gpu_megakernel_exact >"$build.build.log" 2>&1 ||
    { tail -20 "$build.build.log"; echo "error: build failed (see $build.build.log)"; exit 1; }
[ -d .carry/models ] || bash scripts/device-carry.sh >/dev/null
rm -f .carry/models/random-llama-bf16.gguf .carry/models/random-qwen3moe-Q2_K.gguf .carry/models/random-qwen3moe-Q3_K_M.gguf
rm -rf .carry/bin
mkdir -p .carry/bin
for f in engine/arbor-cli tests/gpu/gpu_logits_exact tests/gpu/gpu_megakernel_exact; do
    n=$(basename "$f")
    strip -o ".carry/bin/$n" "$build/$f"
    gzip -9 ".carry/bin/$n"
done
echo "glibc and libstdc++ versions asked for: $(objdump -T "$build/engine/arbor-cli" | grep -o 'GLIBC[XX]*_[0-9.]*' | sort -uV | awk -F_ '{v[$1] = $2} END {for (k in v) printf "%s %s ", k, v[k]}')"
tree=$(git ls-files -z --cached --others --exclude-standard | xargs -0 -r du -cb 2>/dev/null |
    awk '$2 == "total" {s += $1} END {print s + 0}')
total=$((tree + $(du -sb .carry | cut -f1)))
echo "flags: ${flags:-none}; carry $((total / 1048576)) MiB of 64"
[ "$total" -lt $((64 * 1048576)) ] || { echo "error: over the 64 MiB a device call may carry"; exit 1; }
