#!/bin/bash
# Every GID type over a network (docs/cx4-driver.md, "GID table"): two network namespaces
# joined by a veth pair, one cx4d each on its veth (the port's net device: its MAC, its
# link-local address, its global IPv6 address). Each lists 0 fe80:: RoCE v1, 1 fe80:: RoCE v2,
# 2 ::ffff:ip RoCE v1, 3 ::ffff:ip RoCE v2, 4 fd00:: RoCE v1, 5 fd00:: RoCE v2: RoCE v1 frames
# cross through AF_PACKET, RoCE v2 through UDP/IPv4 and UDP/IPv6 sockets; destination MACs
# of IP GIDs come from each namespace's neighbour table. ibv_rc/uc/ud/srq_pingpong run on every
# index, ib_send_bw on every index both ways, bvtraffic RC (with an SRQ) and UD on every index
# (every byte checked), and host A's capture is checked (ICRCs, tshark).
# Needs root (skipped otherwise).
BV_TMO=${BV_TMO:-120}
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"
. "$BV_SOURCE_DIR/tests/integration/cx4_lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for network namespaces"; exit 77; }

tag=$$
NA=bvgA$tag NB=bvgB$tag
n=$((tag % 200))
IPA=10.79.$n.1 IPB=10.79.$n.2 IP6A=fd00:79:$n::1 IP6B=fd00:79:$n::2
RA="$CX4_OUT/hostA" RB="$CX4_OUT/hostB"
netns_cleanup() {
	ip netns exec $NA env BV_RUNDIR="$RA" "$BVCTL" down >/dev/null 2>&1
	ip netns exec $NB env BV_RUNDIR="$RB" "$BVCTL" down >/dev/null 2>&1
	ip netns del $NA 2>/dev/null
	ip netns del $NB 2>/dev/null
	rm -rf "$RA" "$RB"
}
CX4_ON_EXIT=netns_cleanup

ip netns add $NA && ip netns add $NB || bv_fail "ip netns add"
for ns in $NA $NB; do
	# addresses usable at once (no duplicate address detection), link-local ones from the MAC
	ip netns exec $ns sysctl -qw net.ipv6.conf.all.accept_dad=0 \
		net.ipv6.conf.default.accept_dad=0 || bv_fail "sysctl in $ns"
	ip -n $ns link set lo up
done
ip link add vga$tag netns $NA type veth peer name vgb$tag netns $NB || bv_fail "veth"
ip -n $NA link set vga$tag addrgenmode eui64 && ip -n $NB link set vgb$tag addrgenmode eui64
ip -n $NA addr add $IPA/24 dev vga$tag && ip -n $NA addr add $IP6A/64 dev vga$tag nodad
ip -n $NB addr add $IPB/24 dev vgb$tag && ip -n $NB addr add $IP6B/64 dev vgb$tag nodad
ip -n $NA link set vga$tag up && ip -n $NB link set vgb$tag up
for i in $(seq 100); do
	ip -n $NA -6 addr show dev vga$tag scope link | grep -q inet6 &&
		ip -n $NB -6 addr show dev vgb$tag scope link | grep -q inet6 && break
	sleep 0.05
done

mkdir -p "$RA" "$RB"
# the port's Ethernet MTU is the link's (veth: 1500), so RoCE runs with path MTU 1024
printf '[device cx4_0]\nkind = cx4\nip = %s\nport_mtu = 1500\npcap = %s\n' $IPA "$RA/a.pcap" \
	>"$RA/host.conf"
printf '[device cx4_0]\nkind = cx4\nip = %s\nport_mtu = 1500\n' $IPB >"$RB/host.conf"
A() { ip netns exec $NA env BV_RUNDIR="$RA" "$@"; }
B() { ip netns exec $NB env BV_RUNDIR="$RB" "$@"; }
# a failed pair shows both hosts' devices (their model counters)
BV_PAIR_ON_FAIL='A "$BVCTL" status; B "$BVCTL" status'
A "$BVCTL" --config "$RA/host.conf" up >/dev/null || bv_fail "bvctl up in $NA"
B "$BVCTL" --config "$RB/host.conf" up >/dev/null || bv_fail "bvctl up in $NB"

