#!/bin/bash
# Builds the CUDA engine here (nvcc, no Qt) with extra CUDA flags, and packs arbor-cli and the GPU
# exactness programs, stripped and packed (xz, else gzip), into .carry/bin/NAME for a device call,
# so that the call spends no device time building (a build there takes about 330 s of the
# session's 1800, and every machine that does not start costs 90-180 s more before it).
# Usage: bash scripts/device-local-build.sh "CUDA FLAGS" [NAME]     e.g.
#   bash scripts/device-local-build.sh "" main
#   bash scripts/device-local-build.sh "-DARBOR_MK_SOME_SWITCH=1" sw
# NAME (default main) names the build in scripts/device-local-run.sh's ARBOR_LR_BUILDS; each name
# builds in its own folder (/tmp/arbor-local-build-NAME; ARBOR_LOCAL_BUILD overrides), so two
# names may build at once (one core each: the megakernel's translation unit is the long part).
# Builds with run-time A/B switches (=2 modes) let one binary time both paths in one call.
# About 14 minutes from nothing here (the megakernel's translation unit alone about 12), and two
# names at once take about as long (gpu-next32), then a relink. The binaries link libstdc++
# dynamically: they need glibc 2.34 and GLIBCXX_3.4.29 (objdump -T lists what they ask for),
# which the device image has (gpu-next20 ran them). A build packs to about 10 MiB by xz (12-13 by
# gzip, or with ARBOR_LOCAL_PACK=gzip; scripts/device-unpack.sh unpacks either there). The carry
# must stay under 64 MiB: with .carry/models whole and a build or more it does not, so this
# drops the models the suite does not require (random-llama-bf16, qwen3moe Q2_K and Q3_K_M;
# tests/gpu/logits_exact_models.cpp lists the required ones): those cases are left out of that
# call's gpu_logits_exact, and of every later call until `bash scripts/device-carry.sh` puts them
# back (gpu-next20 ran 356 of 371 cases so). scripts/device-local-run.sh unpacks and runs them: a
# call that checks exactness carries .carry/models and one build (.carry/bin/NAME: about 53 MiB
# with the tree packed by xz and the six optional models aside, 62 by gzip), and up to two more
# builds as arbor-cli alone; a call that times rows .carry/bin alone.
set -euo pipefail
cd "$(dirname "$0")/.."
flags=${1:-}
name=${2:-main}
case "$name" in *[!A-Za-z0-9_-]* | "") echo "error: a build's name is letters, digits, '_' and '-' (got '$name')"; exit 2 ;; esac
build=${ARBOR_LOCAL_BUILD:-/tmp/arbor-local-build-$name}
command -v nvcc >/dev/null || { echo "error: no nvcc here"; exit 2; }
cmake -S . -B "$build" -G Ninja -DARBOR_APP=OFF -DARBOR_CUDA=ON -DARBOR_GFX1151_CHECK=OFF \
    -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CUDA_FLAGS=$flags" >"$build.configure.log" 2>&1 ||
    { echo "error: configure failed (see $build.configure.log)"; exit 1; }
nice ninja -C "$build" arbor-cli gpu_logits_exact gpu_megakernel_exact >"$build.build.log" 2>&1 ||
    { tail -20 "$build.build.log"; echo "error: build failed (see $build.build.log)"; exit 1; }
[ -d .carry/models ] || bash scripts/device-carry.sh >/dev/null
rm -f .carry/models/random-llama-bf16.gguf .carry/models/random-qwen3moe-Q2_K.gguf .carry/models/random-qwen3moe-Q3_K_M.gguf
dest=.carry/bin/$name
rm -rf "$dest"
mkdir -p "$dest"
for f in engine/arbor-cli tests/gpu/gpu_logits_exact tests/gpu/gpu_megakernel_exact; do
    n=$(basename "$f")
    # Stripped in the build folder, so a build packing at the same time never counts it in .carry/bin.
    strip -o "$build/$n.stripped" "$build/$f"
    # xz where this machine has it, unless ARBOR_LOCAL_PACK=gzip (about a quarter smaller than
    # gzip -9: .carry/models, one build whole and two as arbor-cli alone then fit one call);
    # scripts/device-unpack.sh unpacks either on the device
    if [ "${ARBOR_LOCAL_PACK:-xz}" = xz ] && command -v xz >/dev/null; then
        xz -9e -T1 -c "$build/$n.stripped" >"$dest/$n.xz"
    else gzip -9c "$build/$n.stripped" >"$dest/$n.gz"; fi
    rm -f "$build/$n.stripped"
done
# What a later session compares with its checkout before carrying the build (docs/GPU.md "Next").
dirty=""
[ -z "$(git status --porcelain -- engine kernels tests CMakeLists.txt cmake)" ] ||
    dirty=" (with uncommitted changes to engine, kernels, tests, cmake or CMakeLists.txt)"
printf 'flags: %s\ncommit: %s%s\n' "${flags:-none}" "$(git rev-parse --short HEAD)" "$dirty" >"$dest/flags.txt"
echo "glibc and libstdc++ versions asked for: $(objdump -T "$build/engine/arbor-cli" | grep -o 'GLIBC[XX]*_[0-9.]*' | sort -uV | awk -F_ '{v[$1] = $2} END {for (k in v) printf "%s %s ", k, v[k]}')"
tree=$(git ls-files -z --cached --others --exclude-standard | xargs -0 -r du -cb 2>/dev/null |
    awk '$2 == "total" {s += $1} END {print s + 0}')
one=$((tree + $(du -sb "$dest" | cut -f1)))
models=$( (du -sb .carry/models 2>/dev/null || true) | cut -f1)
exact=$((one + ${models:-0}))
echo "$dest: flags ${flags:-none}, $(du -sh "$dest" | cut -f1); with the tree $((one / 1048576)) MiB," \
    "with .carry/models too $((exact / 1048576)) MiB (a call carries at most 64); every build in .carry/bin:" \
    "$(du -sh .carry/bin | cut -f1)"
[ "$one" -lt $((64 * 1048576)) ] || { echo "error: $dest and the tree are over the 64 MiB a device call may carry"; exit 1; }
[ "$exact" -lt $((64 * 1048576)) ] ||
    echo "note: too much for an exactness call (.carry/models and this build); carry fewer models"
