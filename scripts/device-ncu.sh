#!/bin/bash
# Nsight Compute's view of one megakernel decode pass, for the question the timings alone have
# not settled (docs/GPU.md "Next" item 1): why every level takes two to three times what the
# same item code takes in a kernel of its own. Where a warp's cycles go (the WarpStateStats
# section's stall reasons: no_instruction is the instruction cache, long_scoreboard the L1TEX
# loads, global and local alike, barrier and membar the workgroup and fence waits, sleeping the
# grid barrier's polls) and where its loads go (MemoryWorkloadAnalysis_Tables: the local-memory
# sectors and their L1 hit rate beside the global ones, the L2's hit rate).
#   run(command="bash scripts/device-ncu.sh", carry=[".carry/models"])
# after device-ab.sh's build part on the same warm machine (it uses /tmp/b and the shapes in
# /tmp/arbor-shapes; device-deep-rows.sh's saved 16k contexts too, when they are there).
# ARBOR_NCU_BUILDS="main li" also profiles variant builds (/tmp/bv-NAME), ARBOR_NCU_ROWS picks the
# rows (default "d229 d16k": decode@229 and decode@16384 of moer). Each profile is one
# decode launch (the 11th, past the context's prefill and the first steps), kernel replay with
# the clocks left alone; where the replay fails, the whole program is replayed instead. Writes
# /tmp/ncu/ncu-BUILD-ROW.ncu-rep (the report) and .txt (the sections), and copies to $OUT only
# each profile's raw CSV (every metric; a call brings back at most 8 files), and prints the stall
# reasons, the memory tables and the local-memory, L2 and DRAM counters. ARBOR_NCU_SOURCE=1 adds
# the SourceCounters section and writes $OUT/ncu-BUILD-ROW-local.csv: the SASS instructions of
# the source page that touch local memory (LDL, STL), with their counters, the most executed
# first; for a build compiled with -lineinfo (a device-ab.sh variant "li=-lineinfo") the page is
# asked for with the CUDA lines interleaved, so the file names their source lines too. ncu reads the counters on Firecracker machines,
# not on gVisor ones (docs: the device library's KINDS.md); the first lines say which.
set -u
OUTDIR=${OUT:-/tmp/check-out}
mkdir -p "$OUTDIR"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[ -n "$NCU" ] || { echo "error: no ncu on this machine"; exit 2; }
"$NCU" --version | tail -1
# The section identifiers this ncu knows (a name below it lacks fails the profile; the log says so).
"$NCU" --list-sections 2>/dev/null | awk 'NR > 2 {print $1}' | tr '\n' ' ' | cut -c1-400; echo
sections="--section WarpStateStats --section MemoryWorkloadAnalysis_Tables --section SpeedOfLight --section SchedulerStats"
SOURCE=${ARBOR_NCU_SOURCE:-0}
[ "$SOURCE" = 1 ] && sections="$sections --section SourceCounters"
mkdir -p /tmp/ncu
for b in ${ARBOR_NCU_BUILDS:-main}; do
    cli=/tmp/bv-$b/engine/arbor-cli
    [ "$b" = main ] && cli=/tmp/b/engine/arbor-cli
    [ -x "$cli" ] || { echo "$b: no build at $cli"; continue; }
    for row in ${ARBOR_NCU_ROWS:-d229 d16k}; do
        m=/tmp/arbor-shapes/moer.gguf
        args="--rows decode@229"
        if [ $row = d16k ]; then
            ctx=/tmp/ctx-moer/arbor-bench-c1-16384.park
            [ -f "$ctx" ] || { echo "$b $row: no saved context (device-deep-rows.sh makes it)"; continue; }
            args="--rows decode@16384 --context $ctx"
        fi
        rep="/tmp/ncu/ncu-$b-$row"
        echo "== $b moer $row"
        for mode in kernel application; do
            # shellcheck disable=SC2086
            timeout 120 "$NCU" --clock-control none --replay-mode $mode --target-processes all \
                -k regex:megakernel --launch-skip 10 --launch-count 1 $sections -f -o "$rep" \
                "$cli" bench -m "$m" --backend gpu $args --reps 1 --warmup 0 >"$rep.log" 2>&1 && break
            echo "$b $row: ncu with $mode replay failed (rc $?):"
            grep -E "==ERROR==|==WARNING==|error" "$rep.log" | head -5
        done
        [ -f "$rep.ncu-rep" ] || continue
        "$NCU" -i "$rep.ncu-rep" --page details >"$rep.txt" 2>&1
        "$NCU" -i "$rep.ncu-rep" --page raw --csv >"$rep.csv" 2>&1
        cp "$rep.csv" "$OUTDIR/"
        grep -E "Duration|Warp Cycles Per|Issued Ipc|No Eligible|One or More|Active Warps" "$rep.txt" | head -12
        # The stall reasons, largest first (the section's per-issue ratios and any other stall
        # metric it collected; the .csv has them all).
        awk -F'","' 'NR == 1 {for (i = 1; i <= NF; i++) h[i] = $i; next}
            NR == 3 {for (i = 1; i <= NF; i++) if (h[i] ~ /issue_stalled_/ && h[i] !~ /not_issued/) {
                v = $i; gsub(/[",]/, "", v); print v, h[i] } }' "$rep.csv" | sort -rn | head -24
        grep -iE "local|L2 Hit|L1/TEX Hit|Mem Busy|Max Bandwidth" "$rep.txt" | head -16
        # The local-memory, L2, DRAM and shared-store counters (the raw page's names).
        awk -F'","' 'NR == 1 {for (i = 1; i <= NF; i++) h[i] = $i; next} NR == 2 {for (i = 1; i <= NF; i++) u[i] = $i; next}
            NR == 3 {for (i = 1; i <= NF; i++) if (h[i] ~ /mem_local_op_(ld|st)(\.sum|_lookup_hit\.sum|_hit_rate)|sass_inst_executed_op_local|average_data_bytes_per_sector_mem_local_op_(ld|st)\.ratio|lts__t_sector_op_read_hit_rate|dram__bytes_read\.sum$|bank_conflicts_pipe_lsu_mem_shared|wavefronts_mem_shared_op_st\.sum$|^sm__inst_executed\.sum$/) {
                v = $i; gsub(/[",]/, "", v); print "  " h[i], u[i], v } }' "$rep.csv"
        if [ "$SOURCE" = 1 ]; then
            # A -lineinfo build's page can interleave the CUDA lines (cuda,sass), where this ncu
            # takes that form; else the SASS alone.
            "$NCU" -i "$rep.ncu-rep" --page source --csv --print-source cuda,sass >"$rep-source.csv" 2>"$rep-source.err"
            grep -qE 'STL|LDL' "$rep-source.csv" ||
                "$NCU" -i "$rep.ncu-rep" --page source --csv --print-source sass >"$rep-source.csv" 2>"$rep-source.err"
            grep -qE 'STL|LDL' "$rep-source.csv" || { echo "  source page: no local instructions found"; head -3 "$rep-source.err"; }
            python3 - "$rep-source.csv" "$OUTDIR/ncu-$b-$row-local.csv" <<'PY'
import csv, re, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
hdr = next((i for i, r in enumerate(rows) if any("Source" in c for c in r)), None)
if hdr is None:
    print("  source page: no header (" + " ".join(rows[0])[:200] + ")" if rows else "  source page: empty")
    sys.exit(0)
h = rows[hdr]
ex = next((i for i, c in enumerate(h) if c.startswith("Instructions Executed")), None)
# Each local instruction with the last row before it that is not a SASS instruction (on a
# cuda,sass page, the CUDA line it was compiled from), if any.
sass = re.compile(r"^\s*(@!?U?P\w+\s+)?[A-Z][A-Z0-9_]*(\.[A-Z0-9_]+)*(\s|$)")
src = next((i for i, c in enumerate(h) if c.startswith("Source")), 1)
local, where = [], ""
for r in rows[hdr + 1:]:
    if any(re.search(r"\b(STL|LDL)(\.|\s|$)", c) for c in r):
        local.append(r + [where])
    elif len(r) > src and r[src].strip() and not sass.match(r[src]):
        where = " ".join(c for c in r if c)[:160]
def num(r):
    try: return float(r[ex].replace(",", "")) if ex is not None else 0.0
    except (ValueError, IndexError): return 0.0
local.sort(key=num, reverse=True)
with open(sys.argv[2], "w", newline="") as f:
    w = csv.writer(f); w.writerow(h + ["source line before"]); w.writerows(local)
tot = sum(num(r) for r in local)
print(f"  {len(local)} local-memory SASS instructions, {tot:.0f} executed; the most executed:")
for r in local[:12]:
    print("   ", num(r), " | ".join(c for c in r[:3]), "|", r[-1][:80])
PY
        fi
    done
done
