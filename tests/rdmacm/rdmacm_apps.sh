#!/bin/bash
# The unmodified rdmacm-utils and perftest programs of Debian 12 through bvctl run, on the
# daemons' CM (rping has its own test, rdmacm_rping; the rsocket programs come with rsockets):
#   ucmatose -c 100            100 RC connections, messages both ways, each direction on cx4
#                              and on ntb; with -m (rdma_migrate_id), -t/-a (TOS and
#                              ACK_TIMEOUT options), -P ib (AF_IB, RDMA_PS_IB) on cx4
#   udaddy -c 10               UD through SIDR, each direction on cx4 and ntb
#   rdma_server/rdma_client    rdma_getaddrinfo + rdma_create_ep + synchronous ids; the client
#                              names no source, so it connects to a port from that very port
#                              (cx4 loopback; not on ntb: loopback on one ntb end is refused
#                              by the ntb provider today)
#   cmtime -c 100              each direction on cx4 and ntb (the rates are bench/'s business)
#   mckey                      ends with a clear error: multicast is not supported
#   ib_write_bw -R, ib_send_bw -R -q 8, ib_read_lat -R, ib_send_lat -R   on cx4 (perftest's
#                              data connections name no source either: ntb loopback again)
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

for ip in 127.0.1.1 127.0.1.2; do
	port=$((port + 1))
	rdmacm_pair "rdma_server-$ip" $port "rdma_server -s $ip -p $port" \
		"rdma_client -s $ip -p $port"
	rdmacm_expect "$RDMACM_OUT/rdma_server-$ip.cli" "^rdma_client: end 0" "rdma_client $ip"
	ok "rdma_server/rdma_client on $ip"
done

# mckey: a clear error, at once
out="$RDMACM_OUT/mckey"
bv_run mckey -m 239.1.1.1 -b 127.0.1.1 >"$out" 2>&1
rc=$?
[ $rc != 0 ] && [ $rc != 124 ] || { bv_show "$out"; bv_fail "mckey: exit $rc"; }
rdmacm_expect "$out" "failure joining: Operation not supported" "mckey"
ok "mckey: $(grep "failure joining" "$out")"

# perftest -R on cx4, each direction for the bandwidth tests
port=18600
while read -r name srv cli; do
	case $name in cx4*) ;; *) continue ;; esac
	sdev=cx4_0 cdev=cx4_1
	[ "$srv" = 127.0.1.2 ] && sdev=cx4_1 cdev=cx4_0
	for t in "ib_write_bw -D 1" "ib_send_bw -q 8 -D 1" "ib_read_lat -n 1000" \
		 "ib_send_lat -n 1000"; do
		port=$((port + 1))
		set -- $t
		tn="$1-$name"
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
