#!/bin/bash
# Clients of one cx4d are isolated and cleaned up after: at the protocol level (a client
# cannot name another's objects; malformed requests get errors; a client that leaves without
# cleaning up has everything destroyed), and for real programs: a perftest pair killed with
# SIGKILL in the middle of a run leaves no client and no leaked object behind, and several
# processes share the devices at the same time.
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"
. "$BV_SOURCE_DIR/tests/integration/cx4_lib.sh"
bv_up

"$BV_BUILD_DIR/bin/cx4_isolation_test" cx4_0 || bv_fail "protocol isolation"

# two perftest pairs at once, on different TCP ports
cx4_pair share1 18515 "ib_send_bw -d cx4_0 -x $CX4_GID -n 2000 -p 18515" \
	"ib_send_bw -d cx4_1 -x $CX4_GID -n 2000 -p 18515 127.0.0.1" &
p1=$!
cx4_pair share2 18516 "ib_write_bw -d cx4_0 -x $CX4_GID -n 2000 -p 18516" \
	"ib_write_bw -d cx4_1 -x $CX4_GID -n 2000 -p 18516 127.0.0.1" &
p2=$!
wait $p1 || bv_fail "first of two concurrent pairs"
wait $p2 || bv_fail "second of two concurrent pairs"

# a pair killed in the middle of a long run
timeout -k 5 60 "$BVCTL" run -- ib_write_bw -d cx4_0 -x $CX4_GID -D 30 >"$CX4_OUT/k.srv" 2>&1 &
sp=$!
cx4_wait_listen 18515 || bv_fail "killed pair: server"
timeout -k 5 60 "$BVCTL" run -- ib_write_bw -d cx4_1 -x $CX4_GID -D 30 127.0.0.1 \
	>"$CX4_OUT/k.cli" 2>&1 &
cp=$!
for i in $(seq 100); do
	st=$("$BVCTL" status 2>/dev/null)
	echo "$st" | grep -q "cx4_1: kind cx4.*[1-9] client" && break
	sleep 0.1
done
sleep 1
# bvctl run execs the program: each ib_write_bw is the child of its timeout
pkill -KILL -P "$sp,$cp" -x ib_write_bw 2>/dev/null
wait $sp $cp 2>/dev/null
for i in $(seq 100); do
	st=$("$BVCTL" status 2>/dev/null)
	echo "$st" | grep -q "cx4_0: kind cx4.* 0 clients" &&
		echo "$st" | grep -q "cx4_1: kind cx4.* 0 clients" && break
	sleep 0.1
done
echo "$st" | grep -q "cx4_0: kind cx4.* 0 clients" || { echo "$st"; bv_fail "cx4_0 kept a client"; }
echo "$st" | grep -q "cx4_1: kind cx4.* 0 clients" || { echo "$st"; bv_fail "cx4_1 kept a client"; }
# and the devices still work
cx4_pair after 18515 "ibv_rc_pingpong -d cx4_0 -g $CX4_GID -n 100 -c" \
	"ibv_rc_pingpong -d cx4_1 -g $CX4_GID -n 100 -c 127.0.0.1"
cx4_stop cx4_0
cx4_stop cx4_1
echo "PASS"