# the table: the veth's link-local address (its EUI-64), the IPv4 and the global IPv6 address
table() {
	local r=$1 i
	for i in 0 1 2 3 4 5 6; do
		printf '%s %s\n' "$(cat "$r/sysfs/class/infiniband/cx4_0/ports/1/gids/$i")" \
			"$(cat "$r/sysfs/class/infiniband/cx4_0/ports/1/gid_attrs/types/$i")"
	done
}
expect_table() {
	local r=$1 ll=$2 ip=$3 ip6=$4 want
	want=$(printf '%s IB/RoCE v1\n%s RoCE v2\n%s IB/RoCE v1\n%s RoCE v2\n%s IB/RoCE v1\n%s RoCE v2\n%s IB/RoCE v1\n' \
		"$ll" "$ll" "$ip" "$ip" "$ip6" "$ip6" "0000:0000:0000:0000:0000:0000:0000:0000")
	[ "$(table "$r")" = "$want" ] || { table "$r"; echo "want:"; echo "$want"; bv_fail "GID table of $r"; }
}
gid6() { python3 -c 'import ipaddress,sys; e=ipaddress.ip_address(sys.argv[1]).exploded; print(e)' "$1"; }
v4gid() { printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${1//./ }; }
llA=$(ip -n $NA -6 addr show dev vga$tag scope link | awk '/inet6/ {sub("/.*", "", $2); print $2}')
llB=$(ip -n $NB -6 addr show dev vgb$tag scope link | awk '/inet6/ {sub("/.*", "", $2); print $2}')
expect_table "$RA" "$(gid6 "$llA")" "$(v4gid $IPA)" "$(gid6 $IP6A)"
expect_table "$RB" "$(gid6 "$llB")" "$(v4gid $IPB)" "$(gid6 $IP6B)"
[ "$(cat "$RA/sysfs/class/infiniband/cx4_0/ports/1/gid_attrs/ndevs/5")" = vga$tag ] ||
	bv_fail "ndev of GID 5"
echo "ok GID tables: link-local from the veth's MAC, IPv4, global IPv6, each as RoCE v1 and v2"

pair() {
	local sip=$IPA
	if [ -n "${4:-}" ]; then
		sip=$IPB
		BV_PAIR_S=B BV_PAIR_C=A bv_pair "$1" 18515 "$2" "$3 $sip" || bv_fail "$1"
	else
		BV_PAIR_S=A BV_PAIR_C=B bv_pair "$1" 18515 "$2" "$3 $sip" || bv_fail "$1"
	fi
}
for g in 0 1 2 3 4 5; do
	for p in rc uc ud srq; do
		pair "$p-g$g" "ibv_${p}_pingpong -d cx4_0 -g $g -n 100 -c" \
			"ibv_${p}_pingpong -d cx4_0 -g $g -n 100 -c"
	done
	pair "rc-g$g-rev" "ibv_rc_pingpong -d cx4_0 -g $g -n 100 -c" \
		"ibv_rc_pingpong -d cx4_0 -g $g -n 100 -c" rev
	pair "send_bw-g$g" "ib_send_bw -d cx4_0 -x $g -n 200" "ib_send_bw -d cx4_0 -x $g -n 200"
	pair "send_bw-g$g-rev" "ib_send_bw -d cx4_0 -x $g -n 200" "ib_send_bw -d cx4_0 -x $g -n 200" rev
	# the pingpongs and ib_send_bw check no data: bvtraffic on the same GID checks every byte
	BV_PAIR_S=A BV_PAIR_C=B bv_traffic "bvt-rc-g$g" 18517 "-d cx4_0 -g $g" \
		"-d cx4_0 -g $g -t rc -S -n 16 $IPA" || bv_fail "bvtraffic RC on GID $g"
	BV_PAIR_S=A BV_PAIR_C=B bv_traffic "bvt-ud-g$g" 18517 "-d cx4_0 -g $g" \
		"-d cx4_0 -g $g -t ud -n 16 $IPA" || bv_fail "bvtraffic UD on GID $g"
	echo "ok GID $g: rc/uc/ud/srq pingpongs, rc back, ib_send_bw both ways, bvtraffic RC and UD"
done

# both namespaces learnt the other's MAC (the neighbour tables the MACs came from)
ip -n $NA neigh show $IPB | grep -q "lladdr" || bv_fail "no IPv4 neighbour in $NA"
ip -n $NA neigh show $IP6B | grep -q "lladdr" || bv_fail "no IPv6 neighbour in $NA"

A "$BVCTL" down >/dev/null 2>&1
python3 "$BV_SOURCE_DIR/tests/cx4/icrc_check.py" "$RA/a.pcap" >"$CX4_OUT/icrc" ||
	{ cat "$CX4_OUT/icrc"; bv_fail "ICRC check of the capture"; }
if command -v tshark >/dev/null; then
	# every IB payload heuristic off (tests/cx4/icrc_check.py says why, and its
	# --tshark-selftest, ctest cx4_tshark_strict, proves bad headers are still reported)
	mapfile -t targs < <(python3 "$BV_SOURCE_DIR/tests/cx4/icrc_check.py" --tshark-args)
	t=$(tshark -n -r "$RA/a.pcap" "${targs[@]}" -T fields -e _ws.col.Protocol -e eth.type \
		-e _ws.malformed 2>/dev/null | sort | uniq -c)
	echo "$t" | grep -q "malformed" && { echo "$t"; bv_fail "tshark: malformed frames"; }
	for w in "RoCE	0x8915" "RRoCE	0x86dd" "RRoCE	0x0800"; do
		echo "$t" | grep -qF "$w" || { echo "$t"; bv_fail "tshark: no '$w' frames"; }
	done
	echo "ok capture: $(cat "$CX4_OUT/icrc"); tshark: $(echo $t)"
fi
echo "PASS"
