#!/bin/bash
# libscif between processes over both device kinds (tests/scif/scif_test.c): every function,
# flag and documented error that needs a connection, with every byte checked. Connections go
# through bridgeverbs' librdmacm (bvctl run puts it first). Node 0 uses cx4_0 and ntb_0, node 1
# cx4_1 and ntb_1 (the built-in configuration); BV_SCIF_FABRIC picks the device kind.
BV_TMO=${BV_TMO:-900}
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"
bv_up

T="$BV_BUILD_DIR/bin/scif_test"
cases="connect refused messages rma poll backlog interrupt multi fork idle mmap"
for fabric in ntb cx4; do
	# connections to one's own node: cx4 loops back through its own port; an NTB has no path
	# to itself until the ntb provider's loopback (docs/scif.md "Nodes")
	self=""
	[ $fabric = cx4 ] && self="self self_rma self_mmap"
	out="$BV_OUT/scif-$fabric.log"
	# shellcheck disable=SC2086
	BV_SCIF_FABRIC=$fabric bv_run "$T" $cases $self >"$out" 2>&1 ||
		{ bv_show "$out" >&2; bv_fail "scif_test over $fabric"; }
	grep -q '^PASS$' "$out" || { bv_show "$out" >&2; bv_fail "scif_test over $fabric: no PASS"; }
	bv_note "$fabric: $(grep -c '^ok ' "$out") cases"
done
# to one's own node with the default preference (ntb, then cx4): a route that cannot connect
# (an NTB end has no path to itself unless its provider loops back) falls to the next one
out="$BV_OUT/scif-default-self.log"
BV_SCIF_FABRIC= bv_run "$T" self self_rma >"$out" 2>&1 ||
	{ bv_show "$out" >&2; bv_fail "scif_test to our own node by the default routes"; }
grep -q '^PASS$' "$out" || { bv_show "$out" >&2; bv_fail "scif_test self (default): no PASS"; }
# nothing from a peer was rejected as malformed on the way
grep -h "rejected" "$BV_OUT"/scif-*.log && bv_fail "a peer's message was rejected"
echo "PASS"
