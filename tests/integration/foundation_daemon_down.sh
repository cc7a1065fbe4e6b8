#!/bin/bash
# A daemon that is gone or stopped.
# 1. With a daemon killed, opening its device fails at once with a message naming the daemon
#    and 'bvctl up' (no crash, no hang); the other devices still open; 'bvctl up' restarts it.
# 2. A daemon killed under running clients: they get IBV_EVENT_DEVICE_FATAL at once (as from
#    a device that goes away), their peer's work fails (retries exceeded) without a wrong byte,
#    nothing hangs, and the restarted daemon serves a new pair.
# 3. A daemon stopped (SIGSTOP) for less than its peer's retry budget costs retransmissions
#    only; stopped for longer, the peer's requester ends in IBV_WC_RETRY_EXC_ERR, nobody hangs
#    and nothing is wrong in what was checked.
# (The ntb daemons: ntb_peerdeath, ntb_heartbeat, ntb_link_bringup.)
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"
bv_up

pid=$(cat "$BV_RUNDIR/cx4_1.pid")
kill -KILL "$pid"
while bv_pid_alive "$pid"; do sleep 0.05; done

start=$(date +%s)
out=$(BV_TMO=20 bv_run ibv_devinfo -d cx4_1 2>&1)
rc=$?
[ $rc != 0 ] || { echo "$out"; bv_fail "ibv_devinfo on a device without daemon succeeded"; }
[ $rc -lt 124 ] || { echo "$out"; bv_fail "ibv_devinfo crashed or hung (rc $rc)"; }
[ $(($(date +%s) - start)) -lt 10 ] || bv_fail "took too long to fail"
echo "$out" | grep -q "cx4d" || { echo "$out"; bv_fail "message does not name cx4d"; }
echo "$out" | grep -q "bvctl up" || { echo "$out"; bv_fail "message does not say 'bvctl up'"; }

bv_expect_output "hca_id:[[:space:]]+cx4_0" bv_run ibv_devinfo -d cx4_0
out=$("$BVCTL" status 2>&1) && bv_fail "status should report the dead daemon"
echo "$out" | grep -q "cx4_1.*not running" || { echo "$out"; bv_fail "status: $out"; }

"$BVCTL" up >/dev/null || bv_fail "bvctl up after a daemon died"
bv_expect_output "hca_id:[[:space:]]+cx4_1" bv_run ibv_devinfo -d cx4_1

# bvtraffic between cx4_0 (server) and cx4_1 (client): the client's daemon is hit (kill or
# stop) once data moves. Outputs in $BV_OUT/NAME.{srv,cli}; exit codes in src, crc; the
# seconds from the hit to each end's exit in ssec, csec.
B="$BV_BUILD_DIR/bin/bvtraffic -p 18519 -W 30"
hit() {	# hit NAME SIGNAL HOLD_MS "CLIENT ARGS": HOLD_MS: SIGCONT after that long (SIGSTOP)
	local name=$1 sig=$2 hold=$3 sp cp t0
	timeout -k 5 90 "$BVCTL" run -- $B -d cx4_0 >"$BV_OUT/$name.srv" 2>&1 &
	sp=$!
	bv_wait_listen 18519 || bv_fail "$name: no server"
	timeout -k 5 90 "$BVCTL" run -- $B -d cx4_1 -D 30 $4 127.0.0.1 >"$BV_OUT/$name.cli" 2>&1 &
	cp=$!
	bv_wait_checked "$BV_OUT/$name.srv" || bv_fail "$name: no data moved"
	pid=$(cat "$BV_RUNDIR/cx4_1.pid")
	t0=$(date +%s%N)
	kill -"$sig" "$pid"
	if [ "$hold" -gt 0 ]; then
		sleep "$((hold / 1000)).$(printf %03d $((hold % 1000)))"
		kill -CONT "$pid"
	fi
	wait "$cp"
	crc=$?
	csec=$((($(date +%s%N) - t0) / 1000000))
	wait "$sp"
	src=$?
	ssec=$((($(date +%s%N) - t0) / 1000000))
	bv_note "$name: client exit $crc after $csec ms, server exit $src after $ssec ms"
	grep -q "DATA ERROR" "$BV_OUT/$name.srv" "$BV_OUT/$name.cli" &&
		{ bv_pair_show "$name" "" "" ""; bv_fail "$name: a data error"; }
	return 0
}

# 2. killed under its clients
hit killed KILL 0 "-x c2s"
[ "$crc" = 3 ] && grep -q "async event local catastrophic error" "$BV_OUT/killed.cli" ||
	{ bv_pair_show killed "" "" ""; bv_fail "killed: the client did not get IBV_EVENT_DEVICE_FATAL"; }
[ "$csec" -lt 5000 ] || bv_fail "killed: the client took $csec ms to notice"
[ "$src" = 3 ] || { bv_pair_show killed "" "" ""; bv_fail "killed: the server exited $src"; }
"$BVCTL" up >/dev/null || bv_fail "bvctl up after the daemon was killed under clients"
bv_pair restarted 18519 "$B -d cx4_0" "$B -d cx4_1 -n 64 127.0.0.1" || bv_fail "restarted"
grep -q "^bvtraffic: PASS" "$BV_OUT/restarted.cli" || bv_fail "restarted: no PASS"

# 3. stopped: ACK timeout 4.096 us << 16 = 268 ms, 3 retries: a 1072 ms budget for cx4_0's
#    requester, whose responder (cx4_1's device) stops answering
hit stop-short STOP 400 "-x s2c -q 2 -T 16 -r 3 -D 4"
[ "$crc" = 0 ] && [ "$src" = 0 ] ||
	{ bv_pair_show stop-short "" "" ""; bv_fail "stop-short: a 400 ms stop was not survived"; }
hit stop-long STOP 3000 "-x s2c -q 2 -T 16 -r 3"
grep -q "error completion RETRY_EXC_ERR" "$BV_OUT/stop-long.srv" && [ "$src" = 3 ] ||
	{ bv_pair_show stop-long "" "" ""; bv_fail "stop-long: the server did not end in RETRY_EXC_ERR"; }
[ "$crc" = 3 ] || { bv_pair_show stop-long "" "" ""; bv_fail "stop-long: the client exited $crc"; }
bv_note "stop-long: $(grep -o "error completion RETRY_EXC_ERR.*ms after the completion before it" "$BV_OUT/stop-long.srv")"
bv_pair after-stop 18519 "$B -d cx4_0" "$B -d cx4_1 -n 64 127.0.0.1" || bv_fail "after-stop"
echo "PASS"
