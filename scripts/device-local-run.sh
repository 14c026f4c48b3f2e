#!/bin/bash
# One device call with binaries built here (scripts/device-local-build.sh "FLAGS" NAME, carried in
# .carry/bin/NAME): the exactness suite for each build under each run-time setting, then bench rows
# for each (build, setting), interleaved, on the zero-data shapes and on the MoE with its routing
# kept (synth --zero-data --routed: its tokens spread over the experts as in the random-weight file
# the issue's llama.cpp numbers were measured on). No build on the device, so a call costs its
# runs only.
#   run(command="ARBOR_LR_BUILDS='main ld' bash scripts/device-local-run.sh",
#       carry=[".carry/models", ".carry/bin/main", ".carry/bin/ld"])
# The models (about 46 MiB whole, 39 with the optional ones aside) and one build (about 10 MiB
# packed by xz, 12-13 by gzip) fill most of the 64 MiB a call carries, so an exactness call
# carries one build and, packed by xz, two more without their exactness programs (arbor-cli and
# flags.txt alone, about 4 MiB each: scripts/device-unpack.sh); a later call on the same warm
# machine finds a build unpacked in /tmp/lr-NAME, and a rows call needs no models (carry
# .carry/bin alone). A build timed but not checked may carry arbor-cli.xz (or .gz) alone (and
# flags.txt).
# ARBOR_LR_BUILDS: the builds (default every folder in .carry/bin); ARBOR_LR_SETTINGS: environment
# settings, one a word (VAR=VALUE), each run on every build (default none), or BUILD@VAR=VALUE
# on that build only (list X_ARBOR_UNSET=1 too for the plain runs: a list of settings replaces
# the default); a row's label is NAME, or NAME:VAR=VALUE under a setting. ARBOR_LR_ROWS: the rows at 229 (default
# decode@229,read50@229,prefill256@229; " " for none); ARBOR_LR_SHAPES (default "q4b moe moer");
# ARBOR_LR_ROUNDS (2). ARBOR_LR_EXACT: the settings the exactness suite runs under (default all;
# " " for no exactness, which needs no .carry/models; a call without them skips it);
# ARBOR_LR_EXACT_BUILDS: the builds it runs on (default all; a build carrying one of the two
# exactness programs runs that one, and logs the other "not carried"). ARBOR_LR_DEEP=1 also times
# ARBOR_LR_DEEP_ROWS (default read50@16384,prefill256@16384,decode@16384) on
# ARBOR_LR_DEEP_SHAPES (default moer), each from one
# saved 16k context (made by the first build), in each round after the rows at 229 (so two rounds
# time them twice; the first column is the round, as for every row); with
# ARBOR_LR_DEEP_PROFILE=1 a profiled ARBOR_LR_DEEP_PROFILE_ROWS (default read50@16384; rows at
# 16384 cells, from the saved context) of the first deep shape for each (build, setting). ARBOR_LR_PROFILE=1: a profile of ARBOR_LR_PROFILE_ROWS (default read50@229) on each of
# ARBOR_LR_PROFILE_SHAPES (default moer) for each, into profile-SHAPE-I.txt (rows at 229 cells:
# a deep row would need the saved context). ARBOR_LR_SASS=1: each build's SASS (cuobjdump, about
# 14 s and 7 MB gzipped a build) into sass-NAME.gz, for scripts/sass-loops.py. Writes
# $OUT/local-run.txt.
set -u
OUTDIR=${OUT:-/tmp/check-out}
mkdir -p "$OUTDIR" /tmp/arbor-shapes
log() { echo "$*" | tee -a "$OUTDIR/local-run.txt"; }
. "$(dirname "$0")/device-unpack.sh"  # packed, unpack, xz_tool
BUILDS=${ARBOR_LR_BUILDS:-$(cd .carry/bin 2>/dev/null && for d in */; do [ -n "$(packed "$d/arbor-cli")" ] && echo "${d%/}"; done)}
BUILDS=$(echo $BUILDS)  # one line, one space between names
[ -n "$BUILDS" ] || { echo "error: no builds in .carry/bin (scripts/device-local-build.sh \"FLAGS\" NAME makes them)"; exit 2; }
ls .carry/bin/*/*.xz >/dev/null 2>&1 && log "xz unpacked by: $(xz_tool)"
for b in $BUILDS; do
    mkdir -p /tmp/lr-$b
    # A carried arbor-cli replaces whatever an earlier call unpacked under this name: its exactness
    # programs and flags must not stand in for the new build's.
    [ -n "$(packed .carry/bin/$b/arbor-cli)" ] && rm -f /tmp/lr-$b/gpu_logits_exact /tmp/lr-$b/gpu_megakernel_exact /tmp/lr-$b/flags.txt
    for f in arbor-cli gpu_logits_exact gpu_megakernel_exact; do
        # A build not carried this call may have been unpacked by an earlier call on this machine
        # (it stays warm 30 s after a call): a call carries 64 MiB at most.
        pk=$(packed .carry/bin/$b/$f)
        if [ -n "$pk" ]; then
            unpack "$pk" /tmp/lr-$b/$f && chmod +x /tmp/lr-$b/$f ||
                { echo "error: unpacking $pk failed"; exit 2; }
        elif [ ! -x /tmp/lr-$b/$f ]; then
            # A rows-only build may carry arbor-cli alone (the exactness loop below says so if
            # it is asked to check one)
            [ "$f" = arbor-cli ] || continue
            echo "error: no .carry/bin/$b/$f.xz or .gz, and no earlier call on this machine unpacked it"; exit 2
        fi
    done
    [ -f .carry/bin/$b/flags.txt ] && cp .carry/bin/$b/flags.txt /tmp/lr-$b/
    if /tmp/lr-$b/arbor-cli --help 2>&1 | grep -q "GLIBC\|not found\|cannot execute"; then
        echo "error: the carried arbor-cli of $b does not run here:"; /tmp/lr-$b/arbor-cli --help 2>&1 | head -3; exit 2
    fi
    log "build $b: $( { tr '\n' ' ' </tmp/lr-$b/flags.txt; } 2>/dev/null || echo '(flags not recorded)')"
done
SETTINGS=${ARBOR_LR_SETTINGS:-X_ARBOR_UNSET=1}
label_of() {  # NAME SETTING: the label of a (build, setting)
    if [ "$2" = X_ARBOR_UNSET=1 ]; then echo "$1"; else echo "$1:$2"; fi
}
# setting_for BUILD SETTING: the setting as BUILD runs it (BUILD@VAR=VALUE without its prefix), or
# nothing when it names another build. (Only the name before '=' may hold the '@'.)
setting_for() {
    case "${2%%=*}" in
        *@*) [ "${2%%@*}" = "$1" ] && echo "${2#*@}" ;;
        *) echo "$2" ;;
    esac
}
for s in $SETTINGS ${ARBOR_LR_EXACT:-}; do  # a BUILD@ prefix naming no build would apply to nothing
    case "${s%%=*}" in *@*) case " $BUILDS " in *" ${s%%@*} "*) ;; *) log "error: setting $s names no build of ARBOR_LR_BUILDS" ;; esac ;; esac
done
# The (build, setting) entries, each "NAME SETTING LABEL".
entries() {
    local b s r
    for b in $BUILDS; do
        for s in $SETTINGS; do
            r=$(setting_for "$b" "$s")
            [ -n "$r" ] && echo "$b $r $(label_of "$b" "$r")"
        done
    done
}
exact_builds=${ARBOR_LR_EXACT_BUILDS:-$BUILDS}
exact_settings=${ARBOR_LR_EXACT:-$SETTINGS}
if [ -z "${exact_settings// /}" ]; then
    exact_builds=""  # ARBOR_LR_EXACT=" ": no exactness, and no complaint about what was not carried
elif [ ! -d .carry/models ]; then
    log "exactness: not run (no .carry/models carried; ARBOR_LR_EXACT=\" \" says none)"
    exact_builds=""
fi
for b in $exact_builds; do
    case " $BUILDS " in *" $b "*) ;; *) log "error: ARBOR_LR_EXACT_BUILDS names $b, which ARBOR_LR_BUILDS does not"; continue ;; esac
    B=/tmp/lr-$b
    if [ ! -x $B/gpu_logits_exact ] && [ ! -x $B/gpu_megakernel_exact ]; then
        log "error: exactness of $b not run: neither exactness program was carried"
        continue
    fi
    for s in $exact_settings; do
        s=$(setting_for "$b" "$s")
        [ -n "$s" ] || continue
        label=$(label_of "$b" "$s")
        # (a build may carry one of the two programs, to fit a call with more builds)
        a="not carried"
        [ -x $B/gpu_logits_exact ] &&
            a=$(env "$s" timeout 120 $B/gpu_logits_exact --a gpu --b cpu --models "$PWD/.carry/models" --cli $B/arbor-cli 2>&1 | tail -1)
        m="not carried"
        [ -x $B/gpu_megakernel_exact ] &&
            m=$(env "$s" ARBOR_GPU_MODELS="$PWD/.carry/models" timeout 120 $B/gpu_megakernel_exact 2>&1 | tail -1)
        log "exactness $label: logits [$a] megakernel_exact [$m] ($SECONDS s)"
    done
done
first=${BUILDS%% *}
. "$(dirname "$0")/device-shapes.sh"
shapes=${ARBOR_LR_SHAPES:-q4b moe moer}
deep_shapes=""
[ "${ARBOR_LR_DEEP:-0}" = 1 ] && deep_shapes=$(echo ${ARBOR_LR_DEEP_SHAPES:-moer})
need=$(printf '%s\n' $shapes $deep_shapes | sort -u)
if [ -n "$need" ]; then  # make_shapes with no names makes them all
    make_shapes /tmp/lr-$first/arbor-cli $need | tee -a "$OUTDIR/local-run.txt"
    log "shapes: $SECONDS s"
fi
for n in $deep_shapes; do
    save_context /tmp/lr-$first/arbor-cli $n | tee -a "$OUTDIR/local-run.txt"
    [ -f /tmp/save-$n.txt ] && cp /tmp/save-$n.txt "$OUTDIR/"
    log "context $n: $SECONDS s"
done
# bench ROUND SHAPE ROWS [bench arguments...]: every entry's rows, printed "round shape label row p50 min max".
bench() {
    local r=$1 n=$2 rows=$3 b s label
    shift 3
    while read -r b s label; do
        env "$s" timeout 100 /tmp/lr-$b/arbor-cli bench -m /tmp/arbor-shapes/$n.gguf --backend gpu --rows "$rows" --reps 3 \
            --warmup 1 "$@" </dev/null 2>&1 | bench_rows $r $n "$label" | tee -a "$OUTDIR/local-run.txt"
    done < <(entries)
}
rows=${ARBOR_LR_ROWS:-decode@229,read50@229,prefill256@229}
for round in $(seq "${ARBOR_LR_ROUNDS:-2}"); do
    if [ -n "${rows// /}" ]; then
        for n in $shapes; do bench "$round" "$n" "$rows"; done
    fi
    for n in $deep_shapes; do
        bench "$round" "$n" "${ARBOR_LR_DEEP_ROWS:-read50@16384,prefill256@16384,decode@16384}" \
            --context /tmp/ctx-$n/arbor-bench-c1-16384.park
    done
    log "t=$SECONDS s"
done
# profile TAG ARGS...: one profiled pass a (build, setting), into $OUTDIR/TAG-I.txt.
profile() {
    local tag=$1 i=0 b s label
    shift
    while read -r b s label; do
        i=$((i + 1))
        env "$s" timeout 100 /tmp/lr-$b/arbor-cli bench --backend gpu --reps 1 --warmup 1 "$@" \
            --profile "$OUTDIR/$tag-$i.json" </dev/null >"$OUTDIR/$tag-$i.txt" 2>&1
        rm -f "$OUTDIR/$tag-$i.json"
        log "$tag-$i.txt: $label"
    done < <(entries)
}
if [ "${ARBOR_LR_DEEP_PROFILE:-0}" = 1 ] && [ -n "$deep_shapes" ]; then
    n=${deep_shapes%% *}
    profile deep-profile -m /tmp/arbor-shapes/$n.gguf --rows "${ARBOR_LR_DEEP_PROFILE_ROWS:-read50@16384}" --context /tmp/ctx-$n/arbor-bench-c1-16384.park
fi
if [ "${ARBOR_LR_PROFILE:-0}" = 1 ]; then
    for n in ${ARBOR_LR_PROFILE_SHAPES:-moer}; do
        make_shapes /tmp/lr-$first/arbor-cli $n | grep error | tee -a "$OUTDIR/local-run.txt"
        profile profile-$n -m /tmp/arbor-shapes/$n.gguf --rows "${ARBOR_LR_PROFILE_ROWS:-read50@229}"
    done
fi
if [ "${ARBOR_LR_SASS:-0}" = 1 ]; then  # each build's SASS, for scripts/sass-loops.py here
    for b in $BUILDS; do
        (set -o pipefail; cuobjdump -sass /tmp/lr-$b/arbor-cli | gzip >"$OUTDIR/sass-$b.gz") || log "error: cuobjdump of $b failed"
    done
fi
log "total: $SECONDS s"
