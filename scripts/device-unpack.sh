# Sourced by the device scripts that run builds made here (scripts/device-local-build.sh packs
# each binary as NAME.xz where this machine has xz, about a quarter smaller than gzip -9, which
# lets one call carry .carry/models and three builds; older builds carry NAME.gz).
# packed FILE: FILE.xz or FILE.gz, whichever was carried (nothing when neither is there).
packed() { if [ -f "$1.xz" ]; then echo "$1.xz"; elif [ -f "$1.gz" ]; then echo "$1.gz"; fi; }
# unpack PACKED DEST: xz by xz or, on an image without xz, by python3's lzma; gzip by gzip.
unpack() {
    case "$1" in
        *.xz) if command -v xz >/dev/null; then xz -dc "$1" >"$2"
              else python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), sys.stdout.buffer)' "$1" >"$2"; fi ;;
        *) gzip -dc "$1" >"$2" ;;
    esac
}
