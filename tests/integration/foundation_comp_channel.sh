#!/bin/bash
# A completion channel whose device's daemon dies, on both kinds (issue 13, item 4). When a
# device goes away under the kernel, ib_uverbs_free_hw_resources closes the event queue of every
# completion channel: a program asleep in ibv_get_cq_event wakes and gets -1, errno EIO, and
# poll(2) on the channel's fd returns (ib_uverbs_event_read, ib_uverbs_event_poll).
# 1. test_cq_event_wait: a CQ armed on a channel with nothing that could complete, asleep in
#    ibv_get_cq_event (and, with -p, in poll first); its daemon is killed: it must wake within
#    5 s with EIO and find IBV_EVENT_DEVICE_FATAL on the async fd. Without the wake-up it
#    sleeps until its timeout (exit 124).
# 2. ibv_rc_pingpong -e (it sleeps in ibv_get_cq_event and reads no async events), the
#    client's daemon killed mid-run: the client must fail at once in ibv_get_cq_event, not hang
#    and not succeed; on ntb the server too (the link session is over: error completions).
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"
bv_up
W="$BV_BUILD_DIR/bin/test_cq_event_wait"
LIMIT=30

# wait_for FILE PATTERN: until FILE has a line matching PATTERN (10 s)
wait_for() {
	local _
	for _ in $(seq 100); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# kill_daemon DEV: SIGKILL to DEV's daemon; sets t0 (ns)
kill_daemon() {
	t0=$(date +%s%N)
	kill -KILL "$(cat "$BV_RUNDIR/$1.pid")"
}

since_ms() {
	echo $((($(date +%s%N) - t0) / 1000000))
}

# 1. the sleeper alone
for dev in cx4_1 ntb_1; do
	for mode in read poll; do
		name=wait-$dev-$mode
		opt=$([ $mode = poll ] && echo -p)
		# shellcheck disable=SC2086
		timeout -k 5 "$LIMIT" "$BVCTL" run -- "$W" "$dev" $opt >"$BV_OUT/$name" 2>&1 &
		pid=$!
		wait_for "$BV_OUT/$name" '^waiting' || { cat "$BV_OUT/$name"; bv_fail "$name: no wait"; }
		sleep 0.5
		bv_pid_alive "$pid" || { cat "$BV_OUT/$name"; bv_fail "$name: did not sleep"; }
		kill_daemon "$dev"
		wait "$pid"
		rc=$?
		ms=$(since_ms)
		[ "$rc" = 0 ] || { cat "$BV_OUT/$name"; bv_fail "$name: exit $rc (124: it slept on)"; }
		[ "$ms" -lt 5000 ] || { cat "$BV_OUT/$name"; bv_fail "$name: woken after $ms ms"; }
		bv_note "$name: woken $ms ms after the kill; $(grep -E '^(poll|ibv_get|async)' \
			"$BV_OUT/$name" | tr '\n' ';')"
		"$BVCTL" up >/dev/null || bv_fail "$name: bvctl up after the kill"
	done
done

# 2. an unmodified program asleep in ibv_get_cq_event, its daemon killed under it
for pair in "cx4_0 cx4_1" "ntb_0 ntb_1"; do
	set -- $pair
	name=pingpong-e-$2
	kind=${2%%_*}
	# stdbuf: the addresses it prints once connected reach the file at once
	pp="stdbuf -oL ibv_rc_pingpong -e -g 3 -n 100000000 -p 18531"
	# shellcheck disable=SC2086
	timeout -k 5 "$LIMIT" "$BVCTL" run -- $pp -d "$1" >"$BV_OUT/$name.srv" 2>&1 &
	sp=$!
	bv_wait_listen 18531 || { cat "$BV_OUT/$name.srv"; bv_fail "$name: no server"; }
	# shellcheck disable=SC2086
	timeout -k 5 "$LIMIT" "$BVCTL" run -- $pp -d "$2" 127.0.0.1 >"$BV_OUT/$name.cli" 2>&1 &
	cp=$!
	wait_for "$BV_OUT/$name.cli" "remote address" && wait_for "$BV_OUT/$name.srv" "remote address" ||
		{ bv_pair_show "$name" "$pp -d $1" "$pp -d $2" ""; bv_fail "$name: never connected"; }
	sleep 0.5
	bv_pid_alive "$cp" && bv_pid_alive "$sp" ||
		{ bv_pair_show "$name" "$pp -d $1" "$pp -d $2" ""; bv_fail "$name: the pair did not run"; }
	kill_daemon "$2"
	wait "$cp"
	crc=$?
	cms=$(since_ms)
	case $kind in
	cx4)	# the server may be waiting for a receive only: on RoCE a peer that vanished is
		# then a quiet one, and it waits (a requester would end in RETRY_EXC_ERR)
		sleep 2
		kill "$sp" 2>/dev/null ;;
	esac
	wait "$sp"
	src=$?
	sms=$(since_ms)
	bv_note "$name: $2's daemon killed; client exit $crc after $cms ms ($(tail -n1 "$BV_OUT/$name.cli")), server exit $src after $sms ms ($(tail -n1 "$BV_OUT/$name.srv"))"
	checks="client:$crc"
	[ "$kind" = ntb ] && checks="$checks server:$src"
	for r in $checks; do
		{ [ "${r#*:}" = 124 ] || [ "${r#*:}" = 137 ]; } &&
			{ bv_pair_show "$name" "$pp" "$pp" ""; bv_fail "$name: the ${r%:*} hung"; }
		[ "${r#*:}" != 0 ] ||
			{ bv_pair_show "$name" "$pp" "$pp" ""; bv_fail "$name: the ${r%:*} succeeded"; }
	done
	# on cx4 nothing but the channel's wake-up can end the client's wait; on ntb the link's
	# end may flush its work first (an error completion, then the event)
	[ "$kind" = ntb ] || grep -q "Failed to get cq_event" "$BV_OUT/$name.cli" ||
		{ bv_pair_show "$name" "$pp" "$pp" ""; bv_fail "$name: the client was not woken in ibv_get_cq_event"; }
	"$BVCTL" up >/dev/null || bv_fail "$name: bvctl up after the kill"
done
echo "PASS"
