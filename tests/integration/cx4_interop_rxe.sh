#!/bin/bash
# Interoperability with Linux soft-RoCE: a cx4 device (cx4d + the model, bound to 10.99.0.1 in
# the network namespace "bvrxe") against rxe0 in a Debian 12 VM (shared/tools/rxe-peer, guest
# 10.99.0.2), both directions: ib_write_bw, ib_read_bw, ib_send_bw, ib_atomic_bw,
# ibv_rc_pingpong -c, ibv_ud_pingpong -c, and bvtraffic (every byte of RC, UC, UD and SRQ
# traffic checked; in the guest a static build with rdma-core's rxe provider, written into the
# image). Every program's exit status counts, the guest's too (its console reports each).
# Slow (the VM is emulated): run by `make interop`, not by ctest. Needs root; builds the VM
# image once (BV_RXE_IMAGE, default /var/tmp/rxe-peer).
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
. "$BV_SOURCE_DIR/tests/integration/cx4_lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
TOOLS=${BV_RXE_TOOLS:-$BV_SOURCE_DIR/../shared/tools/rxe-peer}
[ -x "$TOOLS/run-vm" ] || TOOLS=/work/shared/tools/rxe-peer
IMG=${BV_RXE_IMAGE:-/var/tmp/rxe-peer}
[ -s "$IMG/root.img" ] || "$TOOLS/build-vm" "$IMG" || bv_fail "cannot build the rxe VM image"
VM_TMO=${BV_RXE_TIMEOUT:-1200}
cmake --build "$BV_BUILD_DIR" --target bvtraffic_static >/dev/null ||
	bv_fail "cannot build bvtraffic_static"
command -v debugfs >/dev/null || bv_fail "debugfs is missing (e2fsprogs)"

# guest_files SCRIPT: write into the image (no VM runs on it now) /usr/local/bin/bvtraffic,
# bvtraffic linked statically with rdma-core's libibverbs and rxe provider (the guest has
# rdma-core but no bridgeverbs), and /usr/local/bin/bv-guest.sh, the guest's command (a file:
# the kernel command line that carries run-vm's command is too short for the tests)
guest_files() {
	printf 'cd /usr/local/bin\nrm bvtraffic\nwrite %s bvtraffic\nsif bvtraffic mode 0100755\nrm bv-guest.sh\nwrite %s bv-guest.sh\n' \
		"$BV_BUILD_DIR/bin/bvtraffic_static" "$1" >"$BV_OUT/debugfs.cmd"
	# the guest powers off without unmounting: replay its journal first, or a later mount
	# would replay it over what debugfs writes
	e2fsck -fp "$IMG/root.img" >"$BV_OUT/debugfs.out" 2>&1
	debugfs -w -f "$BV_OUT/debugfs.cmd" "$IMG/root.img" >>"$BV_OUT/debugfs.out" 2>&1
	debugfs -R "stat /usr/local/bin/bvtraffic" "$IMG/root.img" 2>/dev/null |
		grep -q "Mode:  0755" && debugfs -R "cat /usr/local/bin/bv-guest.sh" "$IMG/root.img" \
		2>/dev/null | cmp -s - "$1" ||
		{ cat "$BV_OUT/debugfs.out"; bv_fail "the guest's files are not in its image"; }
}

# bvtraffic for the guest: linked statically with rdma-core's libibverbs and rxe provider (the
# guest has rdma-core but no bridgeverbs), copied into the image (no VM runs on it now)
cmake --build "$BV_BUILD_DIR" --target bvtraffic_static >/dev/null ||
	bv_fail "cannot build bvtraffic_static"
command -v debugfs >/dev/null || bv_fail "debugfs is missing (e2fsprogs)"
printf 'cd /usr/local/bin\nrm bvtraffic\nwrite %s bvtraffic\nsif bvtraffic mode 0100755\n' \
	"$BV_BUILD_DIR/bin/bvtraffic_static" >"$BV_OUT/debugfs.cmd"
debugfs -w -f "$BV_OUT/debugfs.cmd" "$IMG/root.img" >"$BV_OUT/debugfs.out" 2>&1
debugfs -R "stat /usr/local/bin/bvtraffic" "$IMG/root.img" 2>/dev/null | grep -q "Mode:  0755" ||
	{ cat "$BV_OUT/debugfs.out"; bv_fail "bvtraffic is not in the guest image"; }

# the namespace and tap run-vm uses (idempotent, as run-vm does it): our port lives there
ns=bvrxe tap=bvtap0
ip netns list | grep -qw $ns || ip netns add $ns
ip -n $ns link set lo up
ip -n $ns link show $tap >/dev/null 2>&1 ||
	{ ip -n $ns tuntap add dev $tap mode tap && ip -n $ns addr add 10.99.0.1/24 dev $tap; }
ip -n $ns link set $tap up
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
CX4_ON_EXIT='kill_vm; H "$BVCTL" down >/dev/null 2>&1' 
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

