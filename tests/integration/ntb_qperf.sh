#!/bin/bash
# qperf (Debian's, unmodified) over the ntb devices: every rc_* and ud_* test, across the link.
#
# The ntb port is RoCE (link layer Ethernet, RoCE v2 GIDs): with its defaults qperf connects by
# LID, without a GRH, which Linux refuses on every RoCE device (rdma_check_ah_attr; an address
# handle too) and so does ntb: the test checks that each RC test stops at "failed to modify QP
# to RTR" and each UD test at "failed to create address handle", nothing else wrong. With the
# RDMA CM (-cm1, the server at ntb_0's address), which gives the QPs a GRH, every test must
# report what it measures; -cm1 needs the project's rdma_cm (librdmacm-plugin) and skips where
# it is not there. qperf checks no data (the ntb data paths are checked by ntb_verbs).
BV_TMO=${BV_TMO:-120}
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
. "$BV_SOURCE_DIR/tests/integration/ntb_lib.sh"
bv_isolate_net "$@"
command -v qperf >/dev/null || bv_fail "qperf is not installed (tools/install-deps.sh)"
ntb_up intel-gen3

srv=""
server() {
	"$BVCTL" run -- qperf -lp 19765 >"$BV_OUT/qperf.srv" 2>&1 &
	srv=$!
	# (qperf listens on IPv6 as well: look with ss, not in /proc/net/tcp)
	for _ in $(seq 200); do ss -ltnH "sport = :19765" | grep -q . && return 0; sleep 0.05; done
	cat "$BV_OUT/qperf.srv"
	bv_fail "qperf server did not start"
}
# q ARGS...: one qperf client run against a fresh server; output in $out, status returned
q() {
	local rc
	out="$BV_OUT/qperf-$*.out"
	out=${out// /_}
	server
	timeout -k 5 "$BV_TMO" "$BVCTL" run -- qperf -lp 19765 "$@" >"$out" 2>&1
	rc=$?
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	srv=""
	return $rc
}
tests="rc_bi_bw rc_bw rc_lat rc_rdma_read_bw rc_rdma_read_lat rc_rdma_write_bw rc_rdma_write_lat
	rc_rdma_write_poll_lat rc_compare_swap_mr rc_fetch_add_mr ud_bi_bw ud_bw ud_lat"
for t in $tests; do
	case $t in
	rc_*) want="failed to modify QP to RTR" ;;
	ud_*) want="failed to create address handle" ;;
	esac
	q 127.0.0.1 -li ntb_1:1 -ri ntb_0:1 "$t" && { cat "$out"; bv_fail "qperf $t without a GRH ran"; }
	# whichever side fails first says so: the client, or the server ("server:" then)
	grep -q "$want" "$out" || { grep -q "^server:" "$out" && grep -q "$want" "$BV_OUT/qperf.srv"; } ||
		{ cat "$out" "$BV_OUT/qperf.srv"; bv_fail "qperf $t: not '$want'"; }
done
bv_note "qperf's defaults (no GRH): refused as on every RoCE device"

q 127.0.2.1 -cm1 rc_bw
if grep -qE "rdma_create_event_channel failed|rdma_create_id failed|rdma_resolve_addr failed" "$out"; then
	cat "$out"
	echo "SKIP: qperf -cm1 needs the RDMA CM (the project's librdmacm-plugin)"
	exit 77
fi
for t in $tests; do
	q 127.0.2.1 -cm1 "$t" || { cat "$out" "$BV_OUT/qperf.srv"; bv_fail "qperf -cm1 $t"; }
	grep -qiE "fail|error|timeout" "$out" && { cat "$out"; bv_fail "qperf -cm1 $t"; }
	case $t in
	*_bw) want="bw *= *[0-9.]+ [KMG]?B/sec" ;;
	*_lat) want="latency *= *[0-9.]+ [mun]?s" ;;
	*_mr) want="msg_rate *= *[0-9.]+ [KM]?/sec" ;;
	esac
	grep -qE "$want" "$out" || { cat "$out"; bv_fail "qperf -cm1 $t: no /$want/"; }
	echo "ok qperf -cm1 $t: $(grep -E "$want" "$out" | head -1 | tr -s ' ')"
done
ntb_check_counters qperf
echo "PASS"
