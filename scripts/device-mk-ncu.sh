#!/bin/bash
# Where one whole megakernel decode step's warps stall, instruction by instruction: Nsight
# Compute's PC sampling (WarpStateStats + SourceCounters) of one `bench` decode launch of a build
# made here (scripts/device-local-build.sh "FLAGS" NAME, carried in .carry/bin/NAME), with no
# build on the device:
#   run(command="ARBOR_MKNCU_BUILD=mfix bash scripts/device-mk-ncu.sh", carry=[".carry/bin/mfix"])
# ARBOR_MKNCU_SHAPES: the shapes (default "moer q4b"; scripts/device-shapes.sh), each at
# decode@229; the profiled launch is the 11th (--launch-skip 10: past the context's prefill and
# the first steps), kernel replay, clocks and caches left alone; each profile may take
# ARBOR_MKNCU_TIMEOUT s (default 240: call 4 of gpu-next38 took 385 s for two). Prints the
# kernel's stall reasons, then the samples by function with their largest stall reasons
# (scripts/ncu-lines.py on the build's sm_90 cubin from cuobjdump -xelf: the largest sm_90 one,
# the megakernel's module). Writes to $OUT, gzipped, each shape's source page (CSV) and the cubin.
set -u
OUTDIR=${OUT:-/tmp/check-out}
mkdir -p "$OUTDIR" /tmp/ncu
NCU=$(command -v ncu || ls -d /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | sort -V | tail -1)
[ -n "$NCU" ] || { echo "error: no ncu on this machine"; exit 2; }
"$NCU" --version | tail -1
b=${ARBOR_MKNCU_BUILD:-mfix}
case "$b" in *[!A-Za-z0-9_-]* | "") echo "error: a build's name is letters, digits, '_' and '-' (got '$b')"; exit 2 ;; esac
mkdir -p /tmp/lr-$b
. "$(dirname "$0")/device-unpack.sh"  # packed, unpack, xz_tool
pk=$(packed .carry/bin/$b/arbor-cli)
if [ -n "$pk" ]; then
    unpack "$pk" /tmp/lr-$b/arbor-cli && chmod +x /tmp/lr-$b/arbor-cli ||
        { echo "error: unpacking $pk failed"; exit 2; }
fi
CLI=/tmp/lr-$b/arbor-cli
[ -x "$CLI" ] || { echo "error: no .carry/bin/$b/arbor-cli.xz or .gz and no /tmp/lr-$b/arbor-cli"; exit 2; }
. "$(dirname "$0")/device-shapes.sh"
shapes=${ARBOR_MKNCU_SHAPES:-moer q4b}
# shellcheck disable=SC2086
make_shapes "$CLI" $shapes
CUO=$(command -v cuobjdump || ls -d /usr/local/cuda*/bin/cuobjdump 2>/dev/null | sort -V | tail -1)
rm -rf /tmp/ncu/cubin-$b && mkdir -p /tmp/ncu/cubin-$b
if [ -n "$CUO" ] && (cd /tmp/ncu/cubin-$b && "$CUO" -xelf all "$CLI" >/dev/null 2>&1); then
    cubin=$(ls -S /tmp/ncu/cubin-$b/*sm_90*.cubin 2>/dev/null | head -1)
    [ -n "$cubin" ] && gzip -c "$cubin" >"$OUTDIR/mk-$b-sm_90.cubin.gz" && echo "cubin: $(basename "$cubin")"
else
    echo "no cubin out of $CLI (cuobjdump: ${CUO:-none})"
fi
for n in $shapes; do
    rep=/tmp/ncu/mk-$b-$n
    rm -f "$rep.ncu-rep"
    echo "== $b $n decode@229"
    timeout "${ARBOR_MKNCU_TIMEOUT:-240}" "$NCU" --clock-control none --cache-control none --target-processes all -k regex:megakernel \
        --launch-skip 10 --launch-count 1 --section WarpStateStats --section SourceCounters --section SchedulerStats \
        --warp-sampling-interval "${ARBOR_MKNCU_INTERVAL:-auto}" -f -o "$rep" \
        "$CLI" bench -m /tmp/arbor-shapes/$n.gguf --backend gpu --rows decode@229 --reps 1 --warmup 0 >"$rep.log" 2>&1 ||
        { echo "ncu failed (rc $?):"; grep -E "==ERROR==|==WARNING==|error" "$rep.log" | head -8; continue; }
    "$NCU" -i "$rep.ncu-rep" --page details >"$rep.txt" 2>&1
    grep -E "Duration|Warp Cycles Per|Issued Ipc|No Eligible|One or More|Active Warps" "$rep.txt" | head -10
    "$NCU" -i "$rep.ncu-rep" --page raw --csv >"$rep-raw.csv" 2>"$rep-raw.err"
    awk -F'","' 'NR == 1 {for (i = 1; i <= NF; i++) h[i] = $i; next}
        NR == 3 {for (i = 1; i <= NF; i++) if (h[i] ~ /issue_stalled_/ && h[i] !~ /not_issued/) {
            v = $i; gsub(/[",]/, "", v); print v, h[i] } }' "$rep-raw.csv" | sort -rn | head -16
    "$NCU" -i "$rep.ncu-rep" --page source --csv --print-source sass >"$rep-src.csv" 2>"$rep-src.err" ||
        { echo "source page failed:"; head -3 "$rep-src.err"; continue; }
    gzip -c "$rep-src.csv" >"$OUTDIR/mk-$b-$n-src.csv.gz"
    # The samples by function, each with its largest stall reasons (the cubin places them; a
    # build without -lineinfo has no source lines).
    if [ -n "${cubin:-}" ]; then
        python3 scripts/ncu-lines.py "$cubin" "$rep-src.csv" --entry megakernel --lines 0 --functions 16 2>&1 |
            grep -v "^warning: the cubin has no .debug_line"
    else
        echo "no cubin: the source page came back for scripts/ncu-lines.py here"
    fi
done
