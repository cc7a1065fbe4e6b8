#!/bin/bash
# A hung peer daemon is detected by its heartbeat. ntbd of ntb_0 is stopped (SIGSTOP) while
# ib_write_bw, ibv_rc_pingpong -e and bvtraffic -e (every byte checked up to then: it must end
# in an error, not a wrong byte) run between ntb_0 (servers) and ntb_1 (clients): the cable
# and the processes stay, only the heartbeat in window memory stops. ntb_1's daemon must take
# the link down (IBV_EVENT_PORT_ERR, port DOWN) and the clients must end with an error, not
# hang; the servers too, once their own daemon runs again (SIGCONT), and the link must come
# back (IBV_EVENT_PORT_ACTIVE on both ends, a new pair runs). Then, with nothing running, an
# idle daemon does not spin (its CPU time over 3 s, with the link up and while it waits for a
# hung peer), and a second hang is noticed without any traffic.
# The time limits (NTB_HB_LIMIT, 30 s; the heartbeat declares a hang after 3 s) only turn a
# hang into a failure.
BV_TMO=${BV_TMO:-60}
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
. "$BV_SOURCE_DIR/tests/integration/ntb_lib.sh"
bv_isolate_net "$@"

LIMIT=${NTB_HB_LIMIT:-30}
profiles=${NTB_PROFILES_HB:-"intel-gen3 epf"}

port_state() {	# port_state DEV: PORT_ACTIVE, PORT_DOWN, ... (asks that end's daemon only)
	bv_run ibv_devinfo -d "$1" 2>&1 | sed -n 's/.*state:[[:space:]]*\(PORT_[A-Z]*\).*/\1/p' |
		head -1
}

