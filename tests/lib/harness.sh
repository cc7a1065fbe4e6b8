# shellcheck shell=bash
# Test harness for integration tests: each test gets its own run directory (and, with
# bv_isolate_net, its own network namespace), brings devices up with bvctl and takes them down
# on exit, whatever happens. Source it from a test script run by ctest:
#
#   . "$BV_SOURCE_DIR/tests/lib/harness.sh"
#   bv_up                      # default config, or bv_up FILE
#   bv_run ibv_devices         # runs through bvctl run
#   bv_expect_output "cx4_0" bv_run ibv_devices
#
# Environment from ctest: BV_BUILD_DIR, BV_SOURCE_DIR; optional BV_VALGRIND=1 (wrap C test
# programs in valgrind), BV_SANITIZE=1 (preload the ASan runtime into unsanitized binaries).
set -u
set -o pipefail

: "${BV_BUILD_DIR:?run from ctest}"
: "${BV_SOURCE_DIR:?run from ctest}"
BVCTL="$BV_BUILD_DIR/bin/bvctl"
BV_TEST_NAME=$(basename "$0" .sh)
BV_TMO=${BV_TMO:-60}

bv_fail() {
	echo "FAIL [$BV_TEST_NAME]: $*" >&2
	exit 1
}

bv_note() {
	echo "# $*"
}

