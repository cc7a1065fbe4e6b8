#!/bin/bash
# The ntb provider on every hardware profile: every opcode over many sizes with every byte
# checked (RC, UC, UD, SRQ, scatter/gather, inline, atomics, fences, events, cq_ex) and each
# error case (bad lkey, rkey, range, rights, short receive, RNR, transport retries, the QP state
# machine) - tests/ntb/verbs/verbs_test.c, both ends in one process.
BV_TMO=${BV_TMO:-300}
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
. "$BV_SOURCE_DIR/tests/integration/ntb_lib.sh"
bv_isolate_net "$@"
for prof in $NTB_PROFILES; do
	ntb_up "$prof"
	bv_note "profile $prof"
	bv_run "$BV_BUILD_DIR/bin/ntb_verbs_test" || bv_fail "ntb_verbs_test on $prof"
	ntb_check_counters "$prof"
done
# the paths PIO normally takes over: long writes by DMA, short ones in the ring
NTB_PIO=0 bv_run "$BV_BUILD_DIR/bin/ntb_verbs_test" || bv_fail "ntb_verbs_test, NTB_PIO=0"
ntb_check_counters "NTB_PIO=0"
echo "PASS"
