#!/bin/sh
# base-image.sh - a Debian 12 base image made from the Debian mirror, for
# a machine with a container engine but no image registry:
#
#   sh tests/pkg/base-image.sh [NAME]    (default localhost/ttsbuf-base:bookworm)
#   make image IMAGE_BASE=localhost/ttsbuf-base:bookworm
#
# The root of rootfs.sh, imported with `podman import` (or docker's).
# ENGINE picks the engine (default: podman, else docker).  Prints NAME.
set -eu
cd "$(dirname "$0")/../.."
name=${1:-localhost/ttsbuf-base:bookworm}
engine=${ENGINE:-$(command -v podman >/dev/null 2>&1 && echo podman || echo docker)}
tar=$(sh tests/pkg/rootfs.sh)
log=$(mktemp)
trap 'rm -f "$log"' EXIT INT TERM
"$engine" import --change 'CMD ["/bin/bash"]' "$tar" "$name" >"$log" 2>&1 || {
    cat "$log" >&2
    exit 1
}
echo "$name"
