#!/bin/sh
# image-test.sh - the container image (Containerfile; `make image-test`).
#   1. The recipe is the package's: it starts from a Debian 12 image,
#      copies in nothing but build/deb's ttsbuf package, installs it with
#      apt (which brings the package's own dependencies) and names no
#      other package; it runs as a numeric user other than root, with
#      ttsbuf as the entrypoint; and the cluster examples name the image
#      at the package's version.  Needs nothing installed.
#   2. Where a container engine runs (ENGINE, else podman, else docker):
#      a base image made from the Debian mirror (base-image.sh, unless
#      IMAGE_BASE names one), `make image` on it, and the image runs
#      `--version`, `bench --mock` (the built-in mock, on the container's
#      own loopback) and one shard of a sharded bench with
#      JOB_COMPLETION_INDEX set, as uid 10001.
# With no engine, step 2 is skipped with the reason, unless
# TB_IMAGE_REQUIRED=1 (.ci/run), which makes that a failure.
set -eu
cd "$(dirname "$0")/../.."
fail() {
    echo "image-test: $*" >&2
    exit 1
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# 1. The recipe.  Instructions, continuation lines joined.
rec=$tmp/recipe
sed -e ':a' -e '/\\$/N; s/\\\n//; ta' Containerfile | grep -v '^[[:space:]]*#' | grep . >"$rec" ||
    fail "Containerfile is empty"
grep -q '^FROM \${BASE}$' "$rec" || fail "Containerfile: FROM must be \${BASE} (a Debian 12 image)"
copies=$(grep '^\(COPY\|ADD\) ' "$rec" || true)
[ "$copies" = "COPY ttsbuf_*.deb /tmp/" ] || fail "Containerfile copies other than the package: $copies"
# Every apt-get install names the package file and no package.
n=0
for cmd in $(grep '^RUN ' "$rec" | sed 's/^RUN //; s/&&/\n/g' | tr ' ' '\036'); do
    cmd=$(echo "$cmd" | tr '\036' ' ')
    case "$cmd" in
    *"apt-get install"* | *"apt install"* | *dpkg\ -i*)
        args=$(echo "$cmd" | sed 's/.*install//')
        for a in $args; do
            case "$a" in
            -*) ;;
            /tmp/ttsbuf_\*.deb) n=$((n + 1)) ;;
            *) fail "Containerfile installs '$a': the package's Depends are the one list of what ttsbuf needs" ;;
            esac
        done
        ;;
    *pip\ * | *npm\ * | *curl\ * | *wget\ * | *make\ *)
        fail "Containerfile fetches or builds something itself: $cmd"
        ;;
    esac
done
[ "$n" -eq 1 ] || fail "Containerfile does not install build/deb's package with apt-get"
user=$(sed -n 's/^USER \([0-9]*\):\{0,1\}[0-9]*$/\1/p' "$rec")
[ -n "$user" ] && [ "$user" -ne 0 ] || fail "Containerfile: USER must be a numeric user other than root"
grep -q '^ENTRYPOINT \["ttsbuf"\]$' "$rec" || fail "Containerfile: ENTRYPOINT must be [\"ttsbuf\"]"
version=$(sed -n 's/^#define TB_VERSION "\(.*\)"$/\1/p' include/ttsbuf/version.h)
# The cluster examples name this image at this version.
for f in examples/k8s-bench-job.yaml examples/slurm-bench.sh; do
    grep -q "make image IMAGE=[^ ]*/ttsbuf:$version\$" "$f" || fail "$f does not say how to build the image ttsbuf:$version"
done
grep -q "^ *image: [^ ]*/ttsbuf:$version\( \|\$\)" examples/k8s-bench-job.yaml ||
    fail "examples/k8s-bench-job.yaml does not run the image ttsbuf:$version"
echo "image-test: the recipe installs the package and nothing else; user $user; entrypoint ttsbuf; the examples name ttsbuf:$version"

