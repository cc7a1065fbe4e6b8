#!/bin/bash
# With a daemon stopped, opening its device fails at once with a message naming the daemon
# and 'bvctl up' (no crash, no hang); the other devices still open; 'bvctl up' restarts it.
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"
bv_up

pid=$(cat "$BV_RUNDIR/cx4_1.pid")
kill -KILL "$pid"
while bv_pid_alive "$pid"; do sleep 0.05; done

start=$(date +%s)
out=$(BV_TMO=20 bv_run ibv_devinfo -d cx4_1 2>&1)
rc=$?
[ $rc != 0 ] || { echo "$out"; bv_fail "ibv_devinfo on a device without daemon succeeded"; }
[ $rc -lt 124 ] || { echo "$out"; bv_fail "ibv_devinfo crashed or hung (rc $rc)"; }
[ $(($(date +%s) - start)) -lt 10 ] || bv_fail "took too long to fail"
echo "$out" | grep -q "cx4d" || { echo "$out"; bv_fail "message does not name cx4d"; }
echo "$out" | grep -q "bvctl up" || { echo "$out"; bv_fail "message does not say 'bvctl up'"; }

bv_expect_output "hca_id:[[:space:]]+cx4_0" bv_run ibv_devinfo -d cx4_0
out=$("$BVCTL" status 2>&1) && bv_fail "status should report the dead daemon"
echo "$out" | grep -q "cx4_1.*not running" || { echo "$out"; bv_fail "status: $out"; }

"$BVCTL" up >/dev/null || bv_fail "bvctl up after a daemon died"
bv_expect_output "hca_id:[[:space:]]+cx4_1" bv_run ibv_devinfo -d cx4_1
echo "PASS"
