#!/bin/bash
# Loopback on the ntb device: QPs of one end talking to each other, as every RDMA NIC allows
# (docs/ntb-verbs.md "Loopback"). ntb_verbs_test with both ends on one device - two contexts
# of one process, then one context - and the unmodified perftest and ibverbs-utils binaries
# with server and client on the same device (two processes), RC, UC, UD and SRQ. On two
# profiles (NTB_LOOPBACK_PROFILES): loopback takes no window, but the ends must still be up.
BV_TMO=${BV_TMO:-240}
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
. "$BV_SOURCE_DIR/tests/integration/ntb_lib.sh"
bv_isolate_net "$@"

# one PAIR NAME PORT DEV CMD...: server and client of CMD both on DEV
one() {
	local name=$1 port=$2 dev=$3
	shift 3
	bv_pair "$name" "$port" "$* -p $port -d $dev" "$* -p $port -d $dev localhost"
}

for prof in ${NTB_LOOPBACK_PROFILES:-intel-gen3 epf}; do
	ntb_up "$prof"
	bv_run "$BV_BUILD_DIR/bin/ntb_verbs_test" -a ntb_0 -b ntb_0 ||
		bv_fail "$prof: ntb_verbs_test, two contexts on ntb_0"
	bv_run "$BV_BUILD_DIR/bin/ntb_verbs_test" -a ntb_1 -b ntb_1 -1 ||
		bv_fail "$prof: ntb_verbs_test, one context on ntb_1"
	g=$(ntb_gid ntb_0)
	port=19100
	for t in "ibv_rc_pingpong -c -n 500" "ibv_rc_pingpong -c -e -n 200" \
		"ibv_uc_pingpong -c -n 200" "ibv_ud_pingpong -c -n 500" \
		"ibv_srq_pingpong -c -e -q 4 -n 200"; do
		port=$((port + 1))
		# shellcheck disable=SC2086
		one "lo$port" "$port" ntb_0 $t -g "$g" || bv_fail "$prof: $t on one device"
		grep -q "iters in" "$BV_OUT/lo$port.cli" || bv_fail "$prof: $t: no result"
	done
	for t in "ib_write_bw" "ib_write_bw -a -n 20" "ib_read_bw" "ib_send_bw" \
		"ib_send_bw -c UD" "ib_atomic_bw" "ib_write_lat" "ib_read_lat" "ib_send_lat -e"; do
		port=$((port + 1))
		# shellcheck disable=SC2086
		one "lo$port" "$port" ntb_1 $t || bv_fail "$prof: $t on one device"
		grep -A1 '#bytes' "$BV_OUT/lo$port.cli" | tail -n1 | grep -Eq '^ *[0-9]+ +[0-9]+ ' ||
			{ cat "$BV_OUT/lo$port.cli" >&2; bv_fail "$prof: $t: no result"; }
	done
	ntb_check_counters "$prof"
	bv_note "$prof: loopback ok"
done
echo "PASS"
