#!/bin/bash
# Issue 2 acceptance: ibv_devices lists the four default devices; ibv_devinfo -v shows each
# with PORT_ACTIVE, link layer Ethernet, a RoCE v2 IPv4-mapped GID and a RoCE v1 link-local GID.
# Issue 12 item 4, both kinds: what programs read from /sys (bvctl run's view): the device's
# driver link (its daemon) and its net device (device/net/<ifname>, and the GID's ndev), and
# ibstat / ibstatus (infiniband-diags) on them.
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"
bv_up

out=$(bv_run ibv_devices) || bv_fail "ibv_devices failed"
for d in cx4_0 cx4_1 ntb_0 ntb_1; do
	echo "$out" | grep -Eq "^[[:space:]]+$d[[:space:]]+[0-9a-f]{16}$" ||
		{ echo "$out"; bv_fail "ibv_devices does not list $d"; }
done
[ "$(echo "$out" | grep -c '[0-9a-f]\{16\}$')" = 4 ] || { echo "$out"; bv_fail "not 4 devices"; }

declare -A ip=([cx4_0]=127.0.1.1 [cx4_1]=127.0.1.2 [ntb_0]=127.0.2.1 [ntb_1]=127.0.2.2)
for d in cx4_0 cx4_1 ntb_0 ntb_1; do
	out=$(bv_run ibv_devinfo -v -d "$d") || bv_fail "ibv_devinfo -v -d $d failed"
	for pat in "hca_id:[[:space:]]+$d\$" "state:[[:space:]]+PORT_ACTIVE \(4\)" \
		"link_layer:[[:space:]]+Ethernet" \
		"GID\[ *[0-9]+\]:[[:space:]]+::ffff:${ip[$d]//./\\.}, RoCE v2" \
		"GID\[ *[0-9]+\]:[[:space:]]+fe80:0000:0000:0000:[0-9a-f:]+, RoCE v1"; do
		echo "$out" | grep -Eq -- "$pat" || { echo "$out"; bv_fail "$d: no /$pat/"; }
	done
	sys=/sys/class/infiniband/$d
	[ "$(bv_run ls "$sys/device/net")" = lo ] || bv_fail "$d: device/net is not lo"
	[ "$(bv_run cat "$sys/ports/1/gid_attrs/ndevs/0")" = lo ] || bv_fail "$d: GID 0's ndev"
	drv=$(bv_run readlink "$sys/device/driver")
	[ "$(basename "$drv")" = "${d%_*}d" ] || bv_fail "$d: device/driver is '$drv'"
	[ -d "$BV_RUNDIR/sysfs/class/infiniband/$d/device/$drv" ] ||
		bv_fail "$d: device/driver ($drv) leads nowhere"
	out=$(bv_run ibstat "$d") || { echo "$out"; bv_fail "ibstat $d"; }
	for p in "CA '$d'" "State: Active" "Physical state: LinkUp" "Link layer: Ethernet"; do
		echo "$out" | grep -qF "$p" || { echo "$out"; bv_fail "ibstat $d: no '$p'"; }
	done
	out=$(bv_run ibstatus "$d") || { echo "$out"; bv_fail "ibstatus $d"; }
	for p in "default gid:	 fe80:" "state:		 4: ACTIVE" "link_layer:	 Ethernet"; do
		echo "$out" | grep -qF "$p" || { echo "$out"; bv_fail "ibstatus $d: no '$p'"; }
	done
done
echo "PASS"
