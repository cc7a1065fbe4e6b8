#!/bin/bash
# Several processes on the same two ends at once, on every hardware profile: two perftest
# pairs running at the same time (each end then serves two verbs clients), then a data-checking
# pingpong next to a bandwidth test, bvtraffic next to perftest, then a client killed while it
# moves data (perftest, then bvtraffic: the survivor's work fails without a wrong byte, ntbd
# cleans up after it and the next pair still works).
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
	bv_traffic multi7 18809 "-d ntb_0" "-d ntb_1 -n 64 -q 3 localhost" & p1=$!
	ntb_pair multi8 18810 ib_send_bw -n 5000 -s 8192 & p2=$!
	wait $p1 || bv_fail "$prof: bvtraffic next to send_bw"
	wait $p2 || bv_fail "$prof: send_bw next to bvtraffic"

	# a client that dies mid-run: its slot, QPs and keys must not leak into the next pair.
	# perftest first (it prints nothing until it ends: its output is buffered): both ends hold
	# its QP and MR, and both programs still run a second later, when the client is killed
	timeout -k 5 60 "$BVCTL" run -- ib_write_bw -p 18805 -d ntb_0 -D 30 >"$BV_OUT/k.srv" 2>&1 &
	spid=$!
	ntb_wait_port 18805 || bv_fail "$prof: no server"
	timeout -k 5 60 "$BVCTL" run -- ib_write_bw -p 18805 -d ntb_1 -D 30 localhost \
		>"$BV_OUT/k.cli" 2>&1 &
	cpid=$!
	for _ in $(seq 100); do
		st=$("$BVCTL" status 2>&1)
		[ "$(grep -c "verbs: ready.*, 1 QPs, 1 MRs" <<<"$st")" = 2 ] && break
		sleep 0.1
	done
	sleep 1
	st=$("$BVCTL" status 2>&1)
	[ "$(grep -c "verbs: ready.*, 1 QPs, 1 MRs" <<<"$st")" = 2 ] && bv_pid_alive "$spid" &&
		bv_pid_alive "$cpid" ||
		{ echo "$st" >&2; bv_fail "$prof: the pair to kill was not running"; }
	pkill -KILL -P "$cpid" -x ib_write_bw
	wait "$cpid"
	kill "$spid" 2>/dev/null
	wait "$spid"
	# then bvtraffic: the server sends, every byte checked, until its client is killed; it must
	# see its work fail (retries exceeded or flushed) and nothing wrong in what it checked
	b="$BV_BUILD_DIR/bin/bvtraffic -p 18807 -W 30"
	timeout -k 5 60 "$BVCTL" run -- $b -d ntb_0 >"$BV_OUT/bk.srv" 2>&1 &
	spid=$!
	ntb_wait_port 18807 || bv_fail "$prof: no bvtraffic server"
	timeout -k 5 60 "$BVCTL" run -- $b -d ntb_1 -x s2c -q 3 -D 30 -T 12 -r 3 localhost \
		>"$BV_OUT/bk.cli" 2>&1 &
	cpid=$!
	bv_wait_checked "$BV_OUT/bk.srv"
	m0=$(bv_checked "$BV_OUT/bk.srv")
	sleep 1.2
	m1=$(bv_checked "$BV_OUT/bk.srv")
	[ -n "$m0" ] && [ "$m1" -gt "$m0" ] ||
		{ cat "$BV_OUT/bk.srv" >&2; bv_fail "$prof: bvtraffic moved no data before the kill"; }
	pkill -KILL -P "$cpid" -x bvtraffic
	wait "$cpid"
	wait "$spid"
	rc=$?
	[ "$rc" = 3 ] && grep -Eq "RETRY_EXC_ERR|WR_FLUSH_ERR" "$BV_OUT/bk.srv" &&
		! grep -q "DATA ERROR" "$BV_OUT/bk.srv" ||
		{ cat "$BV_OUT/bk.srv" >&2; bv_fail "$prof: the survivor of a killed client: exit $rc"; }
	bv_note "$prof: client killed after $m1 messages checked; the server: $(grep -m1 -Eo "(error completion|[0-9]+ flushed).{0,60}" "$BV_OUT/bk.srv")"
	# ntbd gave back everything of the dead client (both ends: no QP, no MR left)
	for _ in $(seq 50); do
		st=$("$BVCTL" status 2>&1)
		[ "$(grep -c "verbs: ready.*, 0 QPs, 0 MRs" <<<"$st")" = 2 ] && break
		sleep 0.1
	done
	[ "$(grep -c "verbs: ready.*, 0 QPs, 0 MRs" <<<"$st")" = 2 ] ||
		{ echo "$st" >&2; bv_fail "$prof: QPs or MRs left after the clients died"; }
	ntb_pair multi5 18806 ibv_rc_pingpong -c -g "$g" -n 200 || bv_fail "$prof: after a kill"
	bv_traffic multi6 18808 "-d ntb_0" "-d ntb_1 -n 64 localhost" || bv_fail "$prof: bvtraffic after a kill"
	bv_note "$prof: concurrent clients ok"
done
echo "PASS"
