#!/bin/bash
# make bench: every transport against the machine's baselines and limits, measured in one run
# on one machine (a measurement, not a test: it asserts nothing and exits 0 when everything ran).
#
#   bench/bench.sh [BUILD_DIR]
#
# BENCH_QUICK=1     one round, short measurements, fewer sizes (under 3 minutes)
# BENCH_ROUNDS=N    rounds of the headline figures, each next to its baselines (default 3)
# BENCH_SECONDS=S   seconds per timed measurement (default 2)
# BENCH_ONLY="..."  sections to run: base headline sweep multi scale consumers cm scif
#                   (default all; cm and scif are skipped while their scripts are absent)
# BENCH_OUT=DIR     where results go (default BUILD_DIR/bench): results.jsonl, report.txt,
#                   report.md, results.json, results.csv, plots/*.png, log.txt
#
# Runs as root in a private network namespace and run directory, with the devices cx4_0/cx4_1
# (ports joined by the model's cable), cx4_2/cx4_3 (the same with engines that sleep when
# idle, "cx4sleep"), cx4_4/cx4_5 (the same at SCHED_FIFO, "cx4rt") and ntb_0/ntb_1 (one
# link, intel-gen3).
# docs/performance.md explains each baseline and target.
set -u
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
if [ -z "${BV_IN_NETNS:-}" ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	export BV_IN_NETNS=1
	exec unshare --net -- bash -c 'ip link set lo up && exec "$0" "$@"' "$0" "$@"
fi
export BVCTL="$BUILD/bin/bvctl"
BASE="$BUILD/bin/bv_baseline"
SCALE="$BUILD/bin/bv_scale"
OUT=${BENCH_OUT:-$BUILD/bench}
mkdir -p "$OUT"
rm -f "$OUT"/results.jsonl "$OUT"/log.txt
: >"$OUT"/results.jsonl
export BENCH_RESULTS="$OUT/results.jsonl" BENCH_LOG="$OUT/log.txt"
export BV_RUNDIR
BV_RUNDIR=$(mktemp -d /tmp/bvbench.XXXXXX)
TMP=$(mktemp -d /tmp/bvbench-out.XXXXXX)
trap '"$BVCTL" down >/dev/null 2>&1; rm -rf "$BV_RUNDIR" "$TMP"' EXIT
. "$SRC/bench/lib.sh"

QUICK=${BENCH_QUICK:-0}
if [ "$QUICK" = 1 ]; then
	ROUNDS=${BENCH_ROUNDS:-1}
	T=${BENCH_SECONDS:-1}
	SIZES="8 4096 65536 1048576 4194304"
	NITER=200
	NITER_LAT=20	# per size of a latency sweep (-a: 23 sizes to 8 MiB)
	NLAT=2000	# headline ib_write_lat iterations
	export BENCH_TMO=${BENCH_TMO:-60}
	QPS_SCALE="1 64 1024"
	PROCS_SCALE="8 64"
	CONNS=200
else
	ROUNDS=${BENCH_ROUNDS:-3}
	T=${BENCH_SECONDS:-2}
	SIZES="8 64 512 4096 32768 65536 262144 1048576 4194304"
	NITER=1000
	NITER_LAT=200
	NLAT=20000
	QPS_SCALE="1 4 16 64 256 1024"
	PROCS_SCALE="2 4 8 16 32 64"
	CONNS=1000
fi
ONLY=${BENCH_ONLY:-base headline sweep multi scale consumers cm scif}
want() { [[ " $ONLY " == *" $1 "* ]]; }

cat >"$TMP/bench.conf" <<EOF
[device cx4_0]
kind = cx4
ip = 127.0.1.1
cable = bench

[device cx4_1]
kind = cx4
ip = 127.0.1.2
cable = bench

# the same cable with engines that sleep as soon as they are idle (spin_us 1): the latency
# they give on CPUs shared with polling applications, and what the message rate pays for it
[device cx4_2]
kind = cx4
ip = 127.0.1.3
cable = bench-sleep
spin_us = 1

[device cx4_3]
kind = cx4
ip = 127.0.1.4
cable = bench-sleep
spin_us = 1

# the same with engines at SCHED_FIFO (rt_priority 50) that sleep when idle, "cx4rt": a woken
# engine preempts a polling application at once instead of waiting for its time slice
[device cx4_4]
kind = cx4
ip = 127.0.1.5
cable = bench-rt
spin_us = 1
rt_priority = 50

[device cx4_5]
kind = cx4
ip = 127.0.1.6
cable = bench-rt
spin_us = 1
rt_priority = 50

[device ntb_0]
kind = ntb
link = ntbbench
side = 0
profile = intel-gen3
ip = 127.0.2.1

[device ntb_1]
kind = ntb
link = ntbbench
side = 1
profile = intel-gen3
ip = 127.0.2.2
EOF
"$BVCTL" --config "$TMP/bench.conf" up >/dev/null || { echo "bench: bvctl up failed"; exit 1; }
for _ in $(seq 100); do
	"$BVCTL" run -- ibv_devinfo -d ntb_1 2>/dev/null | grep -q PORT_ACTIVE && break
	sleep 0.1
done
# GID index of the IPv4-mapped RoCE v2 address (perftest -x): the same on both kinds
GID=3
export BENCH_PERFTEST_ARGS="-x $GID"

bench_note "bench on $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)), load $(cut -d' ' -f1-3 /proc/loadavg), quick=$QUICK rounds=$ROUNDS seconds=$T"

# perftest pairs per kind: the server's device, then the client's
pair_devs() {
	case $1 in
	cx4) echo "cx4_0 cx4_1" ;;
	cx4sleep) echo "cx4_2 cx4_3" ;;
	cx4rt) echo "cx4_4 cx4_5" ;;
	ntb) echo "ntb_0 ntb_1" ;;
	esac
}

