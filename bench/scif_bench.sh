#!/bin/bash
# libscif's performance figures (issue 11), each next to its baseline measured in the same run,
# printed on stdout as JSON lines in bench/lib.sh's format (one result per line:
# {"id":...,"size":...,"qps":1,"pairs":1,"round":R,"value":...,"unit":...}); a summary with
# the targets, met or missed, and the load they were measured under goes to stderr. A
# measurement, not a test: the exit status is 0 whatever the numbers, 1 only when the devices
# did not come up.
#
#   id                          size     unit  what
#   base.memcpy                 1048576  Gb/s  single-thread memcpy of 1 MiB (scif_bench memcpy)
#   base.tcp_bw                 1048576  Gb/s  one TCP loopback stream (bv_baseline tcp-bw)
#   ntb.scif_writeto.bw         1048576  Gb/s  scif_writeto of 1 MiB, node 1 into node 0
#   ntb.scif_rtt.lat            8        us    scif_send/scif_recv 8-byte round trip: the median
#                                              of the rounds' medians
#   ntb.scif_rtt.lat_best       8        us    ... the best (least) round's median
#   cx4.scif_rtt.lat, .lat_best 8        us    the same over cx4
#   {ntb,cx4}.scif_rtt.lat_half, cx4.scif_rtt.lat_half_best   half of them (ib_send_lat's unit)
#   cx4.ib_send_lat.lat         8        us    ib_send_lat -s 8 t_typical (a run's median half
#                                              round trip): the median of the rounds' figures
#   cx4.ib_send_lat.lat_best    8        us    ... the best round's
#
# Bandwidths: the best of -r runs, memcpy, TCP and writeto taking turns. Latencies come in
# rounds (-k): ntb in one connection, round after round; cx4 as one scif_bench run and one
# ib_send_lat run per round, taking turns, so that both meet the same load. A round's median is
# what the transport gave over that stretch, the best round the least disturbed one; on a
# shared machine the rest is the scheduler (docs/scif.md "Performance").
#
# Targets: ntb.scif_writeto.bw >= 0.8 x base.memcpy (reported against base.tcp_bw too);
# ntb.scif_rtt.lat <= 2 us; cx4.scif_rtt.lat_half <= 1.2 x cx4.ib_send_lat.lat (and the
# best rounds' against each other).
#
# SCIF nodes 0 and 1: ntb_0 <-> ntb_1, cx4_0 and cx4_1 (the built-in configuration's, and
# bench/bench.sh's). By default the script brings its own instance up, in a private run
# directory and, as root, a private network namespace; with -u it uses the running one
# ($BV_RUNDIR, as bench/bench.sh has it).
#
# usage: bench/scif_bench.sh [-b BUILD_DIR] [-u] [-R ROUND] [-t SECONDS] [-r REPEATS]
#                            [-n ROUND_TRIPS] [-k LATENCY_ROUNDS]
#   -R  the "round" field (default $BENCH_ROUND, else 1)
#   -r  runs of each bandwidth figure, the best kept (default 3)
#   -n  round trips per latency round over ntb (default 20000; over cx4, a quarter of it)
#   -k  latency rounds (default 5)
set -u
here=$(cd "$(dirname "$0")" && pwd)
BV_SOURCE_DIR=$(dirname "$here")
BV_BUILD_DIR=$BV_SOURCE_DIR/build
secs=3
reps=3
count=20000
lat_rounds=5
round=${BENCH_ROUND:-1}
use_running=0
while getopts "b:uR:t:r:n:k:h" o; do
	case $o in
	b) BV_BUILD_DIR=$(cd "$OPTARG" && pwd) ;;
	u) use_running=1 ;;
	R) round=$OPTARG ;;
	t) secs=$OPTARG ;;
	r) reps=$OPTARG ;;
	n) count=$OPTARG ;;
	k) lat_rounds=$OPTARG ;;
	*) sed -n '2,45p' "$0" >&2; exit 2 ;;
	esac
