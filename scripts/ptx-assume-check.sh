#!/bin/bash
# Does the megakernel's PTX keep all its code under its address-space assumes?
#   bash scripts/ptx-assume-check.sh [extra nvcc flags, e.g. -DARBOR_MK_SOFTMAX_SPREAD=1]
# The assumes (ARBOR_MK_SMEM_ASSUME's __builtin_assume(__isShared(p)), mk_model.hpp, and
# ARBOR_MK_GLOBAL_LOADS's __isGlobal, mk_control.hpp) only change which loads and stores the
# compiler emits; but one it folds to false makes the code after it unreachable, and nvcc
# deletes it without a word (gpu-next30: the spread softmax's sums, 370 of 371 cases wrong). This
# compiles the PTX with the flags given and again with both kinds of assume off (two nvcc runs of
# about 35 s, in parallel) and
# compares each function's counts of stores, atomics, barriers, float adds and multiply-adds,
# exponentials, shuffles, mma and cp.async: a function that lost code under the assumes has fewer.
# Exit 0: the same counts; 1: a function differs (listed); 2: a build failed. Needs nvcc and a
# configured build folder for the generated headers (ARBOR_PTX_BUILD, default /tmp/lb: cmake -S .
# -B /tmp/lb -G Ninja -DARBOR_APP=OFF -DARBOR_CUDA=ON -DARBOR_GFX1151_CHECK=OFF).
set -u
cd "$(dirname "$0")/.." || exit 2
gen=${ARBOR_PTX_BUILD:-/tmp/lb}/engine/generated
[ -d "$gen" ] || { echo "error: no generated headers at $gen (configure the build folder first)"; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ptx() {  # ASSUME OUT
    local off=()
    [ "$1" = 0 ] && off=(-UARBOR_MK_SMEM_ASSUME -DARBOR_MK_SMEM_ASSUME=0 -UARBOR_MK_GLOBAL_LOADS -DARBOR_MK_GLOBAL_LOADS=0)
    nvcc -x cu -std=c++20 -arch=sm_90 -DARBOR_MK_SMEM_FLOATS=20480 "${@:3}" "${off[@]}" \
        --fmad=false -prec-div=true -prec-sqrt=true -Iengine/include -Iengine/src -Ikernels -I"$gen" \
        -ptx kernels/megakernel.hip -o "$2" >"$2.log" 2>&1 || { echo "error: nvcc (assume $1) failed:"; tail -5 "$2.log"; return 1; }
}
ptx 1 "$tmp/a.ptx" "$@" & p1=$!
ptx 0 "$tmp/n.ptx" "$@" & p0=$!
wait $p1 || exit 2
wait $p0 || exit 2
/usr/bin/python3 - "$tmp/n.ptx" "$tmp/a.ptx" <<'PY'
import collections, re, sys
KINDS = ("st.", "atom.", "red.", "bar.", "add.rn.f32", "fma.rn.f32", "ex2", "mma", "cp.async", "shfl", "call")
def counts(path):
    out, c = {}, None
    for line in open(path):
        m = re.match(r"^\.(visible |weak )?(entry|func)\b.*?(\w+)\(?\s*$", line)
        if m:
            c = out.setdefault(m.group(3), collections.Counter())
            continue
        t = line.split()
        if c is None or not t:
            continue
        op = t[1] if t[0].startswith("@") and len(t) > 1 else t[0]
        for k in KINDS:
            if op.startswith(k):
                c[k] += 1
    return out
plain, assumed = counts(sys.argv[1]), counts(sys.argv[2])
bad = 0
for f in sorted(set(plain) | set(assumed)):
    a, b = plain.get(f, collections.Counter()), assumed.get(f, collections.Counter())
    d = {k: (a[k], b[k]) for k in sorted(set(a) | set(b)) if a[k] != b[k]}
    if d:
        bad += 1
        print(f"{f}: (without the assumes, with them) {d}")
print(f"{len(assumed)} functions, {bad} differ" + (": code lost under the assumes" if bad else ""))
sys.exit(1 if bad else 0)
PY
