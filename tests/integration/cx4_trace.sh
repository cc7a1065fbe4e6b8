#!/bin/bash
# The command trace: cx4d --trace prints every command as Linux mlx5_core's dump_command();
# the bring-up is compared with the Linux trace of a ConnectX-4 Lx (model profile cx4lx, the
# same card): inputs equal where the commands mean the same, every difference explained
# (tests/cx4/driver/trace_diff.py, docs/cx4-driver.md).
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"
conf=$(mktemp /tmp/cx4trace.XXXXXX)
cat >"$conf" <<EOC
[device cx4_0]
kind = cx4
ip = 127.0.1.1
profile = cx4lx
trace = $BV_RUNDIR/cx4_0.trace
EOC
bv_up "$conf"
rm -f "$conf"
# stop cx4d (SIGTERM, as bvctl down) so the trace has the teardown too
pid=$(cat "$BV_RUNDIR/cx4_0.pid")
kill -TERM "$pid"
for i in $(seq 200); do bv_pid_alive "$pid" || break; sleep 0.05; done
trace="$BV_RUNDIR/cx4_0.trace"
[ -s "$trace" ] || bv_fail "no trace written"
decoded=$(python3 "$BV_SOURCE_DIR/tests/cx4/trace_decode.py" -f "$trace" list) ||
	bv_fail "trace_decode cannot read the trace"
echo "$decoded" | grep -q "ENABLE_HCA" || bv_fail "no ENABLE_HCA in the trace"
echo "$decoded" | grep -q "0x103 TEARDOWN_HCA" || bv_fail "no TEARDOWN_HCA in the trace"
# the Linux trace: $CX4_TRACE, else tests/cx4/data (trace_decode.py)
python3 "$BV_SOURCE_DIR/tests/cx4/driver/trace_diff.py" "$trace" || { rm -f "$trace"; bv_fail "trace differs"; }
rm -f "$trace"
echo "PASS"
