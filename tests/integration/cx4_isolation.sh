#!/bin/bash
# Clients of one cx4d are isolated and cleaned up after: at the protocol level (a client
# cannot name another's objects; malformed requests get errors; a client that leaves without
# cleaning up has everything destroyed), and for real programs: a perftest pair and a
# bvtraffic client killed with SIGKILL while data moves leave no client, object or DMA mapping
# behind (bvctl status: back to what the daemons held before), the survivor sees its work fail
# (retries exceeded, flushes) and no wrong byte, and several processes share the devices at
# the same time.
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

# A pair killed in the middle of a long run. First perftest: the kill lands while packets
# flow (the model's tx counter of both devices moves in the half second before it).
tx() {	# tx DEVICE: packets the device's model sent so far (its controls, outside cx4d)
	"$BVCTL" model "$1" stats 2>/dev/null | sed -n 's/^tx_pkts //p'
}
held() {	# held DEVICE: what its clients hold (objects, DMA mappings), one line
	"$BVCTL" status 2>/dev/null | sed -n "/^$1:/,/^[a-z]/s/.*clients hold //p"
}
base0=$(held cx4_0) base1=$(held cx4_1)
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
a0=$(tx cx4_0) a1=$(tx cx4_1)
sleep 0.5
b0=$(tx cx4_0) b1=$(tx cx4_1)
bv_pid_alive "$sp" && bv_pid_alive "$cp" || bv_fail "killed pair: it was not running when killed"
[ "$b0" -gt "$a0" ] && [ "$b1" -gt "$a1" ] ||
	bv_fail "killed pair: no packets moved just before the kill (cx4_0 $a0 -> $b0, cx4_1 $a1 -> $b1)"
# bvctl run execs the program: each ib_write_bw is the child of its timeout
pkill -KILL -P "$sp,$cp" -x ib_write_bw 2>/dev/null
wait $sp $cp 2>/dev/null
bv_note "perftest pair killed while moving data ($((b1 - a1)) packets from cx4_1 in 0.5 s)"
# wait_clean: no client left on either device, and they hold what they held before
wait_clean() {
	for i in $(seq 100); do
		st=$("$BVCTL" status 2>/dev/null)
		echo "$st" | grep -q "cx4_0: kind cx4.* 0 clients" &&
			echo "$st" | grep -q "cx4_1: kind cx4.* 0 clients" &&
			[ "$(held cx4_0)" = "$base0" ] && [ "$(held cx4_1)" = "$base1" ] && return 0
		sleep 0.1
	done
	echo "$st" >&2
	bv_fail "$1: the daemons kept a client or its objects (before: cx4_0 $base0; cx4_1 $base1)"
}
wait_clean "killed perftest pair"
# and the devices still work
cx4_pair after 18515 "ibv_rc_pingpong -d cx4_0 -g $CX4_GID -n 100 -c" \
	"ibv_rc_pingpong -d cx4_1 -g $CX4_GID -n 100 -c 127.0.0.1"

# Then bvtraffic: the client (cx4_1) killed while the server (cx4_0) sends to it, after data
# was seen to move and checked. The survivor finds its QPs' work failing (retries exceeded, or
# flushed behind that) and nothing wrong with what it checked; cx4_1's daemon gives back every
# object and DMA mapping the dead client held.
B="$BV_BUILD_DIR/bin/bvtraffic -p 18518 -g $CX4_GID -W 30"
timeout -k 5 90 "$BVCTL" run -- $B -d cx4_0 >"$CX4_OUT/bk.srv" 2>&1 &
sp=$!
cx4_wait_listen 18518 || bv_fail "bvtraffic kill: no server"
timeout -k 5 90 "$BVCTL" run -- $B -d cx4_1 -x s2c -D 60 -q 4 -T 14 -r 3 127.0.0.1 \
	>"$CX4_OUT/bk.cli" 2>&1 &
cp=$!
bv_wait_checked "$CX4_OUT/bk.srv"
m0=$(bv_checked "$CX4_OUT/bk.srv")
sleep 1.5
m1=$(bv_checked "$CX4_OUT/bk.srv")
[ -n "$m0" ] && [ "$m1" -gt "$m0" ] || { cat "$CX4_OUT/bk.srv" >&2; bv_fail "bvtraffic kill: no data moving"; }
pkill -KILL -P "$cp" -x bvtraffic
wait "$cp"
wait "$sp"
src=$?
bv_note "bvtraffic client killed after $m1 messages checked; the server exits $src"
[ "$src" = 3 ] || { cat "$CX4_OUT/bk.srv" >&2; bv_fail "bvtraffic kill: the survivor exited $src, not 3"; }
grep -Eq "error completion (RETRY_EXC_ERR|WR_FLUSH_ERR)|[0-9]+ flushed \(WR_FLUSH_ERR\)" "$CX4_OUT/bk.srv" ||
	{ cat "$CX4_OUT/bk.srv" >&2; bv_fail "bvtraffic kill: the survivor saw no retry-exceeded or flush"; }
grep -q "DATA ERROR" "$CX4_OUT/bk.srv" && bv_fail "bvtraffic kill: a data error on the survivor"
grep -E "QP [0-9]+: (error completion|[0-9]+ flushed)" "$CX4_OUT/bk.srv" | head -n 4
wait_clean "killed bvtraffic client"
cx4_traffic after-kill "-d cx4_0 -g $CX4_GID" "-d cx4_1 -g $CX4_GID -n 64 -q 4 127.0.0.1"
cx4_stop cx4_0
cx4_stop cx4_1
echo "PASS"
