# shellcheck shell=bash
# Helpers of the cx4 integration tests, sourced after tests/lib/harness.sh. (Not a test itself.)

# The GID index perftest and the pingpongs must use: RoCE v2, IPv4-mapped (sysfs index 3).
CX4_GID=3

# Program outputs go to CX4_OUT (the harness's BV_OUT). Extra cleanup: put commands in
# CX4_ON_EXIT; they run before the harness's cleanup.
CX4_OUT=$BV_OUT
CX4_ON_EXIT=""
trap 'rc=$?; eval "$CX4_ON_EXIT"; (exit $rc); bv_cleanup' EXIT

cx4_wait_listen() {
	bv_wait_listen "$@"
}

# cx4_pair NAME PORT "SERVER CMD" "CLIENT CMD": bv_pair, and the test fails if the pair does.
cx4_pair() {
	bv_pair "$@" || bv_fail "$1"
}

# cx4_traffic NAME "SERVER ARGS" "CLIENT ARGS": bv_traffic on port 18517; the test fails if it does.
cx4_traffic() {
	bv_traffic "$1" 18517 "$2" "$3" || bv_fail "$1"
}

# cx4_expect FILE PATTERN WHAT: FILE must contain PATTERN (an ERE).
cx4_expect() {
	grep -Eq -- "$2" "$1" || { cat "$1" >&2; bv_fail "$3: no /$2/"; }
}

# cx4_stop DEVICE: stop its cx4d as bvctl down does (SIGTERM) and check the teardown in its
# log: a clean stop, no firmware page kept by the device, no failed command.
cx4_stop() {
	local pid log="$BV_RUNDIR/$1.log" i
	pid=$(cat "$BV_RUNDIR/$1.pid") || bv_fail "$1: no pid file"
	kill -TERM "$pid"
	for i in $(seq 200); do bv_pid_alive "$pid" || break; sleep 0.05; done
	bv_pid_alive "$pid" && bv_fail "$1: cx4d did not stop on SIGTERM"
	grep -q "stopped" "$log" || { cat "$log" >&2; bv_fail "$1: no clean stop"; }
	if grep -Eq "kept .* pages|failed, status|timed out" "$log"; then
		cat "$log" >&2
		bv_fail "$1: errors in the daemon log"
	fi
}
