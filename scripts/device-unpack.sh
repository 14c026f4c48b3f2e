# Sourced by the device scripts that run builds made here. scripts/device-local-build.sh packs each
# binary as NAME.xz where this machine has xz (about a quarter smaller than gzip -9: one call then
# carries .carry/models, one build whole and two more as arbor-cli alone); older builds, or builds
# made with ARBOR_LOCAL_PACK=gzip, carry NAME.gz.
# packed FILE: FILE.xz or FILE.gz, whichever was carried (nothing when neither is there).
packed() { if [ -f "$1.xz" ]; then echo "$1.xz"; elif [ -f "$1.gz" ]; then echo "$1.gz"; fi; }
# xz_tool: what unpacks xz on this machine (xz, else python3's lzma), for the log.
xz_tool() {
    if command -v xz >/dev/null; then echo xz
    elif python3 -c 'import lzma' 2>/dev/null; then echo "python3 lzma"
    else echo "none (build with ARBOR_LOCAL_PACK=gzip bash scripts/device-local-build.sh, which packs by gzip)"; fi
}
# unpack PACKED DEST: xz by xz or python3's lzma, gzip by gzip; into DEST.part first, so that a
# failed unpack leaves no partial DEST that a later call on this machine could take for a build.
unpack() {
    rm -f "$2" "$2.part"
    case "$1" in
        *.xz) if command -v xz >/dev/null; then xz -dc "$1" >"$2.part"
              else python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), sys.stdout.buffer)' \
                       "$1" >"$2.part"; fi ;;
        *) gzip -dc "$1" >"$2.part" ;;
    esac && mv "$2.part" "$2" || { rm -f "$2.part"; return 1; }
}
