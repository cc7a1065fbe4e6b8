#!/bin/bash
# cx4 benchmark (not a test: it asserts nothing, it measures): the machine's UDP loopback
# baselines and the cx4 device's perftest numbers, in the same run, and their ratios against
# the issue's targets:
#
#   ib_write_bw 64 KiB bandwidth   >= 0.6 x  best UDP loopback throughput, 4 KiB datagrams
#   ib_write_bw -s 8 message rate  >= 0.5 x  UDP loopback packet rate
#   ib_write_lat typical           <= 1.5 x  busy-polling UDP half round trip
#
# Usage: bench/cx4_bench.sh [BUILD_DIR]   (default: build). Runs in a private run directory and,
# as root, a private network namespace. Prints a report; exit 0 unless something failed to run.
# BENCH_SECONDS (3) per measurement, BENCH_REPEAT (3) rounds, BENCH_CABLE_ONLY=1 skips the
# UDP-wire variant.
set -u
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
if [ -z "${BV_IN_NETNS:-}" ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	export BV_IN_NETNS=1
	exec unshare --net -- bash -c 'ip link set lo up && exec "$0" "$@"' "$0" "$@"
fi
BVCTL="$BUILD/bin/bvctl"
export BV_RUNDIR=$(mktemp -d /tmp/bvbench.XXXXXX)
OUT=$(mktemp -d /tmp/bvbench-out.XXXXXX)
trap '"$BVCTL" down >/dev/null 2>&1; rm -rf "$BV_RUNDIR" "$OUT"' EXIT
T=${BENCH_SECONDS:-3}

val() { sed -n "s/^$1=\([0-9.]*\).*/\1/p"; }
R=${BENCH_REPEAT:-3}

perf() {	# perf NAME ARGS: server on cx4_0, client on cx4_1; prints the client's last result line
	local out="$OUT/$1"
	shift
	timeout 120 "$BVCTL" run -- "$@" -d cx4_0 -x 3 >"$out.srv" 2>&1 &
	local sp=$! i
	for i in $(seq 200); do grep -q ":4853 00000000:0000 0A" /proc/net/tcp && break; sleep 0.05; done
	timeout 120 "$BVCTL" run -- "$@" -d cx4_1 -x 3 127.0.0.1 >"$out.cli" 2>&1
	wait $sp
	grep -E '^[[:space:]]*[0-9]+[[:space:]]+[0-9]+' "$out.cli" | tail -n 1
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print 0 }'; }

# run_cx4 LABEL EXTRA_CONFIG_LINE: each measurement R times on a fresh pair of devices, each
# time right after its baseline (this VM's speed drifts by 2x within minutes: only a ratio of
# neighbouring runs means something); the report gives the median ratio and its run.
run_cx4() {
	local label=$1 extra=$2 conf="$OUT/bench.conf" i b c
	printf '[device cx4_0]\nkind = cx4\nip = 127.0.1.1\n%s\n\n[device cx4_1]\nkind = cx4\nip = 127.0.1.2\n%s\n' \
		"$extra" "$extra" >"$conf"
	"$BVCTL" --config "$conf" up >/dev/null || { echo "bvctl up failed"; exit 1; }
	rm -f "$conf"
	echo "== cx4, $label (cx4_0 <-> cx4_1, perftest through bvctl run), $R rounds"
	: >"$OUT/bw" ; : >"$OUT/rate" ; : >"$OUT/lat"
	for i in $(seq "$R"); do
		b=$("$BUILD/bin/bv_baseline" -t "$T" udp-bw 4096 | val udp_bw_4096)
		c=$(perf bw ib_write_bw -s 65536 -D "$T" | awk '{ printf "%.2f", $4 * 8 / 1000 }')
		echo "$c $b" | awk '{ printf "%.3f %s %s\n", ($2 > 0 ? $1 / $2 : 0), $1, $2 }' >>"$OUT/bw"
		b=$("$BUILD/bin/bv_baseline" -t "$T" udp-pps | val udp_pps_64)
		c=$(perf rate ib_write_bw -s 8 -D "$T" | awk '{ print $5 }')
		echo "$c $b" | awk '{ printf "%.3f %s %s\n", ($2 > 0 ? $1 / $2 : 0), $1, $2 }' >>"$OUT/rate"
		b=$("$BUILD/bin/bv_baseline" -t "$T" udp-lat | val udp_half_rtt_64)
		c=$(perf lat ib_write_lat -s 8 -n 20000 | awk '{ print $5 }')
		echo "$c $b" | awk '{ printf "%.3f %s %s\n", ($2 > 0 ? $1 / $2 : 0), $1, $2 }' >>"$OUT/lat"
		echo "round $i: bw $(tail -n1 "$OUT/bw"), rate $(tail -n1 "$OUT/rate"), lat $(tail -n1 "$OUT/lat") (ratio cx4 udp)"
	done
	"$BVCTL" status 2>/dev/null | grep 'model:'
	"$BVCTL" down >/dev/null
	echo "-- report, $label (median of $R; load average $(cut -d' ' -f1-3 /proc/loadavg))"
	pick() { local m; m=$(cut -d' ' -f1 "$OUT/$1" | median); grep -m1 "^$m " "$OUT/$1"; }
	pick bw | awk '{ printf "ib_write_bw 64 KiB      %8.2f Gb/s   UDP 4 KiB  %8.2f Gb/s   ratio %.2f  (target >= 0.60) %s\n", $2, $3, $1, ($1 >= 0.6 ? "met" : "NOT met") }'
	pick rate | awk '{ printf "ib_write_bw 8 B rate    %8.3f Mpps   UDP rate   %8.3f Mpps   ratio %.2f  (target >= 0.50) %s\n", $2, $3, $1, ($1 >= 0.5 ? "met" : "NOT met") }'
	pick lat | awk '{ printf "ib_write_lat typical    %8.2f us     UDP RTT/2  %8.2f us     ratio %.2f  (target <= 1.50) %s\n", $2, $3, $1, ($1 <= 1.5 ? "met" : "NOT met") }'
	echo
}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
run_cx4 "ports joined by a cable, registered memory shared with the device (the default)" "cable = bench"
CX4_SHADOW=0 run_cx4 "cable, registered memory reached by pid (CX4_SHADOW=0)" "cable = bench"
[ -n "${BENCH_CABLE_ONLY:-}" ] || run_cx4 "ports on the UDP wire (the host's network)" ""
