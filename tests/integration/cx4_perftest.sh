#!/bin/bash
# perftest, unmodified, through bvctl run: every test with -a (all sizes), -q 8 (bandwidth
# tests) and -e (sleeping on completion events, where perftest allows it: not for WRITE),
# between cx4_0 and cx4_1, then in loopback on one device. perftest checks completions, not
# data: bvtraffic runs the same opcodes under the same conditions (8 QPs, events, every size)
# and checks every byte, immediate and atomic result.
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"
. "$BV_SOURCE_DIR/tests/integration/cx4_lib.sh"
bv_up
BV_TMO=${CX4_PERF_TMO:-300}
run() {	# run NAME A B ARGS...
	local name=$1 a=$2 b=$3
	shift 3
	cx4_pair "$name" 18515 "$* -d $a -x $CX4_GID" "$* -d $b -x $CX4_GID 127.0.0.1"
	cx4_expect "$CX4_OUT/$name.cli" "^[[:space:]]*[0-9]+[[:space:]]+[0-9]+" "$name: results"
	echo "ok $name: $(grep -E '^[[:space:]]*[0-9]+[[:space:]]+[0-9]+' "$CX4_OUT/$name.cli" |
		tail -n 1 | tr -s ' ')"
}
for pair in "cx4_0 cx4_1" "cx4_0 cx4_0"; do
	set -- $pair
	a=$1 b=$2
	for t in write read send; do
		run "ib_${t}_bw-a-$a-$b" $a $b ib_${t}_bw -a -n 50
		run "ib_${t}_bw-q8-$a-$b" $a $b ib_${t}_bw -q 8 -n 200
		run "ib_${t}_lat-a-$a-$b" $a $b ib_${t}_lat -a -n 50
		if [ $t != write ]; then
			run "ib_${t}_bw-e-$a-$b" $a $b ib_${t}_bw -e -n 200
			run "ib_${t}_lat-e-$a-$b" $a $b ib_${t}_lat -e -n 200
		fi
	done
	run "ib_atomic_bw-fa-$a-$b" $a $b ib_atomic_bw -A FETCH_AND_ADD -n 500
	run "ib_atomic_bw-cs-$a-$b" $a $b ib_atomic_bw -A CMP_AND_SWAP -n 500
	run "ib_atomic_bw-q8-$a-$b" $a $b ib_atomic_bw -q 8 -n 200
	run "ib_atomic_bw-e-$a-$b" $a $b ib_atomic_bw -e -n 200
	for t in "-q 8 -w 16" "-e" "-s 0-8388608 -w 4 -q 1 -n 24"; do
		cx4_traffic "bvtraffic-$a-$b${t// /}" "-d $a -g $CX4_GID" \
			"-d $b -g $CX4_GID -n 64 $t 127.0.0.1"
	done
done
echo "PASS"
