#!/bin/bash
# perftest over ntb_0 <-> ntb_1 on every hardware profile: ib_write_bw, ib_read_bw, ib_send_bw,
# ib_atomic_bw, ib_write_lat, ib_read_lat, ib_send_lat - each as is, with -a (every size), with
# -q 8 (bandwidth tests) and with -e (where perftest allows events: not for WRITE).
# Results are checked for presence, not speed (bench/ measures). perftest checks no data:
# bvtraffic runs the same opcodes (8 QPs, events, every size) and checks every byte.
BV_TMO=${BV_TMO:-240}
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
. "$BV_SOURCE_DIR/tests/integration/ntb_lib.sh"
bv_isolate_net "$@"

run() {
	local prof=$1
	shift
	port=$((port + 1))
	ntb_pair "pt$port" "$port" "$@" || bv_fail "$prof: $*"
	# the result table: a line of numbers under the #bytes header
	grep -A1 '#bytes' "$BV_OUT/pt$port.cli" | tail -n1 | grep -Eq '^ *[0-9]+ +[0-9]+ ' ||
		{ cat "$BV_OUT/pt$port.cli" >&2; bv_fail "$prof: $*: no result"; }
}

for prof in $NTB_PROFILES; do
	ntb_up "$prof"
	port=18700
	for t in ib_write_bw ib_read_bw ib_send_bw ib_atomic_bw; do
		run "$prof" $t
		run "$prof" $t -q 8
		[ $t = ib_write_bw ] || run "$prof" $t -e
		[ $t = ib_atomic_bw ] || run "$prof" $t -a -n 20
	done
	for t in ib_write_lat ib_read_lat ib_send_lat; do
		run "$prof" $t
		run "$prof" $t -a -n 20
		[ $t = ib_write_lat ] || run "$prof" $t -e
	done
	for t in "-q 8 -w 16" "-e" "-s 0-8388608 -w 4 -q 1 -n 16"; do
		port=$((port + 1))
		bv_traffic "bvt$port" "$port" "-d ntb_0" "-d ntb_1 -n 48 $t localhost" ||
			bv_fail "$prof: bvtraffic $t"
	done
	ntb_check_counters "$prof"
	bv_note "$prof: perftest ok"
done
echo "PASS"
