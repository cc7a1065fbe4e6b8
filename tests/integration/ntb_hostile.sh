#!/bin/bash
# Hostile input to ntbd over its real socket: ntb_hostile_test sends garbage, short, oversized
# and malformed messages, wrong lengths for every request, unknown ops, stray descriptors,
# bad and foreign handles, memory the peer could not safely map, and floods; every case must
# get a clear error and the daemon must go on serving (a good client after each case; at the
# end it holds no descriptor more than before). Then the same daemons still carry verbs
# traffic (ntb_verbs_test rc_ops) and neither ntbd died.
BV_TMO=${BV_TMO:-120}
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
. "$BV_SOURCE_DIR/tests/integration/ntb_lib.sh"
bv_isolate_net "$@"

prof=${NTB_PROFILE:-intel-gen3}
ntb_up "$prof"
p0=$(cat "$BV_RUNDIR/ntb_0.pid")
p1=$(cat "$BV_RUNDIR/ntb_1.pid")
for dev in ntb_0 ntb_1; do
	out=$(timeout -k 5 "$BV_TMO" "$BV_BUILD_DIR/bin/ntb_hostile_test" "$dev" 2>&1) ||
		{ echo "$out" >&2; bv_fail "$dev: hostile client"; }
	bv_note "$dev: $(echo "$out" | tail -n1)"
done
kill -0 "$p0" && kill -0 "$p1" || bv_fail "a daemon died"
out=$(bv_run "$BV_BUILD_DIR/bin/ntb_verbs_test" rc_ops 2>&1) ||
	{ echo "$out" >&2; bv_fail "verbs after the hostile clients"; }
ntb_check_counters "$prof"
echo "PASS"
