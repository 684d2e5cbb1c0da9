#!/bin/sh
# claim-check.sh - puts numbers on "voice needs 60-80 TPS".
#
# Over N synthetic answers (different texts, a steady stream), prints the
# median, P95 and worst minimum TPS a 150-wpm voice needs, per chunking
# policy and pre-roll.  Needs ttsbuf (on PATH, or make) and python3.
#
#   sh examples/claim-check.sh [N] [WPM]
set -eu
N=${1:-200}
WPM=${2:-150}
# ttsbuf: $TTSBUF, else the one on PATH, else this repository's ./ttsbuf (make).
TTSBUF=${TTSBUF:-$(command -v ttsbuf || echo "$(dirname "$0")/../ttsbuf")}
for chunk in token sentence clause; do
    i=1
    while [ "$i" -le "$N" ]; do
        "$TTSBUF" sim --synth "tps=60,ttft=0.15,tokens=300,jitter=0,seed=$i" \
            --chunk "$chunk" --wpm "$WPM" --json
        i=$((i + 1))
    done | python3 -c '
import json, sys
chunk = sys.argv[1]
rows = [json.loads(line)["preroll_curve"] for line in sys.stdin]
def pct(v, p):
    # Linear interpolation between closest ranks, as ttsbuf reports
    # every percentile (as numpy does by default).
    k = (len(v) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)
for i, point in enumerate(rows[0]):
    v = sorted(r[i]["min_tps"] for r in rows)
    print("%-9s pre-roll %4.2f s: min TPS median %5.1f  P95 %5.1f  worst %5.1f"
          % (chunk, point["preroll_s"], pct(v, 50), pct(v, 95), v[-1]))
' "$chunk"
done
