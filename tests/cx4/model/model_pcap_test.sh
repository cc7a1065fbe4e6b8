#!/bin/sh
# SPDX-License-Identifier: MIT
# The wire of the ConnectX-4 model, checked by tools nobody here wrote the packets for:
# run the data-path tests with device A capturing (every packet between the two modelled
# ports, both directions), then
#   - tests/cx4/icrc_check.py re-verifies every ICRC with its own CRC code (zlib), and
#   - tshark dissects every frame as InfiniBand over UDP 4791 without a malformed packet
#     (every IB payload heuristic off: they misread test patterns as RPCoRDMA, FCoIB, ...;
#     icrc_check.py --tshark-args lists them).
# Usage: model_pcap_test.sh <cx4_model_data_test> <icrc_check.py> [<cx4_model_mkey_test>]
# (the memory-key tests add SEND_WITH_INV to the wire)
set -eu
test_bin=$1
icrc=$2
mkey_bin=${3:-}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

CX4_MODEL_PCAP="$dir/a" timeout 300 "$test_bin" >"$dir/log" 2>&1 || {
	cat "$dir/log"
	echo "FAIL: the data-path tests failed while capturing"
	exit 1
}
if [ -n "$mkey_bin" ]; then
	CX4_MODEL_PCAP="$dir/a" timeout 300 "$mkey_bin" >"$dir/log" 2>&1 || {
		cat "$dir/log"
		echo "FAIL: the memory-key tests failed while capturing"
		exit 1
	}
fi
n=0
for f in "$dir"/*.pcap; do
	n=$((n + 1))
	# some tests never reach the wire (local errors): an empty capture is fine
	python3 "$icrc" --allow-empty "$f" >/dev/null || { echo "FAIL: ICRC check of $f"; exit 1; }
done
[ "$n" -gt 10 ] || { echo "FAIL: only $n captures"; exit 1; }
command -v tshark >/dev/null 2>&1 ||
	{ echo "FAIL: tshark is missing (tools/install-deps.sh installs it)"; exit 1; }
targs=$(python3 "$icrc" --tshark-args | tr '\n' ' ')
for f in "$dir"/*.pcap; do
	# shellcheck disable=SC2086 # $targs: one option or heuristic name per word
	out=$(tshark -r "$f" $targs 2>/dev/null)
	if printf '%s\n' "$out" | grep -qi malformed; then
		printf '%s\n' "$out" | grep -i malformed | head
		echo "FAIL: tshark finds malformed packets in $f"
		exit 1
	fi
	# every frame must be dissected as InfiniBand (RoCE v2)
	total=$(tshark -r "$f" 2>/dev/null | wc -l)
	# shellcheck disable=SC2086
	ib=$(tshark -r "$f" $targs -Y infiniband 2>/dev/null | wc -l)
	[ "$total" = "$ib" ] || { echo "FAIL: $f: $ib of $total frames are RoCE"; exit 1; }
done
# the opcodes the tests must have put on the wire (BTH opcode values, IBTA table 9.2)
ops=$(for f in "$dir"/*.pcap; do
	# shellcheck disable=SC2086
	tshark -r "$f" $targs -T fields -e infiniband.bth.opcode 2>/dev/null
done | sort -n | uniq | tr '\n' ' ')
want_ops="0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 32 33 35 38 39 40 100 101"
[ -z "$mkey_bin" ] || want_ops="$want_ops 22 23"	# RC SEND_LAST/ONLY_WITH_INVALIDATE
for want in $want_ops; do
	case " $ops" in
	*" $want "*) ;;
	*) echo "FAIL: no packet with BTH opcode $want on the wire (saw: $ops)"; exit 1 ;;
	esac
done
echo "ok: $n captures, ICRCs verified, dissected without malformed packets"
