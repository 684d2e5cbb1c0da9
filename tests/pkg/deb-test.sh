#!/bin/sh
# deb-test.sh - the Debian packages that `make deb` put in build/deb/
# (`make deb-test` runs it after building them):
#   1. lintian --pedantic reports nothing but the overrides, each of which
#      says why in debian/*.lintian-overrides;
#   2. dpkg-shlibdeps warned of nothing (a library linked but not used);
#   3. the packaged program needs only the libraries it calls: `ldd -u`
#      finds none unused, and its NEEDED entries are exactly the rows of
#      doc/DEVELOPMENT.md's table of direct dependencies;
#   4. in a fresh Debian 12 root (rootfs.sh), apt installs ttsbuf, its
#      dependencies resolved by apt alone; there `ttsbuf --version` names
#      the package's version, `ttsbuf sim --preset demo --json` gives a
#      result, and `man -w` finds the three pages;
#   5. libttsbuf-dev installs there too, and the example it ships
#      (min-tps.c) builds with `pkg-config --cflags --libs ttsbuf` alone
#      and agrees with the command (pc-example.sh).
# Needs root (chroot) and the deb set of .ci/deps.  Exit 0 when all hold.
set -eu
cd "$(dirname "$0")/../.."
out=build/deb
version=$(dpkg-parsechangelog -S Version)
arch=$(dpkg --print-architecture)
bin_deb=$out/ttsbuf_${version}_$arch.deb
dev_deb=$out/libttsbuf-dev_${version}_$arch.deb
for f in "$bin_deb" "$dev_deb" "$out/build.log"; do
    [ -s "$f" ] || { echo "deb-test: no $f (make deb)" >&2; exit 1; }
done
tmp=$(mktemp -d)
root=""
cleanup() {
    if [ -n "$root" ]; then
        umount "$root/proc" 2>/dev/null || true
        rm -rf --one-file-system "$root"
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
fail() {
    echo "deb-test: $*" >&2
    exit 1
}

# 1. lintian: any tag at any level (info and pedantic included) that is
# not overridden fails.
lintian --pedantic --display-info --fail-on error,warning,info,pedantic "$out"/ttsbuf_"${version}"_"$arch".changes \
    >"$tmp/lintian" 2>&1 || { cat "$tmp/lintian" >&2; fail "lintian found the tags above"; }
echo "deb-test: lintian: clean ($(cat debian/*.lintian-overrides | grep -vc '^#') overrides, justified in debian/)"

# 2. dpkg-shlibdeps says "could avoid a useless dependency" (and other
# warnings) in the build's log.
if grep -n 'dpkg-shlibdeps: warning' "$out/build.log" >&2; then
    fail "dpkg-shlibdeps warned (above; build/deb/build.log)"
fi
echo "deb-test: dpkg-shlibdeps: no warning"

# 3. The program as packaged.
dpkg-deb -x "$bin_deb" "$tmp/x"
prog=$tmp/x/usr/bin/ttsbuf
unused=$(ldd -u -r "$prog" 2>&1 | grep -v '^Unused direct' || true)
[ -z "$unused" ] || fail "linked but unused (ldd -u):$(echo "$unused" | tr -s '\t\n' '  ')"
readelf -d "$prog" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort >"$tmp/needed"
sed -n '/^### The libraries ttsbuf links/,/^#/p' doc/DEVELOPMENT.md |
    sed -n 's/^| `\(lib[^`]*\)`.*/\1/p' | sort >"$tmp/table"
[ -s "$tmp/table" ] || fail "doc/DEVELOPMENT.md has no table under '### The libraries ttsbuf links'"
if ! cmp -s "$tmp/needed" "$tmp/table"; then
    echo "deb-test: NEEDED by the program (<) and rows of doc/DEVELOPMENT.md's table (>):" >&2
    diff "$tmp/needed" "$tmp/table" >&2 || true
    fail "say in doc/DEVELOPMENT.md what each library is for, and link no other"
fi
echo "deb-test: links $(wc -l <"$tmp/needed") libraries directly, each used and documented; $(ldd "$prog" | grep -c '=>') in all"

# 4. A fresh Debian 12 root; apt resolves the dependencies.
tar=$(sh tests/pkg/rootfs.sh)
# A root of an earlier run killed before its cleanup: its /proc first.
for old in build/deb-root/test.*; do
    [ -d "$old" ] || continue
    umount "$old/proc" 2>/dev/null || true
    rm -rf --one-file-system "$old"
done
root=$(mktemp -d build/deb-root/test.XXXXXX)
tar -C "$root" -xf "$tar"
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp /etc/hosts "$root/etc/hosts"
mount -t proc proc "$root/proc"
mkdir -p "$root/tmp/t"
cp "$bin_deb" "$dev_deb" tests/pkg/pc-example.sh "$root/tmp/t/"
in_root() {
    chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
        DEBIAN_FRONTEND=noninteractive "$@"
}
apt_install() {
    in_root apt-get install -y -q --no-install-recommends "$@" >"$tmp/apt" 2>&1 || {
        tail -n 30 "$tmp/apt" >&2
        fail "apt-get install $* failed in the Debian root"
    }
    # A maintainer script or trigger that failed without failing apt.
    # (Not apt's note that it keeps no pseudo-terminal log: no /dev/pts.)
    if grep -v 'posix_openpt' "$tmp/apt" | grep -i -E '^(W|E):|error|denied' >&2; then
        fail "apt-get install $* in the Debian root: the lines above"
    fi
}
in_root apt-get update -q >"$tmp/apt" 2>&1 || { tail -n 20 "$tmp/apt" >&2; fail "apt-get update failed in the Debian root"; }
# man-db is the test's (for man -w), not the package's.
apt_install "/tmp/t/${bin_deb##*/}" man-db
got=$(in_root ttsbuf --version)
[ "$got" = "ttsbuf $version" ] || fail "ttsbuf --version says '$got', the package is $version"
in_root ttsbuf sim --preset demo --json >"$tmp/sim.json" || fail "ttsbuf sim --preset demo --json failed in the root"
grep -q '"schema":{"name":"ttsbuf.result"' "$tmp/sim.json" && grep -q '"min_tps":[0-9]' "$tmp/sim.json" ||
    fail "ttsbuf sim --preset demo --json gave no result: $(head -c 300 "$tmp/sim.json")"
for page in "1 ttsbuf" "5 ttsbuf-trace" "7 ttsbuf-model"; do
    # shellcheck disable=SC2086
    p=$(in_root man -w $page) || fail "man -w $page finds nothing"
    echo "deb-test: man -w $page: $p"
done
echo "deb-test: installed in a fresh Debian 12 root: $got, sim --preset demo --json, man pages"

# 5. The library package, and a program of one's own through pkg-config.
# The compiler and pkg-config are the test's, not the package's.
apt_install "/tmp/t/${dev_deb##*/}" gcc libc6-dev pkg-config
in_root sh /tmp/t/pc-example.sh /usr/share/doc/libttsbuf-dev/examples/min-tps.c /usr/bin/ttsbuf ||
    fail "the packaged example does not build or run against libttsbuf-dev"
echo "deb-test: ok"
