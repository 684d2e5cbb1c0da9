#!/bin/sh
# html-pages.sh - the README's screenshots of the three --html pages, each
# written by ttsbuf and drawn by headless Chromium (tests/node/html-page.mjs,
# which drives the page as the tests do, then takes the picture):
#
#   sh examples/html-pages.sh [DIR [PAGE...]]
#
# DIR defaults to examples/, next to this script; PAGE is sim, sweep or
# bench (default: all three).
#
# Needs chromium and the npm packages of tests/node (`make deps`).  The bench
# page streams from `ttsbuf serve` on a free loopback port for a few seconds.
# Each PNG carries the text it shows (an iTXt chunk); the test suite draws
# them again and fails when that text differs from the committed one's
# (names and numbers; the live bench page's names only).
set -eu
TTSBUF=${TTSBUF:-ttsbuf}
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=${1:-$HERE}
SHOT="node $HERE/../tests/node/html-page.mjs"
TMP=$(mktemp -d)
trap 'kill "$SERVE" 2>/dev/null || true; rm -rf "$TMP"' EXIT
SERVE=
if [ $# -gt 1 ]; then shift; else set -- sim sweep bench; fi

for page in "$@"; do
    case "$page" in
    sim)
        "$TTSBUF" sim --preset demo --html "$TMP/sim.html" >/dev/null
        $SHOT "$TMP/sim.html" "$DIR/html-sim.png" >/dev/null
        ;;
    sweep)
        "$TTSBUF" sweep --synth tps=10,tokens=300,jitter=0.6,stall=0.02:1.5 --seeds 1:200 \
            --chunk sentence,clause,token --preroll 0:2:0.25 --target-gapless 0.95 \
            --html "$TMP/sweep.html" -q >/dev/null
        $SHOT "$TMP/sweep.html" "$DIR/html-sweep.png" >/dev/null
        ;;
    bench)
        "$TTSBUF" serve --synth tps=10,ttft=0.3,tokens=40,jitter=0.5,stall=0.1:1.0,seed=8 \
            --listen 127.0.0.1:0 >"$TMP/serve.out" 2>&1 &
        SERVE=$!
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            URL=$(grep -o 'http://127.0.0.1:[0-9]*' "$TMP/serve.out" | head -n 1 || true)
            [ -n "$URL" ] && break
            sleep 0.5
        done
        "$TTSBUF" bench --base-url "$URL/v1" --model mock -c 1,3 --requests 4 --html-streams 2 \
            --html "$TMP/bench.html" -q >/dev/null
        $SHOT "$TMP/bench.html" "$DIR/html-bench.png" >/dev/null
        ;;
    *)
        echo "html-pages.sh: unknown page '$page' (sim, sweep, bench)" >&2
        exit 2
        ;;
    esac
done
