#!/bin/bash
# rdma_cm when things go wrong: every id ends with an event, nothing hangs (tests/rdmacm/
# cm_probe.c serve/hold/expect). On the cx4 ports and on the ntb ends, each time with fresh
# daemons whose CM timeouts are short (cm_response_timeout 16, cm_max_retries 3,
# cm_packet_life_time 12: about a second where the kernel's defaults take a minute):
#   unreachable   the server's daemon is stopped (SIGSTOP): the REQ goes unanswered; after
#                 the retries the client gets UNREACHABLE -110 (Linux: IB_CM_REQ_ERROR)
#   server-killed an established connection's server program dies (SIGKILL): its daemon
#                 cleans its ids up, DREQ to the peer: the client gets DISCONNECTED 0
#   client-killed the same with the client program: the server gets DISCONNECTED
#   srvd-killed   the server's daemon dies (SIGKILL): the server program gets DEVICE_REMOVAL
#                 on its listener and its connection and exits; the client gets DISCONNECTED:
#                 on ntb at once (the link is down), on cx4 when it disconnects (the DREQ goes
#                 unanswered: DISCONNECTED -110, as with the kernel)
#   clid-killed   the client's daemon dies: the client gets DEVICE_REMOVAL
#   cable (cx4)   the client's cable is pulled (cx4d SIGUSR1): the client gets DISCONNECTED
#                 -110; with the cable out rdma_resolve_addr fails: ENETUNREACH
# Each wait has a bound (LIMIT seconds) that turns a hang into a failure.
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"
. "$BV_SOURCE_DIR/tests/rdmacm/rdmacm_lib.sh"
LIMIT=${RDMACM_FAULT_LIMIT:-30}
PROBE=$BV_BUILD_DIR/bin/cm_probe

cfg=$BV_OUT/rdmacm-faults.conf
{
	for d in "cx4_0 127.0.1.1" "cx4_1 127.0.1.2"; do
		set -- $d
		printf '[device %s]\nkind = cx4\nip = %s\ncable = cx4\n' "$1" "$2"
		printf 'cm_response_timeout = 16\ncm_max_retries = 3\ncm_packet_life_time = 12\n\n'
	done
	for side in 0 1; do
		printf '[device ntb_%s]\nkind = ntb\nlink = ntb0\nside = %s\n' $side $side
		printf 'profile = intel-gen3\nip = 127.0.2.%s\n' $((side + 1))
		printf 'cm_response_timeout = 16\ncm_max_retries = 3\ncm_packet_life_time = 12\n\n'
	done
} >"$cfg"

fresh() {
	"$BVCTL" down >/dev/null 2>&1
	bv_up "$cfg"
	for _ in $(seq 100); do
		bv_run ibv_devinfo -d ntb_1 2>/dev/null | grep -q PORT_ACTIVE &&
			bv_run ibv_devinfo -d ntb_0 2>/dev/null | grep -q PORT_ACTIVE && return 0
		sleep 0.1
	done
	bv_fail "the ntb link did not come up"
}

# wait_for FILE PATTERN WHAT: until FILE has a line matching PATTERN (LIMIT seconds)
wait_for() {
	for _ in $(seq $((LIMIT * 20))); do
		grep -Eq -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	bv_show "$1" >&2
	bv_fail "$3: no /$2/ within $LIMIT s"
}

# prog_pid PID: the program that "timeout ... bvctl run" PID runs (bvctl run execs it)
prog_pid() {
	pgrep -P "$1"
}

# finish PID WHAT: PID must exit 0 within LIMIT seconds
finish() {
	local rc
	for _ in $(seq $((LIMIT * 20))); do
		bv_pid_alive "$1" || break
		sleep 0.05
	done
	if bv_pid_alive "$1"; then
		kill -KILL "$1" 2>/dev/null
		bv_fail "$2: hung"
	fi
	wait "$1"
	rc=$?
	[ $rc = 0 ] || bv_fail "$2: exit $rc"
}

# start_pair NAME SRV CLI PORT HOLD-EVENTS...: a server and a connected client (background;
# SPID/CPID, outputs $RDMACM_OUT/NAME.{srv,cli})
start_pair() {
	local name=$1 srv=$2 cli=$3 port=$4
	shift 4
	timeout -k 5 $((LIMIT * 3)) "$BVCTL" run -- "$PROBE" serve "$srv" "$port" \
		>"$RDMACM_OUT/$name.srv" 2>&1 &
	SPID=$!
	rdmacm_wait_listen "$port" || { bv_show "$RDMACM_OUT/$name.srv"; bv_fail "$name: no listen"; }
	timeout -k 5 $((LIMIT * 3)) "$BVCTL" run -- "$PROBE" hold "$srv" "$cli" "$port" "$@" \
		>"$RDMACM_OUT/$name.cli" 2>&1 &
	CPID=$!
	wait_for "$RDMACM_OUT/$name.cli" "^established" "$name"
	wait_for "$RDMACM_OUT/$name.srv" "^event RDMA_CM_EVENT_ESTABLISHED" "$name"
}

