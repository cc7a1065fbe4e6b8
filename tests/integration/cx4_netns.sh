#!/bin/bash
# Two "hosts": two network namespaces joined by a veth pair, each running its own cx4d on its
# namespace's address (bvctl --config with that address), so the RoCE v2 packets really cross
# a link between two network stacks. The pingpongs (with data check and events) and perftest
# run between them in both directions. Needs root (skipped otherwise).
# Each program's hang guard: ib_write_lat -a (2 B .. 8 MiB, half round trips of 16 ms at 8 MiB)
# takes ~20 s with one CPU busy elsewhere, and went past the default 60 s on a 2-CPU machine
# running another perftest test and a qemu VM at the same time.
BV_TMO=${BV_TMO:-180}
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"
. "$BV_SOURCE_DIR/tests/integration/cx4_lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for network namespaces"; exit 77; }

tag=$$
NA=bvA$tag NB=bvB$tag
IPA=10.77.$((tag % 200)).1 IPB=10.77.$((tag % 200)).2
RA="$CX4_OUT/hostA" RB="$CX4_OUT/hostB"
netns_cleanup() {
	for ns in $NA $NB; do
		r=$RA
		[ $ns = $NB ] && r=$RB
		ip netns exec $ns env BV_RUNDIR=$r "$BVCTL" down >/dev/null 2>&1
		ip netns del $ns 2>/dev/null
	done
	rm -rf "$RA" "$RB"
}
CX4_ON_EXIT=netns_cleanup

ip netns add $NA && ip netns add $NB || bv_fail "ip netns add"
ip link add va$tag type veth peer name vb$tag || bv_fail "veth"
ip link set va$tag netns $NA && ip link set vb$tag netns $NB || bv_fail "veth into netns"
ip -n $NA addr add $IPA/24 dev va$tag && ip -n $NA link set va$tag up && ip -n $NA link set lo up
ip -n $NB addr add $IPB/24 dev vb$tag && ip -n $NB link set vb$tag up && ip -n $NB link set lo up

mkdir -p "$RA" "$RB"
# the port's Ethernet MTU is the link's (veth: 1500), so RoCE runs with path MTU 1024
printf '[device cx4_0]\nkind = cx4\nip = %s\nport_mtu = 1500\n' $IPA >"$RA/host.conf"
printf '[device cx4_0]\nkind = cx4\nip = %s\nport_mtu = 1500\n' $IPB >"$RB/host.conf"
A() { ip netns exec $NA env BV_RUNDIR="$RA" "$@"; }
B() { ip netns exec $NB env BV_RUNDIR="$RB" "$@"; }
A "$BVCTL" --config "$RA/host.conf" up >/dev/null || bv_fail "bvctl up in $NA"
B "$BVCTL" --config "$RB/host.conf" up >/dev/null || bv_fail "bvctl up in $NB"

# a failed pair shows both hosts' devices (their model counters: retransmits, NAKs, drops)
BV_PAIR_ON_FAIL='A "$BVCTL" status; B "$BVCTL" status'
# pair NAME "SERVER ARGS" "CLIENT ARGS" [rev]: server on host A, client on host B (or reversed)
pair() {
	local sip=$IPA
	if [ -n "${4:-}" ]; then
		sip=$IPB
		BV_PAIR_S=B BV_PAIR_C=A bv_pair "$1" 18515 "$2" "$3 $sip" || bv_fail "$1"
	else
		BV_PAIR_S=A BV_PAIR_C=B bv_pair "$1" 18515 "$2" "$3 $sip" || bv_fail "$1"
	fi
	echo "ok $1"
}
for dir in "" rev; do
	pair "rc-c$dir" "ibv_rc_pingpong -d cx4_0 -g $CX4_GID -n 200 -c" \
		"ibv_rc_pingpong -d cx4_0 -g $CX4_GID -n 200 -c" $dir
	pair "rc-e$dir" "ibv_rc_pingpong -d cx4_0 -g $CX4_GID -n 2000 -e -c" \
		"ibv_rc_pingpong -d cx4_0 -g $CX4_GID -n 2000 -e -c" $dir
	pair "ud-c$dir" "ibv_ud_pingpong -d cx4_0 -g $CX4_GID -n 200 -c" \
		"ibv_ud_pingpong -d cx4_0 -g $CX4_GID -n 200 -c" $dir
	pair "srq-c$dir" "ibv_srq_pingpong -d cx4_0 -g $CX4_GID -n 100 -c" \
		"ibv_srq_pingpong -d cx4_0 -g $CX4_GID -n 100 -c" $dir
	for t in "ib_write_bw -a -n 50" "ib_read_bw -q 8 -n 200" "ib_send_bw -e -n 200" \
		 "ib_atomic_bw -n 500" "ib_write_lat -a -n 50" "ib_read_lat -n 200" \
		 "ib_send_lat -e -n 200"; do
		pair "${t// /}$dir" "$t -d cx4_0 -x $CX4_GID" "$t -d cx4_0 -x $CX4_GID" $dir
	done
	# every byte checked across the link (path MTU 1024: multi-packet messages)
	for t in "-t rc -q 3" "-t rc -S -e" "-t ud" "-t uc"; do
		b="$BV_BUILD_DIR/bin/bvtraffic -p 18515 -d cx4_0 -g $CX4_GID"
		ev=""
		case " $t " in *" -e "*) ev=-e ;; esac
		pair "bvtraffic${t// /}$dir" "$b $ev" "$b -n 64 $t" $dir
		grep -q "^bvtraffic: PASS" "$BV_OUT/bvtraffic${t// /}$dir.cli" ||
			bv_fail "bvtraffic$t$dir: no PASS"
	done
done
echo "PASS"
