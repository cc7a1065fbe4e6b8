# shellcheck shell=bash
# Helpers of the cx4 integration tests, sourced after tests/lib/harness.sh. (Not a test itself.)

# The GID index perftest and the pingpongs must use: RoCE v2, IPv4-mapped (sysfs index 3).
CX4_GID=3

# cx4_wait_listen PORT: until a TCP socket listens on PORT in this network namespace (20 s).
cx4_wait_listen() {
	local hex i
	hex=$(printf '%04X' "$1")
	for i in $(seq 400); do
		grep -q ":$hex 00000000:0000 0A" /proc/net/tcp /proc/net/tcp6 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# cx4_pair NAME PORT "SERVER CMD" "CLIENT CMD": both through bvctl run, the server first;
# both must exit 0. Outputs stay in $BV_RUNDIR/NAME.{srv,cli} (shown on failure). Never hangs:
# every process has a timeout, and a failed client takes the server down with it.
cx4_pair() {
	local name=$1 port=$2 srv=$3 cli=$4 out="$BV_RUNDIR/$1" sp crc src
	# shellcheck disable=SC2086
	timeout -k 5 "$BV_TMO" "$BVCTL" run -- $srv >"$out.srv" 2>&1 &
	sp=$!
	if ! cx4_wait_listen "$port"; then
		kill "$sp" 2>/dev/null
		wait "$sp"
		cat "$out.srv" >&2
		bv_fail "$name: the server never listened on $port"
	fi
	# shellcheck disable=SC2086
	timeout -k 5 "$BV_TMO" "$BVCTL" run -- $cli >"$out.cli" 2>&1
	crc=$?
	[ $crc = 0 ] || kill "$sp" 2>/dev/null
	wait "$sp"
	src=$?
	if [ $crc != 0 ] || [ $src != 0 ]; then
		echo "--- $name server (rc $src): $srv" >&2
		tail -n 20 "$out.srv" >&2
		echo "--- $name client (rc $crc): $cli" >&2
		tail -n 20 "$out.cli" >&2
		bv_fail "$name"
	fi
}

# cx4_expect FILE PATTERN WHAT: FILE must contain PATTERN (an ERE).
cx4_expect() {
	grep -Eq -- "$2" "$1" || { cat "$1" >&2; bv_fail "$3: no /$2/"; }
}