# stop_server: the serve program of a pair ends (it serves for ever otherwise)
stop_server() {
	kill "$SPID" 2>/dev/null
	wait "$SPID" 2>/dev/null
}

for t in "cx4 cx4_0 cx4_1 127.0.1.1 127.0.1.2" "ntb ntb_0 ntb_1 127.0.2.1 127.0.2.2"; do
	set -- $t
	kind=$1 sdev=$2 cdev=$3 srv=$4 cli=$5
	port=21000

	# unreachable
	fresh
	sd=$(cat "$BV_RUNDIR/$sdev.pid")
	kill -STOP "$sd"
	t0=$(date +%s%N)
	out="$RDMACM_OUT/$kind-unreachable"
	timeout -k 5 "$LIMIT" "$BVCTL" run -- "$PROBE" expect "$srv" "$cli" $((++port)) \
		UNREACHABLE -110 >"$out" 2>&1
	rc=$?
	kill -CONT "$sd"
	[ $rc = 0 ] || { bv_show "$out"; bv_fail "$kind unreachable (exit $rc)"; }
	ms=$((($(date +%s%N) - t0) / 1000000))
	r=$(rdmacm_cm_stat "$cdev" retries)
	[ "$r" = 3 ] || { "$BVCTL" status; bv_fail "$kind unreachable: $r REQ retries, not 3"; }
	echo "ok $kind unreachable: UNREACHABLE -110 after $ms ms, $r retries"

	# a program dies
	fresh
	start_pair "$kind-srvkill" "$srv" "$cli" $((++port)) DISCONNECTED:0
	kill -KILL "$(prog_pid "$SPID")"
	finish "$CPID" "$kind server-killed: the client"
	wait "$SPID" 2>/dev/null
	echo "ok $kind server-killed: client DISCONNECTED"
	start_pair "$kind-clikill" "$srv" "$cli" $((++port))
	kill -KILL "$(prog_pid "$CPID")"
	wait_for "$RDMACM_OUT/$kind-clikill.srv" "^event RDMA_CM_EVENT_DISCONNECTED" "$kind client-killed"
	wait "$CPID" 2>/dev/null
	stop_server
	echo "ok $kind client-killed: server DISCONNECTED"

	# the server's daemon dies
	start_pair "$kind-srvd" "$srv" "$cli" $((++port)) DISCONNECTED
	kill -KILL "$(cat "$BV_RUNDIR/$sdev.pid")"
	finish "$SPID" "$kind srvd-killed: the server"
	[ "$(rdmacm_count "$RDMACM_OUT/$kind-srvd.srv" "^event RDMA_CM_EVENT_DEVICE_REMOVAL")" = 2 ] ||
		{ bv_show "$RDMACM_OUT/$kind-srvd.srv"; bv_fail "$kind srvd-killed: not 2 DEVICE_REMOVAL"; }
	sleep 0.5
	kill -USR1 "$(prog_pid "$CPID")" 2>/dev/null
	finish "$CPID" "$kind srvd-killed: the client"
	echo "ok $kind srvd-killed: server DEVICE_REMOVAL x2," \
		"client $(grep "^event RDMA_CM_EVENT_DISCONNECTED" "$RDMACM_OUT/$kind-srvd.cli")"

	# the client's daemon dies
	fresh
	start_pair "$kind-clid" "$srv" "$cli" $((++port)) DEVICE_REMOVAL
	kill -KILL "$(cat "$BV_RUNDIR/$cdev.pid")"
	finish "$CPID" "$kind clid-killed: the client"
	stop_server
	echo "ok $kind clid-killed: client DEVICE_REMOVAL"

	# the cable is pulled
	[ "$kind" = cx4 ] || continue
	fresh
	cd=$(cat "$BV_RUNDIR/$cdev.pid")
	start_pair "$kind-cable" "$srv" "$cli" $((++port)) DISCONNECTED:-110
	kill -USR1 "$cd"
	finish "$CPID" "$kind cable: the client"
	out="$RDMACM_OUT/$kind-cable2"
	timeout -k 5 "$LIMIT" "$BVCTL" run -- "$PROBE" expect "$srv" "$cli" $((++port)) \
		ERRNO 101 >"$out" 2>&1 || { bv_show "$out"; bv_fail "$kind cable: connect"; }
	kill -USR2 "$cd"
	stop_server
	echo "ok $kind cable: client DISCONNECTED -110, rdma_resolve_addr ENETUNREACH"
done
echo "PASS"
