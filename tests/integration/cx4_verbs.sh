#!/bin/bash
# The project's verbs test: every opcode of RC, UC and UD moves many message sizes, every byte
# checked (and the bytes after each message), then the error cases: bad rkey, out of bounds,
# MR without remote access, bad lkey, short receive buffer, RNR retries exhausted, peer gone
# (transport retries exhausted within the configured timeout), flushes; and the extended verbs
# (ibv_wr_*, cq_ex readers, memory windows, rereg_mr, resize_cq, the ex queries:
# tests/cx4/driver/xverbs_test.c). Between cx4_0 and cx4_1, and in loopback on one device.
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"
. "$BV_SOURCE_DIR/tests/integration/cx4_lib.sh"
bv_up
T="$BV_BUILD_DIR/bin/cx4_verbs_test"
# a failed run shows the devices as they are then: daemons, clients, the model's counters
# (retransmissions, ACK timeouts, wake-ups, drops)
failed() {
	tail -n 40 "$CX4_OUT/$1.txt" >&2
	"$BVCTL" status >&2
	for d in cx4_0 cx4_1; do
		echo "--- $d model counters ---" >&2
		"$BVCTL" model $d stats | paste -sd' ' >&2
	done
	bv_fail "$2"
}
BV_TMO=600 bv_run "$T" -v -a cx4_0 -b cx4_1 all >"$CX4_OUT/two.txt" 2>&1 ||
	failed two "cx4_0 <-> cx4_1"
BV_TMO=600 bv_run "$T" -v -a cx4_0 -b cx4_0 all >"$CX4_OUT/loop.txt" 2>&1 ||
	failed loop "loopback on cx4_0"
grep -h "exhausted after" "$CX4_OUT/two.txt" "$CX4_OUT/loop.txt"
echo "PASS"