# dev_ip DEV: the address bench.conf gives DEV (what rdma_cm programs name the device by)
dev_ip() {
	case $1 in
	cx4_0) echo 127.0.1.1 ;; cx4_1) echo 127.0.1.2 ;; cx4_2) echo 127.0.1.3 ;; cx4_3) echo 127.0.1.4 ;;
	cx4_4) echo 127.0.1.5 ;; cx4_5) echo 127.0.1.6 ;;
	ntb_0) echo 127.0.2.1 ;; ntb_1) echo 127.0.2.2 ;;
	esac
}

# pt KIND ID PROGRAM ARGS... -> records bandwidth or latency rows under ID, with the
# key=val words given after "::" (e.g. qps=8); perftest's failed clock calibration under load
# is retried once
pt() {
	local kind=$1 id=$2 prog=$3 keys=() args=() sd cd out try
	shift 3
	while [ $# -gt 0 ] && [ "$1" != :: ]; do args+=("$1"); shift; done
	[ $# -gt 0 ] && shift && keys=("$@")
	read -r sd cd < <(pair_devs "$kind")
	out="$TMP/$kind.$id"
	for try in 1 2; do
		if bench_perftest "$out" "$sd" "$cd" "$prog" "${args[@]}"; then
			case $prog in
			*_lat) bench_record_lat "$kind.$id" "$out" "${keys[@]}" ;;
			*) bench_record_bw "$kind.$id" "$out" "${keys[@]}" ;;
			esac
			return 0
		fi
		# again once after perftest's failed clock calibration under load, or a server
		# that never listened (nothing written)
		grep -q "Correlation coefficient" "$out.srv" "$out.cli" 2>/dev/null ||
			! [ -s "$out.srv" ] || break
	done
	bench_note "$kind $prog ${args[*]} failed: $(tail -n 2 "$out.cli" "$out.srv" 2>/dev/null | tr '\n' ' ')"
	return 1
}

