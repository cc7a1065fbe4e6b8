#!/bin/bash
# Async events from the device to the owning clients: a cable pulled and plugged back (the
# model's test control, SIGUSR1/SIGUSR2 to cx4d) reaches a client as IBV_EVENT_PORT_ERR and
# IBV_EVENT_PORT_ACTIVE through the PORT_CHANGE EQE, with the port state following. Then the
# modelled function of cx4_1 is disabled under its driver (SIGRTMIN to cx4d): the health sensor
# finds it, a client with objects open gets IBV_EVENT_DEVICE_FATAL, can create nothing more
# (EIO) and destroys everything; cx4_0 is untouched. (QP fatal/access/request events are checked
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
kill -USR1 "$pid"
for i in $(seq 200); do grep -q down "$out" && break; sleep 0.05; done
kill -USR2 "$pid"
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
kill -RTMIN "$pid"
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
echo "PASS"
