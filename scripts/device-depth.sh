#!/bin/bash
# The deep rows of issues 11 and 12 on the device machine, one part per device call (each part
# stays under the 600 s a call may take). Run it after scripts/device-check.sh on the same warm
# machine: it reuses that build (/tmp/b) and the synthetic shapes (/tmp/arbor-shapes), and makes
# them itself on a fresh machine (about 220 s more).
#   bash scripts/device-depth.sh fn     flashnext decode@229/4096/16384/31900 with a profile of the
#                                       31900 step, the context saved; then the same context woken
#                                       for decode@31900/16384 with ARBOR_FN_REPOOL=1 (scoring
#                                       without the block-key cache; builds without that switch
#                                       ignore it, so compare the profiles' index_score rows)
#   bash scripts/device-depth.sh moe32k qwen3moe-30b-a3b decode@32000 (and decode@229 beside it)
#   bash scripts/device-depth.sh moer32k the issue's other decode rows on the routed MoE (moer):
#                                       decode@32000, decode@4096 and decode@229, three reps
#   bash scripts/device-depth.sh x8a    the routed MoE (moer) read50x4@16384, its four contexts saved
#   bash scripts/device-depth.sh x8b    moer read50x8@16384, contexts 1-4 woken from x8a's files
#                                       (the two ran on the zero-data `moe` until gpu-next29)
#   bash scripts/device-depth.sh fn16k  flashnext decode@16384 (profiled: the indexer at 16k),
#                                       prefill256@16384, read50@16384, read50x4@16384, the four
#                                       contexts saved
#   bash scripts/device-depth.sh fn16kb flashnext decode@16384 with ARBOR_FN_REPOOL=1 (profiled) on
#                                       fn16k's first context, then read50x8@16384 (contexts 1-4
#                                       woken from fn16k's files)
# Results go to $OUT (or /tmp/depth-out); each part prints its rows and the profile summed per
# stage (scripts/profile-sum.awk). Record them in docs/BENCHMARKS.md.
set -u
part=${1:-}
BUILD=${ARBOR_EXACT_BUILD:-/tmp/b}
OUTDIR=${OUT:-/tmp/depth-out}
CLI="$BUILD/engine/arbor-cli"
mkdir -p "$OUTDIR" /tmp/arbor-shapes /tmp/ctx /tmp/ctx-fn
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
case "$part" in fn | moe32k | moer32k | x8a | x8b | fn16k | fn16kb) ;; *) echo "usage: device-depth.sh fn|moe32k|moer32k|x8a|x8b|fn16k|fn16kb"; exit 2 ;; esac
if [ ! -x "$CLI" ]; then
    cmake -S . -B "$BUILD" -G Ninja -DARBOR_APP=OFF -DARBOR_CUDA=ON -DARBOR_GFX1151_CHECK=OFF \
        -DCMAKE_BUILD_TYPE=Release >"$BUILD.configure.log" 2>&1 || { tail -30 "$BUILD.configure.log"; exit 2; }
    ninja -C "$BUILD" arbor-cli >"$BUILD.build.log" 2>&1 || { grep -E "error" -A3 "$BUILD.build.log" | head -40; exit 2; }
    echo "build: $(el) s"
fi
# shape NAME: the zero-data synthetic model /tmp/arbor-shapes/NAME.gguf (scripts/device-shapes.sh)
. "$(dirname "$0")/device-shapes.sh"
shape() { make_shapes "$CLI" "$1"; [ -f "/tmp/arbor-shapes/$1.gguf" ] || exit 2; }
# bench NAME TIMEOUT LABEL ARGS...: one bench run, its output in $OUTDIR/LABEL.txt; prints the
# rows, the park/wake lines, errors and the profile per stage.
bench() {
    local m=$1 limit=$2 label=$3; shift 3
    timeout "$limit" "$CLI" bench -m "/tmp/arbor-shapes/$m.gguf" --backend gpu --json "$OUTDIR/$label.json" "$@" \
        >"$OUTDIR/$label.txt" 2>&1
    echo "== $label (rc $?, $(el) s)"
    grep -E "^(decode|read|prefill|error)|context [0-9]+/[0-9]+: [0-9]+ cells (in|woken)|saved context" "$OUTDIR/$label.txt"
    if grep -q "^profile of one pass" "$OUTDIR/$label.txt"; then
        awk -f scripts/profile-sum.awk "$OUTDIR/$label.txt" | sort -rn | head -16
        grep -h '^phase' "$OUTDIR/$label.txt"
    fi
}
case "$part" in
fn)
    shape fn
    rm -f /tmp/ctx/arbor-bench-c1-31900.park
    bench fn 420 fn-depth --rows decode@31900,decode@16384,decode@4096,decode@229 --reps 2 --warmup 1 \
        --save-contexts /tmp/ctx --profile /tmp/fn-depth.trace.json
    ARBOR_FN_REPOOL=1 bench fn 150 fn-repool --rows decode@31900,decode@16384 --reps 2 --warmup 1 \
        --context /tmp/ctx/arbor-bench-c1-31900.park --profile /tmp/fn-repool.trace.json
    ;;
moe32k)
    shape moe
    bench moe 560 moe-32k --rows decode@32000,decode@229 --reps 2 --warmup 1 --profile /tmp/moe-32k.trace.json
    ;;
moer32k)
    shape moer
    bench moer 560 moer-32k --rows decode@32000,decode@4096,decode@229 --reps 3 --warmup 1
    ;;
x8a)
    shape moer
    rm -f /tmp/ctx-x8/arbor-bench-c?-16384.park
    mkdir -p /tmp/ctx-x8
    bench moer 560 moer-x4 --rows read50@16384,read50x4@16384 --reps 2 --warmup 1 --save-contexts /tmp/ctx-x8
    ;;
x8b)
    shape moer
    c=/tmp/ctx-x8/arbor-bench-c
    bench moer 560 moer-x8 --rows read50@16384,read50x8@16384 --reps 2 --warmup 1 \
        --context "${c}1-16384.park,${c}2-16384.park,${c}3-16384.park,${c}4-16384.park"
    ;;
fn16k)
    shape fn
    rm -f /tmp/ctx-fn/arbor-bench-c?-16384.park
    bench fn 560 fn-16k --rows decode@16384,prefill256@16384,read50@16384,read50x4@16384 --reps 2 --warmup 1 \
        --save-contexts /tmp/ctx-fn --profile /tmp/fn-16k.trace.json
    ;;
fn16kb)
    shape fn
    c=/tmp/ctx-fn/arbor-bench-c
    ARBOR_FN_REPOOL=1 bench fn 120 fn-16k-repool --rows decode@16384 --reps 2 --warmup 1 --context "${c}1-16384.park" \
        --profile /tmp/fn-16k-repool.trace.json
    bench fn 480 fn-x8 --rows read50@16384,read50x8@16384 --reps 2 --warmup 1 \
        --context "${c}1-16384.park,${c}2-16384.park,${c}3-16384.park,${c}4-16384.park"
    ;;
esac
echo "total: $(el) s"
