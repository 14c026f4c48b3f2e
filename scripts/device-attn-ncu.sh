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
# Prints the kernel's stall reasons (WarpStateStats) and the CUDA lines and SASS instructions
# with the most PC samples (SourceCounters); writes the source pages to $OUT as CSV.
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
# The SASS page with the CUDA lines interleaved (a -lineinfo build): each instruction's samples
# go to the CUDA line before it.
# An ncu without that form gives the SASS alone (the lines then all go to one "before any line").
"$NCU" -i "$rep.ncu-rep" --page source --csv --print-source cuda,sass >"$rep-src.csv" 2>"$rep-src.err" &&
    grep -q '^"0x' "$rep-src.csv" ||
    "$NCU" -i "$rep.ncu-rep" --page source --csv --print-source sass >"$rep-src.csv" 2>"$rep-src.err" ||
    { echo "source page failed:"; head -3 "$rep-src.err"; exit 1; }
gzip -c "$rep-src.csv" >"$OUTDIR/attn-ncu-$cells-src.csv.gz"
/usr/bin/env python3 - "$rep-src.csv" <<'PY'
import collections, csv, re, sys
rows = list(csv.reader(open(sys.argv[1], newline="", errors="replace")))
hi = next((i for i, r in enumerate(rows) if any(c.startswith("Warp Stall Sampling (All") for c in r)), None)
if hi is None:
    sys.exit("no sampling column; first rows: " + repr(rows[:3])[:400])
h = rows[hi]
ix = {c: i for i, c in enumerate(h)}
def num(r, c):
    try: return float(r[ix[c]].replace(",", ""))
    except (KeyError, ValueError, IndexError): return 0.0
reasons = [c for c in h if c.startswith("stall_") and "Not Issued" not in c]
addr = re.compile(r"^0x[0-9a-f]+$")
cur, by_line, sass = "(before any line)", collections.OrderedDict(), []
for r in rows[hi + 1:]:
    if not r: continue
    if not addr.match(r[0].strip()):
        cur = " ".join(c.strip() for c in r[:2] if c.strip())[:110]
        continue
    a = by_line.setdefault(cur, collections.Counter())
    a["samples"] += num(r, "Warp Stall Sampling (All Samples)")
    a["exec"] += num(r, "Instructions Executed")
    for c in reasons: a[c[6:]] += num(r, c)
    sass.append((num(r, "Warp Stall Sampling (All Samples)"), r[1].strip()[:50], cur[:60]))
tot = sum(a["samples"] for a in by_line.values()) or 1
print(f"{tot:.0f} samples on {len(by_line)} source lines; the lines with the most:")
for line, a in sorted(by_line.items(), key=lambda kv: -kv[1]["samples"])[:50]:
    top = sorted(((v, k) for k, v in a.items() if k not in ("samples", "exec")), reverse=True)[:3]
    print(f"{a['samples']:7.0f} {100 * a['samples'] / tot:5.1f}% x{a['exec']:<9.0f} {line} [{', '.join(f'{k} {v:.0f}' for v, k in top if v)}]")
print("the SASS instructions with the most samples (and the line before them):")
for n, ins, line in sorted(sass, reverse=True)[:30]:
    print(f"{n:7.0f} {ins:50s} {line}")
PY
echo "done: $(( $(date +%s) - t0 )) s"
