#!/bin/bash
# Async events from the device to the owning clients: a cable pulled and plugged back (the
# model's control outside the function, bvctl model cx4_1 cable pull/plug: cx4d is not told)
# reaches a client as IBV_EVENT_PORT_ERR and IBV_EVENT_PORT_ACTIVE through the PORT_CHANGE EQE,
# with the port state following. Then the modelled function of cx4_1 fails under its driver
# (bvctl model cx4_1 fail disable: the NIC interface disabled, nothing told): the health sensor
# finds it, a client with objects open gets IBV_EVENT_DEVICE_FATAL, can create nothing more
# (EIO) and destroys everything; cx4_0 is untouched, and its port counters, read by cx4d with
# QUERY_VPORT_COUNTER, show the traffic. Last, cx4_0's firmware reports a fatal error. (QP fatal/access/request events are checked
# by cx4_verbs' error cases.)
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"
. "$BV_SOURCE_DIR/tests/integration/cx4_lib.sh"
bv_up
out="$CX4_OUT/port.out"
bv_run "$BV_BUILD_DIR/bin/cx4_port_test" cx4_1 >"$out" 2>&1 &
tp=$!
for i in $(seq 200); do grep -q ready "$out" && break; sleep 0.05; done
grep -q ready "$out" || { cat "$out"; bv_fail "cx4_port_test did not start"; }
pid=$(cat "$BV_RUNDIR/cx4_1.pid")
model() { "$BVCTL" model "$@" || bv_fail "bvctl model $*"; }
model cx4_1 cable pull
for i in $(seq 200); do grep -q down "$out" && break; sleep 0.05; done
model cx4_1 cable plug
wait $tp || { cat "$out"; bv_fail "port events"; }
grep -q "^up$" "$out" || { cat "$out"; bv_fail "no PORT_ACTIVE"; }
# the other device saw nothing: its port stayed active
bv_expect_output "state:[[:space:]]+PORT_ACTIVE" bv_run ibv_devinfo -d cx4_0
# and the port that went down and up carries traffic, every byte right
cx4_traffic "bvtraffic-after-port-events" "-d cx4_0 -g $CX4_GID" "-d cx4_1 -g $CX4_GID -n 64 127.0.0.1"

out="$CX4_OUT/fatal.out"
bv_run "$BV_BUILD_DIR/bin/cx4_port_test" cx4_1 fatal >"$out" 2>&1 &
tp=$!
for i in $(seq 200); do grep -q ready "$out" && break; sleep 0.05; done
grep -q ready "$out" || { cat "$out"; bv_fail "cx4_port_test fatal did not start"; }
model cx4_1 fail disable
wait $tp || { cat "$out" "$BV_RUNDIR/cx4_1.log"; bv_fail "device fatal"; }
grep -q "^fatal$" "$out" || { cat "$out"; bv_fail "no DEVICE_FATAL"; }
grep -q "device fatal: NIC interface disabled" "$BV_RUNDIR/cx4_1.log" ||
	{ cat "$BV_RUNDIR/cx4_1.log"; bv_fail "cx4d did not report the fault"; }
# the dead device's daemon still answers, refusing new contexts (Linux: commands to a device
# in internal error fail); the other device works on
bv_pid_alive "$pid" || bv_fail "cx4d of the dead device exited"
bv_run ibv_devinfo -d cx4_1 >"$out" 2>&1 && { cat "$out"; bv_fail "a context on a dead device"; }
grep -q "Input/output error" "$out" || { cat "$out"; bv_fail "dead device: no EIO"; }
cx4_pair "rc-after-fatal" 18515 "ibv_rc_pingpong -d cx4_0 -g $CX4_GID -n 20 -c" \
	"ibv_rc_pingpong -d cx4_0 -g $CX4_GID -n 20 -c 127.0.0.1"
cx4_traffic "bvtraffic-after-fatal" "-d cx4_0 -g $CX4_GID" "-d cx4_0 -g $CX4_GID -n 64 -e 127.0.0.1"
# cx4d reads the port's traffic from the device (QUERY_VPORT_COUNTER): the pair above moved
# 20 round trips over cx4_0, so its counters are at least that, and so are the model's own
tx=$("$BVCTL" status | awk '/^cx4_0:/ { d = 1 } /^cx4_1:/ { d = 0 }
	d && /port 1 counters/ { for (i = 1; i < NF; i++) if ($i == "tx") { print $(i + 1); exit } }')
[ -n "$tx" ] && [ "$tx" -ge 40 ] || { "$BVCTL" status; bv_fail "cx4_0: port counters ($tx)"; }
mtx=$(model cx4_0 stats | sed -n 's/^tx_pkts //p')
[ "${mtx:-0}" -ge "$tx" ] || bv_fail "cx4_0: the model counts $mtx packets sent, cx4d $tx"
bv_note "cx4_0: $tx packets sent (vport counter), $mtx (the model's count, read later)"

# a firmware fatal error (health syndrome, recovery flow required) is found by the sensor too
model cx4_0 fail firmware
for i in $(seq 100); do
	grep -q "device fatal: firmware syndrome" "$BV_RUNDIR/cx4_0.log" && break
	sleep 0.1
done
grep -q "device fatal: firmware syndrome with recovery flow required" "$BV_RUNDIR/cx4_0.log" ||
	{ cat "$BV_RUNDIR/cx4_0.log"; bv_fail "cx4d did not find the firmware error"; }
echo "PASS"
