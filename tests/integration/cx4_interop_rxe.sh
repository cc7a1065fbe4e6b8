#!/bin/bash
# Interoperability with Linux soft-RoCE: a cx4 device (cx4d + the model, bound to 10.99.0.1 in
# the network namespace "bvrxe") against rxe0 in a Debian 12 VM (shared/tools/rxe-peer, guest
# 10.99.0.2), both directions: ib_write_bw, ib_read_bw, ib_send_bw, ib_atomic_bw,
# ibv_rc_pingpong -c and ibv_ud_pingpong -c on the RoCE v2 IPv4 GIDs, and ibv_rc_pingpong -c,
# ibv_ud_pingpong -c and ib_send_bw on the RoCE v2 IPv6 ones: link-local (the tap's, from its
# MAC; the guest NIC's) and global (fd99::1 on the tap, fd99::2 in the guest). Slow (the VM
# is emulated): run by `make interop`, not by ctest. Needs root; builds the VM image once
# (BV_RXE_IMAGE, default /var/tmp/rxe-peer).
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
. "$BV_SOURCE_DIR/tests/integration/cx4_lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
TOOLS=${BV_RXE_TOOLS:-$BV_SOURCE_DIR/../shared/tools/rxe-peer}
[ -x "$TOOLS/run-vm" ] || TOOLS=/work/shared/tools/rxe-peer
IMG=${BV_RXE_IMAGE:-/var/tmp/rxe-peer}
[ -s "$IMG/root.img" ] || "$TOOLS/build-vm" "$IMG" || bv_fail "cannot build the rxe VM image"
VM_TMO=${BV_RXE_TIMEOUT:-1200}

# the namespace and tap run-vm uses (idempotent, as run-vm does it): our port lives there
ns=bvrxe tap=bvtap0
ip netns list | grep -qw $ns || ip netns add $ns
ip -n $ns link set lo up
ip -n $ns link show $tap >/dev/null 2>&1 ||
	{ ip -n $ns tuntap add dev $tap mode tap && ip -n $ns addr add 10.99.0.1/24 dev $tap; }
ip -n $ns link set $tap up
# IPv6 on the tap before the port comes up: its link-local address (the EUI-64 of its MAC,
# which the port takes as its own: the default GID) exists only with carrier unless added, and
# a global one. No duplicate address detection: usable at once.
mac=$(ip -n $ns link show $tap | awk '/link\/ether/ {print $2}')
ll=$(python3 -c 'import sys; m=[int(x,16) for x in sys.argv[1].split(":")]; m[0]^=2; print("fe80::%02x%02x:%02xff:fe%02x:%02x%02x" % tuple(m))' "$mac")
ip -n $ns -6 addr show dev $tap | grep -q "$ll/64" || ip -n $ns -6 addr add "$ll/64" dev $tap nodad
ip -n $ns -6 addr show dev $tap | grep -q "fd99::1/64" || ip -n $ns -6 addr add fd99::1/64 dev $tap nodad
conf=$(mktemp /tmp/cx4rxe.XXXXXX)
printf '[device cx4_0]\nkind = cx4\nip = 10.99.0.1\n' >"$conf"
H() { ip netns exec $ns env BV_RUNDIR="$BV_RUNDIR" "$@"; }
H "$BVCTL" --config "$conf" up >/dev/null || bv_fail "bvctl up in $ns"
rm -f "$conf"
# The VM runs in its own session: kill_vm takes down everything in it, whatever happened.
# Not only run-vm's process group: timeout(1) puts qemu in a group of its own, and a qemu left
# behind holds the tap, so the next VM cannot start (its host side then waits for ever).
vm=""
kill_vm() {
	[ -n "$vm" ] || return 0
	kill -- -"$vm" 2>/dev/null
	pkill -KILL -s "$vm" 2>/dev/null
	wait "$vm" 2>/dev/null
	while pgrep -s "$vm" >/dev/null; do sleep 0.2; done
	vm=""
}
# on a failure, the daemon's log before bvctl down removes it
CX4_ON_EXIT='kill_vm; [ "$rc" = 0 ] || tail -n 40 "$BV_RUNDIR/cx4_0.log" >&2; H "$BVCTL" down >/dev/null 2>&1'
# end_vm CONSOLE: the guest powers itself off when its command ends. One that raced its own
# power-off (sysrq power-off, then init exited first: a kernel panic, and qemu stays up until
# its timeout) is taken down once its console shows the panic, else after 120 s; the host
# sides have passed by then.
end_vm() {
	local _
	for _ in $(seq 240); do
		kill -0 "$vm" 2>/dev/null || break
		grep -q "end Kernel panic" "$1" && break
		sleep 0.5
	done
	kill_vm
}

# The port's GIDs: 1 fe80:: RoCE v2 (the tap's link-local address), 3 ::ffff:10.99.0.1 RoCE v2,
# 5 fd99::1 RoCE v2 (0, 2, 4: the same as RoCE v1, which rxe does not speak).
H_LL=1 H_G6=5
for i in 1 3 5; do
	g=$(cat "$BV_RUNDIR/sysfs/class/infiniband/cx4_0/ports/1/gids/$i")
	t=$(cat "$BV_RUNDIR/sysfs/class/infiniband/cx4_0/ports/1/gid_attrs/types/$i")
	case "$i $g $t" in
	"1 fe80:"*" RoCE v2" | "3 "*":ffff:0a63:0001 RoCE v2" | "5 fd99:"*" RoCE v2") ;;
	*) bv_fail "cx4_0 GID $i is $g ($t)";;
	esac
