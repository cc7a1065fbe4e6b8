#!/bin/bash
# libscif between two "hosts": two network namespaces joined by a veth pair, each with its own
# cx4d on its own address and its own configuration, which names the other host's SCIF node by
# address (scif_peers). Host A is node 0 and runs the listening sides of the cases, host B is
# node 1 (its configuration's only node: the default for its programs) and runs the
# connecting sides (scif_test --server / --client, the same port base). Needs root.
BV_TMO=${BV_TMO:-600}
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for network namespaces"; exit 77; }

tag=$$
NA=sfA$tag NB=sfB$tag
IPA=10.78.$((tag % 200)).1 IPB=10.78.$((tag % 200)).2
RA="$BV_OUT/hostA" RB="$BV_OUT/hostB"
netns_cleanup() {
	for ns in $NA $NB; do
		r=$RA
		[ $ns = $NB ] && r=$RB
		ip netns exec $ns env BV_RUNDIR=$r "$BVCTL" down >/dev/null 2>&1
		ip netns del $ns 2>/dev/null
	done
}
trap 'rc=$?; netns_cleanup; (exit $rc); bv_cleanup' EXIT

ip netns add $NA && ip netns add $NB || bv_fail "ip netns add"
ip link add va$tag type veth peer name vb$tag || bv_fail "veth"
ip link set va$tag netns $NA && ip link set vb$tag netns $NB || bv_fail "veth into netns"
ip -n $NA addr add $IPA/24 dev va$tag && ip -n $NA link set va$tag up && ip -n $NA link set lo up
ip -n $NB addr add $IPB/24 dev vb$tag && ip -n $NB link set vb$tag up && ip -n $NB link set lo up

mkdir -p "$RA" "$RB"
printf '[device cx4_0]\nkind = cx4\nip = %s\nport_mtu = 1500\nscif_node = 0\nscif_peers = 1=%s\n' \
	$IPA $IPB >"$RA/host.conf"
printf '[device cx4_0]\nkind = cx4\nip = %s\nport_mtu = 1500\nscif_node = 1\nscif_peers = 0=%s\n' \
	$IPB $IPA >"$RB/host.conf"
A() { ip netns exec $NA env BV_RUNDIR="$RA" "$@"; }
B() { ip netns exec $NB env BV_RUNDIR="$RB" "$@"; }
A "$BVCTL" --config "$RA/host.conf" up >/dev/null || bv_fail "bvctl up in $NA"
B "$BVCTL" --config "$RB/host.conf" up >/dev/null || bv_fail "bvctl up in $NB"

T="$BV_BUILD_DIR/bin/scif_test"
# SCIF_NETNS_CASES: a subset (reproducing one case under load)
cases=${SCIF_NETNS_CASES:-"connect refused messages rma poll backlog multi fork idle mmap limits"}
port=$((3000 + tag % 2000))
# the two sides' marks (scif_test's case_mark): a directory of this run's own
export SCIF_TEST_MARKS="$BV_OUT/marks"
# shellcheck disable=SC2086
A timeout -k 5 "$BV_TMO" "$BVCTL" run --scif-node 0 -- "$T" --server $port $cases \
	>"$BV_OUT/srv.log" 2>&1 &
srv=$!
# shellcheck disable=SC2086
B timeout -k 5 "$BV_TMO" "$BVCTL" run -- "$T" --client $port $cases >"$BV_OUT/cli.log" 2>&1
crc=$?
[ $crc = 0 ] || kill $srv 2>/dev/null
wait $srv
src=$?
if [ $crc != 0 ] || [ $src != 0 ]; then
	echo "--- server (host A, node 0)" >&2
	bv_show "$BV_OUT/srv.log" >&2
	echo "--- client (host B, node 1)" >&2
	bv_show "$BV_OUT/cli.log" >&2
	bv_fail "scif_test between two hosts"
fi
bv_note "$(grep -c '^ok ' "$BV_OUT/cli.log") cases between the hosts"
echo "PASS"
