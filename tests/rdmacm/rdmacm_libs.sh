#!/bin/bash
# Communication libraries whose RDMA connections go through librdmacm (ours, under bvctl run):
#   libfabric  fi_pingpong -p verbs -e msg (rdma_cm endpoints) and -e rdm (ofi_rxm over them),
#              data checked (-c); fi_pingpong's client names no source address, so it connects
#              to the server's device from that very device (cx4 loopback)
#   UCX        tests/rdmacm/ucx_sockaddr.c: a UCP listener and a client endpoint on a socket
#              address (UCX's rdmacm connection manager), 100 echoed and checked messages on
#              a UCP stream over rc_verbs, on cx4
# (on ntb both would need QP loopback on one end or a client source address; docs/rdmacm.md)
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"
. "$BV_SOURCE_DIR/tests/rdmacm/rdmacm_lib.sh"
bv_up

command -v fi_pingpong >/dev/null || bv_fail "no fi_pingpong (libfabric-bin: tools/install-deps.sh)"
# fi_pingpong's servers listen on a TCP control port (47592) before any rdma_cm listen
for ep in msg rdm; do
	name=fi_pingpong-$ep
	bv_run fi_pingpong -p verbs -e $ep -d cx4_0 -I 100 -S 4096 -c >"$RDMACM_OUT/$name.srv" 2>&1 &
	sp=$!
	bv_wait_listen 47592 || { kill $sp; bv_show "$RDMACM_OUT/$name.srv"; bv_fail "$name: no server"; }
	bv_run fi_pingpong -p verbs -e $ep -I 100 -S 4096 -c 127.0.1.1 >"$RDMACM_OUT/$name.cli" 2>&1
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
	echo "ok fi_pingpong -p verbs -e $ep: $(grep "^4k" "$RDMACM_OUT/$name.cli" | tr -s ' ')"
done

ucx=$BV_BUILD_DIR/bin/ucx_sockaddr
if [ -x "$ucx" ]; then
	export UCX_IB_GID_INDEX=3 UCX_WARN_UNUSED_ENV_VARS=n UCX_TLS=rc_verbs \
		UCX_NET_DEVICES=cx4_0:1,cx4_1:1
	rdmacm_pair ucx-sockaddr 13400 "$ucx server 127.0.1.1 13400" \
		"$ucx client 127.0.1.1 13400 100 4096"
	for f in srv cli; do
		rdmacm_expect "$RDMACM_OUT/ucx-sockaddr.$f" "lane\[0\]: +cm rdmacm" "ucx $f: CM"
		rdmacm_expect "$RDMACM_OUT/ucx-sockaddr.$f" "rc_verbs/cx4_" "ucx $f: rc_verbs"
		rdmacm_expect "$RDMACM_OUT/ucx-sockaddr.$f" "^PASS" "ucx $f"
	done
	echo "ok UCX sockaddr: $(grep "echoed" "$RDMACM_OUT/ucx-sockaddr.cli")"
else
	echo "skip UCX sockaddr: not built (no libucx-dev)"
fi
echo "PASS"