# 2. The image.
engine=${ENGINE:-}
if [ -z "$engine" ]; then
    for e in podman docker; do
        command -v "$e" >/dev/null 2>&1 && { engine=$e; break; }
    done
fi
skip() {
    if [ "${TB_IMAGE_REQUIRED:-0}" = 1 ]; then
        fail "$*"
    fi
    echo "image-test: the image is not built here: $*"
    exit 0
}
[ -n "$engine" ] || skip "no container engine (podman or docker) is installed (sh .ci/deps image)"
"$engine" info >/dev/null 2>&1 || skip "$engine is installed but cannot run ($engine info: $("$engine" info 2>&1 | tail -n 1))"

base=${IMAGE_BASE:-}
[ -n "$base" ] || base=$(sh tests/pkg/base-image.sh)
# An engine that starts no container with its defaults gets a second try
# with settings for hosts like CI's (no CAP_SYS_RESOURCE: the default
# open-file and process limits cannot be raised; cgroups in hybrid mode,
# which crun refuses), as a containers.conf of this test's own.
if [ "$engine" = podman ] && ! podman run --rm --network none "$base" true >"$tmp/try" 2>&1; then
    echo "image-test: podman with its defaults: $(tail -n 1 "$tmp/try"); again with runc and this host's limits"
    cat >"$tmp/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=$(ulimit -Hn):$(ulimit -Hn)", "nproc=4096:4096"]
[engine]
runtime = "runc"
CONF
    CONTAINERS_CONF=$tmp/containers.conf
    export CONTAINERS_CONF
    podman run --rm --network none "$base" true >"$tmp/try" 2>&1 ||
        skip "podman cannot start a container here: $(tail -n 1 "$tmp/try")"
fi

image=localhost/ttsbuf-test:latest
# The build's apt reaches the mirror through the host's network.
make --no-print-directory image ENGINE="$engine" IMAGE="$image" IMAGE_BASE="$base" \
    IMAGE_FLAGS="--network host" >"$tmp/build" 2>&1 || { tail -n 30 "$tmp/build" >&2; fail "make image failed"; }
run() {
    "$engine" run --rm --network none "$@"
}
got=$(run "$image" --version)
[ "$got" = "ttsbuf $version" ] || fail "the image's ttsbuf --version says '$got'"
pkg=$(run --entrypoint dpkg-query "$image" -S /usr/bin/ttsbuf)
[ "$pkg" = "ttsbuf: /usr/bin/ttsbuf" ] || fail "the image's /usr/bin/ttsbuf is not the package's: $pkg"
uid=$(run --entrypoint id "$image" -u)
[ "$uid" = "$user" ] || fail "the image runs as uid $uid"
run "$image" bench --mock -c 2 --requests 4 --max-tokens 20 --json >"$tmp/bench.json" ||
    fail "bench --mock failed in the image"
grep -q '"provider":"mock"' "$tmp/bench.json" && grep -q '"ok":4,' "$tmp/bench.json" ||
    fail "bench --mock in the image: $(head -c 400 "$tmp/bench.json")"
echo "image-test: bench --mock: 4 requests ok, as uid $uid"
# An Indexed Job's pod: the shard comes from JOB_COMPLETION_INDEX.
mkdir "$tmp/out"
chmod 777 "$tmp/out"
run -e JOB_COMPLETION_INDEX=1 -v "$tmp/out:/results" "$image" bench --mock -c 2 --requests 4 \
    --max-tokens 20 --shards 2 --out /results --json >"$tmp/shard.json" || fail "the shard failed in the image"
grep -q '"shard":1,"shards":2,' "$tmp/shard.json" || fail "JOB_COMPLETION_INDEX=1 ran: $(head -c 400 "$tmp/shard.json")"
[ -s "$tmp/out/records-1-of-2.jsonl" ] || fail "the shard wrote no records-1-of-2.jsonl: $(ls "$tmp/out")"
echo "image-test: JOB_COMPLETION_INDEX=1 --shards 2: shard 1 of 2, records-1-of-2.jsonl"
echo "image-test: ok ($engine, base $base)"
