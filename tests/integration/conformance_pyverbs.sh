#!/bin/bash
# rdma-core v44.0's own test suite (pyverbs), as shipped in the shared tools' conformance/ and run
# by its runner, on one device (the argument: cx4_0 or ntb_0), in this test's own run directory
# and network namespace. Any failure, error or hang fails the test; skips are listed, and each
# remaining one is explained in docs/conformance.md. The shared tools are $BV_SHARED_DIR, or
# ../shared beside the source tree (bv_shared_dir); without them the test is skipped.
#
#   PYVERBS_LOG_DIR  where the suite's full log goes (default: tests/pyverbs in the build tree)
#   PYVERBS_TIMEOUT  seconds the whole suite may take on the device (default 300: a hang)
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
DEV=${1:?usage: conformance_pyverbs.sh DEVICE}
SHARED=$(bv_shared_dir)
RUNNER=$SHARED/conformance/run-pyverbs
if [ -z "$SHARED" ] || [ ! -x "$RUNNER" ]; then
	echo "SKIP: rdma-core's test suite is not there (${SHARED:-${BV_SHARED_DIR:-../shared}}" \
		"has no conformance/run-pyverbs): set BV_SHARED_DIR to the shared tools, or put" \
		"them in ../shared beside the source tree"
	exit 77
fi
bv_isolate_net "$@"
bv_up
LOGDIR=${PYVERBS_LOG_DIR:-$BV_BUILD_DIR/tests/pyverbs}
mkdir -p "$LOGDIR"
export PYVERBS_TIMEOUT=${PYVERBS_TIMEOUT:-300}
LOG="$LOGDIR/pyverbs-$DEV.log"
PYVERBS_LOG_DIR="$LOGDIR" "$RUNNER" "$BVCTL" "$DEV" >"$BV_OUT/summary" 2>&1
rc=$?
cat "$BV_OUT/summary"
if [ -f "$LOG" ]; then
	echo "# skips:"
	grep -oE "\.\.\. skipped .*" "$LOG" | sort | uniq -c | sort -rn | sed 's/^/#   /'
fi
if [ $rc != 0 ]; then
	if [ -f "$LOG" ]; then
		grep -E "^(FAIL|ERROR):" "$LOG" >&2
		grep -E "^[A-Za-z_.]*(Error|Exception): " "$LOG" | sort | uniq -c | sort -rn | head -n 20 >&2
		grep -q "^Ran [0-9]" "$LOG" ||
			{ echo "--- the suite did not finish in ${PYVERBS_TIMEOUT} s (a hang?):" >&2
			  tail -n 30 "$LOG" >&2; }
	fi
	bv_fail "rdma-core's test suite on $DEV: see above (full log: $LOG)"
fi
echo "PASS"
