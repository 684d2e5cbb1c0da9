#!/bin/sh
# A large `ttsbuf bench` study as a Slurm job array: task I of 8 runs shard
# I (request ids = I mod 8, an eighth of each level's load) and writes
# records-I-of-8.jsonl and its traces to a shared directory.  Then:
#   sbatch --dependency=afterok:<jobid> --wrap 'ttsbuf merge results/ --json > summary.json'
# gives exactly the summary one run over every request would.
#
#   sbatch examples/slurm-bench.sh
#
# ttsbuf must be on the nodes: the Debian package of `make deb` (package
# ttsbuf; `apt install ./build/deb/ttsbuf_0.1.0_amd64.deb` on each node, or
# in the node image), or the container image of `make image` (the
# Containerfile: that package on Debian 12) through the cluster's
# container runtime, pushed where the nodes pull from:
#   make image IMAGE=registry.example.com/ttsbuf:0.1.0
#   podman push registry.example.com/ttsbuf:0.1.0
# then set TTSBUF to run it, e.g. with Apptainer (which binds the working
# directory, where results/ is written):
#   TTSBUF="apptainer run docker://registry.example.com/ttsbuf:0.1.0"
#SBATCH --job-name=ttsbuf-bench
#SBATCH --array=0-7
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=2
#SBATCH --time=01:00:00
#SBATCH --output=ttsbuf-bench-%a.log
set -eu
: "${OPENAI_BASE_URL:?set OPENAI_BASE_URL}"
: "${OPENAI_API_KEY:?set OPENAI_API_KEY (never in this file)}"
mkdir -p results
# --shards 8 takes the index from $SLURM_ARRAY_TASK_ID.
# shellcheck disable=SC2086
exec ${TTSBUF:-ttsbuf} bench --model "${MODEL:-my-model}" -c 8,40,80,200,400 --requests 800 \
    --warmup 8 --shards 8 --out results --json
