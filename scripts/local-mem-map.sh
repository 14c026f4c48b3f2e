#!/bin/bash
# Where the megakernel's local memory goes, without a GPU or a disassembler:
#   bash scripts/local-mem-map.sh [extra nvcc flags, e.g. -DARBOR_MK_BULK_STAGE=1]
# Compiles kernels/megakernel.hip for sm_90 with main's flags and -lineinfo, runs ptxas (-O3, -v)
# on it, prints ptxas's report of the entry and of the functions that spill most, and then
# scripts/sass-local.py's count of the local loads and stores (LDL, STL: spills, ABI saves
# around calls, arrays kept in local memory) by function and by source line. Static counts:
# Nsight Compute's source page (scripts/device-ncu.sh) says which of them run, and how often.
# Needs nvcc, cmake, ninja and /usr/bin/python3, no GPU; about 6 minutes here (ptxas takes one
# core for 5).
# ARBOR_SASS_KEEP=DIR keeps the cubin and ptxas's log there; ARBOR_SASS_LINES=N lines (40).
set -u
cd "$(dirname "$0")/.." || exit 2
command -v nvcc >/dev/null || { echo "error: no nvcc here"; exit 2; }
py=/usr/bin/python3
[ -x $py ] || py=python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. scripts/nvcc-local.sh
nvcc_local_configure "$tmp" || exit 2
nvcc "${NVCC_LOCAL_FLAGS[@]}" -lineinfo -DARBOR_MK_SMEM_FLOATS=20480 "$@" -ptx kernels/megakernel.hip -o "$tmp/mk.ptx" \
    >"$tmp/nvcc.log" 2>&1 || { tail -20 "$tmp/nvcc.log"; echo "error: nvcc failed"; exit 2; }
ptxas -arch=sm_90 -O3 -v -lineinfo "$tmp/mk.ptx" -o "$tmp/mk.cubin" >"$tmp/ptxas.log" 2>&1 ||
    { tail -20 "$tmp/ptxas.log"; echo "error: ptxas failed"; exit 2; }
if [ -n "${ARBOR_SASS_KEEP:-}" ]; then
    mkdir -p "$ARBOR_SASS_KEEP" && cp "$tmp/mk.cubin" "$tmp/ptxas.log" "$ARBOR_SASS_KEEP/"
fi
echo "ptxas (sm_90, -O3): the entry, then the functions by spill loads (bytes of stores / loads):"
grep "Used .* registers" "$tmp/ptxas.log" | tail -1 | sed 's/^ptxas info *: */  /'
awk '/Function properties for/ {f = $NF; next}
     /stack frame/ {  # "N bytes stack frame, N bytes spill stores, N bytes spill loads"
         for (i = 1; i <= NF; i++) {
             if ($i == "stack") sf = $(i - 2)
             if ($i == "stores,") st = $(i - 3)
             if ($i == "loads") ld = $(i - 3)
         }
         printf "%6d %6d %6d %s\n", ld, st, sf, f
     }' "$tmp/ptxas.log" |
    sort -k1,1nr | head -12 | { command -v c++filt >/dev/null && c++filt || cat; } |
    awk '{printf "  spills %4d / %4d, stack %5d  ", $2, $1, $3; $1 = $2 = $3 = ""; print substr($0, 4, 110)}'
echo
$py scripts/sass-local.py "$tmp/mk.cubin" --lines "${ARBOR_SASS_LINES:-40}"
