# Sourced by the device scripts: the zero-data synthetic shapes their benches run, each made once
# per machine in /tmp/arbor-shapes (NAME.gguf).
#   q4b   qwen3-4b
#   moe   qwen3moe-30b-a3b, every weight zero: all-zero routers tie, so every token goes to
#         experts 0-7 (a decode step reads the same bytes; a read or prefill is another workload)
#   moer  the same with its routing kept (synth --routed: token embeddings, norms and routers
#         random, so tokens spread over the experts as in a random-weight file)
#   fn    flashnext 30b-a3b
#   q4bnl qwen3-4b with every matrix IQ4_NL, q4bmx with every matrix MXFP4 (ARBOR_PACKED_GRIDS)
# make_shapes CLI [NAME...]: makes the named shapes (default all) with that arbor-cli; prints
# "error: synth NAME failed" for one that fails.
arbor_shape_args() {  # NAME: synth's arguments for that shape
    case $1 in
    q4b) echo "--arch qwen3 --shape qwen3-4b" ;;
    moe) echo "--arch qwen3moe --shape qwen3moe-30b-a3b" ;;
    moer) echo "--arch qwen3moe --shape qwen3moe-30b-a3b --routed" ;;
    fn) echo "--arch flashnext --shape 30b-a3b" ;;
    q4bnl) echo "--arch qwen3 --shape qwen3-4b --type IQ4_NL" ;;
    q4bmx) echo "--arch qwen3 --shape qwen3-4b --type MXFP4" ;;
    *) return 1 ;;
    esac
}
make_shapes() {
    local cli=$1 n a
    shift
    mkdir -p /tmp/arbor-shapes
    for n in ${*:-q4b moe moer fn}; do
        a=$(arbor_shape_args "$n") || { echo "error: unknown shape $n (q4b, moe, moer, fn, q4bnl, q4bmx)"; continue; }
        [ -f /tmp/arbor-shapes/$n.gguf ] || timeout 200 "$cli" synth $a --zero-data -o /tmp/arbor-shapes/$n.gguf >/dev/null ||
            echo "error: synth $n failed"
    done
}
# save_context CLI NAME: shape NAME's 16k context, parked once per machine in
# /tmp/ctx-NAME/arbor-bench-c1-16384.park (bench --save-contexts), for the deep rows' --context;
# false, with bench's last lines printed, when that fails.
save_context() {
    local cli=$1 n=$2
    mkdir -p /tmp/ctx-$n
    # (A park file is written to a temporary name and renamed, so a timed-out save leaves none.)
    [ -f /tmp/ctx-$n/arbor-bench-c1-16384.park ] && return 0
    timeout 150 "$cli" bench -m /tmp/arbor-shapes/$n.gguf --backend gpu --rows read50@16384 --reps 1 --warmup 0 \
        --save-contexts /tmp/ctx-$n >/tmp/save-$n.txt 2>&1 && return 0
    echo "error: saving the $n context failed:"
    tail -3 /tmp/save-$n.txt
    return 1
}
# bench_rows ROUND SHAPE LABEL: bench's output (stdin) as "round shape label row p50 min max"
# lines, one a row, or one FAIL line when it printed no row.
bench_rows() {
    awk -v r="$1" -v m="$2" -v v="$3" '$1 ~ /@/ {print r, m, v, $1, $2, $3, $4; n++} END {if (!n) print r, m, v, "FAIL"}'
}
