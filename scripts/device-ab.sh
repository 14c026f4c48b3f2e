#!/bin/bash
# A/B of this tree against baseline trees on the device machine, in one warm machine's two calls:
#   run(command="ARBOR_AB_PART=build bash scripts/device-ab.sh", carry=[".carry/models", ".carry/src-base"])
#   run(command="ARBOR_AB_PART=run bash scripts/device-ab.sh", carry=[".carry/models", ".carry/src-base"])
# .carry/src-base is the baseline's source (git archive BASE | tar -x -C .carry/src-base);
# ARBOR_AB_BASE may name several such folders (each also in carry), or be "none" (no baseline:
# this tree against its variants, a build and a third of the rows fewer).
# "build" builds them all at once (the megakernel's translation unit takes one core for about
# 300 s, so a few builds take about as long as one) and runs this tree's exactness suite
# (device-check.sh's build part; ARBOR_AB_EXACT=0: the build only). "run" times decode@229 on
# the three synth shapes, the baselines and this tree interleaved, three rounds of three reps
# each, this tree also with each switch in ARBOR_AB_SWITCHES (default none); then, unless
# ARBOR_AB_PROFILE=0, device-check.sh's short run part (the switches' exactness, this tree's
# timings and profiles; it needs the test programs, so not after ARBOR_AB_EXACT=0). A bench that
# fails prints a FAIL row, left out of the medians. Baseline folders need distinct names other
# than "new" (each is built in /tmp/bb-NAME and labelled NAME).
# ARBOR_AB_VARIANTS="NAME=FLAGS;NAME=FLAGS" also builds this tree with extra CUDA flags (for
# compile-time switches such as -DARBOR_MK_SMEM_DESC=1), in /tmp/bv-NAME, labelled new/NAME.
# ARBOR_AB_ROUNDS sets the rounds (default 3). ARBOR_AB_VARIANT_EXACT=1 (build part) also builds
# each variant's GPU test programs and runs gpu_megakernel_exact, gpu_megakernel_hang and the full
# gpu_logits_exact on it after the builds (about 20 s a variant), so a variant can be turned on
# by default on the strength of one call; ARBOR_AB_VARIANT_EXACT=NAME,NAME: only those variants.
# scripts/device-carry.sh prepares the carried folders.
# The build part also prints each build's megakernel LDL/STL and SASS counts (cuobjdump).
# ARBOR_AB_PROFILE_BUILDS (run part): profiles of named builds (see the end of this script).
# ARBOR_AB_ROW (run part) times another bench row than decode@229 (read50@229, prefill256@229:
# levers for passes of many tokens), ARBOR_AB_SHAPES a subset of "q4b moe fn moer q4bnl q4bmx"
# (scripts/device-shapes.sh; the run part makes those the build part did not).
set -u
PART=${ARBOR_AB_PART:-build}
BASES=${ARBOR_AB_BASE:-.carry/src-base}
[ "$BASES" = none ] && BASES=""  # no baseline: this tree and its variants only (saves device time)
OUTDIR=${OUT:-/tmp/check-out}
mkdir -p "$OUTDIR"
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
bdir() { echo /tmp/bb-$(basename "$1"); }  # a baseline's build folder
for b in $BASES; do [ -d "$b" ] || { echo "error: no baseline source at $b"; exit 2; }; done
cmake_build() {  # source build target...
    mkdir -p "$2" &&
    cmake -S "$1" -B "$2" -G Ninja -DARBOR_APP=OFF -DARBOR_CUDA=ON -DARBOR_GFX1151_CHECK=OFF \
        -DCMAKE_BUILD_TYPE=Release >"$2/configure.log" 2>&1 && nice ninja -C "$2" "${@:3}" >"$2/build.log" 2>&1
}
# ARBOR_AB_TARGETS: more targets this tree and each variant build (build part), e.g.
# arbor-gpu-attn-probe, whose attention item code takes a variant's flags as the megakernel does.
TARGETS=${ARBOR_AB_TARGETS:-}
# The zero-data synthetic shapes the timings run (scripts/device-shapes.sh).
. "$(dirname "$0")/device-shapes.sh"
VARIANTS=${ARBOR_AB_VARIANTS:-}
variants() {  # NAME FLAGS lines
    local IFS=';' v
    for v in $VARIANTS; do [ -n "$v" ] && echo "${v%%=*} ${v#*=}"; done
}
vtests=""
VEXACT=${ARBOR_AB_VARIANT_EXACT:-0}
[ "$VEXACT" != 0 ] && vtests="gpu_logits_exact gpu_megakernel_exact gpu_megakernel_hang"
vexact() {  # NAME: is variant NAME's exactness checked?
    [ "$VEXACT" = 1 ] || case ",$VEXACT," in *",$1,"*) true ;; *) false ;; esac
}
if [ "$VEXACT" != 0 ] && [ "$VEXACT" != 1 ]; then  # every name listed must be a variant
    IFS=',' read -r -a vnames <<<"$VEXACT"
    for n in "${vnames[@]}"; do
        variants | awk -v n="$n" '$1 == n {f=1} END {exit !f}' ||
            { echo "error: ARBOR_AB_VARIANT_EXACT names '$n', which ARBOR_AB_VARIANTS does not define"; exit 2; }
    done