# In the guest: the RoCE v2 IPv4 GID of rxe0 (its index depends on the guest's addresses).
GID='G=$(for i in 0 1 2 3 4 5 6 7; do t=$(cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/$i); g=$(cat /sys/class/infiniband/rxe0/ports/1/gids/$i); case $t$g in *v2*ffff:*) echo $i; break;; esac; done)'
# perftest gives each side the other's outstanding read depth: rxe offers 128, a ConnectX-4
# takes 16 (log_max_ra_req_qp), and mlx5 refuses more. -o 16 on both sides, as with real cards.
TESTS=("ib_write_bw -n 200" "ib_read_bw -n 200 -o 16" "ib_send_bw -n 200" "ib_atomic_bw -n 200 -o 16"
       "ibv_rc_pingpong -c -n 50" "ibv_ud_pingpong -c -n 50 -s 512"
       "bvtraffic -p 18530 -t rc -n 48 -W 120 -L 1200"
       "bvtraffic -p 18530 -t rc -S -e -q 3 -n 16 -W 120 -L 1200"
       "bvtraffic -p 18530 -t uc -n 32 -W 120 -L 1200" "bvtraffic -p 18530 -t ud -S -n 32 -W 120 -L 1200")
# CX4_RXE_ONLY=ERE: only the tests that match (a rerun of some)
if [ -n "${CX4_RXE_ONLY:-}" ]; then
	mapfile -t TESTS < <(printf '%s\n' "${TESTS[@]}" | grep -E -- "$CX4_RXE_ONLY")
	[ ${#TESTS[@]} -gt 0 ] || bv_fail "CX4_RXE_ONLY=$CX4_RXE_ONLY matches no test"
fi
gflag() { case "$1" in ibv_*|bvtraffic) echo "-g";; *) echo "-x";; esac; }
# the program on either side: bvtraffic is ours (the host's build, the guest's static copy)
host_prog() { [ "$1" = bvtraffic ] && echo "$BV_BUILD_DIR/bin/bvtraffic" || echo "$1"; }
guest_prog() { [ "$1" = bvtraffic ] && echo /usr/local/bin/bvtraffic || echo "$1"; }
# guest_ok CONSOLE: the guest reported exit 0 for every one of the tests
guest_ok() {
	local i
	for i in "${!TESTS[@]}"; do
		grep -aq "BVRC:$i:0" "$1" ||
			{ tail -n 40 "$1"; bv_fail "$2: in the guest, ${TESTS[$i]} did not exit 0"; }
	done
}
# bvtraffic's summary on this side must say PASS (the exit status says it too)
host_pass() {
	[ "$1" != bvtraffic ] || grep -q "^bvtraffic: PASS" "$2" || { cat "$2"; return 1; }
}

# host_run CMD...: a client of the guest's server, retried while the guest still boots
host_client() {
	local out="$CX4_OUT/client.out" t0
	t0=$(date +%s)
	while :; do
		H timeout -k 5 300 "$BVCTL" run -- "$(host_prog "$1")" "${@:2}" >"$out" 2>&1 &&
			host_pass "$1" "$out" && return 0
		grep -q "Couldn't connect\|Unable to open file descriptor\|cannot connect to" "$out" ||
			break
		[ $(($(date +%s) - t0)) -lt "$VM_TMO" ] || break
		sleep 2
	done
	cat "$out" >&2
	return 1
}

echo "== rxe0 serves, cx4_0 connects"
{
	echo "$GID"
	for i in "${!TESTS[@]}"; do
		set -- ${TESTS[$i]}
		echo "$(guest_prog $1) -d rxe0 $(gflag $1) \$G ${*:2}; echo BVRC:$i:\$?"
	done
} >"$BV_OUT/guest1.sh"
guest_files "$BV_OUT/guest1.sh"
setsid "$TOOLS/run-vm" "$IMG" "sh /usr/local/bin/bv-guest.sh" "$VM_TMO" >"$CX4_OUT/vm1.console" 2>&1 &
vm=$!
for t in "${TESTS[@]}"; do
	set -- $t
	host_client $1 -d cx4_0 $(gflag $1) $CX4_GID "${@:2}" 10.99.0.2 ||
		{ kill_vm; tail -n 30 "$CX4_OUT/vm1.console"; bv_fail "cx4 -> rxe: $t"; }
	echo "ok cx4 -> rxe: $t"
done
end_vm "$CX4_OUT/vm1.console"
guest_ok "$CX4_OUT/vm1.console" "rxe serves"

echo "== cx4_0 serves, rxe0 connects"
# each guest client retries while its host server is not listening yet; its last status counts
{
	echo "$GID"
	for i in "${!TESTS[@]}"; do
		set -- ${TESTS[$i]}
		echo "n=0; until $(guest_prog $1) -d rxe0 $(gflag $1) \$G ${*:2} 10.99.0.1; r=\$?; [ \$r = 0 ] || [ \$((n+=1)) -gt 60 ]; do sleep 2; done; echo BVRC:$i:\$r"
	done
} >"$BV_OUT/guest2.sh"
guest_files "$BV_OUT/guest2.sh"
setsid "$TOOLS/run-vm" "$IMG" "sh /usr/local/bin/bv-guest.sh" "$VM_TMO" >"$CX4_OUT/vm2.console" 2>&1 &
vm=$!
for t in "${TESTS[@]}"; do
	set -- $t
	{ H timeout -k 5 "$VM_TMO" "$BVCTL" run -- "$(host_prog $1)" -d cx4_0 $(gflag $1) $CX4_GID \
		"${@:2}" >"$CX4_OUT/server.out" 2>&1 && host_pass "$1" "$CX4_OUT/server.out"; } ||
		{ cat "$CX4_OUT/server.out"; kill_vm; tail -n 30 "$CX4_OUT/vm2.console";
		  bv_fail "rxe -> cx4: $t"; }
	echo "ok rxe -> cx4: $t"
done
end_vm "$CX4_OUT/vm2.console"
guest_ok "$CX4_OUT/vm2.console" "rxe connects"
echo "PASS"
