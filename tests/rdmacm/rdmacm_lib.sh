# shellcheck shell=bash
# Helpers of the rdma_cm integration tests, sourced after tests/lib/harness.sh (not a test).
#
# rdma_cm servers listen on a connection manager port, not a TCP one: a pair waits until
# "bvctl status" shows the listen in the daemons (a line "cm listen: ps 0xPPPP port N").

RDMACM_OUT=$BV_OUT

# rdmacm_wait_listen PORT [PS]: until a daemon reports a listen on PORT (20 s). PS "udp": a
# datagram rsocket, which listens on a UDP socket of its own.
rdmacm_wait_listen() {
	local ps=${2:-0x0106} i hex
	if [ "$ps" = udp ]; then
		hex=$(printf ':%04X ' "$1")
		for i in $(seq 400); do
			${BV_PAIR_S:-} grep -q "$hex" /proc/net/udp /proc/net/udp6 2>/dev/null && return 0
			sleep 0.05
		done
		return 1
	fi
	for i in $(seq 400); do
		${BV_PAIR_S:-} "$BVCTL" status 2>/dev/null | grep -q "cm listen: ps $ps port $1\$" &&
			return 0
		sleep 0.05
	done
	return 1
}

# rdmacm_pair NAME PORT "SERVER CMD" "CLIENT CMD" [PS]: both through bvctl run, the server
# first; both must exit 0. Outputs in $RDMACM_OUT/NAME.{srv,cli}, shown on failure. With
# RDMACM_SERVER_STAYS=1 the server serves for ever (cmtime): it is stopped once the client
# succeeded, and must still be running then.
rdmacm_pair() {
	local name=$1 port=$2 srv=$3 cli=$4 ps=${5:-0x0106} out="$RDMACM_OUT/$1" sp crc src
	# shellcheck disable=SC2086
	${BV_PAIR_S:-} timeout -k 5 "$BV_TMO" "$BVCTL" run -- $srv >"$out.srv" 2>&1 &
	sp=$!
	if ! rdmacm_wait_listen "$port" "$ps"; then
		kill "$sp" 2>/dev/null
		wait "$sp"
		bv_show "$out.srv" >&2
		bv_fail "$name: the server never listened on port $port"
	fi
	# shellcheck disable=SC2086
	${BV_PAIR_C:-} timeout -k 5 "$BV_TMO" "$BVCTL" run -- $cli >"$out.cli" 2>&1
	crc=$?
	if [ "${RDMACM_SERVER_STAYS:-0}" = 1 ]; then
		src=0
		bv_pid_alive "$sp" || src="exited early"
		kill "$sp" 2>/dev/null
		wait "$sp"
	else
		[ $crc = 0 ] || kill "$sp" 2>/dev/null
		wait "$sp"
		src=$?
	fi
	if [ $crc != 0 ] || [ $src != 0 ]; then
		echo "--- $name server (rc $src): $srv" >&2
		bv_show "$out.srv" >&2
		echo "--- $name client (rc $crc): $cli" >&2
		bv_show "$out.cli" >&2
		bv_fail "$name"
	fi
}

# rdmacm_expect FILE PATTERN WHAT: FILE must contain PATTERN (an ERE).
rdmacm_expect() {
	grep -Eq -- "$2" "$1" || { bv_show "$1" >&2; bv_fail "$3: no /$2/"; }
}

# rdmacm_count FILE PATTERN: how many lines match.
rdmacm_count() {
	grep -Ec -- "$2" "$1"
}

# rdmacm_cm_stat DEVICE WORD: the CM counter WORD of DEVICE ("malformed", "retries"...)
rdmacm_cm_stat() {
	"$BVCTL" status | awk -v dev="$1:" -v w="$2" '
		$1 == dev { on = 1; next } /^[a-z_0-9]+: kind/ { on = 0 }
		on && /  cm: / { for (i = 1; i < NF; i++) if ($i == w) { v = $(i + 1); gsub(/[,;]/, "", v); print v; exit } }'
}
