# shellcheck shell=bash
# What every bench section uses: results as JSON lines, perftest pairs, parsing.
#
# A result is one line of $BENCH_RESULTS:
#   {"id":"cx4.ib_write_bw","size":65536,"qps":1,"pairs":1,"round":2,"value":28.9,"unit":"Gb/s"}
# id names the figure (a transport's "KIND.PROGRAM[.VARIANT]" or a baseline's "base.NAME");
# bench/report.py groups equal (id, size, qps, pairs) across rounds: median and spread.
#
# The scripts that print their own results (bench/ntb_bench.sh, bench/scif_bench.sh) use only
# the helpers that need neither BENCH_RESULTS nor BVCTL: bench_netns_exec, bench_wait_active,
# bench_best, bench_least, bench_val.

BENCH_PORT=${BENCH_PORT:-19100}
BENCH_ROUND=${BENCH_ROUND:-1}

# bench_netns_exec "$0" "$@": the script again, in a network namespace of its own with the
# loopback up, so that its devices' addresses and ports meet no one else's (the caller decides
# when: as root, once, and marks it in the environment)
bench_netns_exec() {
	exec unshare --net -- bash -c 'ip link set lo up && exec "$0" "$@"' "$@"
}

# bench_wait_active BVCTL DEV: until DEV's port is active (10 s at the most; the figures that
# follow say whether it came up)
bench_wait_active() {
	local i
	for i in $(seq 100); do
		"$1" run -- ibv_devinfo -d "$2" 2>/dev/null | grep -q PORT_ACTIVE && return 0
		sleep 0.1
	done
	return 1
}

# bench_best, bench_least: the largest and the smallest number on stdin (of repeats on a
# shared machine the best run is the least disturbed one)
bench_best() { sort -g | tail -n1; }
bench_least() { sort -g | head -n1; }

# bench_record ID VALUE UNIT [size=N] [qps=N] [pairs=N] [round=N]
bench_record() {
	local id=$1 value=$2 unit=$3 size=0 qps=1 pairs=1 round=$BENCH_ROUND kv
	: "${BENCH_RESULTS:?bench_record wants BENCH_RESULTS}"
	shift 3
	for kv in "$@"; do
		case $kv in
		size=*) size=${kv#size=} ;;
		qps=*) qps=${kv#qps=} ;;
		pairs=*) pairs=${kv#pairs=} ;;
		round=*) round=${kv#round=} ;;
		esac
	done
	# a figure that did not come out is not recorded: the report says it is missing
	[[ $value =~ ^[0-9]+([.][0-9]+)?([eE][-+]?[0-9]+)?$ ]] || return 0
	printf '{"id":"%s","size":%s,"qps":%s,"pairs":%s,"round":%s,"value":%s,"unit":"%s"}\n' \
		"$id" "$size" "$qps" "$pairs" "$round" "$value" "$unit" >>"$BENCH_RESULTS"
}

# bench_val NAME: the value of a "NAME=value unit" line on stdin (bv_baseline's output)
bench_val() {
	sed -n "s/^$1=\([0-9.]*\).*/\1/p"
}

# bench_wait_listen PORT: until something listens on TCP PORT (30 s: a perftest server on a
# loaded machine can take over 10 s to open its device)
bench_wait_listen() {
	local hex i
	hex=$(printf '%04X' "$1")
	for i in $(seq 600); do
		grep -Eq ":$hex 0+:0000 0A" /proc/net/tcp /proc/net/tcp6 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# bench_pair OUT SERVER_ARGS -- CLIENT_ARGS: a client/server pair of unmodified programs
# through bvctl run on $BENCH_PORT (the caller puts the port in both argument lists and
# bumps it); the server's output in OUT.srv, the client's in OUT.cli. Fails when either fails.
bench_pair() {
	local out=$1 srv=() cli=() sp rc
	: "${BVCTL:?bench_pair wants BVCTL}"
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	timeout -k 5 "${BENCH_TMO:-180}" "$BVCTL" run -- "${srv[@]}" >"$out.srv" 2>&1 &
	sp=$!
	if ! bench_wait_listen "$BENCH_PORT"; then
		kill "$sp" 2>/dev/null
		wait "$sp" 2>/dev/null
		return 1
	fi
	timeout -k 5 "${BENCH_TMO:-180}" "$BVCTL" run -- "${cli[@]}" >"$out.cli" 2>&1
	rc=$?
	[ $rc = 0 ] || kill "$sp" 2>/dev/null
	wait "$sp" || rc=1
	return $rc
}

# bench_perftest OUT SRVDEV CLIDEV PROGRAM ARGS...: one perftest pair (server on SRVDEV, client
# on CLIDEV, TCP exchange over loopback); the client's result lines are in OUT.cli.
bench_perftest() {
	local out=$1 sd=$2 cd=$3 prog=$4
	shift 4
	BENCH_PORT=$((BENCH_PORT + 1))
	bench_pair "$out" "$prog" -d "$sd" -p "$BENCH_PORT" $BENCH_PERFTEST_ARGS "$@" -- \
		"$prog" -d "$cd" -p "$BENCH_PORT" $BENCH_PERFTEST_ARGS "$@" 127.0.0.1
}

# perftest result rows: "#bytes #iterations ..." lines, numbers only.
#   bandwidth (--report_gbits): bytes iters peak avg(Gb/s) rate(Mpps)
#   latency: bytes iters t_min t_max t_typical t_avg t_stdev p99 p99.9 (usec)
bench_perftest_rows() {
	grep -E '^[[:space:]]*[0-9]+[[:space:]]+[0-9]+[[:space:]]+[0-9.]+' "$1"
}

# bench_record_bw ID OUT [key=val...]: bandwidth and message rate of every row of OUT.cli
bench_record_bw() {
	local id=$1 out=$2 bytes iters peak avg rate
	shift 2
	while read -r bytes iters peak avg rate _; do
		bench_record "$id.bw" "$avg" Gb/s size="$bytes" "$@"
		bench_record "$id.rate" "$rate" Mpps size="$bytes" "$@"
	done < <(bench_perftest_rows "$out.cli")
}

# bench_record_lat ID OUT [key=val...]: typical (median), average and 99th percentile latency
bench_record_lat() {
	local id=$1 out=$2 bytes iters tmin tmax typ avg sd p99 _r
	shift 2
	while read -r bytes iters tmin tmax typ avg sd p99 _r; do
		bench_record "$id.lat" "$typ" us size="$bytes" "$@"
		bench_record "$id.lat_avg" "$avg" us size="$bytes" "$@"
		bench_record "$id.lat_p99" "$p99" us size="$bytes" "$@"
	done < <(bench_perftest_rows "$out.cli")
}

# bench_note TEXT: a line of the log, also kept for the report
bench_note() {
	echo "# $*"
	echo "# $*" >>"$BENCH_LOG"
}
