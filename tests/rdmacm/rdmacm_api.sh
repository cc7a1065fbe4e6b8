#!/bin/bash
# rdma_cm's semantics as applications rely on them (tests/rdmacm/cm_probe.c "api"): the
# devices and contexts, event channels, ports and port spaces, options, rdma_getaddrinfo,
# connect/accept/disconnect with private data, rejects (no listener: 8, consumer: 28),
# synchronous ids, UD through SIDR, IPv6, AF_IB, rdma_migrate_id; on the cx4 ports and on the
# two ends of the ntb link.
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"
. "$BV_SOURCE_DIR/tests/rdmacm/rdmacm_lib.sh"
bv_up
for pair in "cx4 127.0.1.1 127.0.1.2" "ntb 127.0.2.1 127.0.2.2"; do
	set -- $pair
	out="$RDMACM_OUT/api-$1"
	bv_run_vg "$BV_BUILD_DIR/bin/cm_probe" api "$2" "$3" >"$out" 2>&1 ||
		{ cat "$out"; bv_fail "cm_probe api on $1"; }
	grep -q "^PASS" "$out" || { cat "$out"; bv_fail "cm_probe api on $1: no PASS"; }
	echo "ok $1: $(grep -c '^ok' "$out") checks"
done
for dev in cx4_0 cx4_1 ntb_0 ntb_1; do
	m=$(rdmacm_cm_stat $dev malformed)
	[ "$m" = 0 ] || { "$BVCTL" status; bv_fail "$dev: $m malformed MADs"; }
done
echo "PASS"
