#!/bin/bash
# Several processes on the same two ends at once, on every hardware profile: two perftest
# pairs running at the same time (each end then serves two verbs clients), then a data-checking
# pingpong next to a bandwidth test, then a client killed in the middle (ntbd cleans up after
# it and the next pair still works).
BV_TMO=${BV_TMO:-240}
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
. "$BV_SOURCE_DIR/tests/integration/ntb_lib.sh"
bv_isolate_net "$@"

for prof in $NTB_PROFILES; do
	ntb_up "$prof"
	g=$(ntb_gid ntb_0)
	ntb_pair multi1 18801 ib_write_bw -n 20000 & p1=$!
	ntb_pair multi2 18802 ib_send_bw -n 5000 -s 8192 & p2=$!
	wait $p1 || bv_fail "$prof: first pair"
	wait $p2 || bv_fail "$prof: second pair"
	ntb_pair multi3 18803 ibv_rc_pingpong -c -g "$g" -n 2000 & p1=$!
	ntb_pair multi4 18804 ib_read_bw -n 500 -q 2 & p2=$!
	wait $p1 || bv_fail "$prof: pingpong next to read_bw"
	wait $p2 || bv_fail "$prof: read_bw next to pingpong"

	# a client that dies mid-run: its slot, QPs and keys must not leak into the next pair
	timeout -s KILL 4 "$BVCTL" run -- ib_write_bw -p 18805 -d ntb_0 -D 30 >/dev/null 2>&1 &
	spid=$!
	ntb_wait_port 18805 || bv_fail "$prof: no server"
	timeout -s KILL 3 "$BVCTL" run -- ib_write_bw -p 18805 -d ntb_1 -D 30 localhost \
		>/dev/null 2>&1 &
	cpid=$!
	wait "$cpid" "$spid" 2>/dev/null
	sleep 0.5
	ntb_pair multi5 18806 ibv_rc_pingpong -c -g "$g" -n 200 || bv_fail "$prof: after a kill"
	bv_note "$prof: concurrent clients ok"
done
echo "PASS"
