#!/bin/bash
# Communication libraries whose RDMA connections go through librdmacm (ours, under bvctl run):
#   libfabric  fi_pingpong -p verbs -e msg (rdma_cm endpoints) and -e rdm (ofi_rxm over them),
#              data checked (-c); fi_pingpong's client names no source address, so it connects
#              to the server's device from that very device (loopback on one cx4 port, on
#              one ntb end)
#   UCX        tests/rdmacm/ucx_sockaddr.c: a UCP listener and a client endpoint on a socket
#              address (UCX's rdmacm connection manager), 100 echoed and checked messages on
#              a UCP stream over rc_verbs
# UCX on cx4 and on ntb, libfabric on cx4
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"
. "$BV_SOURCE_DIR/tests/rdmacm/rdmacm_lib.sh"
bv_up

command -v fi_pingpong >/dev/null || bv_fail "no fi_pingpong (libfabric-bin: tools/install-deps.sh)"
ucx=$BV_BUILD_DIR/bin/ucx_sockaddr
[ -x "$ucx" ] || bv_fail "no $ucx (libucx-dev: tools/install-deps.sh)"
export UCX_IB_GID_INDEX=3 UCX_WARN_UNUSED_ENV_VARS=n UCX_TLS=rc_verbs
port=13400
for d in "cx4 127.0.1.1" "ntb 127.0.2.1"; do
	set -- $d
	kind=$1 ip=$2
	# fi_pingpong's servers listen on a TCP control port (47592) before any rdma_cm listen.
	# Not on ntb yet: its client's fi_getinfo finds no match for 127.0.2.1 (-61) although
	# fi_info lists the ntb domains (docs/rdmacm.md "Open")
	[ $kind = ntb ] && ep_list="" || ep_list="msg rdm"
	for ep in $ep_list; do
		name=fi_pingpong-$kind-$ep
		bv_run fi_pingpong -p verbs -e $ep -d ${kind}_0 -I 100 -S 4096 -c \
			>"$RDMACM_OUT/$name.srv" 2>&1 &
		sp=$!
		bv_wait_listen 47592 ||
			{ kill $sp; bv_show "$RDMACM_OUT/$name.srv"; bv_fail "$name: no server"; }
		bv_run fi_pingpong -p verbs -e $ep -I 100 -S 4096 -c $ip >"$RDMACM_OUT/$name.cli" 2>&1
		crc=$?
		[ $crc = 0 ] || kill $sp 2>/dev/null
		wait $sp
		src=$?
		if [ $crc != 0 ] || [ $src != 0 ]; then
			bv_show "$RDMACM_OUT/$name.srv"
			bv_show "$RDMACM_OUT/$name.cli"
			bv_fail "$name: server $src, client $crc"
		fi
		rdmacm_expect "$RDMACM_OUT/$name.cli" "^4k +100 +=100 " "$name"
		echo "ok fi_pingpong -p verbs -e $ep on $kind: $(grep "^4k" "$RDMACM_OUT/$name.cli" | tr -s ' ')"
	done

	port=$((port + 1))
	name=ucx-sockaddr-$kind
	UCX_NET_DEVICES=${kind}_0:1,${kind}_1:1 rdmacm_pair $name $port "$ucx server $ip $port" \
		"$ucx client $ip $port 100 4096"
	for f in srv cli; do
		rdmacm_expect "$RDMACM_OUT/$name.$f" "lane\[0\]: +cm rdmacm" "ucx $kind $f: CM"
		rdmacm_expect "$RDMACM_OUT/$name.$f" "rc_verbs/${kind}_" "ucx $kind $f: rc_verbs"
		rdmacm_expect "$RDMACM_OUT/$name.$f" "^PASS" "ucx $kind $f"
	done
	echo "ok UCX sockaddr on $kind: $(grep "echoed" "$RDMACM_OUT/$name.cli")"
done
echo "PASS"
