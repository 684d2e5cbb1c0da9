#!/bin/sh
# pictures.sh - draws the README's two pictures with ttsbuf itself, from
# synthetic streams: a timeline of one stream and a sweep's tuning picture.
#
#   sh examples/pictures.sh [DIR]     (default: examples/, next to this script)
#
# The test suite runs it into a temporary directory and checks that the
# committed pictures say what the tool draws today: the same texts, titles
# and data-* numbers (coordinates and colours may move).
set -eu
# ttsbuf: $TTSBUF, else the one on PATH, else this repository's ./ttsbuf (make).
TTSBUF=${TTSBUF:-$(command -v ttsbuf || echo "$(dirname "$0")/../ttsbuf")}
DIR=${1:-$(dirname "$0")}
"$TTSBUF" sim --synth tps=6,ttft=0.4,tokens=100,jitter=0.6,stall=0.04:2,seed=3 \
    --preroll 0.3 --svg "$DIR/timeline.svg" >/dev/null
"$TTSBUF" sweep --synth tps=10,tokens=300,jitter=0.6,stall=0.02:1.5 --seeds 1:200 \
    --chunk sentence,clause,token --preroll 0:2:0.25 --tps 0,10,20 \
    --target-gapless 0.95 --svg "$DIR/sweep.svg" -q >/dev/null