done
export BV_SOURCE_DIR BV_BUILD_DIR
. "$here/lib.sh"
# our own instance gets a namespace of its own even inside a caller's (bench/bench.sh has one
# with its devices on the same addresses)
if [ $use_running = 0 ] && [ -z "${SCIF_BENCH_NETNS:-}" ] && [ "$(id -u)" = 0 ] &&
	command -v unshare >/dev/null; then
	export SCIF_BENCH_NETNS=1 BV_IN_NETNS=1
	bench_netns_exec "$0" "$@"
fi
BVCTL=$BV_BUILD_DIR/bin/bvctl
BASE=$BV_BUILD_DIR/bin/bv_baseline
SB=$BV_BUILD_DIR/bin/scif_bench
OUT=$(mktemp -d /tmp/scifbench-out.XXXXXX)
if [ $use_running = 1 ]; then
	: "${BV_RUNDIR:?-u wants BV_RUNDIR of the running instance}"
	trap 'rm -rf "$OUT"' EXIT
else
	BV_RUNDIR=$(mktemp -d /tmp/scifbench.XXXXXX)
	trap '"$BVCTL" down >/dev/null 2>&1; rm -rf "$BV_RUNDIR" "$OUT"' EXIT
	export BV_RUNDIR
	"$BVCTL" up >/dev/null || { echo "scif_bench: bvctl up failed" >&2; exit 1; }
fi
bench_wait_active "$BVCTL" ntb_1

note() { echo "# $*" >&2; }
# record ID VALUE UNIT SIZE: one JSON line (bench/lib.sh's bench_record format); a figure that
# did not come out is not printed, so a report shows it missing rather than as 0
record() {
	[[ $2 =~ ^[0-9]+([.][0-9]+)?$ ]] || { note "$1: no figure"; return 0; }
	printf '{"id":"%s","size":%s,"qps":1,"pairs":1,"round":%s,"value":%s,"unit":"%s"}\n' \
		"$1" "$4" "$round" "$2" "$3"
}
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }'; }
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }
calc() { awk "BEGIN { printf \"%.2f\", $1 }"; }
verdict() { awk -v v="$1" -v t="$2" -v d="$3" 'BEGIN { if (v == "") { printf "n/a"; exit }
	printf "%s", (d == "ge" ? v >= t : v <= t) ? "met" : "MISSED" }'; }
load() { cut -d' ' -f1 /proc/loadavg; }
sb() {	# sb FABRIC MODE ARG...: one scif_bench run between nodes 0 and 1
	local f=$1
	shift
	BV_SCIF_FABRIC=$f timeout 300 "$BVCTL" run -- "$SB" "$@" 2>"$OUT/err" ||
		sed 's/^/# scif_bench: /' "$OUT/err" >&2
}
# ib_send_lat -s 8 between cx4_0 and cx4_1 (GID index 3, the IPv4 one): t_typical
send_lat() {
	local port=$((19500 + RANDOM % 400)) hex sp
	hex=$(printf '%04X' $port)
	timeout 120 "$BVCTL" run -- ib_send_lat -s 8 -n "$1" -d cx4_0 -x 3 -p $port \
		>"$OUT/srv" 2>&1 &
	sp=$!
	for _ in $(seq 200); do
		grep -Eq ":$hex 0+:0000 0A" /proc/net/tcp /proc/net/tcp6 2>/dev/null && break
		sleep 0.05
	done
	timeout 120 "$BVCTL" run -- ib_send_lat -s 8 -n "$1" -d cx4_1 -x 3 -p $port \
		127.0.0.1 >"$OUT/cli" 2>&1
	wait $sp
	grep -E '^[[:space:]]*8[[:space:]]+[0-9]+' "$OUT/cli" | tail -n1 | awk '{print $5}'
}

