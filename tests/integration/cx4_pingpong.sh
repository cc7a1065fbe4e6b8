#!/bin/bash
# ibverbs-utils' pingpongs, unmodified, through bvctl run: RC (data check, then sleeping on
# completion events), UC, UD and SRQ, between cx4_0 and cx4_1 and in loopback on one device.
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
done
echo "PASS"
