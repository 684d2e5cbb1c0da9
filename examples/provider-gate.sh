#!/bin/sh
# provider-gate.sh - a CI gate over recorded traces: fails (exit 1) when any
# trace would have made a voice agent go silent, at the pre-roll you ship.
#
#   sh examples/provider-gate.sh PREROLL TRACE...
#   e.g. sh examples/provider-gate.sh 0.5 traces/*.jsonl
set -u
# ttsbuf: $TTSBUF, else the one on PATH, else this repository's ./ttsbuf (make).
TTSBUF=${TTSBUF:-$(command -v ttsbuf || echo "$(dirname "$0")/../ttsbuf")}
preroll=$1
shift
status=0
for trace in "$@"; do
    if "$TTSBUF" sim --trace "$trace" --preroll "$preroll" --fail-on-underrun >/dev/null; then
        echo "ok    $trace"
    else
        rc=$?
        [ "$rc" -eq 1 ] && echo "GAPS  $trace" || echo "ERROR $trace (exit $rc)"
        status=1
    fi
done
exit $status
