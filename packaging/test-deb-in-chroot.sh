#!/usr/bin/env bash
# Installs Arbor's .deb into a clean Debian 12 root and runs it there. Too slow for CI (a few
# minutes and a few hundred MB from the mirror), so run it by hand before a release:
#
#   sudo packaging/test-deb-in-chroot.sh build/arbor_0.1.0_amd64.deb [ROOT_DIR]
#
# 1. debootstrap --variant=minbase bookworm (skipped when ROOT_DIR already holds a root)
# 2. apt-get install --no-install-recommends ./arbor_*.deb: the Depends alone must be enough
# 3. in the root: arbor --version, arbor-cli info on the installed demo model, and
#    `arbor --demo --screenshot` offscreen, which must write a PNG of the window
# 4. the Recommends (shared-mime-info, desktop-file-utils, hicolor-icon-theme) register
#    application/x-gguf and the desktop file for it
# 5. apt-get purge arbor leaves none of its files, and their dpkg triggers forget the type
# The screenshot is copied next to the .deb as <deb>.chroot.png. Needs root and debootstrap;
# the mirror is the one apt uses here, or $ARBOR_DEBIAN_MIRROR. A ROOT_DIR given is kept; the
# default temporary root is removed at the end.
set -euo pipefail

say() { printf '\033[1m== %s\033[0m\n' "$*"; }
die() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

[ $# -ge 1 ] || { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root (debootstrap and chroot need it)"
command -v debootstrap >/dev/null || die "debootstrap is missing: apt-get install debootstrap"
deb=$(realpath "$1")
[ -f "$deb" ] || die "no such package: $1"

keep=1
root=${2:-}
if [ -z "$root" ]; then
  root=$(mktemp -d /var/tmp/arbor-chroot.XXXXXX)
  keep=0
fi
mkdir -p "$root"
chmod 755 "$root"  # mktemp's 0700 would keep apt's _apt user out
root=$(realpath "$root")

mirror=${ARBOR_DEBIAN_MIRROR:-}
if [ -z "$mirror" ]; then
  mirror=$(sed -n 's/^URIs:[[:space:]]*\(http[^[:space:]]*debian\)[[:space:]]*$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1)
  [ -n "$mirror" ] || mirror=$(sed -n 's/^deb[[:space:]]\+\(http[^[:space:]]*debian\)[[:space:]]\+bookworm[[:space:]].*/\1/p' /etc/apt/sources.list 2>/dev/null | head -n1)
  [ -n "$mirror" ] || mirror=http://deb.debian.org/debian
fi

mounted=()
cleanup() {
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" 2>/dev/null || true; done
  if [ "$keep" = 0 ]; then rm -rf --one-file-system "$root" "$root.debootstrap.log"; fi
}
trap cleanup EXIT
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }

started=$(date +%s)
if [ ! -x "$root/usr/bin/apt-get" ]; then
  say "debootstrap bookworm (minbase) from $mirror into $root"
  debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.debootstrap.log" 2>&1 \
    || { tail -n 20 "$root.debootstrap.log"; die "debootstrap failed (log: $root.debootstrap.log)"; }
fi
for m in proc sys dev dev/pts; do
  mount --bind "/$m" "$root/$m"
  mounted+=("$root/$m")
done
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

say "installing $(basename "$deb") with its Depends only"
cp "$deb" "$root/tmp/arbor.deb"
in_root apt-get update -q >/dev/null
in_root apt-get install -y -q --no-install-recommends /tmp/arbor.deb >"$root/tmp/install.log" 2>&1 \
  || { tail -n 30 "$root/tmp/install.log"; die "apt-get install failed"; }
grep -E '^(Need to get|After this operation)' "$root/tmp/install.log" || true

say "running the installed binaries"
version=$(in_root arbor --version) || die "arbor --version failed"
echo "$version"
in_root arbor-cli info /usr/share/arbor/models/stories260K.gguf >/dev/null || die "arbor-cli info failed on the demo model"
in_root env QT_QPA_PLATFORM=offscreen arbor --data-dir /tmp/profile --demo --screenshot /tmp/shot.png \
  || die "arbor --screenshot failed in the clean root"
[ -s "$root/tmp/shot.png" ] || die "no screenshot written"
file "$root/tmp/shot.png"
cp "$root/tmp/shot.png" "$deb.chroot.png"

say "installing the Recommends: the desktop, MIME and icon databases"
in_root apt-get install -y -q --no-install-recommends shared-mime-info desktop-file-utils hicolor-icon-theme >/dev/null
grep -qx 'application/x-gguf' "$root/usr/share/mime/types" || die "application/x-gguf is not in the MIME database"
grep -q 'application/x-gguf=.*org.arborchat.Arbor.desktop' "$root/usr/share/applications/mimeinfo.cache" \
  || die "the desktop file is not registered for application/x-gguf"
[ -f "$root/usr/share/icons/hicolor/256x256/apps/org.arborchat.Arbor.png" ] || die "icon missing"

say "purging: the same triggers must forget the file type"
in_root apt-get purge -y -q arbor >/dev/null
left=$(cd "$root" && ls usr/bin/arbor usr/bin/arbor-cli usr/share/arbor usr/share/applications/org.arborchat.Arbor.desktop 2>/dev/null || true)
[ -z "$left" ] || die "purge left: $left"
! grep -qx 'application/x-gguf' "$root/usr/share/mime/types" || die "application/x-gguf is still in the MIME database"
! grep -q 'org.arborchat.Arbor.desktop' "$root/usr/share/applications/mimeinfo.cache" || die "mimeinfo.cache still names Arbor"

say "PASS in $(($(date +%s) - started)) s: $version installs, runs and renders in a clean Debian 12 root (screenshot: $deb.chroot.png)"
