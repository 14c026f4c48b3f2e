#!/bin/bash
# Prepares the git-ignored folders a device call carries (run here, in the repository root):
#   .carry/models    the GGUF files gpu_logits_exact and gpu_megakernel_exact read, from
#                    ../shared/data (the suite's required files and the other quantized models,
#                    less random-qwen3moe-Q5_0/Q5_1 and random-qwen3-F16, so that the working
#                    tree and both folders stay under the 64 MiB a call may carry);
#   .carry/src-base  the source of a baseline tree for scripts/device-ab.sh (git archive REF),
#                    only when a REF is given.
# Usage: bash scripts/device-carry.sh [REF]      e.g. bash scripts/device-carry.sh main
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${ARBOR_SHARED_DATA:-../shared/data}
[ -d "$shared/quant" ] || { echo "error: no shared data at $shared (set ARBOR_SHARED_DATA)"; exit 2; }
rm -rf .carry/models
mkdir -p .carry/models
cp "$shared/models/stories260K.gguf" "$shared"/quant/random-*.gguf .carry/models/
rm -f .carry/models/random-qwen3-F16.gguf .carry/models/random-qwen3moe-Q5_0.gguf .carry/models/random-qwen3moe-Q5_1.gguf
if [ $# -ge 1 ]; then
    rm -rf .carry/src-base
    mkdir -p .carry/src-base
    git archive "$1" | tar -x -C .carry/src-base
    echo "src-base: $(git rev-parse --short "$1")"
fi
# What a call carries of the working tree: tracked files and untracked ones git does not ignore
# (a deleted tracked file is skipped, not an error; the totals of every du batch are added).
tree=$(git ls-files -z --cached --others --exclude-standard | xargs -0 -r du -cb 2>/dev/null |
    awk '$2 == "total" {s += $1} END {print s + 0}')
carry=$(du -sb .carry | cut -f1)
total=$((tree + carry))
echo "working tree $((tree / 1048576)) MiB + .carry $((carry / 1048576)) MiB = $((total / 1048576)) MiB (limit 64)"
[ "$total" -lt $((64 * 1048576)) ] || { echo "error: over the 64 MiB a device call may carry"; exit 1; }
