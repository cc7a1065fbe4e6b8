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
if [ "${BV_SANITIZE:-0}" = 1 ]; then
	LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
	export LD_PRELOAD ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
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
	rm -rf "$BV_RUNDIR"
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
