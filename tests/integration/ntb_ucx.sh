#!/bin/bash
# UCX over the ntb devices (Debian's ucx-utils, unmodified): ucx_info lists rc_verbs and
# ud_verbs on both ends; ucx_perftest runs, over rc_verbs and ud_verbs, across the link
# (ntb_0 <-> ntb_1) and in loopback (both on ntb_0): UCT active messages (latency,
# bandwidth), puts and gets (rc_verbs), and UCP tag matching, put and get (latency,
# bandwidth) with UCX_TLS naming one transport (rc_verbs takes ud_verbs for its wireup).
# UCX is told the index of the RoCE v2 IPv4 GID (UCX_IB_GID_INDEX), as on cx4.
BV_TMO=${BV_TMO:-120}
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
. "$BV_SOURCE_DIR/tests/integration/ntb_lib.sh"
bv_isolate_net "$@"
ntb_up intel-gen3
UCX_IB_GID_INDEX=$(ntb_gid ntb_0)
export UCX_IB_GID_INDEX UCX_WARN_UNUSED_ENV_VARS=n
info=$(bv_run ucx_info -d 2>&1) || { echo "$info"; bv_fail "ucx_info -d"; }
for d in ntb_0 ntb_1; do
	for tl in rc_verbs ud_verbs; do
		echo "$info" | grep -A1 "Transport: $tl" | grep -q "Device: $d:1" ||
			{ echo "$info"; bv_fail "ucx_info: no $tl on $d"; }
	done
done
port=13400
# uct SRV CLI TL TEST...: UCT test TEST over TL, server on SRV, client on CLI
uct() {
	local s=$1 c=$2 tl=$3 name
	shift 3
	port=$((port + 1))
	name="uct-$tl-$1-$s-$c-$port"
	bv_pair "$name" "$port" "ucx_perftest -p $port -d $s:1 -x $tl" \
		"ucx_perftest 127.0.0.1 -p $port -d $c:1 -x $tl -t $* -n 2000 -w 100" ||
		bv_fail "$name"
	grep -q "^Final:" "$BV_OUT/$name.cli" || { cat "$BV_OUT/$name.cli"; bv_fail "$name"; }
	echo "ok $name: $(grep '^Final:' "$BV_OUT/$name.cli" | tr -s ' ')"
}
# ucp SRV CLI TLS TEST...: UCP test TEST with UCX_TLS=TLS
ucp() {
	local s=$1 c=$2 tls=$3 name
	shift 3
	port=$((port + 1))
	name="ucp-${tls%%,*}-$1-$s-$c-$port"
	UCX_TLS=$tls BV_PAIR_S="env UCX_NET_DEVICES=$s:1" BV_PAIR_C="env UCX_NET_DEVICES=$c:1" \
		bv_pair "$name" "$port" "ucx_perftest -p $port" \
		"ucx_perftest 127.0.0.1 -p $port -t $* -n 2000 -w 100" || bv_fail "$name"
	grep -q "^Final:" "$BV_OUT/$name.cli" || { cat "$BV_OUT/$name.cli"; bv_fail "$name"; }
	echo "ok $name: $(grep '^Final:' "$BV_OUT/$name.cli" | tr -s ' ')"
}
for ends in "ntb_0 ntb_1" "ntb_0 ntb_0"; do
	# shellcheck disable=SC2086
	set -- $ends
	uct "$1" "$2" rc_verbs am_lat -s 8
	uct "$1" "$2" rc_verbs am_bw -s 1024 -D bcopy
	uct "$1" "$2" rc_verbs put_lat -s 8
	uct "$1" "$2" rc_verbs put_bw -s 65536 -D zcopy
	uct "$1" "$2" rc_verbs get -s 65536 -D zcopy
	uct "$1" "$2" ud_verbs am_lat -s 8
	uct "$1" "$2" ud_verbs am_bw -s 1024 -D bcopy
	for tls in rc_verbs,ud_verbs ud_verbs; do
		ucp "$1" "$2" $tls tag_lat -s 8
		ucp "$1" "$2" $tls tag_bw -s 65536
		ucp "$1" "$2" $tls ucp_put_lat -s 8
		ucp "$1" "$2" $tls ucp_put_bw -s 65536
		ucp "$1" "$2" $tls ucp_get -s 65536
	done
done
ntb_check_counters ucx
echo "PASS"
