#!/bin/bash
# RC over a lossy wire: two "hosts" (network namespaces, a cx4d each) joined through a third
# namespace where bv_relay (tests/lossy/relay.c) bridges their veths and impairs the RoCE
# frames: 1 % loss, 5 % reordering, 1 % duplication, 5 ms jitter (this kernel has no netem).
#
# 1. bvtraffic moves CX4_LOSSY_BYTES per opcode (SEND, WRITE, READ, FETCH_ADD + CMP_SWAP, SEND
#    into an SRQ; 4 MiB here, 1 GiB under `make soak`) with every byte right and no error
#    completion, and the relay's counters show that it did impair them.
# 2. A cut (every RoCE frame dropped) longer than the retry budget ends the requester's run in
#    IBV_WC_RETRY_EXC_ERR after about (retry_cnt + 1) x the ACK timeout; a cut shorter than the
#    budget costs a retransmission and nothing else.
# 3. One corrupted packet (a payload byte changed, its ICRC made right again: the device takes
#    it) is found by bvtraffic: the data check itself can fail.
# Needs root (skipped otherwise).
BV_TMO=${BV_TMO:-1800}
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"
. "$BV_SOURCE_DIR/tests/integration/cx4_lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for network namespaces"; exit 77; }
command -v ethtool >/dev/null || bv_fail "ethtool is missing (tools/install-deps.sh installs it)"

BYTES=${CX4_LOSSY_BYTES:-4M}	# per opcode (atomics: a page an operation, bvtraffic -B)
RELAY_OPTS=${CX4_LOSSY_RELAY:-"-l 1 -r 5 -u 1 -j 5"}
tag=$$
NA=bvlA$tag NB=bvlB$tag NR=bvlR$tag
net=10.79.$((tag % 200))
RA="$CX4_OUT/hostA" RB="$CX4_OUT/hostB"
relay=""
lossy_cleanup() {
	[ -n "$relay" ] && kill "$relay" 2>/dev/null && wait "$relay" 2>/dev/null
	for ns in $NA $NB; do
		r=$RA
		[ $ns = $NB ] && r=$RB
		ip netns exec $ns env BV_RUNDIR=$r "$BVCTL" down >/dev/null 2>&1
	done
	for ns in $NA $NB $NR; do ip netns del $ns 2>/dev/null; done
	rm -rf "$RA" "$RB"
}
CX4_ON_EXIT=lossy_cleanup

for ns in $NA $NB $NR; do
	ip netns add $ns || bv_fail "ip netns add $ns"
	ip -n $ns link set lo up
done
ip link add la$tag netns $NA type veth peer name ra$tag netns $NR || bv_fail "veth A"
ip link add lb$tag netns $NB type veth peer name rb$tag netns $NR || bv_fail "veth B"
ip -n $NA addr add $net.1/24 dev la$tag
ip -n $NB addr add $net.2/24 dev lb$tag
ip netns exec $NR sysctl -qw net.ipv6.conf.all.disable_ipv6=1
# every checksum computed in software and no segmentation offload: the relay forwards frames
# as they are, and a frame left for a NIC to finish would arrive unfinished
for x in "$NA la$tag" "$NB lb$tag" "$NR ra$tag" "$NR rb$tag"; do
	set -- $x
	ip netns exec $1 ethtool -K $2 tx off rx off gso off tso off gro off >/dev/null 2>&1
	ip -n $1 link set $2 up
done

mkdir -p "$RA" "$RB"
printf '[device cx4_0]\nkind = cx4\nip = %s\nport_mtu = 1500\n' $net.1 >"$RA/host.conf"
printf '[device cx4_0]\nkind = cx4\nip = %s\nport_mtu = 1500\n' $net.2 >"$RB/host.conf"
A() { ip netns exec $NA env BV_RUNDIR="$RA" "$@"; }
B() { ip netns exec $NB env BV_RUNDIR="$RB" "$@"; }
A "$BVCTL" --config "$RA/host.conf" up >/dev/null || bv_fail "bvctl up in $NA"
B "$BVCTL" --config "$RB/host.conf" up >/dev/null || bv_fail "bvctl up in $NB"

# relay_start OPTIONS: a relay between the two hosts (its output in $CX4_OUT/relay.out)
relay_start() {
	relay_stop
	ip netns exec $NR "$BV_BUILD_DIR/bin/bv_relay" -a ra$tag -b rb$tag -s $tag "$@" \
		>"$CX4_OUT/relay.out" 2>&1 &
	relay=$!
	sleep 0.2
	bv_pid_alive "$relay" || { cat "$CX4_OUT/relay.out"; bv_fail "bv_relay did not start"; }
}
relay_stop() {
	[ -n "$relay" ] || return 0
	kill "$relay"
	wait "$relay"
	relay=""
	tail -n 6 "$CX4_OUT/relay.out"
}

BT="$BV_BUILD_DIR/bin/bvtraffic -p 18520 -d cx4_0 -g $CX4_GID"
# traffic NAME "CLIENT ARGS": a bvtraffic pair, server on host A, client on host B
traffic() {
	BV_PAIR_S=A BV_PAIR_C=B bv_pair "$1" 18520 "$BT -W 120" "$BT -W 120 $2 $net.1" ||
		{ relay_stop; bv_fail "$1"; }
	bv_note "$1: $(sed -n 's/^bvtraffic: PASS: //p' "$BV_OUT/$1.cli")"
}

