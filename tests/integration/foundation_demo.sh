#!/bin/bash
# bvctl demo (what `make demo` runs) shows what it says: ibv_devices lists the four devices,
# ib_write_bw reports a figure on cx4 and on ntb, rping -V verifies its 4 pings on each, and
# scif_hello's message comes back upper-cased between SCIF nodes 0 and 1 over ntb and cx4.
BV_TMO=${BV_TMO:-300}
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"

out=$BV_OUT/demo.out
timeout -k 5 "$BV_TMO" "$BVCTL" demo >"$out" 2>&1 || { cat "$out"; bv_fail "bvctl demo failed"; }
chk() {
	[ "$(grep -Ec -- "$1" "$out")" = "$2" ] || { cat "$out"; bv_fail "not $2 lines /$1/: $3"; }
}
for d in cx4_0 cx4_1 ntb_0 ntb_1; do
	chk "^[[:space:]]+$d[[:space:]]+[0-9a-f]{16}$" 1 "ibv_devices lists $d"
done
chk "^ 65536[[:space:]]+[1-9][0-9]*[[:space:]]+[0-9.]+[[:space:]]+[1-9][0-9.]*" 2 "ib_write_bw on cx4 and ntb"
chk "^ping data: rdma-ping-[0-3]: " 8 "rping's 4 verified pings on cx4 and ntb"
chk "^node 1 got: HELLO OVER (NTB|CX4)$" 2 "scif_hello over ntb and cx4"
chk "is not installed|skipped" 0 "a part of the demo was skipped"
chk "^bvctl demo: done$" 1 "the demo's verdict"
# the demo leaves the devices up, as make demo does
bv_expect_output "cx4_0: kind cx4, daemon pid [0-9]+, 0 clients" "$BVCTL" status
echo "PASS"