# base ID KEY UNIT SIZE BV_BASELINE_ARGS...: one baseline, recorded as ID with its spread
# (KEY_min, KEY_p90, KEY_stalled of a latency, KEY_best of a throughput) as ID.min, ID.p90,
# ID.stalled and ID.best: bench/report.py judges targets against them (docs/performance.md)
base() {
	local id=$1 k=$2 unit=$3 size=$4 out sfx
	shift 4
	out=$("$BASE" "$@")
	bench_record "$id" "$(bench_val "$k" <<<"$out")" "$unit" size="$size"
	for sfx in min p90 best; do
		bench_record "$id.$sfx" "$(bench_val "${k}_$sfx" <<<"$out")" "$unit" size="$size"
	done
	bench_record "$id.stalled" "$(bench_val "${k}_stalled" <<<"$out")" % size="$size"
}

baselines() {	# the machine's limits, every round
	local s ts
	ts=$(awk -v t="$T" 'BEGIN { print t / 4 }')	# per size: the copies settle fast
	for s in $SIZES; do
		base base.memcpy "memcpy_bw_$s" Gb/s "$s" -t "$ts" memcpy "$s"
		base base.pvm "pvm_bw_$s" Gb/s "$s" -t "$ts" pvm-bw "$s"
	done
	base base.udp_bw udp_bw_4096 Gb/s 4096 -t "$T" udp-bw 4096
	base base.udp_pps udp_pps_64 Mpps 64 -t "$T" udp-pps
	base base.udp_lat udp_half_rtt_64 us 64 -t "$T" udp-lat
	base base.udp_lat_block udp_half_rtt_64_block us 64 -t "$T" udp-lat-block
	base base.tcp_bw tcp_bw Gb/s 1048576 -t "$T" tcp-bw
	base base.shm_lat shm_half_rtt us 8 -t "$T" shm-pingpong
	base base.swdev_floor swdev_floor_half_rtt us 8 -t "$T" swdev-floor
	base base.swdev_floor_rt swdev_floor_rt_half_rtt us 8 -t "$T" swdev-floor-rt
}

headline() {	# the figures with targets, right after this round's baselines
	local k
	for k in cx4 ntb; do
		pt "$k" ib_write_bw ib_write_bw -s 65536 -D "$T" --report_gbits
		pt "$k" ib_write_bw ib_write_bw -s 4194304 -D "$T" --report_gbits
		pt "$k" ib_write_bw ib_write_bw -s 8 -D "$T" --report_gbits
		pt "$k" ib_write_lat ib_write_lat -s 8 -n "$NLAT"
	done
	pt cx4sleep ib_write_lat ib_write_lat -s 8 -n "$NLAT"
	pt cx4sleep ib_write_bw ib_write_bw -s 8 -D "$T" --report_gbits
	pt cx4rt ib_write_lat ib_write_lat -s 8 -n "$NLAT"
	pt cx4rt ib_write_bw ib_write_bw -s 8 -D "$T" --report_gbits
}

sweep() {	# every perftest program over the sizes, once
	local k p
	for k in cx4 ntb; do
		for p in ib_write_bw ib_read_bw ib_send_bw; do
			pt "$k" "sweep.$p" "$p" -a -n "$NITER" --report_gbits
		done
		pt "$k" sweep.ib_atomic_bw ib_atomic_bw -n $((NITER * 10)) --report_gbits
		for p in ib_write_lat ib_read_lat ib_send_lat; do
			pt "$k" "sweep.$p" "$p" -a -n "$NITER_LAT"
		done
	done
}

