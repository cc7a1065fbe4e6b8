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
# stop the daemons the way bvctl down does (SIGTERM) and read what they did on the way out
for d in cx4_0 cx4_1; do
	pid=$(cat "$BV_RUNDIR/$d.pid")
	kill -TERM "$pid"
	for i in $(seq 200); do bv_pid_alive "$pid" || break; sleep 0.05; done
	bv_pid_alive "$pid" && bv_fail "$d: cx4d did not stop on SIGTERM"
	log="$BV_RUNDIR/$d.log"
	grep -q "ConnectX-4 up" "$log" || { cat "$log" >&2; bv_fail "$d: no bring-up line"; }
	grep -q "stopped" "$log" || { cat "$log" >&2; bv_fail "$d: no clean stop"; }
	if grep -Eq "failed|kept .* pages|fatal" "$log"; then
		cat "$log" >&2
		bv_fail "$d: errors in the daemon log"
	fi
done
echo "PASS"
