#!/bin/bash
# UCX over the cx4 devices: ucx_info lists rc_verbs and ud_verbs on both ports; ucx_perftest
# runs, between cx4_0 and cx4_1,
#   UCT: active messages (latency, bandwidth) over rc_verbs and ud_verbs, zero-copy puts, put
#        latency and get (zero-copy) over rc_verbs;
#   UCP: tag matching, put and get, latency and bandwidth, with UCX_TLS=rc_verbs,ud_verbs
#        (rc carries the data, ud the wire-up) and with UCX_TLS=ud_verbs;
# and UCP tag traffic over rc_verbs on every GID type the ports list (UCX_IB_GID_INDEX).
# UCX picks its GID itself (RoCE v2 over IPv4 first), reading gid_attrs/types under
# /sys/class/infiniband, which bvctl run shows it. ucx_perftest checks no data: bvtraffic
# moves RC and UD traffic between the same ports, every byte checked.
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"
. "$BV_SOURCE_DIR/tests/integration/cx4_lib.sh"
command -v ucx_perftest >/dev/null || bv_fail "UCX is not installed (tools/install-deps.sh)"
conf=$(mktemp /tmp/cx4ucx.XXXXXX)
printf '[device cx4_0]\nkind = cx4\nip = 127.0.1.1\ncable = u\n\n[device cx4_1]\nkind = cx4\nip = 127.0.1.2\ncable = u\n' >"$conf"
bv_up "$conf"
rm -f "$conf"
export UCX_WARN_UNUSED_ENV_VARS=n
info=$(bv_run ucx_info -d 2>&1) || { echo "$info"; bv_fail "ucx_info -d"; }
for d in cx4_0 cx4_1; do
	for tl in rc_verbs ud_verbs; do
		echo "$info" | grep -A1 "Transport: $tl" | grep -q "Device: $d:1" ||
			{ echo "$info"; bv_fail "ucx_info: no $tl on $d"; }
	done
done
echo "ok ucx_info: rc_verbs and ud_verbs on cx4_0:1 and cx4_1:1"

# UCT: one transport, named with -x
for t in "rc_verbs am_lat -s 8" "rc_verbs am_bw -s 1024 -D bcopy" "rc_verbs put_bw -s 65536 -D zcopy" \
	 "rc_verbs put_lat -s 8" "rc_verbs get -s 65536 -D zcopy" \
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

# UCP: the transports through UCX_TLS, the device through UCX_NET_DEVICES
ucp() {
	local name=$1 tls=$2 gid=$3
	shift 3
	cx4_pair "$name" 13337 \
		"env UCX_TLS=$tls UCX_NET_DEVICES=cx4_0:1 $gid ucx_perftest" \
		"env UCX_TLS=$tls UCX_NET_DEVICES=cx4_1:1 $gid ucx_perftest 127.0.0.1 -t $* -n 2000"
	cx4_expect "$CX4_OUT/$name.cli" "^Final:" "$name"
	echo "ok $name: $(grep '^Final:' "$CX4_OUT/$name.cli" | tr -s ' ')"
}
for tls in rc_verbs,ud_verbs ud_verbs; do
	for t in "tag_lat -s 8" "tag_bw -s 65536" "ucp_put_lat -s 8" "ucp_put_bw -s 65536" \
		 "ucp_get -s 65536"; do
		set -- $t
		ucp "ucp-${tls%%,*}-$1" "$tls" "" $t
	done
done
# every GID the ports list: RoCE v1 and v2, link-local and IPv4
for g in 0 1 2 3; do
	ucp "ucp-rc-gid$g" rc_verbs,ud_verbs "UCX_IB_GID_INDEX=$g" tag_bw -s 65536
done
# ucx_perftest checks no data: bvtraffic over the same transports, every byte checked
cx4_traffic bvtraffic-rc "-d cx4_0 -g $CX4_GID" "-d cx4_1 -g $CX4_GID -n 64 -t rc 127.0.0.1"
cx4_traffic bvtraffic-ud "-d cx4_0 -g $CX4_GID" "-d cx4_1 -g $CX4_GID -n 64 -t ud 127.0.0.1"
echo "PASS"