# pairs KIND N ARGS...: N perftest pairs at once on the same two devices (-D $T each). The
# aggregate counts only what they moved together: each pair's bytes (its average x $T) over
# the union of the pairs' measurement windows (the $T seconds before each client ended).
# Pairs that started one after another on a loaded machine barely overlap, and the plain sum
# of their rates would claim a concurrency that never was.
pairs() {
	local kind=$1 n=$2 sd cd i pids=() ok=0 agg
	shift 2
	read -r sd cd < <(pair_devs "$kind")
	for i in $(seq "$n"); do
		(BENCH_PORT=$((BENCH_PORT + 100 + i))
		 bench_perftest "$TMP/$kind.pairs$n.$i" "$sd" "$cd" ib_write_bw "$@" --report_gbits
		 rc=$?
		 date +%s.%N >"$TMP/$kind.pairs$n.$i.end"
		 exit $rc) &
		pids+=($!)
	done
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" && ok=$((ok + 1))
	done
	agg=$(for i in $(seq "$n"); do
		v=$(bench_perftest_rows "$TMP/$kind.pairs$n.$i.cli" 2>/dev/null | tail -n1 | awk '{print $4}')
		[ -n "$v" ] && echo "$(cat "$TMP/$kind.pairs$n.$i.end") $v"
	done | sort -n | awk -v t="$T" '
		{ gb += $2 * t; s = $1 - t; e = $1
		  if (NR == 1 || s > ce) span += e - s; else if (e > ce) span += e - ce
		  ce = (NR == 1 || e > ce) ? e : ce }
		END { if (span > 0) printf "%.3f %.2f\n", gb / span, span }')
	BENCH_PORT=$((BENCH_PORT + 100 + n))
	bench_record "$kind.pairs.bw" "${agg% *}" Gb/s size=65536 pairs="$n"
	bench_record "$kind.pairs.span" "${agg#* }" s size=65536 pairs="$n"
	bench_record "$kind.pairs.completed" "$ok" of"$n" size=65536 pairs="$n"
	[ "$ok" = "$n" ] || bench_note "$kind: $((n - ok)) of $n concurrent ib_write_bw pairs failed"
}

multi() {	# several QPs and several process pairs
	local k n
	for k in cx4 ntb; do
		pt "$k" ib_write_bw.q8 ib_write_bw -s 65536 -q 8 -D "$T" --report_gbits :: qps=8
		for n in 2 4; do
			pairs "$k" "$n" -s 65536 -D "$T"
		done
	done
}

scale() {	# QPs per process, processes per device, creation rates and memory
	local k n sd cd
	for k in cx4 ntb; do
		read -r sd cd < <(pair_devs "$k")
		# the same bytes in flight at every QP count (perftest's default: 128 WQEs of one QP):
		# with -t 128 per QP, 1,024 QPs put 8 GiB in flight and, served round-robin as a NIC
		# does, no QP completes its first signalled WQE within the measured seconds
		for n in $QPS_SCALE; do
			pt "$k" ib_write_bw.qps ib_write_bw -s 65536 -q "$n" -t $(( n < 128 ? 128 / n : 1 )) \
				-D "$T" --report_gbits :: qps="$n"
		done
		for n in $PROCS_SCALE; do
			pairs "$k" "$n" -s 65536 -D "$T"
		done
		if [ -x "$SCALE" ]; then
			# the daemons' pids: bv_scale counts their memory per QP and per MR too
			local dp
			dp=$(cat "$BV_RUNDIR/$sd.pid" 2>/dev/null),$(cat "$BV_RUNDIR/$cd.pid" 2>/dev/null)
			timeout 300 "$BVCTL" run -- "$SCALE" -d "$sd" -D "$cd" -g "$GID" -P "$dp" \
				-q "$(echo "$QPS_SCALE" | tr ' ' ',')" -t "$T" >"$TMP/$k.scale" 2>&1 ||
				bench_note "$k bv_scale failed: $(tail -n 2 "$TMP/$k.scale" | tr '\n' ' ')"
			# bv_scale prints "ID VALUE UNIT key=val..." lines
			while read -r id v unit rest; do
				# shellcheck disable=SC2086
				bench_record "$k.$id" "$v" "$unit" $rest
			done < <(grep -E '^[a-z_.]+ [0-9.]+ ' "$TMP/$k.scale")
		fi
	done
}

# ucx_record ID TEST SIZE FILE: ucx_perftest's "Final:" line (iterations, latency typical /
# average / overall in us, bandwidth average / overall in MB/s, message rate ...)
ucx_record() {
	case $2 in
	*_lat) bench_record "$1" "$(awk '/^Final:/ { print $3 }' "$4")" us size="$3" ;;
	*) bench_record "$1" "$(awk '/^Final:/ { printf "%.3f", $7 * 1048576 * 8 / 1e9 }' "$4")" Gb/s size="$3" ;;
	esac
}

