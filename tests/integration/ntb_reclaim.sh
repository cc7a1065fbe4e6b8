#!/bin/bash
# Killed clients give back their DMA engine slots. Every DMA channel of a client holds one of
# the 128 engine slots of the peer end's IOMMU (docs/ntb-model.md, "Unmap is a barrier"); a
# client killed with SIGKILL never releases its own, so its ntbd publishes that it left and the
# peer's ntbd takes the slot back. After more killed clients than there are slots, a new client
# still gets a DMA channel on both ends, and the slots in use go back to what live clients hold.
BV_TMO=${BV_TMO:-120}
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
. "$BV_SOURCE_DIR/tests/integration/ntb_lib.sh"
bv_isolate_net "$@"

# engines in use on both ends (the counters line of each end in bvctl status)
engines() {
	"$BVCTL" status 2>&1 | sed -n 's/.*counters:.* engines \([0-9]*\).*/\1/p' | sort -n |
		tail -n1
}

# one profile is enough: the engine slots are the same on all (NTB_PROFILE picks another)
prof=${NTB_PROFILE:-intel-gen3}
ntb_up "$prof"
kills=${NTB_KILLS:-140}
for i in $(seq "$kills"); do
	# each run opens both ends (a DMA channel each) and dies by SIGKILL
	bv_run "$BV_BUILD_DIR/bin/ntb_verbs_test" die >/dev/null 2>&1
	rc=$?
	[ $rc = 137 ] || bv_fail "run $i: expected death by SIGKILL, exit $rc"
done
bv_note "$kills clients killed"
for _ in $(seq 100); do
	n=$(engines)
	[ -n "$n" ] && [ "$n" -le 0 ] && break
	sleep 0.1
done
"$BVCTL" status >&2
[ -n "$n" ] && [ "$n" -le 0 ] || bv_fail "engine slots still held after the clients died: $n"
out=$(bv_run "$BV_BUILD_DIR/bin/ntb_verbs_test" rc_ops 2>&1) || { echo "$out" >&2; bv_fail "rc_ops"; }
echo "$out" | grep -q "no DMA channel" && { echo "$out" >&2; bv_fail "a new client got no DMA channel"; }
ntb_check_counters "$prof"
echo "PASS"