# The shared tools (rdma-core's suite, the rxe peer): BV_SHARED_DIR where CI names them (.ci/run;
# a relative path is taken from the source tree, where .ci/run runs), else ../shared beside the
# source tree. Prints the absolute path, or nothing when the folder is not there.
bv_shared_dir() {
	local d=${BV_SHARED_DIR:-../shared}
	case $d in /*) ;; *) d=$BV_SOURCE_DIR/$d ;; esac
	(cd "$d" 2>/dev/null && pwd)
}

# Re-run this script in a private network namespace (root only): the loopback addresses the
# devices bind to are then this test's alone, and tests may run in parallel.
bv_isolate_net() {
	if [ -z "${BV_IN_NETNS:-}" ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
		export BV_IN_NETNS=1
		exec unshare --net -- bash -c 'ip link set lo up && exec "$0" "$@"' "$0" "$@"
	fi
}

BV_RUNDIR=$(mktemp -d /tmp/bvt.XXXXXX)
export BV_RUNDIR
# Program outputs (bvctl down leaves a run directory with foreign files in it alone).
BV_OUT=$(mktemp -d /tmp/bvout.XXXXXX)
if [ "${BV_SANITIZE:-0}" = 1 ]; then
	# Unsanitized programs that load our sanitized providers need the runtimes preloaded
	# first: bvctl passes LD_PRELOAD on to what it runs. Only bvctl gets it: procps and other
	# tools started with the ASan runtime preloaded can hang at start (pgrep did, in glibc's
	# textdomain lock, under ntb_peerdeath).
	export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
	BVCTL="$BV_OUT/bvctl"
	printf '#!/bin/sh\nLD_PRELOAD=%s exec %s "$@"\n' \
		"$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)" \
		"$BV_BUILD_DIR/bin/bvctl" >"$BVCTL"
	chmod +x "$BVCTL"
fi

bv_cleanup() {
	local rc=$?
	if [ $rc != 0 ] && [ -d "$BV_RUNDIR" ]; then
		for f in "$BV_RUNDIR"/*.log; do
			[ -f "$f" ] || continue
			echo "--- $f ---" >&2
			tail -n 30 "$f" >&2
		done
	fi
	"$BVCTL" down >/dev/null 2>&1 || echo "WARN: bvctl down failed" >&2
	rm -rf "$BV_RUNDIR" "$BV_OUT"
	exit $rc
}
trap bv_cleanup EXIT
trap 'exit 130' INT TERM

bv_up() {
	if [ $# -gt 0 ]; then
		"$BVCTL" --config "$1" up >/dev/null || bv_fail "bvctl up --config $1"
	else
		"$BVCTL" up >/dev/null || bv_fail "bvctl up"
	fi
}

# bv_run CMD...: run a program through bvctl run, with a timeout.
bv_run() {
	timeout -k 5 "$BV_TMO" "$BVCTL" run -- "$@"
}

# bv_run_vg CMD...: bv_run under valgrind when BV_VALGRIND=1 (errors fail the run).
bv_run_vg() {
	if [ "${BV_VALGRIND:-0}" = 1 ]; then
		BV_TMO=$((BV_TMO * 4)) bv_run valgrind -q --error-exitcode=99 --leak-check=full \
			--errors-for-leak-kinds=definite --track-fds=no "$@"
	else
		bv_run "$@"
	fi
}

# bv_pid_alive PID: the process exists and is not a zombie waiting for its reaper.
bv_pid_alive() {
	local st
	st=$(sed -n 's/^[0-9]* (.*) \([A-Z]\) .*/\1/p' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# bv_expect_output PATTERN CMD...: CMD must succeed and print PATTERN (an ERE).
bv_expect_output() {
	local pat=$1 out
	shift
	out=$("$@" 2>&1) || { echo "$out" >&2; bv_fail "'$*' failed"; }
	echo "$out" | grep -Eq -- "$pat" || { echo "$out" >&2; bv_fail "'$*' did not print /$pat/"; }
}

# bv_wait_listen PORT: until a TCP socket listens on PORT (20 s), IPv4 or IPv6. Runs under
# $BV_PAIR_S, so it looks in the server's network namespace.
bv_wait_listen() {
	local hex i
	hex=$(printf '%04X' "$1")
	for i in $(seq 400); do
		${BV_PAIR_S:-} grep -Eq ":$hex 0+:0000 0A" /proc/net/tcp /proc/net/tcp6 2>/dev/null &&
			return 0
		sleep 0.05
	done
	return 1
}

# bv_show FILE: a program's output, shortened in the middle when long (stderr, unbuffered, is
# usually at the top of a file that also holds its buffered stdout: keep both ends)
bv_show() {
	if [ "$(wc -l <"$1")" -le 60 ]; then
		cat "$1"
	else
		head -n 20 "$1"
		echo "[...]"
		tail -n 30 "$1"
	fi
}

# bv_pair NAME PORT "SERVER CMD" "CLIENT CMD": a client/server pair of unmodified programs,
# both through bvctl run, the server first (listening on PORT); both must exit 0, and neither
# may print "invalid data" (the pingpongs' -c prints it and exits 0 all the same). Outputs stay
# in $BV_OUT/NAME.{srv,cli} and are shown on failure; returns 1 then. Never hangs: every
# process has a timeout, and a failed client takes the server down with it (after a grace
# period in which a server that finished its part can still exit). BV_PAIR_S and BV_PAIR_C
# are optional command prefixes for the server and the client (another namespace). On a
# failure the devices' state is shown too: `bvctl status`, or the commands in BV_PAIR_ON_FAIL.
#
# One failure is retried once, and only this one: perftest calibrates the CPU clock by timing
# busy loops and gives up ("Correlation coefficient r^2 ... < 0.9", "Can't produce a report")
# when the machine is so loaded that the samples scatter, which says nothing about the device:
# the side that failed printed both lines, and the other side succeeded or failed only at the
# TCP exchange with the side that had left (perftest -a calibrates after each size: the other
# side then finds the socket closed, and says nothing else). The first attempt's outputs are
# kept (NAME.try1.{srv,cli}) and shown.
bv_pair() {
	local rc out="$BV_OUT/$1"
	bv_pair_once "$@"
	rc=$?
	[ $rc = 2 ] || return $rc
	mv "$out.srv" "$out.try1.srv"
	mv "$out.cli" "$out.try1.cli"
	echo "retry $1: perftest could not calibrate its clock under load; the first attempt:" >&2
	bv_pair_show "$1" "$3" "$4" try1. >&2
	bv_pair_once "$@"
	rc=$?
	[ $rc = 2 ] || return $rc
	echo "FAIL [$BV_TEST_NAME]: $1: perftest could not calibrate its clock twice" >&2
	bv_pair_show "$1" "$3" "$4" "" >&2
	return 1
}

# bv_pair_show NAME "SERVER CMD" "CLIENT CMD" TRY: both outputs of one attempt
bv_pair_show() {
	echo "--- $1 server: $2"
	bv_show "$BV_OUT/$1.$4srv"
	echo "--- $1 client: $3"
	bv_show "$BV_OUT/$1.$4cli"
}

# bv_clock_warning FILE: perftest's clock calibration gave up in FILE
bv_clock_warning() {
	grep -q "Correlation coefficient r^2" "$1" && grep -q "Can't produce a report" "$1"
}

# bv_peer_left RC FILE: a side that succeeded (RC 0), or failed only at perftest's TCP
# exchange because its peer had gone: no other complaint in FILE.
bv_peer_left() {
	[ "$1" = 0 ] && return 0
	grep -q "Failed to exchange data between server and clients" "$2" || return 1
	! grep -Ei "error|fail|couldn't|unable|invalid|timeout" "$2" |
		grep -Eqv "Failed to exchange data|Couldn't read remote address|Unable to read to socket"
}

# bv_pair_once: one attempt; returns 0, 1 (failed, shown) or 2 (the clock warning, not shown)
bv_pair_once() {
	local name=$1 port=$2 srv=$3 cli=$4 out="$BV_OUT/$1" sp crc src i
	# shellcheck disable=SC2086
	${BV_PAIR_S:-} timeout -k 5 "$BV_TMO" "$BVCTL" run -- $srv >"$out.srv" 2>&1 &
	sp=$!
	if ! bv_wait_listen "$port"; then
		kill "$sp" 2>/dev/null
		wait "$sp"
		cat "$out.srv" >&2
		echo "FAIL [$BV_TEST_NAME]: $name: the server never listened on $port" >&2
		return 1
	fi
	# shellcheck disable=SC2086
	${BV_PAIR_C:-} timeout -k 5 "$BV_TMO" "$BVCTL" run -- $cli >"$out.cli" 2>&1
	crc=$?
	if [ $crc != 0 ]; then
		for i in $(seq 100); do
			bv_pid_alive "$sp" || break
			sleep 0.1
		done
		kill "$sp" 2>/dev/null
	fi
	wait "$sp"
	src=$?
	if [ $crc = 0 ] && [ $src = 0 ] && ! grep -qi "invalid data" "$out.srv" "$out.cli"; then
		return 0
	fi
	if ! grep -qi "invalid data" "$out.srv" "$out.cli" &&
		{ { [ $crc != 0 ] && bv_clock_warning "$out.cli" && bv_peer_left $src "$out.srv"; } ||
		  { [ $src != 0 ] && bv_clock_warning "$out.srv" && bv_peer_left $crc "$out.cli"; }; }; then
		return 2
	fi
	grep -qi "invalid data" "$out.srv" "$out.cli" &&
		echo "FAIL [$BV_TEST_NAME]: $name: \"invalid data\": the data check found a wrong byte" >&2
	echo "--- $name: server exit $src, client exit $crc" >&2
	bv_pair_show "$name" "$srv" "$cli" "" >&2
	# the devices' view (the model's retransmits, NAKs, RNR NAKs, drops): what tells a lost
	# packet never resent from a starved machine when a pair stalls
	echo "--- $name: the devices after the failure" >&2
	eval "${BV_PAIR_ON_FAIL:-\"\$BVCTL\" status}" >&2 2>&1
	return 1
}

# bv_traffic NAME PORT "SERVER ARGS" "CLIENT ARGS": a bvtraffic pair (tools/bvtraffic: every
# byte, immediate and atomic result checked) through bv_pair; CLIENT ARGS end with the
# server's address (the client decides the run; -e, sleeping on events, goes to both). Both
# must print PASS; what they checked is noted.
bv_traffic() {
	local b="$BV_BUILD_DIR/bin/bvtraffic" ev=""
	case " $4 " in *" -e "*) ev=" -e" ;; esac
	bv_pair "$1" "$2" "$b -p $2 $3$ev" "$b -p $2 $4" || return 1
	grep -q "^bvtraffic: PASS" "$BV_OUT/$1.srv" && grep -q "^bvtraffic: PASS" "$BV_OUT/$1.cli" ||
		{ bv_pair_show "$1" "$3" "$4" "" >&2; echo "FAIL [$BV_TEST_NAME]: $1: no PASS" >&2; return 1; }
	bv_note "$1: $(sed -n 's/^bvtraffic: PASS: //p' "$BV_OUT/$1.cli")"
}

# bv_checked FILE: the messages a running bvtraffic has checked so far (its progress lines)
bv_checked() {
	sed -n 's/^bvtraffic: progress: \([0-9]*\) messages.*/\1/p' "$1" | tail -n1
}

# bv_wait_checked FILE: until the bvtraffic writing FILE has checked messages (10 s)
bv_wait_checked() {
	local _
	for _ in $(seq 100); do
		[ -n "$(bv_checked "$1")" ] && return 0
		sleep 0.1
	done
	cat "$1" >&2
	return 1
}
