#!/bin/bash
# Does the megakernel's PTX keep all its code under its address-space assumes?
#   bash scripts/ptx-assume-check.sh [extra nvcc flags, e.g. -DARBOR_MK_SOFTMAX_SPREAD=1]
# The assumes (ARBOR_MK_SMEM_ASSUME's __builtin_assume(__isShared(p)), mk_model.hpp, and
# ARBOR_MK_GLOBAL_LOADS's __isGlobal, mk_control.hpp) only change which loads and stores the
# compiler emits; but one it folds to false makes the code after it unreachable, and nvcc
# deletes it without a word (gpu-next30: the spread softmax's sums, 370 of 371 cases wrong). This
# compiles the PTX with the flags given and again with both kinds of assume off (two nvcc runs of
# 35-90 s, in parallel) and compares each function's counts of loads, stores, atomics, barriers,
# float adds, subtractions, multiplies, divisions and multiply-adds, dp4a, shuffles, mma, cp.async,
# returns and calls: a function that lost code under the assumes has fewer. (Not branches: the
# global-load assumes let nvcc turn two of mk_gated_ffn's into selects, which loses nothing.)
# Exit 0: the same counts; 1: a function differs (listed); 2: a build or the comparison failed.
# Needs nvcc, no GPU (about 35 s here). ARBOR_PTX_KEEP=DIR keeps the two PTX files there
# (assumed.ptx, plain.ptx) to read a difference.
set -u
cd "$(dirname "$0")/.." || exit 2
command -v nvcc >/dev/null || { echo "error: no nvcc here"; exit 2; }
case " $* " in *" -DARBOR_MK_SMEM_ASSUME=0 "*)
    echo "warning: -DARBOR_MK_SMEM_ASSUME=0 given: the shared-memory assumes are off in both builds" ;;
esac
tmp=$(mktemp -d)
p0="" p1=""
trap 'kill $p0 $p1 2>/dev/null; rm -rf "$tmp"' EXIT
. scripts/nvcc-local.sh
nvcc_local_configure "$tmp" || exit 2
ptx() {  # ASSUME OUT FLAGS...
    local off=()
    [ "$1" = 0 ] && off=(-UARBOR_MK_SMEM_ASSUME -DARBOR_MK_SMEM_ASSUME=0 -UARBOR_MK_GLOBAL_LOADS -DARBOR_MK_GLOBAL_LOADS=0)
    nvcc "${NVCC_LOCAL_FLAGS[@]}" -DARBOR_MK_SMEM_FLOATS=20480 "${@:3}" "${off[@]}" -ptx kernels/megakernel.hip \
        -o "$2" >"$2.log" 2>&1
}
ptx 1 "$tmp/a.ptx" "$@" & p1=$!
ptx 0 "$tmp/n.ptx" "$@" & p0=$!
wait $p1; r1=$?
wait $p0; r0=$?
p0="" p1=""
for r in "1 $r1 a" "0 $r0 n"; do
    set -- $r
    [ "$2" = 0 ] || { echo "error: nvcc (assumes $([ "$1" = 1 ] && echo on || echo off)) failed:"; tail -5 "$tmp/$3.ptx.log"; }
done
[ "$r1" = 0 ] && [ "$r0" = 0 ] || exit 2
python3 - "$tmp/n.ptx" "$tmp/a.ptx" <<'PY'
import collections, re, sys
KINDS = ("ld.", "st.", "atom.", "red.", "bar.", "add.rn.f32", "sub.rn.f32", "mul.rn.f32", "div.rn",
         "fma.rn.f32", "dp4a", "mma", "cp.async", "shfl", "ret", "call")
HEADER = re.compile(r"^(?:\.(?:visible|weak|extern)\s+)*\.(entry|func)\b.*?(\w+)\s*\(?\s*$")
def counts(path):
    out, c = {}, None
    for line in open(path):
        m = HEADER.match(line)
        if m:
            c = out.setdefault(m.group(2), collections.Counter())
            continue
        t = line.split()
        if c is None or not t:
            continue
        op = t[1] if t[0].startswith("@") and len(t) > 1 else t[0]
        for k in KINDS:
            if op.startswith(k):
                c[k] += 1
    return out
try:
    plain, assumed = counts(sys.argv[1]), counts(sys.argv[2])
except Exception as e:  # exit 1 means "a function differs"
    print(f"error: reading the PTX: {e}")
    sys.exit(2)
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
rc=$?
if [ -n "${ARBOR_PTX_KEEP:-}" ]; then
    mkdir -p "$ARBOR_PTX_KEEP" && cp "$tmp/a.ptx" "$ARBOR_PTX_KEEP/assumed.ptx" && cp "$tmp/n.ptx" "$ARBOR_PTX_KEEP/plain.ptx"
fi
[ $rc -le 1 ] || { echo "error: the comparison failed (rc $rc)"; exit 2; }
exit $rc