cx_count=$((count / 4 < 1000 ? 1000 : count / 4))
note "scif bench: bandwidths best of $reps runs of ${secs}s; latencies $lat_rounds rounds of" \
	"$count (ntb) / $cx_count (cx4) round trips ($(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
l0=$(load)
for _ in $(seq "$reps"); do
	"$SB" memcpy "$secs" | bench_val memcpy_1m >>"$OUT/mc"
	"$BASE" -t "$secs" tcp-bw | bench_val tcp_bw >>"$OUT/tcp"
	sb ntb writeto "$secs" | bench_val scif_writeto_1m >>"$OUT/wr"
done
mc=$(bench_best <"$OUT/mc")
tcp=$(bench_best <"$OUT/tcp")
wr=$(bench_best <"$OUT/wr")
l1=$(load)
sb ntb rtt "$count" "$lat_rounds" >"$OUT/ntb"
rtt_ntb=$(bench_val scif_rtt_8 <"$OUT/ntb")
best_ntb=$(field best <"$OUT/ntb")
l2=$(load)
for _ in $(seq "$lat_rounds"); do
	sb cx4 rtt "$cx_count" 1 | bench_val scif_rtt_8 >>"$OUT/cx4"
	send_lat "$cx_count" >>"$OUT/isl"
done
l3=$(load)
rtt_cx4=$(median <"$OUT/cx4")
best_cx4=$(bench_least <"$OUT/cx4")
isl=$(median <"$OUT/isl")
isl_best=$(bench_least <"$OUT/isl")

half() { [ -n "$1" ] && calc "$1 / 2"; }
half_ntb=$(half "$rtt_ntb")
half_cx4=$(half "$rtt_cx4")
half_cx4_best=$(half "$best_cx4")
record base.memcpy "$mc" Gb/s 1048576
record base.tcp_bw "$tcp" Gb/s 1048576
record ntb.scif_writeto.bw "$wr" Gb/s 1048576
record ntb.scif_rtt.lat "$rtt_ntb" us 8
record ntb.scif_rtt.lat_best "$best_ntb" us 8
record ntb.scif_rtt.lat_half "$half_ntb" us 8
record cx4.scif_rtt.lat "$rtt_cx4" us 8
record cx4.scif_rtt.lat_best "$best_cx4" us 8
record cx4.scif_rtt.lat_half "$half_cx4" us 8
record cx4.scif_rtt.lat_half_best "$half_cx4_best" us 8
record cx4.ib_send_lat.lat "$isl" us 8
record cx4.ib_send_lat.lat_best "$isl_best" us 8

ratio() { [ -n "$1" ] && [ -n "$2" ] && calc "$1 / $2"; }
r_mc=$(ratio "$wr" "$mc")
r_tcp=$(ratio "$wr" "$tcp")
r_isl=$(ratio "$half_cx4" "$isl")
r_isl_best=$(ratio "$half_cx4_best" "$isl_best")
note "scif_writeto 1 MiB ntb  ${wr:-?} Gb/s = ${r_mc:-?} x memcpy ${mc:-?} Gb/s" \
	"($(verdict "$r_mc" 0.8 ge) >= 0.8), ${r_tcp:-?} x TCP ${tcp:-?} Gb/s (load $l0 .. $l1)"
note "scif 8-byte RTT ntb     median ${rtt_ntb:-?} us ($(verdict "$rtt_ntb" 2 le) <= 2)," \
	"best round ${best_ntb:-?} us ($(verdict "$best_ntb" 2 le)) (load $l1 .. $l2)"
note "scif 8-byte RTT cx4     half: median ${half_cx4:-?} us = ${r_isl:-?} x ib_send_lat" \
	"${isl:-?} us ($(verdict "$r_isl" 1.2 le) <= 1.2), best round ${half_cx4_best:-?} us =" \
	"${r_isl_best:-?} x ${isl_best:-?} us ($(verdict "$r_isl_best" 1.2 le)) (load $l2 .. $l3)"
exit 0
