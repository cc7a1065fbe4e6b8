# shellcheck shell=bash
# Helpers of the cx4 integration tests, sourced after tests/lib/harness.sh. (Not a test itself.)

# The GID index perftest and the pingpongs must use: RoCE v2, IPv4-mapped (sysfs index 3).
CX4_GID=3

# Program outputs go to CX4_OUT (bvctl down leaves a run directory with foreign files alone).
# Extra cleanup: put commands in CX4_ON_EXIT; they run before the harness's cleanup.
CX4_OUT=$(mktemp -d /tmp/cx4out.XXXXXX)
CX4_ON_EXIT=""
trap 'rc=$?; eval "$CX4_ON_EXIT"; rm -rf "$CX4_OUT"; (exit $rc); bv_cleanup' EXIT

# cx4_wait_listen PORT: until a TCP socket listens on PORT in this network namespace (20 s).
cx4_wait_listen() {
	local hex i
	hex=$(printf '%04X' "$1")
	for i in $(seq 400); do
		grep -q ":$hex 00000000:0000 0A" /proc/net/tcp /proc/net/tcp6 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# cx4_pair NAME PORT "SERVER CMD" "CLIENT CMD": both through bvctl run, the server first;
# both must exit 0. Outputs stay in $CX4_OUT/NAME.{srv,cli} (shown on failure). Never hangs:
# every process has a timeout, and a failed client takes the server down with it.
# One exception is retried once: perftest calibrates the CPU clock by timing busy loops and
# gives up ("Correlation coefficient r^2 ... < 0.9", "Can't produce a report") when the
# machine is so loaded that the samples scatter; that says nothing about the device.
cx4_pair() {
	CX4_PAIR_SOFT=1 cx4_pair_once "$@" && return 0
	echo "retry $1: perftest could not calibrate its clock under load" >&2
	cx4_pair_once "$@"
}
cx4_pair_once() {
	local name=$1 port=$2 srv=$3 cli=$4 out="$CX4_OUT/$1" sp crc src
	# shellcheck disable=SC2086
	timeout -k 5 "$BV_TMO" "$BVCTL" run -- $srv >"$out.srv" 2>&1 &
	sp=$!
	if ! cx4_wait_listen "$port"; then
		kill "$sp" 2>/dev/null
		wait "$sp"
		cat "$out.srv" >&2
		bv_fail "$name: the server never listened on $port"
	fi
	# shellcheck disable=SC2086
	timeout -k 5 "$BV_TMO" "$BVCTL" run -- $cli >"$out.cli" 2>&1
	crc=$?
	[ $crc = 0 ] || kill "$sp" 2>/dev/null
	wait "$sp"
	src=$?
	if [ $crc != 0 ] || [ $src != 0 ]; then
		if [ -n "${CX4_PAIR_SOFT:-}" ] && grep -q "Correlation coefficient r^2" "$out.srv" "$out.cli" &&
			grep -q "Can't produce a report" "$out.srv" "$out.cli"; then
			return 1
		fi
		echo "--- $name server (rc $src): $srv" >&2
		tail -n 20 "$out.srv" >&2
		echo "--- $name client (rc $crc): $cli" >&2
		tail -n 20 "$out.cli" >&2
		bv_fail "$name"
	fi
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
