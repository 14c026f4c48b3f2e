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
# ARBOR_NCU_BUILDS="main ef" also profiles variant builds (/tmp/bv-NAME), ARBOR_NCU_ROWS picks the
# rows (default "d229 d16k": decode@229 and decode@16384 of moer). Each profile is one
# decode launch (the 11th, past the context's prefill and the first steps), kernel replay with
# the clocks left alone; where the replay fails, the whole program is replayed instead. Writes
# $OUT/ncu-BUILD-ROW.ncu-rep (the report), .txt (the sections) and .csv (every metric, raw), and
# prints the stall reasons and the memory tables. ncu reads the counters on Firecracker machines,
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
        rep="$OUTDIR/ncu-$b-$row"
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
        grep -E "Duration|Warp Cycles Per|Issued Ipc|No Eligible|One or More|Active Warps" "$rep.txt" | head -12
        # The stall reasons, largest first (the section's per-issue ratios and any other stall
        # metric it collected; the .csv has them all).
        awk -F'","' 'NR == 1 {for (i = 1; i <= NF; i++) h[i] = $i; next}
            NR == 3 {for (i = 1; i <= NF; i++) if (h[i] ~ /issue_stalled_/ && h[i] !~ /not_issued/) {
                v = $i; gsub(/[",]/, "", v); print v, h[i] } }' "$rep.csv" | sort -rn | head -24
        grep -iE "local|L2 Hit|L1/TEX Hit|Mem Busy|Max Bandwidth" "$rep.txt" | head -16
    done
done
