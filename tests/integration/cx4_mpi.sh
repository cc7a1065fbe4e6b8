#!/bin/bash
# Open MPI (Debian's mpirun, pml ucx and osc ucx) over the cx4 devices, running the project's
# mpi_check (tests/mpi: point-to-point, collectives, one-sided MPI_Put/MPI_Get, every byte
# checked) with 2, 4 and 8 ranks:
#   - all on one device (cx4_0: the ranks' traffic goes through its loopback);
#   - split over two network namespaces joined by a veth pair, one cx4d each (RoCE between
#     them, through the veth), mpirun in the first, Open MPI's rsh launcher starting the other
#     half in the second through `ip netns exec` (the agent script below).
# The settings Open MPI needs (docs/cx4-driver.md, "Open MPI"): --mca pml ucx --mca osc ucx
# (UCX for messages and one-sided), --mca pml_ucx_devices any (pml ucx takes only devices
# whose driver matches mlx* by default; ours is cx4d), UCX_TLS=rc_verbs,ud_verbs,self (no
# shared memory: every byte between ranks crosses the device) and UCX_NET_DEVICES=cx4_0:1.
# Needs root for the namespaces (the one-device part runs without).
BV_TMO=${BV_TMO:-300}
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"
. "$BV_SOURCE_DIR/tests/integration/cx4_lib.sh"
MPI_CHECK="$BV_BUILD_DIR/bin/mpi_check"
command -v mpirun >/dev/null || bv_fail "Open MPI is not installed (tools/install-deps.sh)"
[ -x "$MPI_CHECK" ] || bv_fail "no $MPI_CHECK (configure with -DBV_MPI_TESTS=ON, the default)"

MCA="--allow-run-as-root --oversubscribe --mca pml ucx --mca osc ucx --mca btl self
	--mca pml_ucx_devices any -x UCX_TLS=rc_verbs,ud_verbs,self -x UCX_NET_DEVICES=cx4_0:1
	-x UCX_WARN_UNUSED_ENV_VARS=n"

# check N OUT: mpi_check's verdict in OUT for N ranks
check() {
	grep -q "^mpi_check: $1 ranks, [0-9]* bytes checked, OK$" "$2" ||
		{ bv_show "$2"; bv_fail "mpi_check with $1 ranks"; }
	echo "ok $3, $1 ranks: $(grep '^mpi_check:' "$2")"
}

conf=$CX4_OUT/one.conf
printf '[device cx4_0]\nkind = cx4\nip = 127.0.1.1\n' >"$conf"
bv_up "$conf"
for np in 2 4 8; do
	# shellcheck disable=SC2086
	timeout -k 5 "$BV_TMO" "$BVCTL" run -- mpirun $MCA -np $np "$MPI_CHECK" \
		>"$CX4_OUT/one-$np.out" 2>&1 || { bv_show "$CX4_OUT/one-$np.out"; bv_fail "mpirun -np $np"; }
	check $np "$CX4_OUT/one-$np.out" "one device"
done
"$BVCTL" down >/dev/null

[ "$(id -u)" = 0 ] || { echo "SKIP: the two-namespace part needs root"; echo "PASS"; exit 0; }
tag=$$
NA=bvmA$tag NB=bvmB$tag
n=$((tag % 200))
IPA=10.81.$n.1 IPB=10.81.$n.2
RA="$CX4_OUT/hostA" RB="$CX4_OUT/hostB"
netns_cleanup() {
	ip netns exec $NA env BV_RUNDIR="$RA" "$BVCTL" down >/dev/null 2>&1
	ip netns exec $NB env BV_RUNDIR="$RB" "$BVCTL" down >/dev/null 2>&1
	ip netns del $NA 2>/dev/null
	ip netns del $NB 2>/dev/null
}
CX4_ON_EXIT=netns_cleanup
ip netns add $NA && ip netns add $NB || bv_fail "ip netns add"
ip -n $NA link set lo up && ip -n $NB link set lo up
ip link add vma$tag netns $NA type veth peer name vmb$tag netns $NB || bv_fail "veth"
ip -n $NA addr add $IPA/24 dev vma$tag && ip -n $NA link set vma$tag up
ip -n $NB addr add $IPB/24 dev vmb$tag && ip -n $NB link set vmb$tag up
mkdir -p "$RA" "$RB"
printf '[device cx4_0]\nkind = cx4\nip = %s\nport_mtu = 1500\n' $IPA >"$RA/host.conf"
printf '[device cx4_0]\nkind = cx4\nip = %s\nport_mtu = 1500\n' $IPB >"$RB/host.conf"
ip netns exec $NA env BV_RUNDIR="$RA" "$BVCTL" --config "$RA/host.conf" up >/dev/null ||
	bv_fail "bvctl up in $NA"
ip netns exec $NB env BV_RUNDIR="$RB" "$BVCTL" --config "$RB/host.conf" up >/dev/null ||
	bv_fail "bvctl up in $NB"

# Open MPI's rsh launcher runs AGENT HOST COMMAND...: the "host" $IPB is namespace B, where
# the command (its orted) runs with that namespace's devices, as on another machine. $IPA is
# one of mpirun's own addresses, so its ranks start locally.
agent=$CX4_OUT/agent
cat >"$agent" <<EOF
#!/bin/sh
[ "\$1" = $IPB ] || { echo "agent: unknown host \$1" >&2; exit 1; }
shift
exec ip netns exec $NB env BV_RUNDIR="$RB" "$BVCTL" run -- sh -c "\$*"
EOF
chmod +x "$agent"
for np in 2 4 8; do
	# shellcheck disable=SC2086
	ip netns exec $NA env BV_RUNDIR="$RA" timeout -k 5 "$BV_TMO" "$BVCTL" run -- \
		mpirun $MCA -np $np -H $IPA:$((np / 2)),$IPB:$((np / 2)) --map-by node \
		--mca plm_rsh_agent "$agent" --mca plm_rsh_no_tree_spawn 1 \
		--mca oob_tcp_if_include 10.81.$n.0/24 "$MPI_CHECK" >"$CX4_OUT/two-$np.out" 2>&1 ||
		{ bv_show "$CX4_OUT/two-$np.out"; bv_fail "mpirun -np $np over two namespaces"; }
	check $np "$CX4_OUT/two-$np.out" "two namespaces"
done
echo "PASS"