consumers() {	# qperf and ucx_perftest over both kinds
	local k sd cd t out tl
	for k in cx4 ntb; do
		read -r sd cd < <(pair_devs "$k")
		if command -v qperf >/dev/null; then
			# with -cm1: its connections through the RDMA CM, which picks the GID of the
			# server's address (without it qperf connects by LID, no GRH, which RoCE
			# refuses as mlx5 does); qperf 0.4.11's ud_* tests take no CM and stay refused
			# (tests/integration/cx4_qperf.sh), so they are not run. A server per test: one
			# that saw a test end may not serve the next at once.
			for t in rc_bw rc_lat rc_rdma_write_bw rc_rdma_write_lat rc_rdma_read_lat; do
				out="$TMP/$k.qperf.$t"
				timeout -k 5 120 "$BVCTL" run -- qperf -lp 19765 >"$out.srv" 2>&1 &
				local qs=$!
				bench_wait_listen 19765 || bench_note "$k: the qperf server never listened"
				if timeout -k 5 120 "$BVCTL" run -- qperf -lp 19765 "$(dev_ip "$sd")" -cm1 \
					-t "$T" --use_bits_per_sec "$t" >"$out.cli" 2>&1; then
					case $t in
					*_bw) bench_record "$k.qperf.$t" "$(awk '/bw *=/ { v = $3; if ($4 ~ /^Mb/) v /= 1000; print v }' "$out.cli")" Gb/s size=65536 ;;
					*_lat) bench_record "$k.qperf.$t" "$(awk '/latency *=/ { v = $3; if ($4 ~ /^ns/) v /= 1000; if ($4 ~ /^ms/) v *= 1000; print v }' "$out.cli")" us size=1 ;;
					esac
				else
					bench_note "$k qperf -cm1 $t failed: $(tail -n 2 "$out.cli" | tr '\n' ' ')"
				fi
				kill "$qs" 2>/dev/null
				wait "$qs" 2>/dev/null
			done
		else
			bench_note "qperf not installed (tools/install-deps.sh bench)"
		fi
		if command -v ucx_perftest >/dev/null; then
			# UCT level (-x TRANSPORT): active messages, zero-copy put and get
			for t in "rc_verbs am_lat 8 bcopy" "rc_verbs am_bw 1024 bcopy" "rc_verbs put_bw 65536 zcopy" \
				"rc_verbs get 65536 zcopy" "ud_verbs am_lat 8 bcopy" "ud_verbs am_bw 1024 bcopy"; do
				read -r tl tt sz dm <<<"$t"
				out="$TMP/$k.ucx.$tl.$tt"
				BENCH_PORT=13337
				if UCX_IB_GID_INDEX=$GID UCX_WARN_UNUSED_ENV_VARS=n bench_pair "$out" \
					ucx_perftest -d "$sd:1" -x "$tl" -- \
					ucx_perftest 127.0.0.1 -d "$cd:1" -x "$tl" -t "$tt" -s "$sz" -D "$dm" -n 2000; then
					ucx_record "$k.ucx.$tl.$tt" "$tt" "$sz" "$out.cli"
				else
					bench_note "$k ucx_perftest $tl $tt failed: $(grep -m1 -E 'ERROR|rror' "$out.cli" "$out.srv" | cut -c1-160)"
				fi
			done
			# UCP level: tag matching over one transport
			for t in "rc_verbs tag_lat 8" "rc_verbs tag_bw 65536" "ud_verbs tag_lat 8" "ud_verbs tag_bw 65536"; do
				read -r tl tt sz <<<"$t"
				out="$TMP/$k.ucp.$tl.$tt"
				BENCH_PORT=13337
				if UCX_TLS=$tl,ud_verbs,self UCX_IB_GID_INDEX=$GID UCX_WARN_UNUSED_ENV_VARS=n bench_pair "$out" \
					env UCX_NET_DEVICES="$sd:1" ucx_perftest -- \
					env UCX_NET_DEVICES="$cd:1" ucx_perftest 127.0.0.1 -t "$tt" -s "$sz" -n 2000; then
					ucx_record "$k.ucp.$tl.$tt" "$tt" "$sz" "$out.cli"
				else
					bench_note "$k ucx_perftest (UCP) $tl $tt failed: $(grep -m1 -E 'ERROR|rror' "$out.cli" "$out.srv" | cut -c1-160)"
				fi
			done
		else
			bench_note "ucx_perftest not installed (tools/install-deps.sh bench)"
		fi
	done
}

