#!/bin/bash
# Real traffic for the fuzz corpora (docs/reliability.md, "Corpora"): runs the Debian programs
# on cx4 and ntb devices in a private network namespace and run directory, with
#   - strace on every program (its requests to the daemons: strace2proto.py),
#   - the model's capture (pcap) and cx4d's command trace of both cx4 devices,
# then turns them into candidate inputs under OUT/{cx4d,ntbd,ntbd-requests,rx,cmd}. Merge the
# ones that add coverage into a corpus with the target: build/bin/T -merge=1 CORPUS OUT/x.
#
#   tests/fuzz/capture_traffic.sh BUILD_DIR OUT
#
# Needs strace, perftest and ibverbs-utils (tools/install-deps.sh) and root (unshare --net).
set -u
if [ $# -ne 2 ]; then
	sed -n '2,12p' "$0" >&2
	exit 2
fi
build=$(cd "$1" && pwd)
out=$(mkdir -p "$2" && cd "$2" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${BV_CAPTURE_INSIDE:-}" ]; then
	BV_CAPTURE_INSIDE=1 exec unshare --net "$0" "$@"
fi
ip link set lo up
raw=$out/raw
rm -rf "$raw"
mkdir -p "$raw"
export BV_RUNDIR=$(mktemp -d /tmp/bv-capture.XXXXXX)
trap '"$build/bin/bvctl" down >/dev/null 2>&1; rm -rf "$BV_RUNDIR"' EXIT
cat >"$raw/config" <<EOF
[device cx4_0]
kind = cx4
ip = 127.0.1.1
trace = $raw/cx4_0.trace
pcap = $raw/cx4_0.pcap
port_mtu = 1100

[device cx4_1]
kind = cx4
ip = 127.0.1.2
trace = $raw/cx4_1.trace
pcap = $raw/cx4_1.pcap
port_mtu = 1100

[device ntb_0]
kind = ntb
link = ntb0
side = 0
profile = intel-gen3
ip = 127.0.2.1

[device ntb_1]
kind = ntb
link = ntb0
side = 1
profile = intel-gen3
ip = 127.0.2.2
EOF
"$build/bin/bvctl" --config "$raw/config" up >/dev/null || { echo "bvctl up failed" >&2; exit 1; }

run() {	# run NAME CMD...: one program under strace
	local name=$1
	shift
	timeout 60 strace -f -xx -s 70000 -e trace=sendmsg -o "$raw/$name.strace" \
		"$build/bin/bvctl" run "$@" >/dev/null 2>&1
}
pair() { # pair NAME PORT "SERVER" "CLIENT": a server and its client (to 127.0.0.1)
	run "$1-srv" $3 -p "$2" &
	local s=$!
	sleep 1.5
	run "$1-cli" $4 -p "$2" 127.0.0.1
	wait $s
}
port=18800
for dev in cx4 ntb; do
	g=3 x="-x 3"
	[ $dev = ntb ] && g=0 x=""
	for p in rc uc ud srq; do
		[ $dev = ntb ] && [ $p = uc ] && continue
		pair "$dev-$p" $((port++)) "ibv_${p}_pingpong -d ${dev}_0 -g $g -n 20 -s 1500" \
			"ibv_${p}_pingpong -d ${dev}_1 -g $g -n 20 -s 1500"
	done
	pair "$dev-rce" $((port++)) "ibv_rc_pingpong -d ${dev}_0 -g $g -n 20 -e" \
		"ibv_rc_pingpong -d ${dev}_1 -g $g -n 20 -e"
	for b in write_bw read_bw atomic_bw send_bw write_lat; do
		pair "$dev-$b" $((port++)) "ib_$b -d ${dev}_0 $x -n 50" "ib_$b -d ${dev}_1 $x -n 50"
	done
done
run devinfo ibv_devinfo -v
"$build/bin/bvctl" down >/dev/null

for f in "$raw"/*.strace; do
	n=$(basename "$f" .strace)
	python3 "$src/tests/fuzz/strace2proto.py" cx4 "$f" "$out/cx4d" "$n" >/dev/null 2>&1
	python3 "$src/tests/fuzz/strace2proto.py" ntb "$f" "$out/ntbd" "$n" >/dev/null 2>&1
	python3 "$src/tests/fuzz/strace2proto.py" ntbd-requests "$f" "$out/ntbd-requests" "$n" \
		>/dev/null 2>&1
done
python3 "$src/tests/cx4/fuzz/pcap2rx.py" "$out/rx" "$raw"/cx4_*.pcap
python3 "$src/tests/cx4/fuzz/trace2cmd.py" "$out/cmd" cx4d "$raw"/cx4_*.trace
python3 "$src/tests/cx4/fuzz/trace2cmd.py" "$out/cmd" linux \
	"$src/tests/cx4/data/mlx5_core-trace-cx4lx.txt.gz"
for d in cx4d ntbd ntbd-requests rx cmd; do
	echo "$out/$d: $(ls "$out/$d" 2>/dev/null | wc -l) inputs"
done
