#!/bin/bash
# Every GID the cx4 devices list works (docs/cx4-driver.md, "GID table"): with the built-in
# configuration (cx4_0 and cx4_1 on lo, joined by a cable) the table is the mlx5 one,
# 0 fe80:: RoCE v1, 1 fe80:: RoCE v2, 2 ::ffff:ip RoCE v1, 3 ::ffff:ip RoCE v2, and
# ibv_rc/uc/ud/srq_pingpong run on every index between the two devices and in loopback on one,
# and bvtraffic beside them (RC with an SRQ and UD, every byte checked: the pingpongs check none).
# cx4_0 captures its wire: icrc_check.py verifies every ICRC of every type and tshark dissects
# them (RoCE v1 as "RoCE", v2 as "RRoCE"). Without a cable a lo port can carry neither RoCE v1
# nor link-local IPv6, and lists only ::ffff:ip RoCE v2. The sysfs programs read directly:
# device/driver, device/net/<ifname> (bvctl run's view of /sys), ibstat and ibstatus.
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"
. "$BV_SOURCE_DIR/tests/integration/cx4_lib.sh"
conf=$CX4_OUT/gid.conf
printf '[device cx4_0]\nkind = cx4\nip = 127.0.1.1\ncable = c\npcap = %s\n\n' \
	"$CX4_OUT/cx4_0.pcap" >"$conf"
printf '[device cx4_1]\nkind = cx4\nip = 127.0.1.2\ncable = c\n' >>"$conf"
bv_up "$conf"

sys=$BV_RUNDIR/sysfs/class/infiniband
gid() { cat "$sys/$1/ports/1/gids/$2"; }
type_of() { cat "$sys/$1/ports/1/gid_attrs/types/$2"; }
want=("fe80:0000:0000:0000:0062:76ff:fe00:000N IB/RoCE v1"
      "fe80:0000:0000:0000:0062:76ff:fe00:000N RoCE v2"
      "0000:0000:0000:0000:0000:ffff:7f00:010N IB/RoCE v1"
      "0000:0000:0000:0000:0000:ffff:7f00:010N RoCE v2")