fi
if [ "$PART" = build ]; then
    pids=() trees=()
    for b in $BASES; do cmake_build "$b" "$(bdir "$b")" arbor-cli & pids+=($!) trees+=("$b"); done
    while read -r name flags; do
        [ -n "$name" ] || continue
        ( mkdir -p /tmp/bv-$name &&
          cmake -S . -B /tmp/bv-$name -G Ninja -DARBOR_APP=OFF -DARBOR_CUDA=ON -DARBOR_GFX1151_CHECK=OFF \
              -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CUDA_FLAGS=$flags" >/tmp/bv-$name/configure.log 2>&1 &&
          nice ninja -C /tmp/bv-$name arbor-cli $(vexact "$name" && echo "$vtests") >/tmp/bv-$name/build.log 2>&1 &&
          { [ -z "$TARGETS" ] || nice ninja -C /tmp/bv-$name $TARGETS >/tmp/bv-$name/build-targets.log 2>&1 ||
            echo "warning: $TARGETS did not build in variant $name (/tmp/bv-$name/build-targets.log)"; } ) &
        pids+=($!) trees+=("variant $name ($flags)")
    done < <(variants)
    rc=0
    if [ "${ARBOR_AB_EXACT:-1}" = 1 ]; then
        ARBOR_CHECK_PART=build bash scripts/device-check.sh || rc=$?
    elif cmake_build . /tmp/b arbor-cli; then
        make_shapes /tmp/b/engine/arbor-cli
        echo "built: $(el) s"
    else
        echo "error: this tree's build failed"
        tail -5 /tmp/b/configure.log 2>/dev/null
        grep -E "error" -A3 /tmp/b/build.log 2>/dev/null | head -30
        kill "${pids[@]}" 2>/dev/null
        wait
        exit 2
    fi
    # ARBOR_AB_TARGETS in this tree's build (device-check.sh's, when it built it): not fatal.
    tb=${ARBOR_EXACT_BUILD:-/tmp/b}
    if [ -n "$TARGETS" ] && [ -d "$tb" ]; then
        nice ninja -C "$tb" $TARGETS >"$tb/build-targets.log" 2>&1 || echo "warning: $TARGETS did not build in $tb ($tb/build-targets.log)"
    fi
    for i in "${!pids[@]}"; do
        wait "${pids[$i]}" || { echo "error: the build of ${trees[$i]} failed (the run part leaves it out)"; rc=2; }
    done
    echo "baselines built: $(el) s"
    # Each build's megakernel: its local-memory instructions (LDL/STL: ptxas's spills and stack)
    # and its size. A switch can move the spills of functions it never runs (ptxas allocates
    # across the call graph; gpu-next24's ARBOR_MK_STAGE_DEEP), so compare them before the times.
    if command -v cuobjdump >/dev/null; then
        for bd in /tmp/b $(for b in $BASES; do bdir "$b"; done) $(variants | awk '{print "/tmp/bv-" $1}'); do
            obj=$(find "$bd" -name 'megakernel.hip.o' 2>/dev/null | head -1)
            [ -n "$obj" ] || continue
            cuobjdump -sass "$obj" 2>/dev/null |
                awk -v b="$bd" '/LDL|STL/ {l++} /\/\*[0-9a-f]+\*\// {n++} END {print "megakernel of " b ": " l + 0 " LDL/STL, " n + 0 " SASS instructions"}'
        done
        # This tree's functions by their local-memory instructions (spills, ABI saves, local
        # arrays): every thread's stack traffic goes through an L1 of about 60-90 KB an SM (the
        # arenas take the rest), then the L2. Whole table in $OUTDIR/local-mem.txt.
        obj=$(find /tmp/b -name 'megakernel.hip.o' 2>/dev/null | head -1)
        if [ -n "$obj" ]; then
            cuobjdump -sass "$obj" 2>/dev/null |
                awk '/Function : / {f=$NF} /LDL/ {ld[f]++} /STL/ {st[f]++} /\/\*[0-9a-f]+\*\// {n[f]++}
                     END {for (k in n) printf "%6d %6d %7d %s\n", ld[k] + 0, st[k] + 0, n[k], k}' |
                sort -k1,1nr -k2,2nr | { command -v c++filt >/dev/null && c++filt || cat; } >"$OUTDIR/local-mem.txt"
            echo "main's functions by LDL (then STL, SASS instructions), the first 16:"
            head -16 "$OUTDIR/local-mem.txt" | cut -c1-160
        fi
    fi
    if [ -n "$vtests" ]; then
        models=${ARBOR_EXACT_MODELS:-.carry/models}
        while read -r name flags; do
            [ -n "$name" ] && vexact "$name" || continue
            v=/tmp/bv-$name
            [ -x $v/tests/gpu/gpu_logits_exact ] || { echo "variant $name: no test programs (build failed?)"; rc=2; continue; }
            r1=$(ARBOR_GPU_MODELS="$models" timeout 120 $v/tests/gpu/gpu_megakernel_exact </dev/null 2>&1 | tail -1)
            r2=$(timeout 60 $v/tests/gpu/gpu_megakernel_hang </dev/null 2>&1 | tail -1)
            timeout 150 $v/tests/gpu/gpu_logits_exact --a gpu --b cpu --models "$models" --cli $v/engine/arbor-cli \
                </dev/null >$v/logits-exact.log 2>&1
            r3=$(tail -1 $v/logits-exact.log)
            echo "variant $name exactness: megakernel_exact [$r1] hang [$r2] logits [$r3]"
            case "$r1 $r2 $r3" in *" 0 failed"*" 0 failed"*" 0 failed"*) ;; *) rc=2 ;; esac
            # A failing suite: its first failures (which row, decode or prefill) and the cases that passed.
            case "$r3" in *" 0 failed"*) ;; *)
                grep -m 4 '^FAIL' $v/logits-exact.log | cut -c1-300
                echo "  passed: $(grep '^ok ' $v/logits-exact.log | head -5 | cut -c1-80 | tr '\n' ';')" ;;
            esac
        done < <(variants)
        echo "variants checked: $(el) s"
    fi
    exit $rc
