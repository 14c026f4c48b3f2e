#!/bin/bash
# Where the decode attention item's time goes, line by line: Nsight Compute's PC sampling of one
# warm arbor-gpu-attn-probe launch (kernels/probe/attn_probe.hip: the megakernel's attention item
# code as a kernel of its own, in the megakernel's grid and arena), with the CUDA lines.
#   run(command="bash scripts/device-attn-ncu.sh")     (about 60 s on a warm machine)
# The probe is built with -lineinfo (and ARBOR_ATTN_NCU_FLAGS, e.g. a switch under test) in
# /tmp/pv-li, then run at ARBOR_ATTN_NCU_CELLS cells (default 229) with one repetition on two
# layers: the probe's launches are two untimed ones (a layer each), then cold, code-warm and warm
# with the phase clocks off, then the same with them on; the profiled launch is the fifth, warm
# with the clocks off (ARBOR_ATTN_NCU_SKIP overrides the 4 launches skipped). Caches are left as
# the probe leaves them (--cache-control none) and the clocks alone (--clock-control none).
# Prints the kernel's stall reasons (WarpStateStats), then the samples (SourceCounters) by
# function and source line (scripts/ncu-lines.py on the probe's own cubin, cuobjdump -xelf);
# writes the source page (CSV) and the cubin to $OUT, gzipped.
set -u
OUTDIR=${OUT:-/tmp/check-out}
mkdir -p "$OUTDIR" /tmp/ncu
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[ -n "$NCU" ] || { echo "error: no ncu on this machine"; exit 2; }
"$NCU" --version | tail -1
t0=$(date +%s)
B=/tmp/pv-li
mkdir -p $B
cmake -S . -B $B -G Ninja -DARBOR_APP=OFF -DARBOR_CUDA=ON -DARBOR_GFX1151_CHECK=OFF -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_CUDA_FLAGS=-lineinfo ${ARBOR_ATTN_NCU_FLAGS:-}" >$B/configure.log 2>&1 &&
    ninja -C $B arbor-gpu-attn-probe >$B/build.log 2>&1 ||
    { tail -20 $B/configure.log; grep -E "error" -A3 $B/build.log | head -30; exit 1; }
echo "built: $(( $(date +%s) - t0 )) s"
P=$B/kernels/arbor-gpu-attn-probe
cells=${ARBOR_ATTN_NCU_CELLS:-229}
case "$cells" in *[!0-9]* | "") echo "error: ARBOR_ATTN_NCU_CELLS is one number of cells (the launch skipped to assumes one)"; exit 2 ;; esac
"$P" --cells "$cells" --reps 5 2>&1 | tail -6
rep=/tmp/ncu/attn-$cells
rm -f "$rep.ncu-rep"
# shellcheck disable=SC2086
timeout 300 "$NCU" --clock-control none --cache-control none --target-processes all -k regex:attn_level \
    --launch-skip "${ARBOR_ATTN_NCU_SKIP:-4}" --launch-count 1 --section WarpStateStats --section SourceCounters \
    --section SchedulerStats --section LaunchStats --warp-sampling-interval "${ARBOR_ATTN_NCU_INTERVAL:-0}" --import-source yes -f -o "$rep" \
    "$P" --cells "$cells" --reps 1 --layers 2 >"$rep.log" 2>&1 ||
    { echo "ncu failed (rc $?):"; grep -E "==ERROR==|==WARNING==|error" "$rep.log" | head -8; exit 1; }
"$NCU" -i "$rep.ncu-rep" --page details >"$rep.txt" 2>&1
grep -E "Duration|Warp Cycles Per|Issued Ipc|No Eligible|One or More|Active Warps|Registers|Local" "$rep.txt" | head -14
"$NCU" -i "$rep.ncu-rep" --page raw --csv >"$rep-raw.csv" 2>&1
awk -F'","' 'NR == 1 {for (i = 1; i <= NF; i++) h[i] = $i; next}
    NR == 3 {for (i = 1; i <= NF; i++) if (h[i] ~ /issue_stalled_/ && h[i] !~ /not_issued/) {
        v = $i; gsub(/[",]/, "", v); print v, h[i] } }' "$rep-raw.csv" | sort -rn | head -14
# The SASS page (this ncu gives a -lineinfo build's page without its CUDA lines), and the cubin
# of the very binary profiled, for scripts/ncu-lines.py to place the samples on source lines
# (every function at its own address: no shifts to guess).
"$NCU" -i "$rep.ncu-rep" --page source --csv --print-source sass >"$rep-src.csv" 2>"$rep-src.err" ||
    { echo "source page failed:"; head -3 "$rep-src.err"; exit 1; }
gzip -c "$rep-src.csv" >"$OUTDIR/attn-ncu-$cells-src.csv.gz"
CUO=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
rm -rf /tmp/ncu/cubin && mkdir -p /tmp/ncu/cubin
cubin=""
if [ -n "$CUO" ] && (cd /tmp/ncu/cubin && "$CUO" -xelf all "$P" >/dev/null 2>&1); then
    cubin=$(ls -S /tmp/ncu/cubin/*sm_90*.cubin 2>/dev/null | head -1)
fi
if [ -n "$cubin" ]; then
    gzip -c "$cubin" >"$OUTDIR/attn-probe-sm_90.cubin.gz"
    python3 scripts/ncu-lines.py "$cubin" "$rep-src.csv" --entry attn_level --skip 540 --lines 40
else
    echo "no sm_90 cubin out of $P (cuobjdump: ${CUO:-none}); the top SASS alone:"
    python3 - "$rep-src.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="", errors="replace")))
hi = next((i for i, r in enumerate(rows) if any(c.startswith("Warp Stall Sampling (All") for c in r)), None)
if hi is None:
    sys.exit("no sampling column; first rows: " + repr(rows[:3])[:400])
col = next(i for i, c in enumerate(rows[hi]) if c.startswith("Warp Stall Sampling (All"))
def num(r):
    try: return float(r[col].replace(",", ""))
    except (ValueError, IndexError): return 0.0
body = [r for r in rows[hi + 1:] if r and r[0].startswith("0x")]
for r in sorted(body, key=num, reverse=True)[:30]:
    print(f"{num(r):7.0f} {r[0]} {r[1].strip()[:60]}")
PY
fi
echo "done: $(( $(date +%s) - t0 )) s"