for d in 0 1; do
	for i in 0 1 2 3; do
		w=${want[$i]//N/$((d + 1))}
		[ "$(gid cx4_$d $i) $(type_of cx4_$d $i)" = "$w" ] ||
			bv_fail "cx4_$d GID $i: $(gid cx4_$d $i) $(type_of cx4_$d $i), want $w"
		[ "$(cat "$sys/cx4_$d/ports/1/gid_attrs/ndevs/$i")" = lo ] ||
			bv_fail "cx4_$d GID $i: ndev is not lo"
	done
	[ "$(gid cx4_$d 4)" = "0000:0000:0000:0000:0000:0000:0000:0000" ] ||
		bv_fail "cx4_$d: GID 4 is $(gid cx4_$d 4)"
done
echo "ok GID tables"

# what programs that read /sys themselves find (bvctl run shows the tree there)
[ "$(bv_run ls /sys/class/infiniband/cx4_0/device/net)" = lo ] || bv_fail "device/net"
[ "$(basename "$(bv_run readlink /sys/class/infiniband/cx4_0/device/driver)")" = cx4d ] ||
	bv_fail "device/driver"
out=$(bv_run ibstat cx4_0) || { echo "$out"; bv_fail "ibstat"; }
for p in "CA 'cx4_0'" "Firmware version: 12.16.1020" "State: Active" "Physical state: LinkUp" \
	 "Rate: 100" "Link layer: Ethernet" "Port GUID: 0x006276fffe000001"; do
	echo "$out" | grep -qF "$p" || { echo "$out"; bv_fail "ibstat: no '$p'"; }
done
out=$(bv_run ibstatus cx4_1) || { echo "$out"; bv_fail "ibstatus"; }
for p in "default gid:	 fe80:0000:0000:0000:0062:76ff:fe00:0002" "state:		 4: ACTIVE" \
	 "rate:		 100 Gb/sec (4X EDR)" "link_layer:	 Ethernet"; do
	echo "$out" | grep -qF "$p" || { echo "$out"; bv_fail "ibstatus: no '$p'"; }
done
echo "ok sysfs: device/net, device/driver, ibstat, ibstatus"

for g in 0 1 2 3; do
	for pair in "cx4_0 cx4_1" "cx4_0 cx4_0"; do
		set -- $pair
		for p in rc uc ud srq; do
			name="$p-g$g-$1-$2"
			cx4_pair "$name" 18515 "ibv_${p}_pingpong -d $1 -g $g -n 100 -c" \
				"ibv_${p}_pingpong -d $2 -g $g -n 100 -c 127.0.0.1"
			cx4_expect "$CX4_OUT/$name.cli" "bytes in .* seconds" "$name"
			cx4_expect "$CX4_OUT/$name.srv" "iters in .* seconds" "$name"
		done
		# the pingpongs check no data: bvtraffic on the same GID, every byte checked
		cx4_traffic "bvt-rc-g$g-$1-$2" "-d $1 -g $g" "-d $2 -g $g -t rc -S -n 16 127.0.0.1"
		cx4_traffic "bvt-ud-g$g-$1-$2" "-d $1 -g $g" "-d $2 -g $g -t ud -n 16 127.0.0.1"
		echo "ok pingpongs and bvtraffic RC/UD on GID $g ($(type_of cx4_0 $g)), $1 <-> $2"
	done
done

# the capture: every type on the wire, every ICRC right, every frame dissected
"$BVCTL" down >/dev/null
python3 "$BV_SOURCE_DIR/tests/cx4/icrc_check.py" "$CX4_OUT/cx4_0.pcap" >"$CX4_OUT/icrc" ||
	{ cat "$CX4_OUT/icrc"; bv_fail "ICRC check of the capture"; }
if command -v tshark >/dev/null; then
	# every IB payload heuristic off (tests/cx4/icrc_check.py says why, and its
	# --tshark-selftest, ctest cx4_tshark_strict, proves bad headers are still reported)
	mapfile -t targs < <(python3 "$BV_SOURCE_DIR/tests/cx4/icrc_check.py" --tshark-args)
	t=$(tshark -n -r "$CX4_OUT/cx4_0.pcap" "${targs[@]}" -T fields -e _ws.col.Protocol -e eth.type \
		-e _ws.malformed 2>/dev/null | sort | uniq -c)
	echo "$t" | grep -q "malformed" && { echo "$t"; bv_fail "tshark: malformed frames"; }
	for w in "RoCE	0x8915" "RRoCE	0x86dd" "RRoCE	0x0800"; do
		echo "$t" | grep -qF "$w" || { echo "$t"; bv_fail "tshark: no '$w' frames"; }
	done
	echo "$t" | grep -vE "R?RoCE	0x(8915|86dd|0800)" | grep -q . &&
		{ echo "$t"; bv_fail "tshark: frames not dissected as RoCE"; }
	echo "ok capture: $(cat "$CX4_OUT/icrc"); tshark: $(echo $t)"
fi

# two lo ports without a cable: only what UDP over the loopback carries is listed
printf '[device cx4_0]\nkind = cx4\nip = 127.0.1.1\n\n[device cx4_1]\nkind = cx4\nip = 127.0.1.2\n' \
	>"$conf"
bv_up "$conf"
for d in 0 1; do
	[ "$(gid cx4_$d 0) $(type_of cx4_$d 0)" = \
	  "0000:0000:0000:0000:0000:ffff:7f00:010$((d + 1)) RoCE v2" ] ||
		bv_fail "uncabled cx4_$d GID 0: $(gid cx4_$d 0) $(type_of cx4_$d 0)"
	[ "$(gid cx4_$d 1)" = "0000:0000:0000:0000:0000:0000:0000:0000" ] ||
		bv_fail "uncabled cx4_$d GID 1: $(gid cx4_$d 1)"
done
cx4_pair "rc-uncabled" 18515 "ibv_rc_pingpong -d cx4_0 -g 0 -n 100 -c" \
	"ibv_rc_pingpong -d cx4_1 -g 0 -n 100 -c 127.0.0.1"
echo "ok without a cable: GID 0 is ::ffff:ip RoCE v2, and works"
echo "PASS"
