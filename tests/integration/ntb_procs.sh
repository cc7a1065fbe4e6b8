#!/bin/bash
# Many processes per end at once (docs/ntb-verbs.md "Several processes"): ntb_procs_test forks
# 64 per end (NTB_PROCS), every one attached at the same time, each with an RC QP to its
# partner across the link, RC QPs around a loopback ring of its own end and a UD QP both
# ways; every byte checked. On a profile with doorbell vectors to spare and on epf (2 bits:
# all but one client woken through ntbd's relay).
BV_TMO=${BV_TMO:-600}
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
. "$BV_SOURCE_DIR/tests/integration/ntb_lib.sh"
bv_isolate_net "$@"
for prof in ${NTB_PROCS_PROFILES:-intel-gen3 epf}; do
	ntb_up "$prof"
	bv_run timeout -k 5 "$BV_TMO" "$BV_BUILD_DIR/bin/ntb_procs_test" -n "${NTB_PROCS:-64}" ||
		bv_fail "$prof: ${NTB_PROCS:-64} processes per end"
	ntb_check_counters "$prof"
	bv_note "$prof: ${NTB_PROCS:-64} processes per end ok"
done
echo "PASS"
