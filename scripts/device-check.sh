#!/bin/bash
# Verify and measure a GPU change on the device machine (about 460 s on a fresh machine, 350-550
# s of it the build):
#   1. builds arbor-cli and the GPU test programs with CUDA;
#   2. where cuobjdump exists, counts local-memory loads and stores (LDL/STL) per kernel function
#      of the megakernel, the spills that matter in hot loops, and its SASS instructions;
#   3. runs gpu_megakernel_exact (row dots of every tensor of the carried models),
#      gpu_megakernel_hang and gpu_logits_exact --a gpu --b cpu (the full suite);
#   4. runs the exactness suite with the A/B switch ARBOR_GPU_HEAD_SPLIT=0 (--quick) and with
#      the profiling probe ARBOR_GPU_PROBE_REPEAT=1 (the full suite: its repeated router select
#      needs the MoE models; it repeats the attention chunk stages too);
#   5. benches decode@229, read50@229 and prefill256@229 on the qwen3-4b, qwen3moe-30b-a3b and
#      flashnext 30b-a3b shapes (zero-data synth), the q4b appends also with ARBOR_GPU_TILES=0,
#      and one profiled decode pass per shape plus a MoE read50 pass, printing the phase rows,
#      the item clocks and each stage's slowest workgroup summed over the layers
#      (scripts/profile-sum.awk); the probe's profiles (each RMSNorm and router select stage
#      cold, then warm);
#   6. flashnext decode@4096 (sparse selection), timed and profiled.
# Results go to $OUT (or /tmp/check-out). The models folder is the one of device-exactness.sh.
# Compare with the last recorded numbers in docs/BENCHMARKS.md.
# A fresh build can take longer than the 600 s a device call may run, so the check runs in two
# calls on one warm machine (the second within the machine's idle time of the first):
#   run(command="ARBOR_CHECK_PART=build bash scripts/device-check.sh", carry=[".carry/models"])
#   run(command="ARBOR_CHECK_PART=run bash scripts/device-check.sh", carry=[".carry/models"])
# "build" configures, builds, counts the code and runs the exactness suites; "run" reuses that
# build (without running ninja, which the fresh copy's timestamps would send into a rebuild) for
# the switches' exactness, the timings and the profiles. Without ARBOR_CHECK_PART it does both in one call.
# Options: ARBOR_CHECK_SHORT=1 (run part: without the tiles-off rows and flashnext decode@4096);
# ARBOR_CHECK_SUBPHASES=1 (build part: the sub-phase clocks compiled in, -DARBOR_GPU_SUBPHASES=ON).
set -u
PART=${ARBOR_CHECK_PART:-all}
BUILD=${ARBOR_EXACT_BUILD:-/tmp/b}
MODELS=${ARBOR_EXACT_MODELS:-.carry/models}
OUTDIR=${OUT:-/tmp/check-out}
mkdir -p "$BUILD" "$OUTDIR" /tmp/arbor-shapes
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
[ -d "$MODELS" ] || { echo "error: no model folder $MODELS (see scripts/device-exactness.sh)"; exit 2; }
CLI="$BUILD/engine/arbor-cli"
# The zero-data synthetic shapes the benches run (scripts/device-shapes.sh).
. "$(dirname "$0")/device-shapes.sh"
if [ "$PART" != run ]; then
# ARBOR_CHECK_SUBPHASES=1 builds the sub-phase clocks in (their phase rows in the profiles).
SUBPHASES=$([ "${ARBOR_CHECK_SUBPHASES:-0}" = 1 ] && echo ON || echo OFF)
cmake -S . -B "$BUILD" -G Ninja -DARBOR_APP=OFF -DARBOR_CUDA=ON -DARBOR_GFX1151_CHECK=OFF \
    -DARBOR_GPU_SUBPHASES=$SUBPHASES -DCMAKE_BUILD_TYPE=Release >"$BUILD/check-configure.log" 2>&1 || { tail -30 "$BUILD/check-configure.log"; exit 2; }
ninja -C "$BUILD" arbor-cli gpu_logits_exact gpu_megakernel_hang gpu_megakernel_exact >"$BUILD/check-build.log" 2>&1 ||
    { grep -E "error" -A3 "$BUILD/check-build.log" | head -60; exit 2; }
