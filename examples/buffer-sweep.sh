#!/bin/sh
# buffer-sweep.sh - how much pre-roll does this stream need?  Runs one
# trace (or synthetic spec) at growing pre-roll and prints underruns,
# silence and time to first audio for each, until the stream is gapless.
#
#   sh examples/buffer-sweep.sh --trace my.jsonl
#   sh examples/buffer-sweep.sh --preset together-70b-p95 --chunk token
set -eu
TTSBUF=${TTSBUF:-./ttsbuf}
for p in 0 0.25 0.5 0.75 1 1.5 2 3 4 6 8; do
    out=$("$TTSBUF" sim "$@" --preroll "$p" --json)
    line=$(printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print("%d %.2f %.2f" % (d["underruns"], d["gap_total_s"], d["ttfa_s"]))')
    u=${line%% *}
    echo "pre-roll $p s: underruns/silence(s)/first-audio(s) = $line"
    [ "$u" = 0 ] && break
done