fi
CLI=/tmp/b/engine/arbor-cli
[ -x "$CLI" ] || { echo "error: run ARBOR_AB_PART=build first, on this warm machine"; exit 2; }
make_shapes "$CLI" ${ARBOR_AB_SHAPES:-q4b moe fn}  # those the build part does not make (q4bnl, q4bmx)
ok=""
for b in $BASES; do
    if [ -x "$(bdir "$b")/engine/arbor-cli" ]; then ok="$ok $b"; else echo "error: no baseline build of $b (left out)"; fi
done
BASES=$ok
SW=${ARBOR_AB_SWITCHES:-}
ROW=${ARBOR_AB_ROW:-decode@229}
row() {  # label cli shape [env...]
    local label=$1 cli=$2 m=$3; shift 3
    env "$@" timeout 120 "$cli" bench -m /tmp/arbor-shapes/$m.gguf --backend gpu --rows "$ROW" --reps 3 2>&1 |
        awk -v l="$label" -v m="$m" -v r="$ROW" '$1 == r {print m, l, $2, $3, $4; ok=1} END{if(!ok) print m, l, "FAIL"}'
}
echo "shape variant p50 min max (ms, $ROW)"
for round in $(seq "${ARBOR_AB_ROUNDS:-3}"); do
    for m in ${ARBOR_AB_SHAPES:-q4b moe fn}; do
        for b in $BASES; do row "$(basename "$b")" "$(bdir "$b")/engine/arbor-cli" $m; done
        row new "$CLI" $m
        while read -r name flags; do
            [ -n "$name" ] && [ -x /tmp/bv-$name/engine/arbor-cli ] && row "new/$name" /tmp/bv-$name/engine/arbor-cli $m
        done < <(variants)
        for s in $SW; do row "new:$s" "$CLI" $m "$s"; done
    done
done | tee "$OUTDIR/ab.txt"
echo "-- medians of the rounds' p50"
grep -v FAIL "$OUTDIR/ab.txt" | awk '{k=$1" "$2; v[k]=v[k]" "$3} END{for(k in v){n=split(v[k],a," "); for(i=1;i<=n;i++)for(j=i+1;j<=n;j++)if(a[j]<a[i]){t=a[i];a[i]=a[j];a[j]=t}; print k, a[int((n+1)/2)], "(" v[k] " )"}}' | sort
echo "a/b: $(el) s"
# ARBOR_AB_PROFILE_BUILDS="new NAME ...": one profiled decode@229 pass of q4b and moe on each named
# build (new: this tree; NAME: variant NAME), printing the stage sums, item clocks and phases.
for v in ${ARBOR_AB_PROFILE_BUILDS:-}; do
    cli=$CLI
    [ "$v" = new ] || cli=/tmp/bv-$v/engine/arbor-cli
    [ -x "$cli" ] || { echo "error: no build $v to profile"; continue; }
    for m in q4b moe; do
        timeout 30 "$cli" bench -m /tmp/arbor-shapes/$m.gguf --backend gpu --rows decode@229 --reps 1 \
            --profile "/tmp/$v-$m.trace.json" >"$OUTDIR/prof-$v-$m.txt" 2>&1 ||
            echo "error: the profile of $v on $m failed (exit $?): $(tail -1 "$OUTDIR/prof-$v-$m.txt")"
        echo "-- $v $m decode@229: the slowest workgroup of each stage, summed over the layers"
        awk -f scripts/profile-sum.awk "$OUTDIR/prof-$v-$m.txt" | sort -rn | head -12
        grep -hE '^(item|phase attn)' "$OUTDIR/prof-$v-$m.txt"
    done
done
echo "profiles: $(el) s"
if [ "${ARBOR_AB_PROFILE:-1}" = 1 ]; then ARBOR_CHECK_PART=run ARBOR_CHECK_SHORT=1 bash scripts/device-check.sh; fi
