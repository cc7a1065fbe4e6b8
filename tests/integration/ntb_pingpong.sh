#!/bin/bash
# ibverbs-utils over ntb_0 <-> ntb_1 on every hardware profile: ibv_rc_pingpong (-e waits on
# completion channels), ibv_uc_pingpong, ibv_ud_pingpong, ibv_srq_pingpong; their -c compares
# one byte a page, so bvtraffic runs beside them and checks every byte (RC, UC, UD, SRQ).
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
	# -c compares one byte a page (rdma-core's validate_buf) and only prints a mismatch:
	# bvtraffic checks every byte of every opcode, both directions
	for t in "-t rc -q 3" "-t rc -S -e" "-t uc" "-t ud -S -e"; do
		port=$((port + 1))
		bv_traffic "bvt$port" "$port" "-d ntb_0 -g $g" "-d ntb_1 -g $g -n 48 $t localhost" ||
			bv_fail "$prof: bvtraffic $t"
	done
	ntb_check_counters "$prof"
	bv_note "$prof: pingpongs ok"
done
echo "PASS"
