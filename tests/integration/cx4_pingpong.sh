#!/bin/bash
# ibverbs-utils' pingpongs, unmodified, through bvctl run: RC (-c, then sleeping on completion
# events), UC, UD and SRQ, between cx4_0 and cx4_1 and in loopback on one device; bvtraffic
# beside them checks every byte of RC, UC and UD traffic (SRQ, several QPs, events).
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"
. "$BV_SOURCE_DIR/tests/integration/cx4_lib.sh"
bv_up
for pair in "cx4_0 cx4_1" "cx4_0 cx4_0"; do
	set -- $pair
	a=$1 b=$2
	for t in "rc -c" "rc -e -c" "uc -c" "uc -e" "ud -c" "ud -e -c" "srq -c" "srq -e"; do
		set -- $t
		prog=ibv_$1_pingpong
		shift
		name="$prog-$a-$b${*// /}"
		# sleeping on events: enough iterations to meet a lost wakeup (a CQE that lands
		# between the arm doorbell and the device seeing it must still raise the event)
		n=200
		case " $* " in *" -e "*) n=2000 ;; esac
		cx4_pair "$name" 18515 "$prog -d $a -g $CX4_GID -n $n $*" \
			"$prog -d $b -g $CX4_GID -n $n $* 127.0.0.1"
		cx4_expect "$CX4_OUT/$name.cli" "bytes in .* seconds" "$name"
		cx4_expect "$CX4_OUT/$name.srv" "iters in .* seconds" "$name"
		echo "ok $name"
	done
	# the pingpongs' -c compares one byte a page (rdma-core's validate_buf) and only prints
	# a mismatch: bvtraffic checks every byte, both directions, every opcode
	for t in "-t rc" "-t rc -S -e -q 3" "-t uc -e" "-t ud" "-t ud -S -q 4"; do
		cx4_traffic "bvtraffic-$a-$b${t// /}" "-d $a -g $CX4_GID" \
			"-d $b -g $CX4_GID -n 64 $t 127.0.0.1"
	done
done
echo "PASS"
