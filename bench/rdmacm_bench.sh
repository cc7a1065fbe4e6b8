#!/bin/bash
# rdma_cm benchmark (a measurement, not a test: it asserts nothing and exits 0 when it ran):
# connection set-up through the daemons' connection manager against the issue's goals and
# against the kernel's TCP connection set-up over loopback, measured in the same run:
#
#   rate   >= 5,000 connections/s        (N / the connect step's wall time)
#   p99    <= 10 ms per step             (per-connection latency, call to event)
#
# Each device pair (cx4_0 <- cx4_1 over the model's cable, ntb_0 <- ntb_1 over one link) runs
# rdmacm-utils' cmtime -c N (its own table: every step, each id with an RC QP), and
# bench/cm_rate (per-connection percentiles), all N at once (the burst cmtime makes) and 32 in
# flight, without QPs (the connection manager alone) and with RC QPs (what an application
# pays: QP creation and INIT/RTR/RTS are the verbs provider's commands). The baseline,
# cm_rate tcp, runs the same steps with TCP sockets: connect (the three-way handshake, as
# REQ/REP/RTU) and disconnect (a FIN answered by a FIN, as DREQ/DREP).
#
# Results are JSON lines in bench/lib.sh's format, on stdout and appended to $BENCH_RESULTS
# when it is set (bench/bench.sh calls this script):
#   {"id":"cx4.cmtime.connect.rate","size":0,"qps":1,"pairs":1,"round":1,"value":5210,"unit":"conn/s"}
# ids: KIND.cmtime.STEP.us_per_conn, KIND.cmtime.{connect,conn_disc}.rate;
#      KIND.cm_rate[.qp].wW.STEP.{rate,lat_p50,lat_p99,lat_max}; base.tcp_connect.wW.STEP.*
# (KIND cx4 or ntb; W the connections in flight; STEP resolve_addr, resolve_route, create_qp,
# connect, disconnect, destroy). Other lines start with "#".
#
# Usage: bench/rdmacm_bench.sh [BUILD_DIR]   (default: build); BENCH_CONNS (1000),
# BENCH_ROUND (1). Runs in a private run directory and, as root, a network namespace of its
# own (its daemons never meet another section's). On a loaded 2-core machine (the daemons,
# the models and both programs share the cores) the numbers say little: the load average is
# printed with them.
set -u
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
if [ -z "${BV_RCMBENCH_NETNS:-}" ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	export BV_RCMBENCH_NETNS=1
	exec unshare --net -- bash -c 'ip link set lo up && exec "$0" "$@"' "$0" "$@"
fi
BVCTL="$BUILD/bin/bvctl"
RATE=$BUILD/bin/cm_rate
N=${BENCH_CONNS:-1000}
ROUND=${BENCH_ROUND:-1}
export BV_RUNDIR
BV_RUNDIR=$(mktemp -d /tmp/bvrcmbench.XXXXXX)
OUT=$(mktemp -d /tmp/bvrcmbench-out.XXXXXX)
trap '"$BVCTL" down >/dev/null 2>&1; rm -rf "$BV_RUNDIR" "$OUT"' EXIT

# record ID VALUE UNIT: one result line (bench/lib.sh's bench_record; a figure that did not
# come out is not recorded)
record() {
	local line
	[[ $2 =~ ^[0-9]+([.][0-9]+)?$ ]] || return 0
	line=$(printf '{"id":"%s","size":0,"qps":1,"pairs":1,"round":%s,"value":%s,"unit":"%s"}' \
		"$1" "$ROUND" "$2" "$3")
	echo "$line"
	[ -z "${BENCH_RESULTS:-}" ] || echo "$line" >>"$BENCH_RESULTS"
}

# record_steps PREFIX FILE: cm_rate's "step NAME: K in T ms = R/s; p50 A ms p99 B ms max C ms"
record_steps() {
	local step k t r p50 p99 max
	while read -r step k t r p50 p99 max; do
		record "$1.$step.rate" "$r" conn/s
		record "$1.$step.lat_p50" "$p50" ms
		record "$1.$step.lat_p99" "$p99" ms
		record "$1.$step.lat_max" "$max" ms
	done < <(sed -n 's/^step \([a-z_]*\): \([0-9]*\) in \([0-9.]*\) ms = \([0-9]*\)\/s; p50 \([0-9.]*\) ms p99 \([0-9.]*\) ms max \([0-9.]*\) ms.*/\1 \2 \3 \4 \5 \6 \7/p' "$2")
	grep -q "some failed" "$2" && echo "# $1: some connections failed: $(grep -m1 "cm_rate:" "$2")"
}

cat >"$OUT/bench.conf" <<EOF
[device cx4_0]
kind = cx4
ip = 127.0.1.1
cable = rcmbench

[device cx4_1]
kind = cx4
ip = 127.0.1.2
cable = rcmbench

[device ntb_0]
kind = ntb
link = rcmbench
side = 0
ip = 127.0.2.1

[device ntb_1]
kind = ntb
link = rcmbench
side = 1
ip = 127.0.2.2
EOF
"$BVCTL" --config "$OUT/bench.conf" up >/dev/null || { echo "# rdmacm bench: bvctl up failed"; exit 1; }
for _ in $(seq 100); do
	"$BVCTL" run -- ibv_devinfo -d ntb_1 2>/dev/null | grep -q PORT_ACTIVE && break
	sleep 0.1
done

# wait_port PORT: until a daemon reports the listen
wait_port() {
	for _ in $(seq 400); do
		"$BVCTL" status 2>/dev/null | grep -q "cm listen: ps 0x0106 port $1\$" && return 0
		sleep 0.05
	done
	return 1
}

# serve_run NAME PORT "SERVER" "CLIENT": the server in the background until the client ends
serve_run() {
	local name=$1 port=$2 sp rc=0
	# shellcheck disable=SC2086
	timeout 300 "$BVCTL" run -- $3 >"$OUT/$name.srv" 2>&1 &
	sp=$!
	if ! wait_port "$port"; then
		echo "# $name: the server never listened: $(tail -n 2 "$OUT/$name.srv" | tr '\n' ' ')"
		kill $sp 2>/dev/null
		wait $sp
		return 1
	fi
	# shellcheck disable=SC2086
	timeout 300 "$BVCTL" run -- $4 >"$OUT/$name.cli" 2>&1 ||
		{ rc=1; echo "# $name: client failed: $(tail -n 2 "$OUT/$name.cli" | tr '\n' ' ')"; }
	kill $sp 2>/dev/null
	wait $sp 2>/dev/null
	return $rc
}

echo "# rdmacm bench: $N connections; $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# goals: connect >= 5000 connections/s, p99 <= 10 ms per step; baseline: TCP over loopback"
port=7900
for w in "$N" 32; do
	port=$((port + 1))
	"$RATE" tcp 127.0.0.1 $port "$N" -w "$w" >"$OUT/tcp-$w" 2>&1 ||
		echo "# tcp baseline failed: $(tail -n 1 "$OUT/tcp-$w")"
	sed 's/^/# tcp, '"$w"' in flight: /' "$OUT/tcp-$w"
	record_steps "base.tcp_connect.w$w" "$OUT/tcp-$w"
done
for pair in "cx4 127.0.1.1 127.0.1.2" "ntb 127.0.2.1 127.0.2.2"; do
	set -- $pair
	kind=$1 srv=$2 cli=$3
	echo "# == $kind ($cli -> $srv)"
	port=$((port + 1))
	if serve_run "cmtime-$kind" $port "cmtime -b $srv -p $port" \
		"cmtime -s $srv -b $cli -p $port -c $N"; then
		# cmtime's table: step, total ms, max ms, min us, us/conn
		grep -E "^(create id|bind addr|resolve addr|resolve route|create qp|connect|disconnect|destroy) *:" \
			"$OUT/cmtime-$kind.cli" | sed 's/^/# cmtime: /'
		while read -r step total _max _min per; do
			record "$kind.cmtime.$step.us_per_conn" "$per" us
			case $step in
			connect) record "$kind.cmtime.connect.rate" \
				"$(awk -v n="$N" -v t="$total" 'BEGIN { if (t > 0) printf "%.0f", n / (t / 1000) }')" conn/s
				ct=$total ;;
			disconnect) record "$kind.cmtime.conn_disc.rate" \
				"$(awk -v n="$N" -v a="${ct:-0}" -v t="$total" 'BEGIN { if (a + t > 0) printf "%.0f", n / ((a + t) / 1000) }')" conn/s ;;
			esac
		done < <(sed -n -E 's/^(create id|bind addr|resolve addr|resolve route|create qp|connect|disconnect|destroy) *: *([0-9.]+) +([0-9.]+) +([0-9.]+) +([0-9.]+).*/\1 \2 \3 \4 \5/p' \
			"$OUT/cmtime-$kind.cli" | sed 's/^\([a-z]*\) \([a-z]\)/\1_\2/')
	fi
	for mode in "noqp:" "qp:-q"; do
		label=${mode%%:*} flag=${mode#*:}
		for w in "$N" 32; do
			port=$((port + 1))
			id="$kind.cm_rate.w$w"
			[ "$label" = qp ] && id="$kind.cm_rate.qp.w$w"
			serve_run "rate-$kind-$port" $port "$RATE server $srv $port $flag" \
				"$RATE client $srv $cli $port $N $flag -w $w" || continue
			sed 's/^/# cm_rate '"$label, $w"' in flight: /' "$OUT/rate-$kind-$port.cli"
			record_steps "$id" "$OUT/rate-$kind-$port.cli"
		done
	done
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit 0
