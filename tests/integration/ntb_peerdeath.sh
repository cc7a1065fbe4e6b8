#!/bin/bash
# The peer dies mid-run: every verb gives a clear error or an error completion, nothing hangs.
#
# 1. The peer application is killed (SIGKILL): ib_write_bw, ib_send_bw (polling and -e,
#    blocked in ibv_get_cq_event), ib_read_bw and ibv_rc_pingpong run between ntb_0 (server)
#    and ntb_1 (client) and one of the two programs dies. The survivor must end with an error
#    (its QP goes to ERROR once the peer's ntbd says its client left: error completions).
# 2. The peer daemon is killed (SIGKILL) under the same programs: both ends must end with an
#    error (the orphaned one too: its link session is over).
#    And under bvtraffic: the dead daemon's own client gets IBV_EVENT_DEVICE_FATAL, nobody finds
#    a wrong byte, and with the daemon restarted the link and a new pair come back.
# 3. ntb_verbs_test linkdown, with either ntbd killed, on the PIO and the DMA path: both ends
#    get error completions, new QPs are refused, and the target memory does not change once
#    the link is down.
# "Ends" means within LIMIT seconds (a generous bound that turns a hang into a failure); a
# program that reports success did not notice that its peer went away.
BV_TMO=${BV_TMO:-60}
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
. "$BV_SOURCE_DIR/tests/integration/ntb_lib.sh"
bv_isolate_net "$@"

prof=${NTB_PROFILE:-intel-gen3}
LIMIT=${NTB_DEATH_LIMIT:-40}

# check_exit NAME WHO RC: RC must be an error, not a timeout (a hang) and not success.
check_exit() {
	[ "$3" = 124 ] || [ "$3" = 137 ] && bv_fail "$1: the $2 hung"
	[ "$3" != 0 ] || bv_fail "$1: the $2 reported success"
	return 0
}

# run_kill NAME PORT VICTIM CMD...: the pair runs; after 1.5 s VICTIM dies by SIGKILL:
# ntbd0 / ntbd1 (a daemon: both programs must fail) or server / client (a program: the other
# one must fail).
run_kill() {
	local name=$1 port=$2 victim=$3 spid cpid src crc vpid
	shift 3
	timeout -k 5 "$LIMIT" "$BVCTL" run -- "$@" -p "$port" -d ntb_0 \
		>"$BV_RUNDIR/$name.server" 2>&1 &
	spid=$!
	ntb_wait_port "$port" || { cat "$BV_RUNDIR/$name.server" >&2; bv_fail "$name: no server"; }
	timeout -k 5 "$LIMIT" "$BVCTL" run -- "$@" -p "$port" -d ntb_1 localhost \
		>"$BV_RUNDIR/$name.client" 2>&1 &
	cpid=$!
	sleep 1.5
	bv_pid_alive "$cpid" && bv_pid_alive "$spid" ||
		{ tail -n 20 "$BV_RUNDIR/$name.server" "$BV_RUNDIR/$name.client" >&2
		  bv_fail "$name: the pair did not run"; }
	case $victim in
	ntbd*) vpid=$(cat "$BV_RUNDIR/ntb_${victim#ntbd}.pid") ;;
	server) vpid=$(pgrep -P "$spid") ;;	# bvctl run execs the program under timeout
	client) vpid=$(pgrep -P "$cpid") ;;
	esac
	[ -n "$vpid" ] || bv_fail "$name: no process to kill"
	kill -KILL "$vpid"
	wait "$cpid"
	crc=$?
	wait "$spid"
	src=$?
	bv_note "$name: $victim killed; server exit $src, client exit $crc; IOMMU faults so far $(ntb_iommu_faults)"
	if [ "${BV_VERBOSE:-0}" = 1 ]; then
		tail -n 4 "$BV_RUNDIR/$name.server" "$BV_RUNDIR/$name.client" >&2
	fi
	case $victim in
	server) check_exit "$name" client "$crc" ;;
	client) check_exit "$name" server "$src" ;;
	*)
		check_exit "$name" client "$crc"
		check_exit "$name" server "$src"
		;;
	esac
}

g=3	# the RoCE v2 IPv4 GID (ntb_gid)

# 1. a program dies; the daemons live on (one link for all of these)
ntb_up "$prof"
for victim in server client; do
	run_kill "wbw-$victim" 18901 $victim ib_write_bw -D 8
	run_kill "sbw-$victim" 18902 $victim ib_send_bw -n 5000000
	run_kill "esbw-$victim" 18903 $victim ib_send_bw -e -n 5000000
	run_kill "rbw-$victim" 18904 $victim ib_read_bw -n 5000000
	run_kill "pp-$victim" 18905 $victim ibv_rc_pingpong -g "$g" -n 100000000
