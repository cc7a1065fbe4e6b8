#!/bin/bash
# The ntb device's performance targets (issue 3), as ratios to baselines measured in the same
# run on this machine (bench/bv_baseline.c):
#
#   ib_write_bw 64 KiB and 1 MiB  >= 0.7 x single-thread process_vm_writev of the same size
#                                 >= 2   x one TCP loopback stream
#   ib_write_bw -s 8              >= 3 M messages/s
#   ib_write_lat (2 bytes)        typical <= 0.5 x busy-polling UDP loopback half round trip
#
# Unmodified perftest over ntb_0 <-> ntb_1 (one profile, default intel-gen3) in a private run
# directory and, as root, a private network namespace. Prints one line per target and a
# summary; the exit status is 0 whatever the numbers (this is a measurement, not a test).
#
# usage: bench/ntb_bench.sh [-b BUILD_DIR] [-p PROFILE] [-t SECONDS] [-r REPEATS]
set -u
here=$(cd "$(dirname "$0")" && pwd)
BV_SOURCE_DIR=$(dirname "$here")
BV_BUILD_DIR=$BV_SOURCE_DIR/build
profile=intel-gen3
secs=3
reps=3
while getopts "b:p:t:r:h" o; do
	case $o in
	b) BV_BUILD_DIR=$(cd "$OPTARG" && pwd) ;;
	p) profile=$OPTARG ;;
	t) secs=$OPTARG ;;
	r) reps=$OPTARG ;;
	*) sed -n '2,15p' "$0"; exit 2 ;;
	esac
done
export BV_SOURCE_DIR BV_BUILD_DIR
. "$here/lib.sh"
if [ -z "${BV_IN_NETNS:-}" ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	export BV_IN_NETNS=1
	bench_netns_exec "$0" "$@"
fi
BVCTL=$BV_BUILD_DIR/bin/bvctl
BASE=$BV_BUILD_DIR/bin/bv_baseline
BV_RUNDIR=$(mktemp -d /tmp/bvbench.XXXXXX)
export BV_RUNDIR
trap '"$BVCTL" down >/dev/null 2>&1; rm -rf "$BV_RUNDIR"' EXIT

cat >"$BV_RUNDIR/bench.conf" <<EOF
[device ntb_0]
kind = ntb
link = ntbbench
side = 0
profile = $profile
ip = 127.0.2.1

[device ntb_1]
kind = ntb
link = ntbbench
side = 1
profile = $profile
ip = 127.0.2.2
EOF
"$BVCTL" --config "$BV_RUNDIR/bench.conf" up >/dev/null || { echo "bvctl up failed"; exit 1; }
bench_wait_active "$BVCTL" ntb_1

port=19000
# perf CMD...: run a perftest pair; prints the client's result line.
perf() {
	local spid
	port=$((port + 1))
	timeout 120 "$BVCTL" run -- "$@" -p $port -d ntb_0 >/dev/null 2>&1 &
	spid=$!
	for _ in $(seq 200); do
		ss -ltn 2>/dev/null | grep -q ":$port " && break
		sleep 0.05
	done
	timeout 120 "$BVCTL" run -- "$@" -p $port -d ntb_1 localhost 2>/dev/null |
		grep -A1 '#bytes' | tail -n1
	wait $spid
}

echo "# ntb bench: profile $profile, $reps runs of ${secs}s each, best kept ($(nproc) CPUs," \
	"load $(cut -d' ' -f1-3 /proc/loadavg))"
pvm64=$(for _ in $(seq "$reps"); do "$BASE" -t "$secs" pvm-bw 65536; done |
	bench_val pvm_bw_65536 | bench_best)
pvm1m=$(for _ in $(seq "$reps"); do "$BASE" -t "$secs" pvm-bw 1048576; done |
	bench_val pvm_bw_1048576 | bench_best)
tcp=$(for _ in $(seq "$reps"); do "$BASE" -t "$secs" tcp-bw; done | bench_val tcp_bw | bench_best)
udp=$(for _ in $(seq "$reps"); do "$BASE" -t "$secs" udp-lat; done |
	bench_val udp_half_rtt_64 | bench_least)

# ib_write_bw --report_gbits: column 4 is the average in Gb/s, column 5 the message rate
bw64=$(for _ in $(seq "$reps"); do perf ib_write_bw -s 65536 -D "$secs" --report_gbits; done |
	awk '{print $4}' | bench_best)
bw1m=$(for _ in $(seq "$reps"); do perf ib_write_bw -s 1048576 -D "$secs" --report_gbits; done |
	awk '{print $4}' | bench_best)
rate=$(for _ in $(seq "$reps"); do perf ib_write_bw -s 8 -D "$secs"; done | awk '{print $5}' |
	bench_best)
# ib_write_lat: column 5 is t_typical (the median) in microseconds
lat=$(for _ in $(seq "$reps"); do perf ib_write_lat -n 20000; done | awk '{print $5}' |
	bench_least)

verdict() { awk -v v="$1" -v t="$2" -v d="$3" 'BEGIN { ok = d == "ge" ? v >= t : v <= t;
	printf "%s", ok ? "met" : "MISSED" }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }'; }

echo "baseline process_vm_writev 64 KiB  ${pvm64} Gb/s"
echo "baseline process_vm_writev 1 MiB   ${pvm1m} Gb/s"
echo "baseline TCP loopback stream       ${tcp} Gb/s"
echo "baseline UDP busy-poll half RTT    ${udp} us"
r=$(ratio "$bw64" "$pvm64"); t=$(ratio "$bw64" "$tcp")
echo "ib_write_bw 64 KiB   ${bw64} Gb/s = ${r} x pvm ($(verdict "$r" 0.7 ge) >= 0.7)," \
	"${t} x tcp ($(verdict "$t" 2 ge) >= 2)"
r=$(ratio "$bw1m" "$pvm1m"); t=$(ratio "$bw1m" "$tcp")
echo "ib_write_bw 1 MiB    ${bw1m} Gb/s = ${r} x pvm ($(verdict "$r" 0.7 ge) >= 0.7)," \
	"${t} x tcp ($(verdict "$t" 2 ge) >= 2)"
echo "ib_write_bw -s 8     ${rate} Mmsg/s ($(verdict "$rate" 3 ge) >= 3)"
r=$(ratio "$lat" "$udp")
echo "ib_write_lat typical ${lat} us = ${r} x UDP half RTT ($(verdict "$r" 0.5 le) <= 0.5)"
