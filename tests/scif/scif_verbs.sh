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
cases="connect refused messages rma remap poll backlog interrupt multi fork idle mmap limits"
for fabric in ntb cx4; do
	# connections to one's own node: cx4 loops back through its own port, ntb between QPs of
	# one end (the provider's loopback memory; docs/scif.md "Nodes")
	self="self self_rma self_mmap"
	out="$BV_OUT/scif-$fabric.log"
	# shellcheck disable=SC2086
	BV_SCIF_FABRIC=$fabric bv_run "$T" $cases $self >"$out" 2>&1 ||
		{ bv_show "$out" >&2; bv_fail "scif_test over $fabric"; }
	grep -q '^PASS$' "$out" || { bv_show "$out" >&2; bv_fail "scif_test over $fabric: no PASS"; }
	bv_note "$fabric: $(grep -c '^ok ' "$out") cases"
done
# to one's own node with the default preference (ntb, then cx4)
out="$BV_OUT/scif-default-self.log"
BV_SCIF_FABRIC= bv_run "$T" self self_rma >"$out" 2>&1 ||
	{ bv_show "$out" >&2; bv_fail "scif_test to our own node by the default routes"; }
grep -q '^PASS$' "$out" || { bv_show "$out" >&2; bv_fail "scif_test self (default): no PASS"; }
# a node that dies: node 0's daemon killed under a connection; both ends' blocked calls end
# with ECONNRESET or ENODEV (no hang), and once the daemon is back a new connection works
for fabric in ntb cx4; do
	out="$BV_OUT/scif-$fabric-death.log"
	SCIF_TEST_VICTIM="$BV_RUNDIR/${fabric}_0.pid" BV_SCIF_FABRIC=$fabric \
		bv_run "$T" nodedeath >"$out" 2>&1 ||
		{ bv_show "$out" >&2; bv_fail "scif_test nodedeath over $fabric"; }
	bv_note "$fabric: $(grep -h '^nodedeath:' "$out")"
	bv_up
	for _ in $(seq 100); do
		bv_run ibv_devinfo -d ${fabric}_1 2>/dev/null | grep -q PORT_ACTIVE && break
		sleep 0.1
	done
	out="$BV_OUT/scif-$fabric-after.log"
	BV_SCIF_FABRIC=$fabric bv_run "$T" connect messages >"$out" 2>&1 ||
		{ bv_show "$out" >&2; bv_fail "scif_test over $fabric after its daemon came back"; }
done
# the cable of node 1's cx4 port pulled under a connection: blocked calls end, every later
# call fails alike; plugged back, connections work again
out="$BV_OUT/scif-cx4-cable.log"
SCIF_TEST_CABLE="$BVCTL model cx4_1 cable" BV_SCIF_FABRIC=cx4 bv_run "$T" cable >"$out" 2>&1 ||
	{ bv_show "$out" >&2; bv_fail "scif_test cable over cx4"; }
bv_note "cx4: $(grep -h '^cable:' "$out")"
"$BVCTL" model cx4_1 cable plug >/dev/null || bv_fail "cable plug"
for _ in $(seq 100); do
	bv_run ibv_devinfo -d cx4_1 2>/dev/null | grep -q PORT_ACTIVE && break
	sleep 0.1
done
out="$BV_OUT/scif-cx4-replugged.log"
BV_SCIF_FABRIC=cx4 bv_run "$T" connect >"$out" 2>&1 ||
	{ bv_show "$out" >&2; bv_fail "scif_test over cx4 after the cable came back"; }
# a listener that never accepts: ECONNREFUSED after SCIF's 30 s, then a retry connects (the
# timer is libscif's, the same on every device: once, over ntb)
out="$BV_OUT/scif-grant.log"
BV_SCIF_FABRIC=ntb bv_run "$T" granttimeout >"$out" 2>&1 ||
	{ bv_show "$out" >&2; bv_fail "scif_test granttimeout"; }
bv_note "$(grep -h '^grant:' "$out")"
# nothing from a peer was rejected as malformed on the way
grep -h "rejected" "$BV_OUT"/scif-*.log && bv_fail "a peer's message was rejected"
echo "PASS"
