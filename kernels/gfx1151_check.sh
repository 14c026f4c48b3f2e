#!/bin/sh
# Compiles every kernel source for gfx1151 (Strix Halo) with Debian's clang-19: the device code
# (with a resource report per kernel) and the host code. ROCm 5.2's device libs have no gfx11
# ISA-version file, so one is generated from a one-line OpenCL source.
# usage: gfx1151_check.sh CLANGXX CLANG BITCODE_DIR OUT_DIR ENGINE_INCLUDE ENGINE_SRC SOURCE...
set -eu
cxx="$1"; cc="$2"; bitcode="$3"; out="$4"; inc="$5"; src="$6"; shift 6
mkdir -p "$out/devlibs"
for f in "$bitcode"/*.bc; do ln -sf "$f" "$out/devlibs/"; done
printf 'const __constant unsigned int __oclc_ISA_version = 11501;\n' > "$out/isa_version_1151.cl"
"$cc" -x cl -target amdgcn-amd-amdhsa -mcpu=gfx1151 -nogpulib -emit-llvm -c \
  "$out/isa_version_1151.cl" -o "$out/devlibs/oclc_isa_version_1151.bc"
flags="-std=c++20 -x hip --offload-arch=gfx1151 --rocm-path=/usr --rocm-device-lib-path=$out/devlibs -O3 -ffp-contract=off -I$inc -I$src -Wno-unused-command-line-argument"
status=0
printf '%-48s %6s %6s %8s %10s %6s\n' "kernel (gfx1151)" VGPRs SGPRs scratch occupancy spills
for s in "$@"; do
  base=$(basename "$s" .hip)
  if ! "$cxx" $flags --cuda-device-only --no-gpu-bundle-output -c "$s" -o "$out/$base.gfx1151.o" \
       -Rpass-analysis=kernel-resource-usage 2> "$out/$base.remarks"; then
    cat "$out/$base.remarks"; status=1; continue
  fi
  if ! "$cxx" $flags --cuda-host-only -c "$s" -o "$out/$base.host.o" 2> "$out/$base.host.log"; then
    cat "$out/$base.host.log"; status=1; continue
  fi
  sed 's/ \[-Rpass-analysis=kernel-resource-usage\]$//' "$out/$base.remarks" | awk -v file="$base" '
    /Function Name:/ { if (name != "") print_row(); name=$NF; v=s=sc=occ=sp="?"; spv=0; sps=0 }
    /VGPRs: / && !/Spill/ { v=$NF } /SGPRs: / && !/Spill/ { s=$NF }
    /ScratchSize/ { sc=$NF } /Occupancy/ { occ=$NF }
    /VGPRs Spill:/ { spv=$NF } /SGPRs Spill:/ { sps=$NF }
    function print_row() { printf "%-48s %6s %6s %8s %10s %6s\n", substr(file ":" name, 1, 48), v, s, sc, occ, spv+sps }
    END { if (name != "") print_row() }'
done
[ $status = 0 ] && echo "gfx1151: all $# kernel sources compile (device and host)"
exit $status
