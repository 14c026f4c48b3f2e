# Sourced by the scripts that compile the kernels here, without a GPU (dot-regs.sh,
# ptx-assume-check.sh, local-mem-map.sh), from the repository root: main's nvcc flags for sm_90
# and the generated headers they need.
#   nvcc_local_configure DIR   configures a tree without Qt, CUDA or the app in DIR/b for its
#                              generated headers (arbor/version etc.) and adds them to
#                              NVCC_LOCAL_FLAGS; on failure prints the log's end and returns 1
NVCC_LOCAL_FLAGS=(-x cu -std=c++20 -arch=sm_90 --fmad=false -prec-div=true -prec-sqrt=true
                  -Iengine/include -Iengine/src -Ikernels)
nvcc_local_configure() {
    cmake -S . -B "$1/b" -G Ninja -DARBOR_APP=OFF -DARBOR_CUDA=OFF -DARBOR_GFX1151_CHECK=OFF >"$1/configure.log" 2>&1 ||
        { tail -5 "$1/configure.log"; echo "error: configure failed"; return 1; }
    NVCC_LOCAL_FLAGS+=(-I"$1/b/engine/generated")
}