echo "build: $(el) s"
obj=$(find "$BUILD" -name 'megakernel.hip.o' | head -1)
if command -v cuobjdump >/dev/null && [ -n "$obj" ]; then
    echo "local-memory instructions (LDL/STL) per function:"
    cuobjdump -sass "$obj" 2>/dev/null | awk '/Function :/{f=$3} /LDL|STL/{c[f]++} END{for(k in c) print "  " c[k], k}' | sort -rn | head -8
    # The code's size (instructions of 16 bytes): the megakernel's latency-bound single-warp
    # stages may be paying instruction fetches from L2.
    echo "SASS instructions per function (the largest):"
    cuobjdump -sass "$obj" 2>/dev/null | awk '/Function :/{f=$3} /\/\*[0-9a-f]+\*\//{c[f]++; n++} END{for(k in c) print "  " c[k], k; print "  " n, "(all)"}' |
        sort -rn | head -10
fi
make_shapes "$CLI" &
synth=$!
ARBOR_GPU_MODELS="$MODELS" timeout 120 "$BUILD/tests/gpu/gpu_megakernel_exact" >"$OUTDIR/row-dots.log" 2>&1
echo "gpu_megakernel_exact rc $?: $(tail -1 "$OUTDIR/row-dots.log")"
timeout 60 "$BUILD/tests/gpu/gpu_megakernel_hang" 2>&1 | tail -1
timeout 150 "$BUILD/tests/gpu/gpu_logits_exact" --a gpu --b cpu --models "$MODELS" --cli "$CLI" >"$OUTDIR/exactness.log" 2>&1
echo "gpu_logits_exact rc $?"
grep -v "^ok " "$OUTDIR/exactness.log" | tail -8
echo "exactness done: $(el) s"
wait $synth
fi
[ "$PART" = build ] && { echo "total: $(el) s"; exit 0; }
[ -x "$CLI" ] || { echo "error: no build at $BUILD (run ARBOR_CHECK_PART=build first, on this warm machine)"; exit 2; }
[ "$PART" = run ] && make_shapes "$CLI"
# The A/B switches' exactness (their timings are recorded in docs/BENCHMARKS.md; time them again
# with ARBOR_CHECK_AB=1), and the profiling probe's over the full suite (its repeated router
# select runs only in the MoE models; it repeats idempotent stages only).
# (The byte-wise row-dot path exists only in builds with -DARBOR_MK_PACKED_SWITCH=1: build one as
# a device-ab.sh variant and run its gpu_logits_exact with ARBOR_GPU_PACKED=0.)
# ARBOR_GPU_KV_STREAM=1: every decode step takes the evict-first K and V copies, which otherwise
# start only where a step's cells outweigh the L2 (none of the suite's contexts do).
# ARBOR_GPU_PROLOGUES=0 / =3: a decode step without prologues, and with the RMSNorms' too.
# ARBOR_GPU_LEAN_ROWS=1 / =2: the lean stages' single-row items everywhere, and row pairs
# everywhere (the suite's small models take single rows by default: =2 is their pairs' run).
echo "== head split off, norm split off, router two rows an item, KV streamed, prologues off and all, lean single rows and pairs (quick); probe repeat (full suite): exactness"
for sw in ARBOR_GPU_HEAD_SPLIT=0 ARBOR_GPU_NORM_SPLIT=0 ARBOR_GPU_ROUTER_ROWS=0 ARBOR_GPU_KV_STREAM=1 \
    ARBOR_GPU_PROLOGUES=0 ARBOR_GPU_PROLOGUES=3 ARBOR_GPU_LEAN_ROWS=1 ARBOR_GPU_LEAN_ROWS=2; do
    echo "$sw: $(env "$sw" timeout 60 "$BUILD/tests/gpu/gpu_logits_exact" --a gpu --b cpu --models "$MODELS" --cli "$CLI" --quick 2>&1 | tail -1)"
