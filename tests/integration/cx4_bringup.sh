#!/bin/bash
# cx4d brings both modelled ConnectX-4 ports up through the command queue: the devices report
# the firmware's version and capabilities (not defaults), the port is active with a RoCE v2
# GID, bvctl status shows the device, and both daemons tear down cleanly.
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"
. "$BV_SOURCE_DIR/tests/integration/cx4_lib.sh"
bv_up

for d in cx4_0 cx4_1; do
	out=$(bv_run ibv_devinfo -v -d $d 2>&1) || { echo "$out"; bv_fail "ibv_devinfo $d"; }
	for pat in "fw_ver:[[:space:]]+12\.16\.1020" "atomic_cap:[[:space:]]+ATOMIC_HCA" \
		   "state:[[:space:]]+PORT_ACTIVE" "link_layer:[[:space:]]+Ethernet" \
		   "max_qp:[[:space:]]+131072" "num_comp_vectors:[[:space:]]+[1-9]" \
		   "GID\[[[:space:]]*3\]:.*, RoCE v2"; do
		echo "$out" | grep -Eq "$pat" || { echo "$out"; bv_fail "$d: no /$pat/"; }
	done
done
bv_expect_output "ConnectX-4 fw 12\.16\.1020.*healthy" "$BVCTL" status
"$BVCTL" down >/dev/null || bv_fail "bvctl down"
for d in cx4_0 cx4_1; do
	grep -q "ConnectX-4 up" "$BV_RUNDIR/$d.log" || bv_fail "$d: no bring-up line"
	grep -q "stopped" "$BV_RUNDIR/$d.log" || bv_fail "$d: no clean stop"
	if grep -Eq "failed|kept .* pages" "$BV_RUNDIR/$d.log"; then
		cat "$BV_RUNDIR/$d.log" >&2
		bv_fail "$d: errors in the daemon log"
	fi
done
echo "PASS"
