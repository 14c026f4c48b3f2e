#!/bin/sh
# The GPU benchmark rows of issues 11 and 12 on the device machine, in one call: builds arbor-cli
# with CUDA, synthesizes the benchmark shapes with zero weights (same tensors, types and bytes as
# random ones; with all-zero routers every token picks experts 0-7, which does not change the
# bytes a decode step reads but makes a read or prefill a different workload, so the MoE runs as
# moer: synth --zero-data --routed keeps the token embeddings, norms and routers random), and
# runs `arbor-cli bench` and one profiled pass per model. Results (JSON, tables, profiles) go to
# $OUT when it is set, else to /tmp/bench-out.
#
#   run(command="sh scripts/device-bench.sh", timeout_s=600)
#
# Environment (defaults in brackets):
#   ARBOR_BENCH_MODELS  shapes to run [q4b moer fn]: q4b = qwen3-4b, moer = qwen3moe-30b-a3b
#                       with its routing kept (moe: every token on experts 0-7), fn = flashnext 30b-a3b
#   ARBOR_BENCH_ROWS    --rows for every model [decode@229,decode@4096,read50@4096,read50x4@4096]
#   ARBOR_BENCH_REPS    --reps [3]
#   ARBOR_BENCH_LIMIT   seconds each bench call may take [100]; a call cut off prints what it had
#   ARBOR_BENCH_PROFILE rows to profile, one pass each [decode@229]
#   ARBOR_EXACT_BUILD   build folder [/tmp/b]
# A 4096-cell context takes 20-40 s to build at today's prefill speed (see docs/BENCHMARKS.md),
# so deep rows need a larger ARBOR_BENCH_LIMIT and fewer models per call.
set -u
BUILD=${ARBOR_EXACT_BUILD:-/tmp/b}
OUTDIR=${OUT:-/tmp/bench-out}
MODELS=${ARBOR_BENCH_MODELS:-q4b moer fn}
ROWS=${ARBOR_BENCH_ROWS:-decode@229,decode@4096,read50@4096,read50x4@4096}
REPS=${ARBOR_BENCH_REPS:-3}
LIMIT=${ARBOR_BENCH_LIMIT:-100}
PROFILE=${ARBOR_BENCH_PROFILE:-decode@229}
mkdir -p "$BUILD" "$OUTDIR" /tmp/arbor-shapes
t0=$(date +%s)
cmake -S . -B "$BUILD" -G Ninja -DARBOR_APP=OFF -DARBOR_CUDA=ON -DARBOR_GFX1151_CHECK=OFF \
    -DCMAKE_BUILD_TYPE=Release >"$BUILD/bench-configure.log" 2>&1 || { cat "$BUILD/bench-configure.log"; exit 2; }
ninja -C "$BUILD" arbor-cli >"$BUILD/bench-build.log" 2>&1 || { tail -n 60 "$BUILD/bench-build.log"; exit 2; }
echo "build: $(( $(date +%s) - t0 )) s"
CLI="$BUILD/engine/arbor-cli"
. "$(dirname "$0")/device-shapes.sh"
for m in $MODELS; do
    args=$(arbor_shape_args "$m") || { echo "error: unknown shape $m (q4b, moe, moer, fn)"; exit 1; }
    f=/tmp/arbor-shapes/$m.gguf
    [ -f "$f" ] || "$CLI" synth $args --zero-data -o "$f" >/dev/null || { echo "error: synth $m failed"; exit 2; }
    echo "== $m: $ROWS ($(( $(date +%s) - t0 )) s)"
    timeout "$LIMIT" "$CLI" bench -m "$f" --backend gpu --rows "$ROWS" --reps "$REPS" --json "$OUTDIR/$m.json" \
        >"$OUTDIR/$m.txt" 2>&1 || echo "($m: bench exited $?; see $m.txt)"
    grep -E "^(decode|prefill|read|park|wake|reprefill)" "$OUTDIR/$m.txt"
    for r in $(echo "$PROFILE" | tr ',' ' '); do
        timeout "$LIMIT" "$CLI" bench -m "$f" --backend gpu --rows "$r" --reps 1 --profile "$OUTDIR/$m-$r.trace.json" \
            >"$OUTDIR/$m-$r.profile.txt" 2>&1 || echo "($m: profile of $r exited $?)"
    done
done
echo "total: $(( $(date +%s) - t0 )) s"
