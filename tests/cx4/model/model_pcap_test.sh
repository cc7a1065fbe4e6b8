#!/bin/sh
# SPDX-License-Identifier: MIT
# The wire of the ConnectX-4 model, checked by tools nobody here wrote the packets for:
# run the data-path tests with device A capturing (every packet between the two modelled
# ports, both directions), then
#   - tests/cx4/icrc_check.py re-verifies every ICRC with its own CRC code (zlib), and
#   - tshark dissects every frame as InfiniBand over UDP 4791 without a malformed packet
#     (RPC-over-RDMA heuristics off: they misread arbitrary SEND payloads, research note 4.6).
# Usage: model_pcap_test.sh <cx4_model_data_test> <icrc_check.py>
set -eu
test_bin=$1
icrc=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

CX4_MODEL_PCAP="$dir/a" timeout 300 "$test_bin" >"$dir/log" 2>&1 || {
	cat "$dir/log"
	echo "FAIL: the data-path tests failed while capturing"
	exit 1
}
n=0
for f in "$dir"/*.pcap; do
	n=$((n + 1))
	# some tests never reach the wire (local errors): an empty capture is fine
	python3 "$icrc" --allow-empty "$f" >/dev/null || { echo "FAIL: ICRC check of $f"; exit 1; }
done
[ "$n" -gt 10 ] || { echo "FAIL: only $n captures"; exit 1; }
command -v tshark >/dev/null 2>&1 ||
	{ echo "FAIL: tshark is missing (tools/install-deps.sh installs it)"; exit 1; }
for f in "$dir"/*.pcap; do
	out=$(tshark -r "$f" --disable-protocol rpcordma 2>/dev/null)
	if printf '%s\n' "$out" | grep -qi malformed; then
		printf '%s\n' "$out" | grep -i malformed | head
		echo "FAIL: tshark finds malformed packets in $f"
		exit 1
	fi
	# every frame must be dissected as InfiniBand (RoCE v2)
	total=$(tshark -r "$f" 2>/dev/null | wc -l)
	ib=$(tshark -r "$f" --disable-protocol rpcordma -Y infiniband 2>/dev/null | wc -l)
	[ "$total" = "$ib" ] || { echo "FAIL: $f: $ib of $total frames are RoCE"; exit 1; }
done
# the opcodes the tests must have put on the wire (BTH opcode values, IBTA table 9.2)
ops=$(for f in "$dir"/*.pcap; do
	tshark -r "$f" --disable-protocol rpcordma -T fields -e infiniband.bth.opcode 2>/dev/null
done | sort -n | uniq | tr '\n' ' ')
for want in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 32 33 35 38 39 40 100 101; do
	case " $ops" in
	*" $want "*) ;;
	*) echo "FAIL: no packet with BTH opcode $want on the wire (saw: $ops)"; exit 1 ;;
	esac
done
echo "ok: $n captures, ICRCs verified, dissected without malformed packets"
