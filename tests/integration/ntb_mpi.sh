#!/bin/bash
# Open MPI over UCX on the ntb devices (Debian's openmpi-bin, unmodified; tests/mpi/mpi_check:
# point-to-point, collectives, MPI_Put/MPI_Get, every byte checked) with 2, 4 and 8 ranks,
# split across the two ends and all on one end (loopback). MCA and UCX settings it needs:
#   --mca pml ucx --mca osc ucx: UCX carries the messages and the one-sided windows;
#   --mca btl ^vader,tcp,uct, UCX_TLS=rc_verbs,ud_verbs: nothing but the ntb device (no
#       shared memory, no TCP), ud_verbs for UCX's wireup;
#   UCX_NET_DEVICES=ntb_N:1 per rank (an MPMD command line puts ranks on either end);
#   UCX_IB_GID_INDEX: the RoCE v2 IPv4 GID (UCX cannot tell GID types from our sysfs);
#   --oversubscribe: 8 ranks on 2 cores.
BV_TMO=${BV_TMO:-600}
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
. "$BV_SOURCE_DIR/tests/integration/ntb_lib.sh"
bv_isolate_net "$@"
prog=${BV_MPI_CHECK:-$BV_BUILD_DIR/bin/mpi_check}
if [ ! -x "$prog" ]; then
	echo "SKIP: $prog is not built (cmake -DBV_MPI_TESTS=ON, tests/mpi)"
	exit 77
fi
ntb_up intel-gen3
gid=$(ntb_gid ntb_0)
# run N0 N1: N0 ranks on ntb_0, N1 on ntb_1
run() {
	local a=$1 b=$2 app=() out="$BV_OUT/mpi-$1-$2.out" n
	[ "$a" -gt 0 ] && app+=(-np "$a" -x UCX_NET_DEVICES=ntb_0:1 "$prog")
	[ "$a" -gt 0 ] && [ "$b" -gt 0 ] && app+=(:)
	[ "$b" -gt 0 ] && app+=(-np "$b" -x UCX_NET_DEVICES=ntb_1:1 "$prog")
	timeout -k 5 "$BV_TMO" "$BVCTL" run -- mpirun --allow-run-as-root --oversubscribe \
		--host localhost:16 --mca pml ucx --mca osc ucx --mca btl ^vader,tcp,uct \
		-x UCX_TLS=rc_verbs,ud_verbs -x UCX_IB_GID_INDEX="$gid" -x UCX_WARN_UNUSED_ENV_VARS=n \
		"${app[@]}" >"$out" 2>&1 || { bv_show "$out"; bv_fail "mpirun with $a + $b ranks"; }
	grep -qE "mpi_check: .*(OK|ok)" "$out" || { bv_show "$out"; bv_fail "$a + $b ranks: no result"; }
	# the ranks were clients of the devices they were given (not some other path)
	for d in ntb_0:"$a" ntb_1:"$b"; do
		n=$(grep -c "mpi_check) opened the device" "$BV_RUNDIR/${d%:*}.log")
		[ "$n" -ge "${d#*:}" ] || bv_fail "$a + $b ranks: $n clients of ${d%:*}, want ${d#*:}"
	done
	: >"$BV_RUNDIR/ntb_0.log"
	: >"$BV_RUNDIR/ntb_1.log"
	echo "ok $a + $b ranks: $(grep -E 'mpi_check: ' "$out" | head -1)"
}
for n in 2 4 8; do
	run $((n / 2)) $((n / 2))
	run "$n" 0
done
run 0 2
ntb_check_counters mpi
echo "PASS"