done
# In the guest: a global IPv6 address on rxe0's NIC, then rxe0's RoCE v2 GIDs: IPv4 (G),
# link-local (GL) and global IPv6 (G6); their indexes depend on the guest's addresses, and the
# kernel adds a new address's GIDs shortly after it; r retries a client while the other side
# starts. The guest command travels on the kernel command line (2048 bytes, spaces as \x20)
# inside double quotes: none in it, and short.
GID='cd /sys/class/infiniband/rxe0/ports/1; ip -6 addr add fd99::2/64 dev $(cat gid_attrs/ndevs/0) nodad; sleep 2; gi(){ for i in 0 1 2 3 4 5 6 7 8 9; do case $(cat gid_attrs/types/$i)$(cat gids/$i) in *v2*$1*) echo $i; return;; esac; done; }; G=$(gi ffff:); GL=$(gi fe80:); G6=$(gi fd99:); cd /; r(){ n=0; until $* || [ $((n+=1)) -gt 60 ]; do sleep 2; done; }'
# perftest gives each side the other's outstanding read depth: rxe offers 128, a ConnectX-4
# takes 16 (log_max_ra_req_qp), and mlx5 refuses more. -o 16 on both sides, as with real cards.
# TEST [GID]: on the IPv4 GIDs, or on the link-local (LL) or global (G6) IPv6 ones
TESTS=("ib_write_bw -n 200" "ib_read_bw -n 200 -o 16" "ib_send_bw -n 200" "ib_atomic_bw -n 200 -o 16"
       "ibv_rc_pingpong -c -n 50" "ibv_ud_pingpong -c -n 50 -s 512"
       "LL ibv_rc_pingpong -c -n 50" "LL ibv_ud_pingpong -c -n 50 -s 512" "LL ib_send_bw -n 200"
       "G6 ibv_rc_pingpong -c -n 50" "G6 ibv_ud_pingpong -c -n 50 -s 512" "G6 ib_send_bw -n 200")
gflag() { case "$1" in ibv_*) echo "-g";; *) echo "-x";; esac; }
# the guest's and the host's GID index of a test's first word
ggid() { case "$1" in LL) echo '$GL';; G6) echo '$G6';; *) echo '$G';; esac; }
hgid() { case "$1" in LL) echo $H_LL;; G6) echo $H_G6;; *) echo $CX4_GID;; esac; }
strip() { case "$1" in LL|G6) shift;; esac; echo "$@"; }

# host_run CMD...: a client of the guest's server, retried while the guest still boots
host_client() {
	local out="$CX4_OUT/client.out" t0
	t0=$(date +%s)
	while :; do
		H timeout -k 5 300 "$BVCTL" run -- "$@" >"$out" 2>&1 && return 0
		grep -q "Couldn't connect\|Unable to open file descriptor" "$out" || break
		[ $(($(date +%s) - t0)) -lt "$VM_TMO" ] || break
		sleep 2
	done
	cat "$out" >&2
	return 1
}

echo "== rxe0 serves, cx4_0 connects"
guest=""
for t in "${TESTS[@]}"; do
	g=$(ggid $t)
	set -- $(strip $t)
	guest="$guest $1 -d rxe0 $(gflag $1) $g ${*:2};"
done
setsid "$TOOLS/run-vm" "$IMG" "$GID; $guest" "$VM_TMO" >"$CX4_OUT/vm1.console" 2>&1 &
vm=$!
for t in "${TESTS[@]}"; do
	h=$(hgid $t)
	set -- $(strip $t)
	host_client $1 -d cx4_0 $(gflag $1) $h "${@:2}" 10.99.0.2 ||
		{ kill_vm; tail -n 30 "$CX4_OUT/vm1.console"; bv_fail "cx4 -> rxe: $t"; }
	echo "ok cx4 -> rxe: $t"
done
end_vm "$CX4_OUT/vm1.console"

echo "== cx4_0 serves, rxe0 connects"
guest=""
for t in "${TESTS[@]}"; do
	g=$(ggid $t)
	set -- $(strip $t)
	guest="$guest r $1 -d rxe0 $(gflag $1) $g ${*:2} 10.99.0.1;"
done
setsid "$TOOLS/run-vm" "$IMG" "$GID; $guest" "$VM_TMO" >"$CX4_OUT/vm2.console" 2>&1 &
vm=$!
for t in "${TESTS[@]}"; do
	h=$(hgid $t)
	set -- $(strip $t)
	H timeout -k 5 "$VM_TMO" "$BVCTL" run -- $1 -d cx4_0 $(gflag $1) $h "${@:2}" \
		>"$CX4_OUT/server.out" 2>&1 ||
		{ cat "$CX4_OUT/server.out"; kill_vm; tail -n 30 "$CX4_OUT/vm2.console";
		  bv_fail "rxe -> cx4: $t"; }
	echo "ok rxe -> cx4: $t"
done
end_vm "$CX4_OUT/vm2.console"
echo "PASS"