done
ARBOR_GPU_PROBE_REPEAT=1 timeout 150 "$BUILD/tests/gpu/gpu_logits_exact" --a gpu --b cpu --models "$MODELS" --cli "$CLI" 2>&1 | tail -1
B() { m=$1; shift; timeout 60 "$CLI" bench -m /tmp/arbor-shapes/$m.gguf --backend gpu "$@" 2>&1 | grep -E "^(decode|read|prefill|error)"; }
echo "== q4b"; B q4b --rows decode@229,read50@229,prefill256@229 --reps 3 --json "$OUTDIR/q4b.json"
# ARBOR_CHECK_SHORT=1 leaves out the tiles-off rows and flashnext decode@4096 (about 40 s), for a
# check that must fit the device time left.
SHORT=${ARBOR_CHECK_SHORT:-0}
[ "$SHORT" = 1 ] || { echo "== q4b, tiles off"; ARBOR_GPU_TILES=0 B q4b --rows read50@229,prefill256@229 --reps 3; }
echo "== moe"; B moe --rows decode@229,read50@229,prefill256@229 --reps 3 --json "$OUTDIR/moe.json"
echo "== fn"; B fn --rows decode@229 --reps 3 --json "$OUTDIR/fn.json"
if [ "${ARBOR_CHECK_AB:-0}" = 1 ]; then
    for m in q4b moe fn; do ARBOR_GPU_HEAD_SPLIT=0 B $m --rows decode@229 --reps 3; done
fi
for m in q4b moe fn; do
    timeout 30 "$CLI" bench -m /tmp/arbor-shapes/$m.gguf --backend gpu --rows decode@229 --reps 1 \
        --profile "/tmp/$m.trace.json" >"$OUTDIR/$m-profile.txt" 2>&1
    echo "-- $m decode@229 phases"; grep -h '^phase' "$OUTDIR/$m-profile.txt"
    echo "-- $m decode@229 item clocks"; grep -h '^item' "$OUTDIR/$m-profile.txt"
done
# The probe: the RMSNorm, router select and attention chunk stages run twice, cold then warm
# ("... again"); the phase rows sum both attention runs (the plain profile above: the cold one).
for m in moe q4b; do
    ARBOR_GPU_PROBE_REPEAT=1 timeout 30 "$CLI" bench -m /tmp/arbor-shapes/$m.gguf --backend gpu --rows decode@229 --reps 1 \
        --profile "/tmp/$m-probe.trace.json" >"$OUTDIR/$m-probe-profile.txt" 2>&1
    echo "-- $m decode@229, probe repeat: stages and item clocks"
    awk -f scripts/profile-sum.awk "$OUTDIR/$m-probe-profile.txt" | sort -rn | grep -E "rms_norm|top-k|chunk|waits"
    grep -h '^item' "$OUTDIR/$m-probe-profile.txt" | grep -E "rms_norm|router_select|attn_chunk"
    grep -h '^phase' "$OUTDIR/$m-probe-profile.txt" | grep attn
done
timeout 30 "$CLI" bench -m /tmp/arbor-shapes/moe.gguf --backend gpu --rows read50@229 --reps 1 \
    --profile /tmp/moe-read.trace.json >"$OUTDIR/moe-read-profile.txt" 2>&1
echo "-- moe read50@229 phases"; grep -h '^phase' "$OUTDIR/moe-read-profile.txt"
for m in q4b moe fn; do
    echo "-- $m decode@229: the slowest workgroup of each stage, summed over the layers"
    awk -f scripts/profile-sum.awk "$OUTDIR/$m-profile.txt" | sort -rn | head -12
done
[ "$SHORT" = 1 ] && { echo "total: $(el) s"; exit 0; }
# flashnext past its dense limit (selection runs): decode@4096, timed and profiled (a context of
# 4096 cells, about 30 s to build).
timeout 120 "$CLI" bench -m /tmp/arbor-shapes/fn.gguf --backend gpu --rows decode@4096 --reps 1 \
    --profile /tmp/fn4096.trace.json >"$OUTDIR/fn4096-profile.txt" 2>&1
echo "-- fn decode@4096"; grep -hE '^(decode|error)' "$OUTDIR/fn4096-profile.txt"
awk -f scripts/profile-sum.awk "$OUTDIR/fn4096-profile.txt" | sort -rn | head -16
echo "total: $(el) s"
