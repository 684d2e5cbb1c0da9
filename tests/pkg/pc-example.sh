#!/bin/sh
# pc-example.sh - a program of a user's own links the installed libttsbuf
# through pkg-config alone, and computes what the installed command does.
#
#   sh tests/pkg/pc-example.sh EXAMPLE.c TTSBUF
#
# Builds EXAMPLE.c (examples/min-tps.c) with
#   cc EXAMPLE.c $(pkg-config --cflags --libs ttsbuf)
# and no other flag (PKG_CONFIG_PATH, if set, says where ttsbuf.pc is),
# records the demo preset's trace with TTSBUF, and requires the example's
# minimum TPS for that trace to be the one `TTSBUF sim --trace` reports
# (the same engine, the library and the command).  Runs in the source
# tree (.ci/run, after make install) and in the package test's Debian
# root (deb-test.sh): POSIX sh, cc, pkg-config, grep and sed only.
set -eu
[ $# -eq 2 ] || { echo "usage: sh tests/pkg/pc-example.sh EXAMPLE.c TTSBUF" >&2; exit 2; }
src=$1
ttsbuf=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

flags=$(pkg-config --cflags --libs ttsbuf) || {
    echo "pc-example: pkg-config finds no ttsbuf (PKG_CONFIG_PATH=${PKG_CONFIG_PATH:-})" >&2
    exit 1
}
echo "pc-example: cc $src $flags"
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror "$src" $flags -o "$tmp/example" || {
    echo "pc-example: $src does not build with pkg-config's flags alone" >&2
    exit 1
}
"$ttsbuf" sim --preset demo --record "$tmp/demo.jsonl" >/dev/null
out=$("$tmp/example" "$tmp/demo.jsonl")
echo "pc-example: $out"
# The first min_tps of the result is the run's (the pre-roll curve's come
# after it); the example prints one decimal.
cli=$("$ttsbuf" sim --trace "$tmp/demo.jsonl" --json | grep -o '"min_tps":[0-9.eE+-]*' | head -n 1)
want=$(printf '%.1f' "${cli#*:}")
case "$out" in
"min TPS $want tokens/s "*) ;;
*)
    echo "pc-example: the example says '$out', ttsbuf sim says min_tps ${cli#*:}" >&2
    exit 1
    ;;
esac
# Its bad input: a missing trace is exit 3 with the path named.
if "$tmp/example" "$tmp/none.jsonl" >/dev/null 2>"$tmp/err"; then
    echo "pc-example: a missing trace did not fail" >&2
    exit 1
fi
grep -q "none.jsonl" "$tmp/err" || { echo "pc-example: the error names no file: $(cat "$tmp/err")" >&2; exit 1; }
echo "pc-example: ok"
