#!/bin/bash
# The deep rows (read50@16384, prefill256@16384, decode@16384) and decode@229 of the qwen3moe
# (moer: routing kept, synth --routed) and qwen3-4b shapes for this tree's build and its
# variants, from one saved 16k context per shape, interleaved, two rounds. Run it on a warm
# machine after the build part of device-ab.sh (ARBOR_AB_BASE=none; the variants in /tmp/bv-NAME;
# on a bare machine it runs that build part itself first, given the same ARBOR_AB_VARIANTS):
#   run(command="ARBOR_DEEP_VARIANTS='op' bash scripts/device-deep-rows.sh", carry=[".carry/models"])
# About 70 s for the two contexts (made once per machine by this tree's build), then about 12 s
# a build, shape and round. Prints "round shape build row p50 min max" (ms) and writes
# $OUT/deep-rows.txt. ARBOR_DEEP_ROUNDS sets the rounds, ARBOR_DEEP_SHAPES the shapes,
# ARBOR_DEEP_ROWS the rows (bench's --rows list; e.g. add read50@229,prefill256@229). A variant
# NAME:VAR=VALUE runs build NAME (main: this tree's) with that environment variable set, e.g.
# ARBOR_DEEP_VARIANTS="op main:ARBOR_GPU_HEAD_SPLIT=0" (a run-time switch costs no build).
# ARBOR_DEEP_PROFILE="main op" then profiles each named build's decode@16384 (from the first
# shape's saved context) and decode@229, one pass each (about 10 s a build), into
# /tmp/prof-NAME-d16k.txt and prof-NAME-d229.txt, all of them appended to $OUT/profiles.txt (a call
# brings back at most 8 files), and prints each profile's stages summed over
# the layers (scripts/profile-sum.awk), the largest first, and the attention items' phases. A
# profile entry NAME:VAR=VALUE profiles build NAME with that one variable set, e.g.
# main:ARBOR_GPU_PROBE_REPEAT=1 (the attention chunk stages cold, then warm; its files are
# named with the entry's odd characters as '_').
set -u
. "$(dirname "$0")/device-shapes.sh"  # save_context, bench_rows
OUTDIR=${OUT:-/tmp/check-out}
mkdir -p "$OUTDIR"
base=/tmp/b/engine/arbor-cli
# A machine released since the build call (it is held only 30 s after a call) comes back bare:
# then build here first, this tree and the variants ARBOR_AB_VARIANTS names (the build call's
# variable, passed again), without the exactness runs (gpu-next30 lost a call and a start to it).
if [ ! -x "$base" ]; then
    echo "no build at /tmp/b (a fresh machine): building this tree${ARBOR_AB_VARIANTS:+ and its variants} first"
    ARBOR_AB_PART=build ARBOR_AB_BASE=none ARBOR_AB_EXACT=0 ARBOR_AB_VARIANT_EXACT=0 bash "$(dirname "$0")/device-ab.sh" | tail -4
    [ -x "$base" ] || { echo "error: no build at /tmp/b after building"; exit 2; }
fi
for m in ${ARBOR_DEEP_SHAPES:-moer q4b}; do
    [ -f /tmp/arbor-shapes/$m.gguf ] || { echo "error: no shape /tmp/arbor-shapes/$m.gguf"; exit 2; }
    save_context "$base" $m || exit 2
    echo "context $m: $SECONDS s"
done
# An entry NAME or NAME:VAR=VALUE: sets b (the build), e (the environment setting, a harmless
# one for NAME alone) and cli; false when the entry is malformed or its build is missing.
entry() {
    b=${1%%:*} e=X_ARBOR_UNSET=1
    [ "$b" != "$1" ] && e=${1#*:}
    case "$e" in [A-Za-z_]*=*) ;; *) echo "$1: not NAME or NAME:VAR=VALUE"; return 1 ;; esac
    cli=/tmp/bv-$b/engine/arbor-cli
    [ "$b" = main ] && cli=$base
    [ -x "$cli" ]
}
rows=${ARBOR_DEEP_ROWS:-read50@16384,prefill256@16384,decode@16384,decode@229}
for round in $(seq "${ARBOR_DEEP_ROUNDS:-2}"); do
    for m in ${ARBOR_DEEP_SHAPES:-moer q4b}; do
        for v in main ${ARBOR_DEEP_VARIANTS:-}; do
            entry "$v" || { echo "$round $m $v FAIL (no build)"; continue; }
            env "$e" timeout 100 "$cli" bench -m /tmp/arbor-shapes/$m.gguf --backend gpu --rows $rows --reps 3 --warmup 1 \
                --context /tmp/ctx-$m/arbor-bench-c1-16384.park 2>&1 | bench_rows $round $m $v
        done
        echo "t=$SECONDS s"
    done
done | tee "$OUTDIR/deep-rows.txt"
m=${ARBOR_DEEP_SHAPES:-moer q4b}; m=${m%% *}
[ -n "${ARBOR_DEEP_PROFILE:-}" ] && : >"$OUTDIR/profiles.txt"
for v in ${ARBOR_DEEP_PROFILE:-}; do
    entry "$v" || { echo "profile $v: no build"; continue; }
    tag=$(printf '%s' "$v" | tr -c 'A-Za-z0-9_-' '_')  # main:ARBOR_GPU_PROBE_REPEAT=1 -> main_ARBOR_GPU_PROBE_REPEAT_1
    for r in d16k d229; do
        if [ $r = d16k ]; then
            args="--rows decode@16384 --context /tmp/ctx-$m/arbor-bench-c1-16384.park"
        else
            args="--rows decode@229"
        fi
        pf=/tmp/prof-$tag-$r.txt
        env "$e" timeout 100 "$cli" bench -m /tmp/arbor-shapes/$m.gguf --backend gpu $args --reps 1 --warmup 1 \
            --profile /tmp/prof-$tag-$r.json >"$pf" 2>&1 || echo "profile $v $r: failed"
        { echo "== profile $m $v $r"; cat "$pf"; } >>"$OUTDIR/profiles.txt"
        echo "profile $m $v $r (us summed over the layers):"
        awk -f "$(dirname "$0")/profile-sum.awk" "$pf" | sort -rn | head -14
        grep '^phase attn chunk' "$pf"  # the chunk items' phases
    done
done
