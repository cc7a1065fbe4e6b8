#!/bin/bash
# make package-test: the Debian packages, built the way rdma-core builds its own
# (dpkg-buildpackage), checked with lintian, installed into a fresh Debian 12 root and used there
# with nothing set by hand, then purged, leaving nothing behind (docs/install.md):
#
#   1. the working tree (tracked and untracked files, not ignored ones), dpkg-buildpackage -b
#   2. lintian: no errors
#   3. a fresh root: debootstrap of Debian 12 from this machine's apt sources, kept as a tarball
#      in $BV_PACKAGE_CACHE (the first run downloads, later ones unpack it)
#   4. chrooted into it, in private mount, network and pid namespaces: tests/package/in-root.sh
#
# Needs root. Writes $BV_PACKAGE_OUT (default build/package): the packages, build.log,
# lintian.txt, and the root, left for a look until the next run.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${BV_PACKAGE_OUT:-$SRC/build/package}
CACHE=${BV_PACKAGE_CACHE:-/var/cache/bridgeverbs-package-test}
SUITE=bookworm
# The root has what our packages depend on and what the test runs, nothing of ours.
INCLUDE=systemd,libibverbs1,ibverbs-providers,ibverbs-utils,perftest,man-db,procps,iproute2

fail() {
	echo "FAIL [package-test]: $*" >&2
	exit 1
}

# Step 4, inside the namespaces (package-test.sh --inside ROOT): what a booted system has
# mounted, then the test in the chroot. Everything here ends with the pid namespace.
if [ "${1:-}" = --inside ]; then
	root=$2
	ip link set lo up
	mount -t proc proc "$root/proc"
	mount -t sysfs sysfs "$root/sys"
	mount -t tmpfs -o mode=755 dev "$root/dev"
	for n in null zero full random urandom tty; do
		touch "$root/dev/$n"
		mount --bind "/dev/$n" "$root/dev/$n"
	done
	mkdir "$root/dev/pts" "$root/dev/shm"
	mount -t tmpfs -o mode=1777 shm "$root/dev/shm"
	ln -s /proc/self/fd "$root/dev/fd"
	mount -t tmpfs -o mode=755 run "$root/run"
	mount -t tmpfs -o mode=1777 tmp "$root/tmp"
	cp "$OUT"/debs/*.deb "$SRC/tests/package/in-root.sh" "$root/tmp/"
	exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		TERM=dumb LANG=C.UTF-8 bash /tmp/in-root.sh
fi

[ "$(id -u)" = 0 ] || { echo "SKIP: package-test needs root"; exit 77; }
for t in dpkg-buildpackage dh lintian debootstrap unshare chroot; do
	command -v $t >/dev/null || fail "$t missing: tools/install-deps.sh package"
done
start=$(date +%s)
mkdir -p "$OUT" "$CACHE"

echo "# 1. dpkg-buildpackage"
rm -rf "$OUT/src" "$OUT/debs"
mkdir -p "$OUT/src" "$OUT/debs"
(cd "$SRC" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$OUT/src")
(cd "$OUT/src" && nice dpkg-buildpackage -b -us -uc) >"$OUT/build.log" 2>&1 ||
	{ tail -40 "$OUT/build.log"; fail "dpkg-buildpackage (build.log)"; }
mv "$OUT"/*.deb "$OUT"/*.changes "$OUT"/*.buildinfo "$OUT/debs/"
ls "$OUT/debs"

echo "# 2. lintian"
nice lintian --fail-on error --tag-display-limit 0 "$OUT"/debs/*.changes >"$OUT/lintian.txt" 2>&1 ||
	{ cat "$OUT/lintian.txt"; fail "lintian reports errors (lintian.txt)"; }
echo "lintian: $(grep -c '^E:' "$OUT/lintian.txt" || true) errors," \
	"$(grep -c '^W:' "$OUT/lintian.txt" || true) warnings"
grep '^W:' "$OUT/lintian.txt" || true

echo "# 3. a fresh Debian 12 root"
key=$(echo "$SUITE $INCLUDE" | md5sum | cut -c1-12)
base=$CACHE/root-$SUITE-$key.tar
if [ ! -s "$base" ]; then
	mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
	[ -n "$mirror" ] || mirror=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list)
	tmp=$CACHE/debootstrap.$$
	rm -rf "$tmp"
	echo "debootstrap $SUITE from $mirror (once; cached in $base)"
	debootstrap --variant=minbase --include=$INCLUDE $SUITE "$tmp" "$mirror" \
		>"$OUT/debootstrap.log" 2>&1 || { tail -20 "$OUT/debootstrap.log"; fail debootstrap; }
	rm -f "$tmp"/var/cache/apt/archives/*.deb
	tar -C "$tmp" -cf "$base.part" . && mv "$base.part" "$base"
	rm -rf "$tmp"
fi
rm -rf "$OUT/root"
mkdir "$OUT/root"
tar -C "$OUT/root" -xf "$base"

echo "# 4. in the root"
BV_PACKAGE_OUT=$OUT unshare --mount --net --pid --fork --propagation private -- \
	"$SRC/tests/package/package-test.sh" --inside "$OUT/root" || fail "in the root"
echo "PASS ($(($(date +%s) - start)) s)"
