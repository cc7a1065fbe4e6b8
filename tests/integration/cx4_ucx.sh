#!/bin/bash
# UCX over the cx4 devices: ucx_info lists rc_verbs and ud_verbs on both ports, and
# ucx_perftest runs active messages (latency, bandwidth) over rc_verbs and ud_verbs and
# zero-copy RDMA puts over rc_verbs between cx4_0 and cx4_1. UCX cannot tell a RoCE v2 GID
# from the hard-coded /sys path, so it is told the index (UCX_IB_GID_INDEX).
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"
. "$BV_SOURCE_DIR/tests/integration/cx4_lib.sh"
conf=$(mktemp /tmp/cx4ucx.XXXXXX)
printf '[device cx4_0]\nkind = cx4\nip = 127.0.1.1\n\n[device cx4_1]\nkind = cx4\nip = 127.0.1.2\n' >"$conf"
bv_up "$conf"
rm -f "$conf"
export UCX_IB_GID_INDEX=$CX4_GID UCX_WARN_UNUSED_ENV_VARS=n
info=$(bv_run ucx_info -d 2>&1) || { echo "$info"; bv_fail "ucx_info -d"; }
for d in cx4_0 cx4_1; do
	for tl in rc_verbs ud_verbs; do
		echo "$info" | grep -A1 "Transport: $tl" | grep -q "Device: $d:1" ||
			{ echo "$info"; bv_fail "ucx_info: no $tl on $d"; }
	done
done
for t in "rc_verbs am_lat -s 8" "rc_verbs am_bw -s 1024 -D bcopy" "rc_verbs put_bw -s 65536 -D zcopy" \
	 "ud_verbs am_lat -s 8" "ud_verbs am_bw -s 1024 -D bcopy"; do
	set -- $t
	tl=$1
	shift
	name="ucx-$tl-$1"
	cx4_pair "$name" 13337 "ucx_perftest -d cx4_0:1 -x $tl" \
		"ucx_perftest 127.0.0.1 -d cx4_1:1 -x $tl -t $* -n 2000"
	cx4_expect "$CX4_OUT/$name.cli" "^Final:" "$name"
	echo "ok $name: $(grep '^Final:' "$CX4_OUT/$name.cli" | tr -s ' ')"
done
# ucx_perftest checks no data: bvtraffic over the same transports, every byte checked
cx4_traffic bvtraffic-rc "-d cx4_0 -g $CX4_GID" "-d cx4_1 -g $CX4_GID -n 64 -t rc 127.0.0.1"
cx4_traffic bvtraffic-ud "-d cx4_0 -g $CX4_GID" "-d cx4_1 -g $CX4_GID -n 64 -t ud 127.0.0.1"
echo "PASS"
