#!/bin/bash
# The package test's systemd half: runs as a service in a VM booted from a fresh Debian 12
# root with the packages installed (tests/package/package-test.sh makes it), on Debian's own
# kernel, which has RDMA as modules: the devices came up at boot through bridgeverbs.target;
# users run programs with bvctl run, and with nothing set once ib_core's autoload is
# blacklisted; bvctl up and down go through systemd; a killed daemon is restarted; rping (the
# CM library) through the units' daemons; socket_group restricts a device; a purge of every
# package stops everything. The last line says PASS or FAIL.
set -uo pipefail
fail() {
	echo "FAIL [package-test vm]: $*"
	systemctl --no-pager status 'bridgeverbs*' 'cx4d@*' 'ntbd@*' 2>&1 | tail -n 40
	journalctl --no-pager -b -u 'cx4d@*' -u 'ntbd@*' -u bridgeverbs-sysfs 2>&1 | tail -n 30
	echo "BV-VM-TEST: FAIL"
	systemctl poweroff
	exit 1
}
SECONDS=0
note() { echo "# [vm ${SECONDS}s] $*"; }
as_root() { env -i TERM=dumb bash -lc "$*"; }
as_user() { runuser -l tester -c "$*"; }
units="bridgeverbs.target bridgeverbs-sysfs.service cx4d@cx4_0.service cx4d@cx4_1.service
ntbd@ntb_0.service ntbd@ntb_1.service"

S='[[:space:]]+'

wait_listen() {
	for _ in $(seq 600); do
		ss -ltn | grep -q ":$1 " && return 0
		sleep 0.1
	done
	return 1
}

# pingpong WHO SERVER CLIENT PORT [PREFIX]: ibv_rc_pingpong -c (the server checks a byte of
# every page it received)
# as_root or as_user, PREFIX before it. Not perftest: under emulation its clock calibration
# fails ("Can't produce a report"), which says nothing about the devices.
pingpong() {
	local who=$1 srv=$2 cli=$3 port=$4 pre=${5:-} out
	$who "$pre ibv_rc_pingpong -d $srv -g 3 -c -n 200 -p $port" >/tmp/srv.$port 2>&1 &
	wait_listen "$port" || { cat /tmp/srv.$port; fail "ibv_rc_pingpong server on $srv"; }
	out=$($who "$pre ibv_rc_pingpong -d $cli -g 3 -c -n 200 -p $port 127.0.0.1" 2>&1) ||
		{ echo "$out"; cat /tmp/srv.$port; fail "ibv_rc_pingpong $srv <- $cli"; }
	wait $! || { cat /tmp/srv.$port; fail "ibv_rc_pingpong server on $srv"; }
	for o in "$out" "$(cat /tmp/srv.$port)"; do
		echo "$o" | grep -q "bytes in .* seconds" && echo "$o" | grep -q "200 iters" &&
			! echo "$o" | grep -q "invalid data" ||
			{ echo "$o"; fail "ibv_rc_pingpong $srv <- $cli: no result, or bad data"; }
	done
	echo "$out" | grep "bytes in" | sed "s/^/$srv <- $cli: /"
}

all_active() {
	for u in $units; do
		[ "$(systemctl is-active "$u")" = active ] || return 1
	done
}

note "booted: the devices came up with bridgeverbs.target"
systemctl is-enabled bridgeverbs.target | grep -q enabled || fail "bridgeverbs.target not enabled"
for _ in $(seq 100); do all_active && break; sleep 0.2; done
all_active || fail "not every unit is active after boot"
[ "$(ps -o user= -C cx4d,ntbd | sort -u | tr '\n' ' ')" = "bridgeverbs " ] ||
	fail "daemons do not run as bridgeverbs"
pid=$(systemctl show -p MainPID --value cx4d@cx4_0)
grep -q "^CapEff:.*0000000000080000" "/proc/$pid/status" ||
	fail "cx4d@cx4_0's capabilities"
[ -L /dev/infiniband/uverbs64 ] || fail "tmpfiles.d made no uverbs nodes at boot"

# devices LISTING: the four devices are in an ibv_devices listing
devices() {
	for d in cx4_0 cx4_1 ntb_0 ntb_1; do
		echo "$1" | grep -Eq "^${S}$d${S}[0-9a-f]{16}$" ||
			{ echo "$1"; return 1; }
	done
}

note "bvctl run, on a kernel that has RDMA as modules"
out=$(as_user "bvctl run -- ibv_devices") || fail "bvctl run -- ibv_devices"
devices "$out" || fail "bvctl run -- ibv_devices: not the four devices"
pingpong as_user cx4_0 cx4_1 18601 "bvctl run --"
[ ! -e /sys/module/ib_core ] || fail "ib_core got loaded (the shim hides RDMA netlink)"
[ "$(as_user 'echo ${SYSFS_PATH-unset}')" = unset ] ||
	fail "profile.d set SYSFS_PATH although the kernel would load ib_core"

