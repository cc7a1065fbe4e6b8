#!/bin/bash
# Every limit ibv_devinfo -v reports can be reached, and what comes past it fails as on a
# device, never with EBUSY (tests/ntb/verbs/limits_test.c): PDs, CQs, QPs, MRs, MWs, SRQs, AHs at
# their maxima, max_qp_wr WRs posted, max_sge pieces, max_inline_data, max_cqe, max_srq_wr.
BV_TMO=${BV_TMO:-600}
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
. "$BV_SOURCE_DIR/tests/integration/ntb_lib.sh"
bv_isolate_net "$@"
ntb_up intel-gen3
bv_run timeout -k 5 "$BV_TMO" "$BV_BUILD_DIR/bin/ntb_limits_test" -d ntb_0 ||
	bv_fail "ntb_limits_test on ntb_0"
ntb_check_counters limits
echo "PASS"
