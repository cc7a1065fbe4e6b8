#!/bin/bash
# The ntb engine under stress (docs/ntb-verbs.md "Retries"): ntb_stress_test with the smallest
# pair rings, many QPs on one pair, RNR NAKs from a few receives (per QP and shared), short
# transport timeouts and a CPU hog, across the link and in loopback, every byte checked; and
# the case that once failed in a thousand runs (ib_send_bw, "retry exceeded"). The soak form
# (make soak) runs each case NTB_SOAK_LOOPS (1000) times: tests/integration/ntb_soak.sh.
BV_TMO=${BV_TMO:-600}
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
. "$BV_SOURCE_DIR/tests/integration/ntb_lib.sh"
bv_isolate_net "$@"
loops=${NTB_STRESS_LOOPS:-3}
pp=${NTB_STRESS_PERFTEST:-3}
stress() {
	bv_run timeout -k 5 "$BV_TMO" "$BV_BUILD_DIR/bin/ntb_stress_test" -l "$loops" "$@" ||
		bv_fail "ntb_stress_test $*"
}

# the smallest rings: every long SEND waits for credits several times
NTB_CONF="pair_req_cells = 256
pair_resp_cells = 64" ntb_up switchtec
stress -a ntb_0 -b ntb_1 -q 8 -n 150 -t 8
stress -a ntb_0 -b ntb_1 -q 4 -n 150 -r 2 -S -t 4
stress -a ntb_1 -b ntb_1 -q 4 -n 150 -r 2 -t 1
stress -a ntb_0 -b ntb_1 -q 2 -n 100 -H 2
ntb_check_counters "small rings"
bv_note "small rings: ok"

ntb_up epf
stress -a ntb_1 -b ntb_1 -q 4 -n 150 -S -r 3
stress -a ntb_0 -b ntb_1 -q 16 -n 60 -w 8 -s 300000
port=19300
for i in $(seq "$pp"); do
	port=$((port + 1))
	bv_pair "st$port" "$port" "ib_send_bw -p $port -d ntb_1" \
		"ib_send_bw -p $port -d ntb_1 localhost" || bv_fail "ib_send_bw on one device, run $i"
	port=$((port + 1))
	bv_pair "st$port" "$port" "ib_send_bw -p $port -d ntb_0" \
		"ib_send_bw -p $port -d ntb_1 localhost" || bv_fail "ib_send_bw across, run $i"
done
ntb_check_counters "epf"
bv_note "epf: ok"
echo "PASS"
