#!/bin/sh
# beside-test.sh - the suite does not mistake an installed ttsbuf for the
# tree's: with the package of build/deb (make deb) installed by apt on
# this machine, so that /usr/bin/ttsbuf is on PATH, the groups that scan
# for commands, run the examples and run the binary through sh (deps, cli,
# usage, docs) pass; the package is removed again whatever happened.
# Needs root (apt) and a built tree.  Exit 0 when the groups pass.
set -eu
cd "$(dirname "$0")/../.."
version=$(dpkg-parsechangelog -S Version)
deb=build/deb/ttsbuf_${version}_$(dpkg --print-architecture).deb
[ -s "$deb" ] || { echo "beside-test: no $deb (make deb)" >&2; exit 1; }
if dpkg-query -W -f='${Status}' ttsbuf 2>/dev/null | grep -q "install ok installed"; then
    echo "beside-test: a ttsbuf package is installed already; not touching it" >&2
    exit 1
fi
cleanup() {
    DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq ttsbuf >/dev/null 2>&1 || true
}
trap cleanup EXIT INT TERM
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "./$deb" >/dev/null
command -v ttsbuf >/dev/null || { echo "beside-test: the package put no ttsbuf on PATH" >&2; exit 1; }
echo "beside-test: $(command -v ttsbuf) installed ($(ttsbuf --version | head -n 1))"
TB_TEST_ONLY=deps,cli,usage,docs make check
