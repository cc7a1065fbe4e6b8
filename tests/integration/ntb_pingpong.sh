#!/bin/bash
# ibverbs-utils over ntb_0 <-> ntb_1 on every hardware profile: ibv_rc_pingpong (-c checks the
# data, -e waits on completion channels), ibv_uc_pingpong, ibv_ud_pingpong, ibv_srq_pingpong.
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
. "$BV_SOURCE_DIR/tests/integration/ntb_lib.sh"
bv_isolate_net "$@"
for prof in $NTB_PROFILES; do
	ntb_up "$prof"
	g=$(ntb_gid ntb_0)
	[ -n "$g" ] || bv_fail "$prof: no RoCE v2 GID"
	port=18600
	for t in "ibv_rc_pingpong -c" "ibv_rc_pingpong -c -e" "ibv_rc_pingpong -c -s 65536" \
		"ibv_uc_pingpong -c" "ibv_uc_pingpong -c -e" "ibv_ud_pingpong -c" \
		"ibv_ud_pingpong -c -e" "ibv_srq_pingpong -c" "ibv_srq_pingpong -c -e -q 4"; do
		port=$((port + 1))
		# shellcheck disable=SC2086
		ntb_pair "pp$port" "$port" $t -g "$g" -n 500 || bv_fail "$prof: $t"
		grep -q "iters in" "$BV_OUT/pp$port.cli" || bv_fail "$prof: $t: no result"
	done
	ntb_check_counters "$prof"
	bv_note "$prof: pingpongs ok"
done
echo "PASS"
