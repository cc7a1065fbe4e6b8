#!/bin/bash
# rdmacm-utils' rping, unmodified, through bvctl run: connections made by the daemons' CM
# over IB CM MADs (cx4: UD on the GSI QP; ntb: the link's control channel), data verified
# (-V) over 100 ping round trips, then DISCONNECTED (on the server: the client exits once it
# sent its DREQ). Between the two cx4 ports both ways, to a wildcard listen, to a device's own address (loopback on one device), to
# 127.0.0.1 (the first device); between the two ends of the ntb link both ways.
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"
. "$BV_SOURCE_DIR/tests/rdmacm/rdmacm_lib.sh"
bv_up
n=100
port=7174
run() {
	local name=$1 srv=$2 cli=$3
	port=$((port + 1))
	rdmacm_pair "$name" $port "rping -s -a $srv -p $port -C $n -V" \
		"rping -c -a $cli -p $port -C $n -V -v"
	[ "$(rdmacm_count "$RDMACM_OUT/$name.cli" "^ping data: rdma-ping-")" = $n ] ||
		{ bv_show "$RDMACM_OUT/$name.cli"; bv_fail "$name: not $n pings"; }
	# the client disconnects and exits (its own DISCONNECTED may come after): the server
	# must have had its DISCONNECTED from the client's DREQ
	rdmacm_expect "$RDMACM_OUT/$name.srv" "server DISCONNECT EVENT" "$name"
	echo "ok $name"
}
run cx4_1-to-cx4_0 127.0.1.1 "127.0.1.1 -I 127.0.1.2"
run cx4_0-to-cx4_1 127.0.1.2 "127.0.1.2 -I 127.0.1.1"
run wildcard-listen 0.0.0.0 "127.0.1.1 -I 127.0.1.2"
run own-address 127.0.1.1 "127.0.1.1"
run loopback-127.0.0.1 0.0.0.0 "127.0.0.1"
run ntb_1-to-ntb_0 127.0.2.1 "127.0.2.1 -I 127.0.2.2"
run ntb_0-to-ntb_1 127.0.2.2 "127.0.2.2 -I 127.0.2.1"
run ntb-wildcard-listen 0.0.0.0 "127.0.2.1 -I 127.0.2.2"
# every MAD was a well-formed one: nothing dropped
for dev in cx4_0 cx4_1 ntb_0 ntb_1; do
	m=$(rdmacm_cm_stat $dev malformed)
	[ "$m" = 0 ] || { "$BVCTL" status; bv_fail "$dev: $m malformed MADs"; }
done
echo "PASS"
