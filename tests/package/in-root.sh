#!/bin/bash
# The package test inside a fresh Debian 12 root (tests/package/package-test.sh runs it there,
# chrooted, in private mount, network and pid namespaces): install the packages, bring the
# devices up and use them as an administrator and a user would, with nothing set by hand,
# take them down, purge the packages, and compare the root with what it was before.
set -euo pipefail
fail() {
	echo "FAIL [package-test]: $*" >&2
	for f in /run/bridgeverbs/*.log; do
		[ -f "$f" ] && { echo "--- $f"; tail -n 20 "$f"; }
	done
	exit 1
}
SECONDS=0
note() { echo "# [${SECONDS}s] $*"; }

# A login shell with nothing set: what an administrator or a user gets (profile.d included).
as_root() { env -i TERM=dumb bash -lc "$*"; }
as_user() { runuser -l tester -c "$*"; }

# Every directory, file and link of the root filesystem, with type, mode, owner, size, target
# and content; /tmp, /run, /dev, /proc, /sys are other file systems, fresh each boot.
snapshot() {
	local other='( -path /tmp -o -path /run -o -path /dev -o -path /proc -o -path /sys ) -prune'
	# shellcheck disable=SC2086
	find / -xdev $other -o -printf '%y %m %u %g %s %p -> %l\n' | sort >"$1.list"
	# shellcheck disable=SC2086
	find / -xdev $other -o -type f -print0 | sort -z | xargs -0 md5sum >"$1.md5"
}

# perftest's result line: 65536-byte messages, iterations, peak and average MB/s above zero
S='[[:space:]]+'
BW_LINE="^ 65536${S}[1-9][0-9]*${S}[0-9.]+${S}[1-9][0-9.]*[[:space:]]"

wait_listen() {
	for _ in $(seq 200); do
		ss -ltn | grep -q ":$1 " && return 0
		sleep 0.1
	done
	return 1
}

# ib_write_bw between two devices (server, client) as who (as_root or as_user); checks the
# client's result line: 65536-byte messages, more than zero iterations and MB/s.
write_bw() {
	local who=$1 srv=$2 cli=$3 port=$4 out
	$who "ib_write_bw -d $srv -x 3 -D 2 -p $port" >/tmp/srv.$port 2>&1 &
	wait_listen "$port" || { cat /tmp/srv.$port; fail "ib_write_bw server on $srv"; }
	out=$($who "ib_write_bw -d $cli -x 3 -D 2 -p $port 127.0.0.1" 2>&1) ||
		{ echo "$out"; cat /tmp/srv.$port; fail "ib_write_bw $srv <- $cli"; }
	wait $! || { cat /tmp/srv.$port; fail "ib_write_bw server on $srv"; }
	echo "$out" | grep -Eq "$BW_LINE" ||
		{ echo "$out"; fail "ib_write_bw $srv <- $cli: no result"; }
	echo "$out" | grep -E '^ 65536 ' | sed "s/^/$srv <- $cli: /"
}

useradd -m -s /bin/bash tester
snapshot /tmp/before

note "install"
dpkg -i /tmp/*.deb >/tmp/dpkg.log 2>&1 || { cat /tmp/dpkg.log; fail "dpkg -i"; }
grep -iE "warning|error" /tmp/dpkg.log && fail "dpkg -i complained"
getent passwd bridgeverbs >/dev/null || fail "no user bridgeverbs (sysusers.d)"
[ -L /dev/infiniband/uverbs64 ] || fail "no /dev/infiniband/uverbs64 (tmpfiles.d)"
[ "$(stat -c %U /run/bridgeverbs)" = bridgeverbs ] || fail "/run/bridgeverbs (tmpfiles.d)"
man -P cat bvctl >/tmp/man.txt 2>&1 && grep -q "^BVCTL(8)" /tmp/man.txt ||
	{ cat /tmp/man.txt; fail "man bvctl"; }
for p in cx4d ntbd bridgeverbs bridgeverbs.conf scif scif_send scif_accept; do
	man -w "$p" >/dev/null || fail "man $p"
done
grep -q "^privlibdir=/usr/lib/.*/bridgeverbs$" /usr/lib/*/pkgconfig/bridgeverbs.pc ||
	fail "bridgeverbs.pc"
# the systemd side: the generator wants one instance per configured device, units verify
gen=$(mktemp -d)
/lib/systemd/system-generators/bridgeverbs-generator "$gen" "$gen" "$gen"
want=$(ls "$gen/bridgeverbs.target.wants" | tr '\n' ' ')
[ "$want" = "cx4d@cx4_0.service cx4d@cx4_1.service ntbd@ntb_0.service ntbd@ntb_1.service " ] ||
	fail "generator: $want"
(cd /lib/systemd/system && systemd-analyze verify bridgeverbs.target bridgeverbs-sysfs.service \
	cx4d@cx4_0.service ntbd@ntb_0.service) >/tmp/verify.log 2>&1 ||
	{ cat /tmp/verify.log; fail "systemd-analyze verify"; }
[ "$(as_root 'echo ${SYSFS_PATH-unset}')" = unset ] || fail "profile.d sets SYSFS_PATH while down"

note "bvctl up (no systemd running here: bvctl starts the daemons itself)"
as_root "bvctl up" || fail "bvctl up"
users=$(ps -o user= -C cx4d,ntbd | sort -u | tr '\n' ' ')
[ "$users" = "bridgeverbs " ] || fail "daemons run as '$users', not bridgeverbs"
grep -q "^CapEff:.*0000000000080000" "/proc/$(cat /run/bridgeverbs/cx4_0.pid)/status" ||
	fail "cx4d: capabilities $(grep CapEff /proc/"$(cat /run/bridgeverbs/cx4_0.pid)"/status)"
grep -q "^CapEff:.*0000000000000000" "/proc/$(cat /run/bridgeverbs/ntb_0.pid)/status" ||
	fail "ntbd has capabilities"

note "ibv_devices and ib_write_bw in login shells, nothing set by hand"
for who in as_root as_user; do
	out=$($who ibv_devices) || fail "$who ibv_devices"
	for d in cx4_0 cx4_1 ntb_0 ntb_1; do
		echo "$out" | grep -Eq "^${S}$d${S}[0-9a-f]{16}$" ||
			{ echo "$out"; fail "$who: no $d"; }
	done
done
write_bw as_root cx4_0 cx4_1 18601
write_bw as_user ntb_0 ntb_1 18602
write_bw as_user cx4_1 cx4_0 18603
write_bw as_root ntb_1 ntb_0 18604

note "what bvctl env adds: completion channels through the preload shim (-c: bytes checked)"
as_user 'eval "$(bvctl env)"; ibv_rc_pingpong -d cx4_0 -g 3 -e -c -n 200' >/tmp/pp.srv 2>&1 &
wait_listen 18515 || { cat /tmp/pp.srv; fail "ibv_rc_pingpong server"; }
as_user 'bvctl run -- ibv_rc_pingpong -d cx4_1 -g 3 -e -c -n 200 127.0.0.1' >/tmp/pp.cli 2>&1 ||
	{ cat /tmp/pp.cli /tmp/pp.srv; fail "ibv_rc_pingpong -e"; }
wait $! || { cat /tmp/pp.srv; fail "ibv_rc_pingpong -e server"; }
grep -q "200 iters" /tmp/pp.cli && ! grep -q "invalid data" /tmp/pp.srv ||
	{ cat /tmp/pp.cli /tmp/pp.srv; fail "ibv_rc_pingpong -e: no result, or bad data"; }
as_user "bvctl status" >/tmp/status || { cat /tmp/status; fail "bvctl status as a user"; }
[ "$(grep -c ', daemon pid [0-9]*, 0 clients' /tmp/status)" = 4 ] ||
	{ cat /tmp/status; fail "bvctl status: not 4 idle devices"; }

note "rping through bvctl run (the CM library), cx4 and ntb, data verified (-V)"
# the server's rdma_cm listen, as its daemon reports it
cm_listening() {
	for _ in $(seq 200); do
		as_user "bvctl status" 2>/dev/null | grep -q "cm listen: ps 0x0106 port $1\$" &&
			return 0
		sleep 0.1
	done
	return 1
}
rping_pair() {
	local srv=$1 cli=$2 port=$3 out
	as_user "bvctl run -- rping -s -a $srv -p $port -C 20 -V" >/tmp/rping.$port 2>&1 &
	cm_listening "$port" || { cat /tmp/rping.$port; fail "rping server on $srv"; }
	out=$(as_user "bvctl run -- rping -c -a $srv -I $cli -p $port -C 20 -V -v" 2>&1) ||
		{ echo "$out"; cat /tmp/rping.$port; fail "rping $cli -> $srv"; }
	wait $! || { cat /tmp/rping.$port; fail "rping server on $srv"; }
	[ "$(echo "$out" | grep -c '^ping data: rdma-ping-')" = 20 ] ||
		{ echo "$out"; fail "rping $cli -> $srv: not 20 verified pings"; }
	echo "rping $cli -> $srv: 20 verified pings"
}
rping_pair 127.0.1.1 127.0.1.2 7201
rping_pair 127.0.2.1 127.0.2.2 7202

note "SCIF programs built against libscif-dev, between SCIF nodes 0 and 1 over ntb and cx4"
for s in scif_hello scif_rma; do
	as_user "cd /tmp && cc -std=c99 -D_DEFAULT_SOURCE -Wall -Wextra -Werror -o $s $s.c \
		\$(pkg-config --cflags --libs scif)" || fail "$s does not build against libscif-dev"
	ldd /tmp/$s | grep -Eq "libscif.so.0 => (/usr)?/lib/[^ ]+/libscif.so.0 " ||
		{ ldd /tmp/$s; fail "$s: not linked with the installed libscif.so.0"; }
done
# scif_pair PROGRAM FABRIC PORT [ARGS]: the listener as node 0, the connector as node 1
scif_pair() {
	local prog=$1 fabric=$2 port=$3
	shift 3
	as_user "BV_SCIF_FABRIC=$fabric bvctl run --scif-node 0 -- /tmp/$prog listen $port" \
		>/tmp/$prog.srv 2>&1 &
	for _ in $(seq 200); do
		grep -q "listening on port" /tmp/$prog.srv && break
		sleep 0.1
	done
	as_user "BV_SCIF_FABRIC=$fabric bvctl run --scif-node 1 -- /tmp/$prog connect 0 $port $*" \
		>/tmp/$prog.cli 2>&1 || { cat /tmp/$prog.srv /tmp/$prog.cli; fail "$prog over $fabric"; }
	wait $! || { cat /tmp/$prog.srv /tmp/$prog.cli; fail "$prog listener over $fabric"; }
}
for fabric in ntb cx4; do
	scif_pair scif_hello $fabric 4101 "\"hello over $fabric\""
	grep -q "node 1 got: HELLO OVER ${fabric^^}" /tmp/scif_hello.cli ||
		{ cat /tmp/scif_hello.cli; fail "scif_hello over $fabric"; }
	scif_pair scif_rma $fabric 4102
	grep -q "every byte checked" /tmp/scif_rma.srv && grep -q "read back 1 MiB" /tmp/scif_rma.cli ||
		{ cat /tmp/scif_rma.srv /tmp/scif_rma.cli; fail "scif_rma over $fabric"; }
	echo "scif_hello, scif_rma over $fabric: every byte checked"
done

note "bvctl demo, installed: perftest, rping and the packaged scif_hello on both kinds"
as_root "bvctl demo" >/tmp/demo.out 2>&1 || { cat /tmp/demo.out; fail "bvctl demo"; }
[ "$(grep -c '^ping data: rdma-ping-' /tmp/demo.out)" = 8 ] &&
	grep -q "^node 1 got: HELLO OVER NTB$" /tmp/demo.out &&
	grep -q "^node 1 got: HELLO OVER CX4$" /tmp/demo.out &&
	! grep -q "skipped" /tmp/demo.out && grep -q "^bvctl demo: done$" /tmp/demo.out ||
	{ cat /tmp/demo.out; fail "bvctl demo: not every part ran and passed"; }
echo "bvctl demo: ib_write_bw, rping and scif_hello on cx4 and ntb"

note "bvctl down"
as_root "bvctl down" || fail "bvctl down"
pgrep -x cx4d >/dev/null || pgrep -x ntbd >/dev/null && fail "a daemon survived bvctl down"
[ ! -e /run/bridgeverbs ] || fail "bvctl down left /run/bridgeverbs"

note "purge"
# every package installed from /tmp/*.deb
pkgs=$(for d in /tmp/*.deb; do dpkg-deb -f "$d" Package; done)
# shellcheck disable=SC2086
dpkg --purge $pkgs >/tmp/dpkg.log 2>&1 || { cat /tmp/dpkg.log; fail "dpkg --purge"; }
grep -iE "warning|error" /tmp/dpkg.log && fail "dpkg --purge complained"
[ -z "$(find / -xdev -user bridgeverbs)" ] || fail "files of user bridgeverbs are left"
snapshot /tmp/after
# What may differ: dpkg's own records, caches the packages' triggers rebuild (the dynamic
# linker's, man-db's), and the system user (Debian policy: a package never removes its user).
allowed='^/var/lib/dpkg/|^/var/log/dpkg\.log$|^/etc/ld\.so\.cache$|^/var/cache/ldconfig/aux-cache$'
allowed="$allowed|^/var/cache/man/"
allowed="$allowed|^/etc/(passwd|group|shadow|gshadow)-?\$"
changed=$( (diff /tmp/before.list /tmp/after.list; diff /tmp/before.md5 /tmp/after.md5) |
	sed -n 's/^[<>] //p' | sed 's/^[0-9a-f]\{32\}  /x x x x x /' | awk '{print $6}' | sort -u ||
	true)
left=$(echo "$changed" | grep -Ev "$allowed" || true)
[ -z "$left" ] || { echo "$left"; fail "the purge left these behind or changed them"; }
note "changed, as allowed: $(echo "$changed" | grep -E "$allowed" |
	sed 's|^/var/cache/man/.*|/var/cache/man/...|; s|^/var/lib/dpkg/.*|/var/lib/dpkg/...|' |
	sort -u | tr '\n' ' ')"
grep -q '^bridgeverbs:' /etc/passwd && note "left by policy: the system user bridgeverbs"
note "all checks passed"
