#!/bin/bash
# qperf (Debian's, unmodified) over the cx4 devices: every rc_* and ud_* test.
#
# With its defaults qperf connects its QPs by LID, without a GRH, and on RoCE that is refused
# as on a ConnectX-4 under Linux (mlx5_set_path: a RoCE path without GRH is EINVAL; an address
# handle without one, too): the test checks that each RC test stops at "failed to modify QP
# to RTR" and each UD test at "failed to create address handle", with nothing else wrong.
# On RoCE qperf runs with -cm1 (its connections through the RDMA CM, which picks the GID of
# the address): then every rc_* test must report what it measures (a bandwidth, a latency, a
# rate) with the server at cx4_0's address; qperf's ud_* tests take no CM and stay refused. qperf checks no data: bvtraffic runs RC and UD between the
# same devices after it, every byte checked. -cm1 needs the
# project's rdma_cm (librdmacm-plugin); where it is not there yet the test says so and skips.
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"
. "$BV_SOURCE_DIR/tests/integration/cx4_lib.sh"
command -v qperf >/dev/null || bv_fail "qperf is not installed (tools/install-deps.sh)"
bv_up

# A fresh server on a fresh port for each test: a server's child that served a failed test may
# still hold the listening socket it inherited after the server was killed (with one port, the
# next server then failed "unable to bind to listen port" while the old child answered ss).
srv=""
qport=19764
CX4_ON_EXIT='[ -z "$srv" ] || { kill $srv 2>/dev/null; wait $srv 2>/dev/null; }'
server() {
	qport=$((qport + 1))
	"$BVCTL" run -- qperf -lp $qport >"$CX4_OUT/qperf.srv" 2>&1 &
	srv=$!
	# (qperf listens on IPv6 as well: look with ss, not in /proc/net/tcp)
	for i in $(seq 200); do ss -ltnH "sport = :$qport" | grep -q . && return 0; sleep 0.05; done
	cat "$CX4_OUT/qperf.srv"
	bv_fail "qperf server did not start"
}

tests="rc_bi_bw rc_bw rc_lat rc_rdma_read_bw rc_rdma_read_lat rc_rdma_write_bw rc_rdma_write_lat
	rc_rdma_write_poll_lat rc_compare_swap_mr rc_fetch_add_mr ud_bi_bw ud_bw ud_lat"
# q CLIENT_DEV SERVER_DEV TEST: qperf's defaults; qcm TEST: with the RDMA CM (-cm1), which
# picks the devices by address (the server at cx4_0's). Output in $out, status returned.
q() {
	local rc
	out="$CX4_OUT/$3-${1%:1}-${2%:1}.out"
	server
	timeout -k 5 120 "$BVCTL" run -- qperf -lp $qport 127.0.0.1 -li "$1" -ri "$2" "$3" \
		>"$out" 2>&1
	rc=$?
	kill $srv 2>/dev/null
	wait $srv 2>/dev/null
	srv=""
	return $rc
}
qcm() {
	local rc
	out="$CX4_OUT/$1-cm.out"
	server
	timeout -k 5 120 "$BVCTL" run -- qperf -lp $qport 127.0.1.1 -cm1 "$1" >"$out" 2>&1
	rc=$?
	kill $srv 2>/dev/null
	wait $srv 2>/dev/null
	srv=""
	return $rc
}

for t in $tests; do
	case $t in
	rc_*) want="failed to modify QP to RTR" ;;
	ud_*) want="failed to create address handle" ;;
	esac
	q cx4_1:1 cx4_0:1 $t && { cat "$out"; bv_fail "qperf $t without a GRH ran on RoCE"; }
	# whichever side fails first says so: the client, or the server (then the client has
	# "server:" and the server's own output the reason)
	grep -q "$want" "$out" || { grep -q "^server:" "$out" && grep -q "$want" "$CX4_OUT/qperf.srv"; } ||
		{ cat "$out" "$CX4_OUT/qperf.srv"; bv_fail "qperf $t: not '$want'"; }
done
echo "ok qperf's defaults (no GRH): refused as on mlx5 RoCE, every rc_* and ud_* test"

qcm rc_bw
if grep -qE "rdma_create_event_channel failed|rdma_create_id failed" "$out"; then
	cat "$out"
	echo "SKIP: qperf -cm1 needs the RDMA CM (the project's librdmacm-plugin)"
	exit 77
fi
for t in $tests; do
	case $t in
	ud_*)
		# qperf 0.4.11 takes -cm1 for RC only ("-cm1 set but not used") and builds its UD
		# address handle from the LID alone: on RoCE, as on a ConnectX, it cannot run
		qcm "$t" && { cat "$out"; bv_fail "qperf -cm1 $t without a GRH ran"; }
		grep -q "set but not used" "$out" && grep -q "failed to create address handle" "$out" ||
			{ cat "$out" "$CX4_OUT/qperf.srv"; bv_fail "qperf -cm1 $t: not qperf's LID-only UD"; }
		echo "ok qperf -cm1 $t: qperf's UD takes no CM, refused as on every RoCE device"
		continue
		;;
	esac
	qcm "$t" || { cat "$out" "$CX4_OUT/qperf.srv"; bv_fail "qperf -cm1 $t"; }
	grep -qiE "fail|error|timeout" "$out" && { cat "$out"; bv_fail "qperf -cm1 $t"; }
	case $t in
	*_bw) want="bw *= *[0-9.]+ [KMG]?B/sec" ;;
	*_lat) want="latency *= *[0-9.]+ [mun]?s" ;;
	*_mr) want="msg_rate *= *[0-9.]+ [KM]?/sec" ;;
	esac
	grep -qE "$want" "$out" || { cat "$out"; bv_fail "qperf -cm1 $t: no /$want/"; }
	echo "ok qperf -cm1 $t: $(grep -E "$want" "$out" | head -1 | tr -s ' ')"
done
# qperf checks no data: bvtraffic between the same devices, every byte checked
cx4_traffic bvtraffic-rc "-d cx4_0" "-d cx4_1 -t rc -n 32 127.0.0.1"
cx4_traffic bvtraffic-ud "-d cx4_0" "-d cx4_1 -t ud -n 32 127.0.0.1"
echo "PASS"