# 1. every opcode through the impaired wire, every byte checked. Go-back-N resends from every
#    gap (a reordered packet is one): the wire carries several times the data, and the relay,
#    on two shared CPUs, is the bottleneck. What waits in front of it (the sender's socket
#    buffer alone holds 4 MiB) is queueing delay, so RC's local ACK timeout must be longer
#    than that or it resends what is only queued, adding to the queue until the retries run
#    out (congestion collapse, as on any RoCE network without flow or congestion control):
#    4.096 us << 18 = 1.07 s here, 8.6 s of budget with 7 retries.
relay_start $RELAY_OPTS
t0=$(date +%s)
OPS=${CX4_LOSSY_OPS:-send write read fetch_add,cmp_swap send/-S}
for o in $OPS; do
	o=${o//\// }
	set -- $o
	name="lossy-${1//,/+}${2:-}"
	traffic "$name" "-x c2s -q ${CX4_LOSSY_QPS:-2} -w 16 -s 1-65536 -B $BYTES -T 18 -o $*"
	grep "^bvtraffic: ok" "$BV_OUT/$name.cli"
done
relay_stop
grep -q "^bv_relay: a->b: .* RoCE: [1-9][0-9]* dropped, [1-9][0-9]* duplicated, [1-9][0-9]* reordered, [1-9][0-9]* delayed" \
	"$CX4_OUT/relay.out" || { cat "$CX4_OUT/relay.out"; bv_fail "the relay impaired nothing"; }
bv_note "impaired wire: $BYTES per opcode in $(($(date +%s) - t0)) s"
[ -n "${CX4_LOSSY_ONLY_IMPAIRED:-}" ] && { echo "PASS"; exit 0; }

# 2. a cut longer than the retry budget, and one shorter. ACK timeout 4.096 us << 16 = 268 ms,
#    3 retries: the budget is 4 x 268 ms from the last acknowledged packet.
TMO_MS=268 RETRY=3
relay_start
cut_run() {	# cut_run NAME CUT_MS: a WRITE stream, the wire cut for CUT_MS (0: for good)
	local name=$1 ms=$2 sp cp
	A timeout -k 5 120 "$BVCTL" run -- $BT -W 60 >"$BV_OUT/$name.srv" 2>&1 &
	sp=$!
	BV_PAIR_S=A bv_wait_listen 18520 || bv_fail "$name: no server"
	B timeout -k 5 120 "$BVCTL" run -- $BT -W 60 -x c2s -q 1 -w 8 -s 4096 -o write -D 20 \
		-T 16 -r $RETRY $net.1 >"$BV_OUT/$name.cli" 2>&1 &
	cp=$!
	# data moving (progress lines), then the cut
	bv_wait_checked "$BV_OUT/$name.cli" || bv_fail "$name: no traffic"
	kill -USR1 "$relay"
	if [ "$ms" != 0 ]; then
		sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
		kill -USR2 "$relay"
	fi
	wait "$cp"
	crc=$?
	wait "$sp"
	src=$?
	kill -USR2 "$relay"
}
cut_run cut-long 0
[ "$crc" = 3 ] || { bv_pair_show cut-long "" "" ""; bv_fail "cut-long: the requester exited $crc, not 3"; }
line=$(grep "error completion RETRY_EXC_ERR" "$BV_OUT/cut-long.cli") ||
	{ bv_pair_show cut-long "" "" ""; bv_fail "cut-long: not IBV_WC_RETRY_EXC_ERR"; }
gap=$(sed -n 's/.*, \([0-9]*\) ms after the completion before it.*/\1/p' <<<"$line")
budget=$(((RETRY + 1) * TMO_MS))
bv_note "cut-long: RETRY_EXC_ERR $gap ms after the last completion (budget $budget ms)"
# not before RETRY timeouts have passed; not much after the last one (a loaded machine's slack)
[ "$gap" -ge $((RETRY * TMO_MS)) ] && [ "$gap" -le $((budget * 2 + 1000)) ] ||
	bv_fail "cut-long: retries exceeded after $gap ms, budget $budget ms"
grep -q "FAIL (exit 1)" "$BV_OUT/cut-long.cli" "$BV_OUT/cut-long.srv" &&
	bv_fail "cut-long: a data error"

cut_run cut-short $((budget * 4 / 10))
[ "$crc" = 0 ] && [ "$src" = 0 ] ||
	{ bv_pair_show cut-short "" "" ""; bv_fail "cut-short: a cut of $((budget * 4 / 10)) ms was not survived"; }
bv_note "cut-short: $((budget * 4 / 10)) ms without RoCE survived: $(sed -n 's/^bvtraffic: PASS: //p' "$BV_OUT/cut-short.cli")"
relay_stop

# 3. a corrupted packet the device accepts: the data check must find it (exit 1 on both ends)
relay_start -c 1
A timeout -k 5 120 "$BVCTL" run -- $BT >"$BV_OUT/corrupt.srv" 2>&1 &
sp=$!
BV_PAIR_S=A bv_wait_listen 18520 || bv_fail "corrupt: no server"
B timeout -k 5 120 "$BVCTL" run -- $BT -x c2s -q 1 -s 8192 -o write -n 200 $net.1 \
	>"$BV_OUT/corrupt.cli" 2>&1
crc=$?
wait "$sp"
src=$?
relay_stop
grep -q "^bv_relay: b->a: .* 1 corrupted" "$CX4_OUT/relay.out" ||
	{ cat "$CX4_OUT/relay.out"; bv_fail "corrupt: the relay corrupted nothing"; }
[ "$src" = 1 ] && [ "$crc" = 1 ] && grep -q "DATA ERROR" "$BV_OUT/corrupt.srv" ||
	{ bv_pair_show corrupt "" "" ""; bv_fail "corrupt: exits $src/$crc, not a data error"; }
bv_note "corrupt: $(grep -h "DATA ERROR" "$BV_OUT/corrupt.srv" | head -1)"
echo "PASS"
