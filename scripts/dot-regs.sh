#!/bin/bash
# Registers and spills of the expert-major row dots (kernels/probe/dot_regs.hip) by format and
# shape, from ptxas -v for sm_90 under the megakernel's bounds (128 registers a thread). About
# 5 s here; needs nvcc, no GPU. The megakernel's own functions add their state to these (ptxas -v
# of kernels/megakernel.hip gives them whole).
#   bash scripts/dot-regs.sh
#   ARBOR_DOT_REGS_FLAGS="-DARBOR_MK_WIDE_LOADS=0" bash scripts/dot-regs.sh   (a switch's effect)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v nvcc >/dev/null || { echo "error: no nvcc here"; exit 2; }
gen=$(mktemp -d)
trap 'rm -rf "$gen"' EXIT
. scripts/nvcc-local.sh
nvcc_local_configure "$gen" || exit 1
nvcc "${NVCC_LOCAL_FLAGS[@]}" -O3 -Xptxas -v ${ARBOR_DOT_REGS_FLAGS:-} -c kernels/probe/dot_regs.hip \
    -o "$gen/dot_regs.o" >"$gen/ptxas.log" 2>&1 || { tail -20 "$gen/ptxas.log"; echo "error: nvcc failed"; exit 1; }
echo "kernel format rows acts registers spill_stores spill_loads"
awk '/Compiling entry/ {e = $0} /spill stores/ {st = $0} /Used [0-9]+ registers/ {
        k = e ~ /slot_regs/ ? "slot_regs" : e ~ /rows_regs/ ? "rows_regs" : "dot_regs"
        match(e, /blocks[0-9]+[A-Za-z0-9_]+ELi[0-9]+ELi[0-9]+/); s = substr(e, RSTART + 6, RLENGTH - 6)
        sub(/^[0-9]+/, "", s); split(s, p, "ELi"); match($0, /Used [0-9]+/); r = substr($0, RSTART + 5, RLENGTH - 5)
        split(st, q, " bytes spill stores, "); n1 = q[1]; sub(/.* /, "", n1); n2 = q[2]; sub(/ .*/, "", n2)
        print k, p[1], p[2], p[3], r, n1, n2 }' "$gen/ptxas.log"