# cm: rdma_cm connection set-up (issue 10), bench/rdmacm_bench.sh in its own namespace and
# run directory; its JSON lines go into BENCH_RESULTS
cm() {
	if [ ! -x "$SRC/bench/rdmacm_bench.sh" ]; then
		bench_note "cm skipped: bench/rdmacm_bench.sh is not in this tree"
		return 0
	fi
	BENCH_CONNS=$CONNS timeout -k 5 600 "$SRC/bench/rdmacm_bench.sh" "$BUILD" >"$TMP/cm.out" 2>&1 ||
		bench_note "rdmacm_bench.sh failed: $(grep -v '^{' "$TMP/cm.out" | tail -n 2 | tr '\n' ' ')"
}

# scif: libscif's figures (issue 11), bench/scif_bench.sh with its own instance; it prints
# JSON lines in lib.sh's format on stdout
scif() {
	if [ ! -x "$SRC/bench/scif_bench.sh" ] || [ ! -x "$BUILD/bin/scif_bench" ]; then
		bench_note "scif skipped: bench/scif_bench.sh or scif_bench is not in this tree"
		return 0
	fi
	timeout -k 5 600 "$SRC/bench/scif_bench.sh" -b "$BUILD" -t "$T" -r 1 >"$TMP/scif.out" \
		2>"$TMP/scif.err" || bench_note "scif_bench.sh failed: $(tail -n 2 "$TMP/scif.err" | tr '\n' ' ')"
	# its baselines (memcpy and TCP of 1 MiB, round 1) are its own: scif.base.*, so that they
	# do not replace the bench's round-1 baselines of the same name and size
	grep '^{' "$TMP/scif.out" | sed 's/"id":"base\./"id":"scif.base./' >>"$BENCH_RESULTS"
	# its summary (targets, the load they met) into the log
	sed -n 's/^# //p' "$TMP/scif.err" | while IFS= read -r l; do bench_note "scif: $l"; done
}

start=$(date +%s)
at() { echo "at $(( $(date +%s) - start )) s, load $(cut -d' ' -f1 /proc/loadavg)"; }
for r in $(seq "$ROUNDS"); do
	export BENCH_ROUND=$r
	want base && { bench_note "round $r: baselines ($(at))"; baselines; }
	want headline && { bench_note "round $r: headline figures ($(at))"; headline; }
done
export BENCH_ROUND=1
want sweep && { bench_note "perftest over the message sizes ($(at))"; sweep; }
want multi && { bench_note "several QPs and process pairs ($(at))"; multi; }
want scale && { bench_note "scaling ($(at))"; scale; }
want consumers && { bench_note "qperf and UCX ($(at))"; consumers; }
want cm && { bench_note "rdma_cm connection set-up ($(at))"; cm; }
want scif && { bench_note "SCIF ($(at))"; scif; }
"$BVCTL" status >"$OUT/status.txt" 2>&1
bench_note "ran in $(( $(date +%s) - start )) s"
python3 "$SRC/bench/report.py" "$OUT" || { echo "bench: report failed"; exit 1; }
cat "$OUT/report.txt"