# cpu_ticks PID: user + system time of PID so far, in clock ticks
cpu_ticks() {
	sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

# idle_check WHAT PID: PID must not spin: at most 10% of a CPU over 3 s (a busy loop takes
# 100%; the heartbeat and the handshake's resends are timers)
idle_check() {
	local a b hz
	hz=$(getconf CLK_TCK)
	a=$(cpu_ticks "$2")
	sleep 3
	b=$(cpu_ticks "$2")
	bv_note "$1: $((b - a)) ticks of CPU in 3 s"
	[ $((b - a)) -le $((hz * 3 / 10)) ] || bv_fail "$1: $((b - a)) ticks in 3 s: it spins"
}

# wait_exit PID LIMIT: the exit status of PID, or 124 if it is still running after LIMIT s
wait_exit() {
	local pid=$1 i
	for i in $(seq $(($2 * 10))); do
		bv_pid_alive "$pid" || { wait "$pid"; return $?; }
		sleep 0.1
	done
	return 124
}

for prof in $profiles; do
	ntb_up "$prof"
	g=$(ntb_gid ntb_0)
	timeout -k 5 90 "$BVCTL" run -- ibv_asyncwatch -d ntb_1 >"$BV_RUNDIR/events1" 2>&1 &
	w1=$!
	timeout -k 5 90 "$BVCTL" run -- ibv_asyncwatch -d ntb_0 >"$BV_RUNDIR/events0" 2>&1 &
	w0=$!
	timeout -k 5 120 "$BVCTL" run -- ib_write_bw -D 60 -p 19001 -d ntb_0 \
		>"$BV_RUNDIR/wbw.server" 2>&1 &
	s1=$!
	timeout -k 5 120 "$BVCTL" run -- ibv_rc_pingpong -e -g "$g" -n 100000000 -p 19002 \
		-d ntb_0 >"$BV_RUNDIR/pp.server" 2>&1 &
	s2=$!
	timeout -k 5 120 "$BVCTL" run -- "$BV_BUILD_DIR/bin/bvtraffic" -p 19006 -d ntb_0 -W 60 \
		>"$BV_RUNDIR/bvt.server" 2>&1 &
	s3=$!
	ntb_wait_port 19001 && ntb_wait_port 19002 && ntb_wait_port 19006 ||
		bv_fail "$prof: no servers"
	timeout -k 5 120 "$BVCTL" run -- ib_write_bw -D 60 -p 19001 -d ntb_1 localhost \
		>"$BV_RUNDIR/wbw.client" 2>&1 &
	c1=$!
	timeout -k 5 120 "$BVCTL" run -- ibv_rc_pingpong -e -g "$g" -n 100000000 -p 19002 \
		-d ntb_1 localhost >"$BV_RUNDIR/pp.client" 2>&1 &
	c2=$!
	timeout -k 5 120 "$BVCTL" run -- "$BV_BUILD_DIR/bin/bvtraffic" -p 19006 -d ntb_1 -W 60 \
		-D 60 -e localhost >"$BV_RUNDIR/bvt.client" 2>&1 &
	c3=$!
	sleep 1.5
	bv_pid_alive "$c1" && bv_pid_alive "$c2" && bv_pid_alive "$c3" ||
		bv_fail "$prof: the pairs did not run"
	grep -q "progress:" "$BV_RUNDIR/bvt.client" || bv_fail "$prof: bvtraffic moved no data"
	d0=$(cat "$BV_RUNDIR/ntb_0.pid")
	kill -STOP "$d0"
	t0=$(date +%s)

	wait_exit "$c1" "$LIMIT"
	r1=$?
	wait_exit "$c2" "$LIMIT"
	r2=$?
	wait_exit "$c3" "$LIMIT"
	r3=$?
	t1=$(date +%s)
	bv_note "$prof: clients ended after $((t1 - t0)) s: write_bw $r1, pingpong $r2, bvtraffic $r3"
	grep -q "peer daemon silent" "$BV_RUNDIR/ntb_1.log" ||
		{ kill -CONT "$d0"; bv_fail "$prof: ntb_1 did not notice the hung peer"; }
	[ "$(port_state ntb_1)" != PORT_ACTIVE ] ||
		{ kill -CONT "$d0"; bv_fail "$prof: ntb_1 still ACTIVE with a hung peer"; }
	kill -CONT "$d0"
	for r in $r1 $r2 $r3; do
		[ "$r" = 124 ] || [ "$r" = 137 ] && bv_fail "$prof: a client hung"
		[ "$r" != 0 ] || bv_fail "$prof: a client reported success"
	done
	# bvtraffic: an error (3), not a stall (4) nor a wrong byte (1)
	[ "$r3" = 3 ] || { cat "$BV_RUNDIR/bvt.client" >&2; bv_fail "$prof: bvtraffic client exit $r3"; }
	tail -n 3 "$BV_RUNDIR/wbw.client" "$BV_RUNDIR/pp.client" "$BV_RUNDIR/bvt.client"

	wait_exit "$s1" "$LIMIT"
	r1=$?
	wait_exit "$s2" "$LIMIT"
	r2=$?
	wait_exit "$s3" "$LIMIT"
	r3=$?
	bv_note "$prof: servers (their daemon resumed) ended: write_bw $r1, pingpong $r2, bvtraffic $r3"
	[ "$r3" = 3 ] || { cat "$BV_RUNDIR/bvt.server" >&2; bv_fail "$prof: bvtraffic server exit $r3"; }
	for r in $r1 $r2 $r3; do
		[ "$r" = 124 ] || [ "$r" = 137 ] && bv_fail "$prof: a server hung"
		[ "$r" != 0 ] || bv_fail "$prof: a server reported success"
	done

	# the link comes back once the peer runs again
	for _ in $(seq 150); do
		[ "$(port_state ntb_0)" = PORT_ACTIVE ] && [ "$(port_state ntb_1)" = PORT_ACTIVE ] &&
			break
		sleep 0.1
	done
	[ "$(port_state ntb_0)" = PORT_ACTIVE ] && [ "$(port_state ntb_1)" = PORT_ACTIVE ] ||
		{ "$BVCTL" status >&2; bv_fail "$prof: the link did not come back"; }
	ntb_pair hbpp 19003 ibv_rc_pingpong -c -g "$g" -n 200 || bv_fail "$prof: new pair after"
	bv_traffic hbbvt 19007 "-d ntb_0" "-d ntb_1 -n 64 localhost" || bv_fail "$prof: bvtraffic after"
	sleep 0.3
	kill "$w0" "$w1" 2>/dev/null
	wait "$w0" "$w1" 2>/dev/null
	for e in 0 1; do
		grep -q "IBV_EVENT_PORT_ERR" "$BV_RUNDIR/events$e" &&
			grep -q "IBV_EVENT_PORT_ACTIVE" "$BV_RUNDIR/events$e" ||
			{ cat "$BV_RUNDIR/events$e" >&2; bv_fail "$prof: ntb_$e port events"; }
	done
	"$BVCTL" status | grep "hung peers" >&2
	ntb_check_counters "$prof"

	# idle daemons do not spin: with the link up, and waiting for a hung peer
	d1=$(cat "$BV_RUNDIR/ntb_1.pid")
	idle_check "$prof: idle ntbd, link up" "$d1"
	n=$(grep -c "peer daemon silent" "$BV_RUNDIR/ntb_1.log")
	kill -STOP "$d0"
	for _ in $(seq $((LIMIT * 10))); do
		[ "$(grep -c "peer daemon silent" "$BV_RUNDIR/ntb_1.log")" -gt "$n" ] && break
		sleep 0.1
	done
	[ "$(grep -c "peer daemon silent" "$BV_RUNDIR/ntb_1.log")" -gt "$n" ] ||
		{ kill -CONT "$d0"; bv_fail "$prof: an idle hung peer was not noticed"; }
	sleep 1.5	# past the first second of the handshake: its resends slow down
	( idle_check "$prof: ntbd waiting for a hung peer" "$d1" ) ||
		{ kill -CONT "$d0"; bv_fail "$prof: spins while the peer hangs"; }
	kill -CONT "$d0"
	for _ in $(seq 150); do
		[ "$(port_state ntb_0)" = PORT_ACTIVE ] && [ "$(port_state ntb_1)" = PORT_ACTIVE ] &&
			break
		sleep 0.1
	done
	ntb_pair hbpp2 19004 ibv_rc_pingpong -c -g "$g" -n 200 ||
		bv_fail "$prof: new pair after the second hang"
	bv_note "$prof: hung peer detected, link back"
done

# A peer whose heartbeat is off (heartbeat_ms = 0) never beats: it must not be taken for hung
# (here by ntb_1 with 5 periods of 100 ms allowed to pass, watched for 2 s).
cfg="$BV_RUNDIR/ntb-hboff.conf"
cat >"$cfg" <<EOC
[device ntb_0]
kind = ntb
link = ntbt
side = 0
profile = intel-gen3
ip = 127.0.2.1
heartbeat_ms = 0

[device ntb_1]
kind = ntb
link = ntbt
side = 1
profile = intel-gen3
ip = 127.0.2.2
heartbeat_misses = 5
EOC
"$BVCTL" down >/dev/null 2>&1
bv_up "$cfg"
for _ in $(seq 100); do
	[ "$(port_state ntb_0)" = PORT_ACTIVE ] && [ "$(port_state ntb_1)" = PORT_ACTIVE ] && break
	sleep 0.1
done
sleep 2
grep -q "peer daemon silent" "$BV_RUNDIR/ntb_1.log" &&
	{ "$BVCTL" status >&2; bv_fail "a peer without heartbeat was declared hung"; }
[ "$(port_state ntb_1)" = PORT_ACTIVE ] || bv_fail "heartbeat off: the link did not stay up"
g=$(ntb_gid ntb_0)
ntb_pair hboff 19005 ibv_rc_pingpong -c -g "$g" -n 100 || bv_fail "heartbeat off: a pair"
bv_note "a peer with its heartbeat off is not taken for hung"
echo "PASS"
