#!/bin/bash
# rdma_cm interoperability with a Linux kernel: our connection manager (a cx4 device, cx4d +
# the model, 10.99.0.1) against the kernel's rdma_cm on rxe0 in a Debian 12 VM (the rxe-peer
# tools' image, BV_RXE_TOOLS or $BV_SHARED_DIR/tools/rxe-peer; guest 10.99.0.2, rdma_ucm
# loaded), both directions: rping (data verified)
# and ib_send_bw -R. The MADs are real IB CM MADs on QP1 both ways: a REQ the kernel built
# reaches our listener, our REQ reaches the kernel's.
#
# Slow (the VM is emulated): run by `make interop`, not by ctest. Needs root. The VM boots a
# private copy of the image (qemu -snapshot on top: nothing is written back) in a network
# namespace of its own ("bvrcm", tap bvtap9), so it never disturbs the image, its lock, or
# another test's VM. Every RoCE packet on the tap is captured, and tshark must dissect the CM
# MADs of both directions (REQ, REP, RTU, DREQ, DREP from each side) without a malformed one.
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
. "$BV_SOURCE_DIR/tests/rdmacm/rdmacm_lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
TOOLS=${BV_RXE_TOOLS:-$(bv_shared_dir)/tools/rxe-peer}
[ -x "$TOOLS/build-vm" ] || { echo "SKIP: no rxe-peer tools in $TOOLS (BV_RXE_TOOLS)"; exit 77; }
IMG=${BV_RXE_IMAGE:-/var/tmp/rxe-peer}
[ -s "$IMG/root.img" ] || "$TOOLS/build-vm" "$IMG" || bv_fail "cannot build the rxe VM image"
command -v tshark >/dev/null || bv_fail "tshark is missing (tools/install-deps.sh installs it)"
VM_TMO=${BV_RXE_TIMEOUT:-1200}
OUT=$BV_OUT

# the copy: taken while no VM runs the image (its writer would make it inconsistent)
for _ in $(seq 600); do
	pgrep -f "file=$IMG/root.img" >/dev/null || break
	sleep 1
done
cp --sparse=always "$IMG/root.img" "$OUT/root.img" || bv_fail "cannot copy $IMG/root.img"

ns=bvrcm tap=bvtap9
ip netns list | grep -qw $ns || ip netns add $ns
ip -n $ns link set lo up
ip -n $ns link show $tap >/dev/null 2>&1 ||
	{ ip -n $ns tuntap add dev $tap mode tap && ip -n $ns addr add 10.99.0.1/24 dev $tap; }
ip -n $ns link set $tap up
H() { ip netns exec $ns env BV_RUNDIR="$BV_RUNDIR" "$@"; }
conf=$OUT/cx4rxe.conf
printf '[device cx4_0]\nkind = cx4\nip = 10.99.0.1\n' >"$conf"
H "$BVCTL" --config "$conf" up >/dev/null || bv_fail "bvctl up in $ns"

# RoCE v2 on the tap, both directions, for tshark at the end (ip netns exec execs dumpcap:
# $cap is dumpcap itself, which ends its file cleanly on SIGTERM)
ip netns exec $ns dumpcap -q -i $tap -f "udp port 4791" -w "$OUT/roce.pcapng" \
	>"$OUT/dumpcap.out" 2>&1 &
cap=$!

vm=""
kill_vm() {
	[ -n "$vm" ] || return 0
	kill -- -"$vm" 2>/dev/null
	wait "$vm" 2>/dev/null
	vm=""
}
cleanup_rcm() {
	kill_vm
	[ -z "${cap:-}" ] || { kill "$cap" 2>/dev/null; wait "$cap" 2>/dev/null; }
	H "$BVCTL" down >/dev/null 2>&1
	ip netns del $ns 2>/dev/null
}
trap 'cleanup_rcm; bv_cleanup' EXIT

# vm_start CONSOLE 'guest command': the guest runs it as its init's last step, then powers off
vm_start() {
	local enc
	enc=$(printf '%s' "$2" | sed 's/ /\\x20/g')
	setsid ip netns exec $ns timeout "$VM_TMO" qemu-system-x86_64 -accel "${BV_ACCEL:-tcg}" \
		-cpu max -m 1024 -smp 1 -nographic -no-reboot -snapshot \
		-kernel "$IMG/vmlinuz" -initrd "$IMG/initrd.img" \
		-append "root=/dev/vda rw console=ttyS0 quiet panic=1 init=/guest-init bvcmd=\"$enc\"" \
		-drive file="$OUT/root.img",format=raw,if=virtio \
		-netdev tap,id=n0,ifname=$tap,script=no,downscript=no \
		-device virtio-net-pci,netdev=n0 >"$1" 2>&1 &
	vm=$!
}

# vm_wait CONSOLE: until the guest said its command ended (or died)
vm_wait() {
	local _
	for _ in $(seq $((VM_TMO * 2))); do
		kill -0 "$vm" 2>/dev/null || break
		grep -q "rxe-peer: exit" "$1" && break
		sleep 0.5
	done
	sleep 2
	kill_vm
}

# In the guest: rxe0's RoCE v2 IPv4 GID index (for perftest's -x).
GID='G=$(for i in 0 1 2 3 4 5 6 7; do t=$(cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/$i); g=$(cat /sys/class/infiniband/rxe0/ports/1/gids/$i); case $t$g in *v2*ffff:*) echo $i; break;; esac; done)'

