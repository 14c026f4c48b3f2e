#!/bin/bash
# arbor-gpu-attn-probe (kernels/probe/attn_probe.hip) built with each of several flag sets and run
# on both decode shapes, on the device machine; for changes to the attention item's code, a
# build takes about 30 s here instead of the megakernel's 300:
#   run(command="ARBOR_PROBE_VARIANTS='tw=-DARBOR_MK_STAGE_TWICE=1' bash scripts/device-attn-probe.sh")
# The variants NAME=FLAGS;NAME=FLAGS (CUDA flags, as device-ab.sh's ARBOR_AB_VARIANTS) build in
# /tmp/pv-NAME at once, with this tree's plain build as "main" (/tmp/pv-main); ARBOR_PROBE_ARGS
# passes more arguments to every run (e.g. --cells 229 --reps 40). The main build also runs the
# moer shape with the KV pages in each memory of ARBOR_PROBE_MEMORY (default "device
# managed-host"; the runs above take the engine's, managed). Prints each run's table and writes
# $OUT/attn-probe.txt.
set -u
OUTDIR=${OUT:-/tmp/check-out}
mkdir -p "$OUTDIR"
t0=$(date +%s)
specs="main=;${ARBOR_PROBE_VARIANTS:-}"
pids=() names=()
while read -r spec; do
    [ -n "$spec" ] || continue
    name=${spec%%=*} flags=${spec#*=}
    if [ "$name" = "$spec" ] || [ -z "$name" ] || { [ "$name" = main ] && [ -n "$flags" ]; }; then
        echo "error: '$spec' is not NAME=FLAGS (the name main is this tree's plain build)"
        exit 2
    fi
    ( mkdir -p /tmp/pv-$name &&
      cmake -S . -B /tmp/pv-$name -G Ninja -DARBOR_APP=OFF -DARBOR_CUDA=ON -DARBOR_GFX1151_CHECK=OFF \
          -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CUDA_FLAGS=$flags" >/tmp/pv-$name/configure.log 2>&1 &&
      nice ninja -C /tmp/pv-$name arbor-gpu-attn-probe >/tmp/pv-$name/build.log 2>&1 ) &
    pids+=($!) names+=("$name")
done < <(tr ';' '\n' <<<"$specs")
for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { echo "error: the probe build of ${names[$i]} failed:";
        tail -5 /tmp/pv-${names[$i]}/configure.log 2>/dev/null; grep -E "error" /tmp/pv-${names[$i]}/build.log 2>/dev/null | head -10; }
done
echo "built: $(( $(date +%s) - t0 )) s"
for name in "${names[@]}"; do
    p=/tmp/pv-$name/kernels/arbor-gpu-attn-probe
    [ -x "$p" ] || continue
    for shape in "moer" "q4b"; do
        args=""
        [ $shape = q4b ] && args="--kv 8 --group 4 --layers 36"
        echo "== $name $shape"
        # shellcheck disable=SC2086
        timeout 120 "$p" $args ${ARBOR_PROBE_ARGS:-} 2>&1 || echo "$name $shape: the probe failed"
    done
    if [ "$name" = main ]; then
        for mem in ${ARBOR_PROBE_MEMORY-device managed-host}; do
            echo "== $name moer, KV in $mem memory"
            # shellcheck disable=SC2086
            timeout 120 "$p" --kv-memory "$mem" ${ARBOR_PROBE_ARGS:-} 2>&1 || echo "$name moer $mem: the probe failed"
        done
    fi
done | tee "$OUTDIR/attn-probe.txt"
echo "done: $(( $(date +%s) - t0 )) s"
