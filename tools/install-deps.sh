#!/bin/sh
# Install the Debian 12 packages bridgeverbs builds and tests with, if any is missing.
# Used by 'make demo' and 'make test'; 'install-deps.sh package' adds what building the Debian
# packages and the package test need (make package-test), 'install-deps.sh docs' what renders
# the documentation's diagrams (graphviz), 'install-deps.sh bench' what make bench uses,
# 'install-deps.sh interop' what make interop's soft-RoCE VM needs (qemu, debootstrap to build
# its image, debugfs to write the guest's files into it).
# Needs root (or sudo) only when something is missing.
set -e
PKGS="build-essential cmake pkg-config python3 iproute2 util-linux procps valgrind \
libibverbs-dev librdmacm-dev libibverbs1 ibverbs-providers ibverbs-utils rdmacm-utils \
perftest tshark libpcap-dev cppcheck clang-format ethtool clang libclang-rt-14-dev strace \
libnl-3-dev libnl-route-3-dev qperf ucx-utils openmpi-bin libopenmpi-dev infiniband-diags \
python3-pyverbs libfabric-bin libucx-dev"
for extra in "$@"; do
	case $extra in
	package) PKGS="$PKGS dpkg-dev debhelper lintian debootstrap qemu-system-x86 e2fsprogs" ;;
	docs) PKGS="$PKGS graphviz" ;;
	bench) PKGS="$PKGS gnuplot-nox" ;;
	interop) PKGS="$PKGS qemu-system-x86 debootstrap e2fsprogs" ;;
	*) echo "install-deps: unknown set '$extra' (package, docs, bench, interop)" >&2; exit 2 ;;
	esac
done

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

echo "install-deps: installing$missing"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# tshark asks whether non-root users may capture; the default (no) is what we want.
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