note "ib_core's autoload blacklisted: login shells with nothing set by hand"
cp /usr/share/doc/bridgeverbs/examples/no-rdma-autoload.conf /etc/modprobe.d/
out=$(as_user ibv_devices) || fail "ibv_devices"
devices "$out" || fail "ibv_devices in a login shell: not the four devices"
pingpong as_user cx4_0 cx4_1 18602
pingpong as_user ntb_0 ntb_1 18603
[ ! -e /sys/module/ib_core ] || fail "ib_core got loaded despite the blacklist"
as_user "bvctl status" >/tmp/status || { cat /tmp/status; fail "bvctl status"; }

note "bvctl down and up go through systemd"
as_root "bvctl down" || fail "bvctl down"
for u in $units; do
	[ "$(systemctl is-active "$u")" != active ] || fail "$u still active after bvctl down"
done
[ ! -e /run/bridgeverbs ] || fail "bvctl down left /run/bridgeverbs"
as_root "bvctl up" >/tmp/up || { cat /tmp/up; fail "bvctl up"; }
grep -q "cx4d@cx4_0.service, pid" /tmp/up || { cat /tmp/up; fail "bvctl up did not use the units"; }
all_active || fail "not every unit is active after bvctl up"
pingpong as_root ntb_1 ntb_0 18604

note "a daemon that dies is restarted"
old=$(systemctl show -p MainPID --value cx4d@cx4_1)
systemctl kill -s KILL cx4d@cx4_1
for _ in $(seq 100); do
	new=$(systemctl show -p MainPID --value cx4d@cx4_1)
	[ "$new" != 0 ] && [ "$new" != "$old" ] &&
		[ "$(systemctl is-active cx4d@cx4_1)" = active ] && break
	sleep 0.2
done
[ "$new" != "$old" ] && [ "$new" != 0 ] || fail "cx4d@cx4_1 was not restarted"
pingpong as_user cx4_0 cx4_1 18605

note "rping through the units' daemons (the CM library), data verified (-V)"
as_user "bvctl run -- rping -s -a 127.0.1.1 -p 7201 -C 20 -V" >/tmp/rping.srv 2>&1 &
for _ in $(seq 600); do
	as_user "bvctl status" 2>/dev/null | grep -q "cm listen: ps 0x0106 port 7201\$" && break
	sleep 0.2
done
out=$(as_user "bvctl run -- rping -c -a 127.0.1.1 -I 127.0.1.2 -p 7201 -C 20 -V -v" 2>&1) ||
	{ echo "$out"; cat /tmp/rping.srv; fail "rping cx4_1 -> cx4_0"; }
wait $! || { cat /tmp/rping.srv; fail "rping server on cx4_0"; }
[ "$(echo "$out" | grep -c '^ping data: rdma-ping-')" = 20 ] ||
	{ echo "$out"; fail "rping cx4_1 -> cx4_0: not 20 verified pings"; }
echo "rping cx4_1 -> cx4_0: 20 verified pings"

note "socket_group: a device only a group may open"
as_root "bvctl down" || fail "bvctl down"
groupadd bvusers
printf '\n[device cx4_2]\nkind = cx4\nip = 127.0.1.3\nsocket_group = bvusers\n' \
	>>/etc/bridgeverbs/devices.conf
as_root "bvctl up" >/tmp/up || { cat /tmp/up; fail "bvctl up with socket_group"; }
[ "$(stat -c '%G %a' /run/bridgeverbs/cx4_2.sock)" = "bvusers 660" ] ||
	fail "cx4_2.sock: $(stat -c '%G %a' /run/bridgeverbs/cx4_2.sock)"
systemctl cat cx4d@cx4_2 | grep -q "SupplementaryGroups=bvusers" || fail "no drop-in for cx4_2"
out=$(as_user "ibv_devinfo -d cx4_2" 2>&1) && fail "a user outside bvusers opened cx4_2"
echo "$out" | grep -q "no permission" || { echo "$out"; fail "no clear message: $out"; }
usermod -aG bvusers tester
as_user "ibv_devinfo -d cx4_2" >/dev/null || fail "a member of bvusers cannot open cx4_2"

note "purge under systemd stops everything"
# every package built from the bridgeverbs source (dbgsym, the CM library, libscif included):
# the package test installed them all
pkgs=$(dpkg-query -W -f '${binary:Package} ${source:Package}\n' | awk '$2 == "bridgeverbs" {print $1}')
[ "$(echo "$pkgs" | wc -w)" -ge 6 ] || fail "installed from bridgeverbs: only $pkgs"
# shellcheck disable=SC2086
dpkg --purge $pkgs >/tmp/dpkg.log 2>&1 || { cat /tmp/dpkg.log; fail "dpkg --purge"; }
ps -o pid= -C cx4d,ntbd && fail "a daemon survived the purge"
[ ! -e /lib/systemd/system/cx4d@.service ] || fail "units left"
left=$(dpkg-query -W -f '${db:Status-Abbrev} ${binary:Package} ${source:Package}\n' |
	awk '$1 !~ /^[up]n/ && $3 == "bridgeverbs"')
[ -z "$left" ] || fail "not purged: $left"
[ "$(systemctl is-active bridgeverbs.target)" != active ] || fail "bridgeverbs.target active"
note "all checks passed"
echo "BV-VM-TEST: PASS"
systemctl poweroff