done
# ... and the daemons still serve new pairs. The kills may leave IOMMU faults behind: the
# survivor's writes in flight when its peer's memory was unmapped are dropped by the IOMMU, as
# they must be (docs/ntb-verbs.md); a new pair must not add any.
faults=$(ntb_iommu_faults)
ntb_pair after 18906 ibv_rc_pingpong -g "$g" -n 200 || bv_fail "a new pair after the kills"
ntb_check_counters "$prof" reads
[ "$(ntb_iommu_faults)" = "$faults" ] || bv_fail "IOMMU faults in a new pair after the kills"

# 2. a daemon dies
for victim in 0 1; do
	for t in "wbw 18911 ib_write_bw -D 8" "sbw 18912 ib_send_bw -e -n 5000000" \
		 "rbw 18913 ib_read_bw -n 5000000" "pp 18914 ibv_rc_pingpong -g $g -n 100000000"; do
		set -- $t
		ntb_up "$prof"
		name=$1
		shift
		run_kill "$name-ntbd$victim" "$1" "ntbd$victim" "${@:2}"
	done
done

# 2b. the link goes down under bvtraffic (either daemon killed) and comes back (the daemon
#     restarted): the dead daemon's client gets IBV_EVENT_DEVICE_FATAL, the other end's work
#     fails; neither hangs nor finds a wrong byte in what it checked; once the link is back a new
#     pair moves every byte right
b="$BV_BUILD_DIR/bin/bvtraffic -p 18915 -W 30"
for victim in 0 1; do
	ntb_up "$prof"
	name=bvtraffic-ntbd$victim
	timeout -k 5 "$LIMIT" "$BVCTL" run -- $b -d ntb_0 >"$BV_RUNDIR/$name.server" 2>&1 &
	spid=$!
	ntb_wait_port 18915 || bv_fail "$name: no server"
	timeout -k 5 "$LIMIT" "$BVCTL" run -- $b -d ntb_1 -D 30 -q 2 localhost \
		>"$BV_RUNDIR/$name.client" 2>&1 &
	cpid=$!
	bv_wait_checked "$BV_RUNDIR/$name.server" || bv_fail "$name: no data moved"
	kill -KILL "$(cat "$BV_RUNDIR/ntb_$victim.pid")"
	wait "$cpid"
	crc=$?
	wait "$spid"
	src=$?
	bv_note "$name: server exit $src, client exit $crc"
	check_exit "$name" client "$crc"
	check_exit "$name" server "$src"
	own=$([ $victim = 0 ] && echo server || echo client)
	grep -q "async event local catastrophic error" "$BV_RUNDIR/$name.$own" ||
		{ cat "$BV_RUNDIR/$name.$own" >&2; bv_fail "$name: the $own did not get IBV_EVENT_DEVICE_FATAL"; }
	grep -q "DATA ERROR" "$BV_RUNDIR/$name.server" "$BV_RUNDIR/$name.client" &&
		bv_fail "$name: a data error"
	# back: the daemon restarted, both ports ACTIVE, a new pair
	"$BVCTL" --config "$BV_RUNDIR/ntb-$prof.conf" up >/dev/null || bv_fail "$name: restart"
	for _ in $(seq 100); do
		bv_run ibv_devinfo -d ntb_0 2>/dev/null | grep -q PORT_ACTIVE &&
			bv_run ibv_devinfo -d ntb_1 2>/dev/null | grep -q PORT_ACTIVE && break
		sleep 0.1
	done
	bv_traffic "$name-back" 18916 "-d ntb_0" "-d ntb_1 -n 64 localhost" ||
		bv_fail "$name: no traffic once the link was back"
done

# 3. the target's memory after the link is gone
for victim in 0 1; do
	for pio in 1 0; do
		ntb_up "$prof"
		out=$(NTB_PIO=$pio NTB_KILL_PID=$(cat "$BV_RUNDIR/ntb_$victim.pid") \
			bv_run "$BV_BUILD_DIR/bin/ntb_verbs_test" -v linkdown 2>&1) ||
			{ echo "$out" >&2; bv_fail "linkdown, ntbd of ntb_$victim killed, PIO $pio"; }
		grep -q "^ok   linkdown" <<<"$out" ||
			{ echo "$out" >&2; bv_fail "linkdown did not run"; }
		bv_note "linkdown, ntbd of ntb_$victim killed, PIO $pio: $(echo "$out" | grep -E "writes" | tr '\n' ' ')"
	done
done
echo "PASS"
