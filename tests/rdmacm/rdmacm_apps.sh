#!/bin/bash
# The unmodified rdmacm-utils and perftest programs of Debian 12 through bvctl run, on the
# daemons' CM (rping has its own test, rdmacm_rping; the rsocket programs come with rsockets):
#   ucmatose -c 100            100 RC connections, messages both ways, each direction on cx4
#                              and on ntb; with -m (rdma_migrate_id), -t/-a (TOS and
#                              ACK_TIMEOUT options), -P ib (AF_IB, RDMA_PS_IB) on cx4
#   udaddy -c 10               UD through SIDR, each direction on cx4 and ntb
#   rdma_server/rdma_client    rdma_getaddrinfo + rdma_create_ep + synchronous ids; the client
#   rdma_xserver/rdma_xclient  names no source, so it connects to a port from that very port
#                              (loopback on one cx4 port, on one ntb end); rdma_x* over RC
#                              on every device,
#                              and rdma_xclient -c x (XRC) ending with a clear error: the
#                              devices have no XRC
#   cmtime -c 100              each direction on cx4 and ntb (the rates are bench/'s business)
#   mckey                      ends with a clear error: multicast is not supported
#   ib_write_bw -R, ib_send_bw -R -q 8, ib_read_lat -R, ib_send_lat -R   each direction on
#                              cx4 and on ntb
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"
. "$BV_SOURCE_DIR/tests/rdmacm/rdmacm_lib.sh"
bv_up

ok() {
	echo "ok $1"
}

# directions: NAME SERVER-IP CLIENT-IP
dirs="cx4_1-to-cx4_0 127.0.1.1 127.0.1.2
cx4_0-to-cx4_1 127.0.1.2 127.0.1.1
ntb_1-to-ntb_0 127.0.2.1 127.0.2.2
ntb_0-to-ntb_1 127.0.2.2 127.0.2.1"

port=7500
while read -r name srv cli; do
	port=$((port + 1))
	rdmacm_pair "ucmatose-$name" $port "ucmatose -b $srv -p $port -c 100" \
		"ucmatose -s $srv -b $cli -p $port -c 100"
	rdmacm_expect "$RDMACM_OUT/ucmatose-$name.cli" "^data transfers complete" "ucmatose $name"
	ok "ucmatose -c 100 $name"
	# udaddy has no port option: 7174 (its -p is the port space)
	rdmacm_pair "udaddy-$name" 7174 "udaddy -b $srv -c 10" \
		"udaddy -s $srv -b $cli -c 10" 0x0111
	rdmacm_expect "$RDMACM_OUT/udaddy-$name.cli" "^data transfers complete" "udaddy $name"
	ok "udaddy -c 10 $name"
	port=$((port + 1))
	RDMACM_SERVER_STAYS=1 rdmacm_pair "cmtime-$name" $port "cmtime -b $srv -p $port" \
		"cmtime -s $srv -b $cli -p $port -c 100"
	rdmacm_expect "$RDMACM_OUT/cmtime-$name.cli" "^connect +:" "cmtime $name"
	ok "cmtime -c 100 $name: $(grep -E "^connect +:" "$RDMACM_OUT/cmtime-$name.cli")"
done <<<"$dirs"

# ucmatose's options on cx4: migrate, TOS + ACK timeout, AF_IB
port=7600
for opts in "-m" "-t 32 -a 14" "-P ib"; do
	port=$((port + 1))
	ps=0x0106
	[ "$opts" = "-P ib" ] && ps=0x013f
	rdmacm_pair "ucmatose$opts" $port "ucmatose -b 127.0.1.1 -p $port $opts" \
		"ucmatose -s 127.0.1.1 -b 127.0.1.2 -p $port $opts" $ps
	rdmacm_expect "$RDMACM_OUT/ucmatose$opts.cli" "^data transfers complete" "ucmatose $opts"
	ok "ucmatose $opts"
done

for ip in 127.0.1.1 127.0.1.2 127.0.2.1 127.0.2.2; do
	port=$((port + 1))
	rdmacm_pair "rdma_server-$ip" $port "rdma_server -s $ip -p $port" \
		"rdma_client -s $ip -p $port"
	rdmacm_expect "$RDMACM_OUT/rdma_server-$ip.cli" "^rdma_client: end 0" "rdma_client $ip"
	ok "rdma_server/rdma_client on $ip"
	# rdma_xserver listens on every device (no address option); rdma_xclient posts 16 inline
	# bytes on a QP asked for none (mlx5 sizes an RC WQE for a UMR, so 60 bytes fit; rxe
	# takes as many as its SGEs hold)
	port=$((port + 1))
	rdmacm_pair "rdma_xserver-$ip" $port "rdma_xserver -p $port" \
		"rdma_xclient -s $ip -p $port"
	rdmacm_expect "$RDMACM_OUT/rdma_xserver-$ip.cli" "^rdma_xclient: end 0" "rdma_xclient $ip"
	rdmacm_expect "$RDMACM_OUT/rdma_xserver-$ip.srv" "^rdma_xserver: end 0" "rdma_xserver $ip"
	ok "rdma_xserver/rdma_xclient (RC) on $ip"
done

# XRC: the devices have no XRC domains; rdma_xclient -c x (its endpoint makes an XRC_SEND QP
# at once) fails at once, clearly
out="$RDMACM_OUT/rdma_xclient-xrc"
bv_run rdma_xclient -s 127.0.1.1 -p 7699 -c x >"$out" 2>&1
rc=$?
[ $rc != 0 ] && [ $rc != 124 ] || { bv_show "$out"; bv_fail "rdma_xclient -c x: exit $rc"; }
rdmacm_expect "$out" "^rdma_create_ep: " "rdma_xclient -c x"
ok "rdma_xclient -c x: $(grep -m1 "^rdma_create_ep" "$out")"

# mckey: a clear error, at once
out="$RDMACM_OUT/mckey"
bv_run mckey -m 239.1.1.1 -b 127.0.1.1 >"$out" 2>&1
rc=$?
[ $rc != 0 ] && [ $rc != 124 ] || { bv_show "$out"; bv_fail "mckey: exit $rc"; }
rdmacm_expect "$out" "failure joining: Operation not supported" "mckey"
ok "mckey: $(grep "failure joining" "$out")"

# perftest -R, each direction on cx4 and on ntb
port=18600
while read -r name srv cli; do
	sdev=${name#*-to-} cdev=${name%-to-*}
	for t in "ib_write_bw -D 1" "ib_send_bw -q 8 -D 1" "ib_read_lat -n 1000" \
		 "ib_send_lat -n 1000"; do
		port=$((port + 1))
		set -- $t
		tn="$1-$name"
		# perftest's client connects its data QPs right after the handshake while the
		# server listens anew: each run must pass at once (a REQ that comes before the
		# listen waits for it in the daemon: docs/rdmacm.md "REQs before the listen")
		rdmacm_pair "$tn" $port "$t -R -d $sdev -p $port" \
			"$t -R -d $cdev -p $port --source_ip $cli $srv"
		rdmacm_expect "$RDMACM_OUT/$tn.cli" "^ (65536|2) +[0-9]+" "$tn"
		ok "$t -R $name: $(grep -E "^ (65536|2) +[0-9]+" "$RDMACM_OUT/$tn.cli" | tr -s ' ')"
	done
done <<<"$dirs"

for dev in cx4_0 cx4_1 ntb_0 ntb_1; do
	m=$(rdmacm_cm_stat $dev malformed)
	[ "$m" = 0 ] || { "$BVCTL" status; bv_fail "$dev: $m malformed MADs"; }
done
echo "PASS"
