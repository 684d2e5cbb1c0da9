#!/bin/sh
# rootfs.sh - a fresh Debian 12 (bookworm) root from the Debian mirror, as
# a tar file: the throwaway root the package test installs into, and the
# base the container image is built on where no image registry is
# reachable (base-image.sh).
#
#   sh tests/pkg/rootfs.sh          prints the tar's path
#
# debootstrap --variant=minbase (apt, dpkg, no man-db, no compiler), with
# apt's sources for bookworm, bookworm-updates and bookworm-security on
# the mirrors this machine's apt uses (DEBIAN_MIRROR and DEBIAN_SECURITY
# override them).  Made once, about a minute, kept in
# build/deb-root/bookworm.tar (make clean removes it).  Needs root.
set -eu
cd "$(dirname "$0")/../.."
out=build/deb-root/bookworm.tar
if [ -s "$out" ]; then
    echo "$out"
    exit 0
fi
command -v debootstrap >/dev/null 2>&1 || {
    echo "rootfs: needs debootstrap (sh .ci/deps deb-test)" >&2
    exit 1
}
# The mirror apt uses here: the first http(s) URI of a Debian archive in
# apt's sources that is not the security archive.
uris=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources \
    2>/dev/null | grep -v '^[[:space:]]*#' | grep -o 'https\{0,1\}://[^[:space:]]*' || true)
mirror=${DEBIAN_MIRROR:-$(echo "$uris" | grep -v security | head -n 1)}
security=${DEBIAN_SECURITY:-$(echo "$uris" | grep security | head -n 1)}
mirror=${mirror:-http://deb.debian.org/debian}
security=${security:-http://deb.debian.org/debian-security}

mkdir -p build/deb-root
root=$(mktemp -d build/deb-root/root.XXXXXX)
chmod 755 "$root" # the tar's / (mktemp made it 0700)
trap 'rm -rf --one-file-system "$root"' EXIT INT TERM
echo "rootfs: debootstrap bookworm from $mirror (about a minute)" >&2
debootstrap --variant=minbase bookworm "$root" "$mirror" >build/deb-root/debootstrap.log 2>&1 || {
    tail -n 20 build/deb-root/debootstrap.log >&2
    exit 1
}
cat >"$root/etc/apt/sources.list" <<SOURCES
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb $security bookworm-security main
SOURCES
rm -f "$root"/var/cache/apt/archives/*.deb
rm -rf "$root"/var/lib/apt/lists/*
tar -C "$root" -cf "$out.tmp" .
mv "$out.tmp" "$out"
echo "$out"