# host_client NAME CMD...: a client of the guest's server, retried while the guest boots
host_client() {
	local name=$1 out="$OUT/$1.host" t0
	shift
	t0=$(date +%s)
	while :; do
		H timeout -k 5 300 "$BVCTL" run -- "$@" >"$out" 2>&1 && return 0
		[ $(($(date +%s) - t0)) -lt "$VM_TMO" ] || break
		grep -q "rxe-peer: exit" "$OUT/vm1.console" && break
		kill -0 "$vm" 2>/dev/null || break	# the VM did not start, or ended
		sleep 3
	done
	bv_show "$out" >&2
	return 1
}

echo "== the kernel's rdma_cm serves (rxe0), ours connects (cx4_0)"
vm_start "$OUT/vm1.console" "$GID; rping -s -a 10.99.0.2 -C 50 -V; ib_send_bw -R -d rxe0 -x \$G -n 200"
host_client rping-to-rxe rping -c -a 10.99.0.2 -I 10.99.0.1 -C 50 -V -v ||
	{ kill_vm; tail -n 30 "$OUT/vm1.console"; bv_fail "rping cx4 -> rxe"; }
[ "$(grep -c "^ping data: rdma-ping-" "$OUT/rping-to-rxe.host")" = 50 ] ||
	{ kill_vm; bv_fail "rping cx4 -> rxe: not 50 verified pings"; }
echo "ok rping: cx4_0 -> rxe0, 50 verified pings"
host_client send_bw-to-rxe ib_send_bw -R -d cx4_0 -x 3 -n 200 10.99.0.2 ||
	{ kill_vm; tail -n 30 "$OUT/vm1.console"; bv_fail "ib_send_bw -R cx4 -> rxe"; }
echo "ok ib_send_bw -R: cx4_0 -> rxe0: $(grep -E "^ 65536" "$OUT/send_bw-to-rxe.host" | tr -s ' ')"
vm_wait "$OUT/vm1.console"

echo "== ours serves (cx4_0), the kernel's rdma_cm connects (rxe0)"
retry='n=0; until CMD || [ $((n+=1)) -gt 60 ]; do sleep 3; done'
g1=${retry/CMD/rping -c -a 10.99.0.1 -I 10.99.0.2 -C 50 -V -v}
g2=${retry/CMD/ib_send_bw -R -d rxe0 -x \$G -n 200 10.99.0.1}
vm_start "$OUT/vm2.console" "$GID; $g1; $g2"
H timeout -k 5 "$VM_TMO" "$BVCTL" run -- rping -s -a 10.99.0.1 -C 50 -V >"$OUT/rping-from-rxe.host" 2>&1 ||
	{ cat "$OUT/rping-from-rxe.host"; kill_vm; tail -n 30 "$OUT/vm2.console"; bv_fail "rping rxe -> cx4"; }
grep -q "server DISCONNECT EVENT" "$OUT/rping-from-rxe.host" ||
	{ cat "$OUT/rping-from-rxe.host"; kill_vm; bv_fail "rping rxe -> cx4: no DISCONNECTED"; }
echo "ok rping: rxe0 -> cx4_0"
H timeout -k 5 "$VM_TMO" "$BVCTL" run -- ib_send_bw -R -d cx4_0 -x 3 -n 200 >"$OUT/send_bw-from-rxe.host" 2>&1 ||
	{ cat "$OUT/send_bw-from-rxe.host"; kill_vm; tail -n 30 "$OUT/vm2.console"; bv_fail "ib_send_bw -R rxe -> cx4"; }
echo "ok ib_send_bw -R: rxe0 -> cx4_0: $(grep -E "^ 65536" "$OUT/send_bw-from-rxe.host" | tr -s ' ')"
vm_wait "$OUT/vm2.console"
grep -q "ping data: rdma-ping-" "$OUT/vm2.console" || bv_fail "the guest's rping saw no data"
m=$(rdmacm_cm_stat cx4_0 malformed)
[ "$m" = 0 ] || { "$BVCTL" status; bv_fail "cx4_0: $m malformed MADs from the kernel's CM"; }
echo "cx4_0 CM: $("$BVCTL" status | grep "  cm: ")"

# The capture: tshark dissects each CM MAD (class 0x07) of both directions as IB CM.
kill -TERM "$cap"
wait "$cap"
cap=""
ts() { tshark -n -r "$OUT/roce.pcapng" --disable-protocol rpcordma "$@" 2>/dev/null; }
ts -Y "infiniband.mad.mgmtclass == 0x07" -T fields -e ip.src -e infiniband.mad.attributeid \
	-e _ws.malformed >"$OUT/mads.txt"
[ -s "$OUT/mads.txt" ] || { cat "$OUT/dumpcap.out"; bv_fail "no CM MAD in the capture"; }
bad=$(ts -Y "infiniband.mad.mgmtclass == 0x07 && (_ws.malformed || _ws.expert.severity >= error)" | wc -l)
[ "$bad" = 0 ] || bv_fail "tshark: $bad malformed CM MADs"
# attribute IDs (IBTA 12.6.1 table 105): REQ 0x10, REP 0x13, RTU 0x14, DREQ 0x15, DREP 0x16
for src in 10.99.0.1 10.99.0.2; do
	for a in 0x0010 0x0013 0x0014 0x0015 0x0016; do
		awk -v s=$src -v a=$a '$1 == s && $2 == a' "$OUT/mads.txt" | grep -q . ||
			{ sort "$OUT/mads.txt" | uniq -c; bv_fail "tshark: no CM attribute $a from $src"; }
	done
done
n=$(wc -l <"$OUT/mads.txt")
echo "tshark: $n CM MADs dissected, none malformed; REQ/REP/RTU/DREQ/DREP from each side"
ts -Y "infiniband.cm.req" -T fields -e ip.src -e infiniband.cm.req.serviceid -e infiniband.cm.req.localqpn | sort -u | head -8
echo "PASS"
