#!/bin/bash
# The drop-in librdmacm.so.1 exports what Debian 12's librdmacm exports: the same symbols in
# the same version nodes (objdump -T of both compared), the same SONAME, and libibverbs as a
# dependency; the programs that link librdmacm resolve it to ours through bvctl's environment
# and find every version they ask for.
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
SYS=/usr/lib/x86_64-linux-gnu/librdmacm.so.1
OURS="$BV_BUILD_DIR/lib/rdmacm/librdmacm.so.1"
[ -e "$SYS" ] || bv_fail "no system librdmacm ($SYS): apt-get install librdmacm1"
[ -e "$OURS" ] || bv_fail "not built: $OURS"

# "VERSION NAME" of every defined function, and the version definitions
syms() {
	objdump -T "$1" | awk '$2 == "g" && $3 == "DF" && $4 != "*UND*" { print $6, $7 }' | sort
}
nodes() {
	objdump -T "$1" | awk '$3 == "DO" && $4 == "*ABS*" { print $7 }' | sort
}
syms "$SYS" >"$BV_OUT/sys.syms"
syms "$OURS" >"$BV_OUT/ours.syms"
n=$(wc -l <"$BV_OUT/sys.syms")
[ "$n" -ge 68 ] || bv_fail "the system library lists only $n functions"
diff -u "$BV_OUT/sys.syms" "$BV_OUT/ours.syms" || bv_fail "exported functions differ (- Debian, + ours)"
[ "$(nodes "$SYS")" = "$(nodes "$OURS")" ] || bv_fail "version nodes differ: $(nodes "$OURS")"
echo "ok $n functions in $(nodes "$OURS" | tr '\n' ' ')"

soname() { objdump -p "$1" | awk '$1 == "SONAME" { print $2 }'; }
[ "$(soname "$OURS")" = "$(soname "$SYS")" ] || bv_fail "SONAME $(soname "$OURS")"
objdump -p "$OURS" | grep -q "NEEDED *libibverbs.so.1" || bv_fail "does not link libibverbs"
echo "ok SONAME $(soname "$OURS"), needs libibverbs"

# Every program that links librdmacm loads ours from bvctl's environment, with every version
# it asks for (ldd says "version ... not found" or "no version information" otherwise).
bv_up
for prog in rping ucmatose udaddy udpong rdma_server rdma_client rdma_xserver rdma_xclient \
	rstream riostream rcopy cmtime mckey ib_write_bw ib_send_bw ib_read_lat ib_send_lat \
	/usr/lib/x86_64-linux-gnu/rsocket/librspreload.so.1; do
	path=$(command -v "$prog" || echo "$prog")
	[ -e "$path" ] || bv_fail "$prog: not installed"
	out=$(bv_run ldd "$path" 2>&1) || { echo "$out"; bv_fail "ldd $prog"; }
	got=$(echo "$out" | awk '$1 == "librdmacm.so.1" { print $3 }')
	[ -n "$got" ] && [ "$(readlink -f "$got")" = "$(readlink -f "$OURS")" ] ||
		{ echo "$out"; bv_fail "$prog does not load our librdmacm"; }
	if echo "$out" | grep -Eq "not found|no version information"; then
		echo "$out"
		bv_fail "$prog: missing versions"
	fi
done
echo "ok the rdmacm-utils, perftest and librspreload load it with every version they need"
echo "PASS"
