#!/bin/bash
# One device call with binaries built here (scripts/device-local-build.sh, carried in .carry/bin):
# the exactness suite under each run-time setting, then bench rows for each setting, interleaved,
# on the zero-data shapes and on the MoE with its routing kept (synth --zero-data --routed: its
# tokens spread over the experts as in the random-weight file the issue's llama.cpp numbers were
# measured on). No build on the device, so a call costs its runs only.
#   run(command="ARBOR_LR_SETTINGS='ARBOR_GPU_STREAM_W=0 ARBOR_GPU_STREAM_W=1' bash scripts/device-local-run.sh",
#       carry=[".carry/models", ".carry/bin"])
# ARBOR_LR_SETTINGS: environment settings, one a word (VAR=VALUE); ARBOR_LR_ROWS: the rows at
# 229 (default decode@229,read50@229,prefill256@229); ARBOR_LR_SHAPES (default "q4b moe moer");
# ARBOR_LR_DEEP=1 also the deep rows of moer from one saved 16k context (and with
# ARBOR_LR_DEEP_PROFILE=1 a profile of its read50@16384 under each setting); ARBOR_LR_ROUNDS (2);
# ARBOR_LR_PROFILE=1 a read50@229 profile of moer under each setting; ARBOR_LR_EXACT the
# settings the exactness suite runs under (default all). Writes $OUT/local-run.txt.
set -u
OUTDIR=${OUT:-/tmp/check-out}
mkdir -p "$OUTDIR"
B=/tmp/lr
mkdir -p $B /tmp/arbor-shapes
for f in arbor-cli gpu_logits_exact gpu_megakernel_exact; do
    gzip -dc .carry/bin/$f.gz >$B/$f && chmod +x $B/$f || { echo "error: no .carry/bin/$f.gz"; exit 2; }
done
if $B/arbor-cli --help 2>&1 | grep -q "GLIBC\|not found\|cannot execute"; then
    echo "error: the carried arbor-cli does not run here:"; $B/arbor-cli --help 2>&1 | head -3; exit 2
fi
SETTINGS=${ARBOR_LR_SETTINGS:-X_ARBOR_UNSET=1}
log() { echo "$*" | tee -a "$OUTDIR/local-run.txt"; }
for s in ${ARBOR_LR_EXACT:-$SETTINGS}; do
    a=$(env "$s" timeout 120 $B/gpu_logits_exact --a gpu --b cpu --models "$PWD/.carry/models" --cli $B/arbor-cli 2>&1 | tail -1)
    m=$(env "$s" ARBOR_GPU_MODELS="$PWD/.carry/models" timeout 120 $B/gpu_megakernel_exact 2>&1 | tail -1)
    log "exactness $s: logits [$a] megakernel_exact [$m] ($SECONDS s)"
done
. "$(dirname "$0")/device-shapes.sh"
make_shapes $B/arbor-cli ${ARBOR_LR_SHAPES:-q4b moe moer} | tee -a "$OUTDIR/local-run.txt"
log "shapes: $SECONDS s"
rows=${ARBOR_LR_ROWS:-decode@229,read50@229,prefill256@229}
for round in $(seq "${ARBOR_LR_ROUNDS:-2}"); do
    for n in ${ARBOR_LR_SHAPES:-q4b moe moer}; do
        for s in $SETTINGS; do
            env "$s" timeout 100 $B/arbor-cli bench -m /tmp/arbor-shapes/$n.gguf --backend gpu --rows "$rows" --reps 3 --warmup 1 2>&1 |
                awk -v n=$n -v s="$s" -v r=$round '$1 ~ /@/ {print r, n, s, $1, $2, $3, $4; k++} END {if (!k) print r, n, s, "FAIL"}' |
                tee -a "$OUTDIR/local-run.txt"
        done
    done
    log "t=$SECONDS s"
done
if [ "${ARBOR_LR_DEEP:-0}" = 1 ]; then
    mkdir -p /tmp/ctx-moer
    [ -f /tmp/ctx-moer/arbor-bench-c1-16384.park ] ||
        timeout 150 $B/arbor-cli bench -m /tmp/arbor-shapes/moer.gguf --backend gpu --rows read50@16384 --reps 1 --warmup 0 \
            --save-contexts /tmp/ctx-moer >"$OUTDIR/save-moer.txt" 2>&1 || log "error: saving the moer context failed"
    for s in $SETTINGS; do
        env "$s" timeout 100 $B/arbor-cli bench -m /tmp/arbor-shapes/moer.gguf --backend gpu \
            --rows read50@16384,prefill256@16384,decode@16384 --reps 3 --warmup 1 --context /tmp/ctx-moer/arbor-bench-c1-16384.park 2>&1 |
            awk -v s="$s" '$1 ~ /@/ {print "deep", "moer", s, $1, $2, $3, $4}' | tee -a "$OUTDIR/local-run.txt"
    done
    log "deep: $SECONDS s"
    if [ "${ARBOR_LR_DEEP_PROFILE:-0}" = 1 ]; then  # one profiled read50@16384 a setting
        i=0
        for s in $SETTINGS; do
            i=$((i + 1))
            env "$s" timeout 100 $B/arbor-cli bench -m /tmp/arbor-shapes/moer.gguf --backend gpu --rows read50@16384 \
                --reps 1 --warmup 1 --context /tmp/ctx-moer/arbor-bench-c1-16384.park \
                --profile "$OUTDIR/deep-profile-$i.json" >"$OUTDIR/deep-profile-$i.txt" 2>&1
            rm -f "$OUTDIR/deep-profile-$i.json"
            log "deep-profile-$i.txt: $s"
        done
    fi
fi
if [ "${ARBOR_LR_PROFILE:-0}" = 1 ]; then
    i=0
    for s in $SETTINGS; do
        i=$((i + 1))
        env "$s" timeout 60 $B/arbor-cli bench -m /tmp/arbor-shapes/moer.gguf --backend gpu --rows read50@229 --reps 1 --warmup 1 \
            --profile "$OUTDIR/profile-$i.json" >"$OUTDIR/profile-$i.txt" 2>&1
        rm -f "$OUTDIR/profile-$i.json"
        log "profile-$i.txt: $s"
    done
fi
log "total: $SECONDS s"
