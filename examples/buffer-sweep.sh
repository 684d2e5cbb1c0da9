#!/bin/sh
# buffer-sweep.sh - how much pre-roll does my provider need for 95% of its
# answers to play without a gap, and which chunking is best?  One sweep
# over your recorded answers: every chunking policy a voice stack might
# use x pre-roll 0..3 s, with and without rebuffering; prints the table
# and the answers, and writes sweep.csv, sweep.json and sweep.svg (the
# tuning picture: open it in a browser).
#
#   sh examples/buffer-sweep.sh runs/            # a directory of traces
#   sh examples/buffer-sweep.sh 'runs/*.jsonl'   # or a glob, or files
#   sh examples/buffer-sweep.sh                  # no traces yet: 200 synthetic demo streams
#   TARGET=0.99 OUT=/tmp/p99 sh examples/buffer-sweep.sh runs/
#
# Record your provider first (the API key is never printed or written):
#   export OPENAI_BASE_URL=https://api.example.com/v1 OPENAI_API_KEY=...
#   mkdir -p runs
#   for i in $(seq 1 30); do
#       ttsbuf run -q --model MY-MODEL --prompt "Tell me about your day, question $i." \
#           --record "runs/$i.jsonl" >/dev/null
#   done
set -eu
# ttsbuf: $TTSBUF, else the one on PATH, else this repository's ./ttsbuf (make).
TTSBUF=${TTSBUF:-$(command -v ttsbuf || echo "$(dirname "$0")/../ttsbuf")}
TARGET=${TARGET:-0.95}
OUT=${OUT:-sweep}
if [ $# -eq 0 ]; then
    set -- --preset demo --seeds 1:200
else
    for src in "$@"; do
        set -- "$@" --trace "$src"
        shift
    done
fi
exec "$TTSBUF" sweep "$@" \
    --chunk sentence,clause,pipecat,livekit,openai-agents \
    --preroll 0:3:0.25 --rebuffer both --target-gapless "$TARGET" \
    --csv "$OUT.csv" --json "$OUT.json" --svg "$OUT.svg"
