#!/bin/bash
# The sample programs of docs/scif-samples, built only against the installed scif.h and
# libscif.so (cmake --install into a private prefix, the build tree out of sight), run between
# node 0 and node 1 over ntb and cx4 and to one's own node.
BV_TMO=${BV_TMO:-120}
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"

P="$BV_OUT/prefix"
cmake --install "$BV_BUILD_DIR" --prefix "$P" >"$BV_OUT/install.log" 2>&1 ||
	{ cat "$BV_OUT/install.log" >&2; bv_fail "cmake --install"; }
[ -f "$P/include/scif.h" ] || bv_fail "scif.h is not installed"
lib=$(dirname "$(find "$P" -name libscif.so.0 | head -n1)")
[ -n "$lib" ] && [ -L "$lib/libscif.so" ] || bv_fail "libscif.so.0 and libscif.so are not installed"
objdump -T "$lib/libscif.so.0" >"$BV_OUT/syms"
[ "$(grep -c " SCIF_0.0 *scif_" "$BV_OUT/syms")" = 22 ] ||
	{ cat "$BV_OUT/syms" >&2; bv_fail "libscif.so.0: not the 22 functions under SCIF_0.0"; }
for s in scif_hello scif_rma scif_mmap; do
	cc -std=c99 -D_DEFAULT_SOURCE -Wall -Wextra -Werror -I"$P/include" \
		"$BV_SOURCE_DIR/docs/scif-samples/$s.c" -L"$lib" -lscif -Wl,-rpath,"$lib" \
		-o "$BV_OUT/$s" || bv_fail "$s does not build against the installed library"
	ldd "$BV_OUT/$s" >"$BV_OUT/$s.ldd"
	grep -q "libscif.so.0 => $lib/libscif.so.0" "$BV_OUT/$s.ldd" ||
		{ cat "$BV_OUT/$s.ldd" >&2; bv_fail "$s links another libscif"; }
done

bv_up
# sample NAME NODE FABRIC ARGS...: the listener on node 0, the connector on node NODE
sample() {
	local name=$1 node=$2 fabric=$3 port=$((4000 + RANDOM % 1000))
	shift 3
	BV_SCIF_FABRIC=$fabric timeout -k 5 "$BV_TMO" "$BVCTL" run --scif-node 0 -- \
		"$BV_OUT/$name" listen $port >"$BV_OUT/$name.srv" 2>&1 &
	local srv=$! i
	for i in $(seq 200); do
		grep -q "listening on port" "$BV_OUT/$name.srv" && break
		sleep 0.1
	done
	BV_SCIF_FABRIC=$fabric timeout -k 5 "$BV_TMO" "$BVCTL" run --scif-node "$node" -- \
		"$BV_OUT/$name" connect 0 $port "$@" >"$BV_OUT/$name.cli" 2>&1
	local crc=$?
	[ $crc = 0 ] || kill $srv 2>/dev/null
	wait $srv
	local src=$?
	if [ $crc != 0 ] || [ $src != 0 ]; then
		cat "$BV_OUT/$name.srv" "$BV_OUT/$name.cli" >&2
		bv_fail "$name (node $node, $fabric)"
	fi
}
for fabric in ntb cx4; do
	sample scif_hello 1 $fabric "hello over $fabric"
	grep -q "node 1 got: HELLO OVER ${fabric^^}" "$BV_OUT/scif_hello.cli" || bv_fail "scif_hello"
	sample scif_rma 1 $fabric
	grep -q "every byte checked" "$BV_OUT/scif_rma.srv" || bv_fail "scif_rma: no data"
	grep -q "read back 1 MiB" "$BV_OUT/scif_rma.cli" || bv_fail "scif_rma: no read back"
	sample scif_mmap 1 $fabric
done
# the connector of scif_mmap stored through the NTB window; across cx4 it cannot map
grep -q "EOPNOTSUPP\|not supported" "$BV_OUT/scif_mmap.cli" || bv_fail "scif_mmap over cx4"
sample scif_mmap 1 ntb
grep -q "the peer's store arrived: 1234567887654321" "$BV_OUT/scif_mmap.srv" ||
	bv_fail "scif_mmap over ntb"
# to one's own node, over each kind (ntb: QPs of one end through the provider's loopback)
for fabric in cx4 ntb; do
	sample scif_mmap 0 $fabric
	grep -q "the peer's store arrived" "$BV_OUT/scif_mmap.srv" ||
		bv_fail "scif_mmap to node 0 over $fabric"
done
echo "PASS"
