#!/bin/bash
# libscif's performance targets (issue 11), as ratios to baselines measured in the same run:
#
#   scif_writeto 1 MiB over ntb        >= 0.8 x single-thread memcpy of 1 MiB
#                                      (and against one TCP loopback stream, reported)
#   scif_send/recv 8-byte round trip   <= 2 us over ntb
#                                      <= 1.2 x ib_send_lat -s 8 (its round trip) over cx4
#
# bench/scif_bench.c between SCIF nodes 0 and 1 of the built-in configuration (ntb_0 <-> ntb_1,
# cx4_0 and cx4_1), in a private run directory and, as root, a private network namespace.
# Prints one line per target and the exit status is 0 whatever the numbers (a measurement,
# not a test).
#
# usage: bench/scif_bench.sh [-b BUILD_DIR] [-t SECONDS] [-r REPEATS] [-n ROUND_TRIPS]
set -u
here=$(cd "$(dirname "$0")" && pwd)
BV_SOURCE_DIR=$(dirname "$here")
BV_BUILD_DIR=$BV_SOURCE_DIR/build
secs=3
reps=3
count=20000
while getopts "b:t:r:n:h" o; do
	case $o in
	b) BV_BUILD_DIR=$(cd "$OPTARG" && pwd) ;;
	t) secs=$OPTARG ;;
	r) reps=$OPTARG ;;
	n) count=$OPTARG ;;
	*) sed -n '2,14p' "$0"; exit 2 ;;
	esac
done
export BV_SOURCE_DIR BV_BUILD_DIR
if [ -z "${BV_IN_NETNS:-}" ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	export BV_IN_NETNS=1
	exec unshare --net -- bash -c 'ip link set lo up && exec "$0" "$@"' "$0" "$@"
fi
BVCTL=$BV_BUILD_DIR/bin/bvctl
BASE=$BV_BUILD_DIR/bin/bv_baseline
SB=$BV_BUILD_DIR/bin/scif_bench
BV_RUNDIR=$(mktemp -d /tmp/bvbench.XXXXXX)
OUT=$(mktemp -d /tmp/bvbench-out.XXXXXX)
export BV_RUNDIR
trap '"$BVCTL" down >/dev/null 2>&1; rm -rf "$BV_RUNDIR" "$OUT"' EXIT

"$BVCTL" up >/dev/null || { echo "bvctl up failed"; exit 1; }
for _ in $(seq 100); do
	"$BVCTL" run -- ibv_devinfo -d ntb_1 2>/dev/null | grep -q PORT_ACTIVE && break
	sleep 0.1
done

best() { sort -g | tail -n1; }
least() { sort -g | head -n1; }
val() { sed -n "s/^$1=\([0-9.]*\).*/\1/p"; }
verdict() { awk -v v="$1" -v t="$2" -v d="$3" 'BEGIN { ok = d == "ge" ? v >= t : v <= t;
	printf "%s", ok ? "met" : "MISSED" }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }'; }
sb() {	# sb FABRIC MODE ARG: one scif_bench run
	BV_SCIF_FABRIC=$1 timeout 300 "$BVCTL" run -- "$SB" "$2" "$3" 2>"$OUT/err" ||
		sed 's/^/# scif_bench: /' "$OUT/err" >&2
}
# ib_send_lat -s 8 over cx4 (GID index 3, the IPv4 one): t_typical, a half round trip
send_lat() {
	timeout 120 "$BVCTL" run -- ib_send_lat -s 8 -n "$count" -d cx4_0 -x 3 >"$OUT/srv" 2>&1 &
	local sp=$!
	for _ in $(seq 200); do
		grep -q ":4853 00000000:0000 0A" /proc/net/tcp && break
		sleep 0.05
	done
	timeout 120 "$BVCTL" run -- ib_send_lat -s 8 -n "$count" -d cx4_1 -x 3 127.0.0.1 \
		>"$OUT/cli" 2>&1
	wait $sp
	grep -E '^[[:space:]]*8[[:space:]]+[0-9]+' "$OUT/cli" | tail -n1 | awk '{print $5}'
}

echo "# scif bench: $reps runs of ${secs}s (round trips: $count) each, best kept ($(nproc) CPUs," \
	"load $(cut -d' ' -f1-3 /proc/loadavg))"
mc=$(for _ in $(seq "$reps"); do "$SB" memcpy "$secs"; done | val memcpy_1m | best)
tcp=$(for _ in $(seq "$reps"); do "$BASE" -t "$secs" tcp-bw; done | val tcp_bw | best)
wr=$(for _ in $(seq "$reps"); do sb ntb writeto "$secs"; done | val scif_writeto_1m | best)
rtt_ntb=$(for _ in $(seq "$reps"); do sb ntb rtt "$count"; done | val scif_rtt_8 | least)
rtt_cx4=$(for _ in $(seq "$reps"); do sb cx4 rtt "$count"; done | val scif_rtt_8 | least)
isl=$(for _ in $(seq "$reps"); do send_lat; done | least)

# GB/s against Gb/s: the TCP baseline is in bits
tcpB=$(awk -v t="${tcp:-0}" 'BEGIN { printf "%.2f", t / 8 }')
echo "baseline memcpy 1 MiB               ${mc} GB/s"
echo "baseline TCP loopback stream        ${tcpB} GB/s (${tcp} Gb/s)"
echo "baseline ib_send_lat -s 8 cx4       ${isl} us typical (half round trip)"
r=$(ratio "$wr" "$mc"); t=$(ratio "$wr" "$tcpB")
echo "scif_writeto 1 MiB ntb  ${wr} GB/s = ${r} x memcpy ($(verdict "$r" 0.8 ge) >= 0.8)," \
	"${t} x tcp"
echo "scif 8-byte RTT ntb     ${rtt_ntb} us ($(verdict "$rtt_ntb" 2 le) <= 2)"
r=$(ratio "$rtt_cx4" "$(awk -v h="${isl:-0}" 'BEGIN { print 2 * h }')")
echo "scif 8-byte RTT cx4     ${rtt_cx4} us = ${r} x ib_send_lat round trip" \
	"($(verdict "$r" 1.2 le) <= 1.2)"
exit 0
