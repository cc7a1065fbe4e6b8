#!/bin/bash
# bvctl behaves: --help everywhere, up twice is harmless, status lists clients, env exports
# what run sets, a bad configuration is refused with a line number, down leaves nothing behind.
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"

for c in "" setup up down status env run demo; do
	"$BVCTL" $c --help | grep -q "usage: bvctl" || bv_fail "bvctl $c --help"
done
"$BVCTL" nonsense >/dev/null 2>&1 && bv_fail "unknown command accepted"

bad=$BV_RUNDIR.bad.conf
printf '[device x]\nkind = cx5\nip = 127.0.9.1\n' >"$bad"
out=$("$BVCTL" --config "$bad" up 2>&1) && bv_fail "bad config accepted"
rm -f "$bad"
echo "$out" | grep -q "line 2: kind must be cx4 or ntb" || bv_fail "bad config message: $out"

bv_up
pids1=$(cat "$BV_RUNDIR"/*.pid | sort)
bv_up
pids2=$(cat "$BV_RUNDIR"/*.pid | sort)
[ "$pids1" = "$pids2" ] || bv_fail "second 'up' restarted daemons"
[ "$(echo "$pids1" | wc -l)" = 4 ] || bv_fail "expected 4 daemons"

# a client shows in status while it holds the device open
bv_run sleep 0 || bv_fail "bvctl run"
env_out=$("$BVCTL" env)
for v in SYSFS_PATH RDMAV_DRIVERS LD_PRELOAD BV_RUNDIR LD_LIBRARY_PATH; do
	echo "$env_out" | grep -q "^export $v=" || bv_fail "env lacks $v"
done
eval "$env_out"
[ "$SYSFS_PATH" = "$BV_RUNDIR/sysfs" ] || bv_fail "SYSFS_PATH=$SYSFS_PATH"
bv_expect_output "cx4_0: kind cx4, daemon pid [0-9]+, 0 clients" "$BVCTL" status

"$BVCTL" down || bv_fail "down"
for p in $pids1; do
	bv_pid_alive "$p" && bv_fail "daemon $p survived down"
done
[ -e "$BV_RUNDIR" ] && { ls -laR "$BV_RUNDIR"; bv_fail "down left $BV_RUNDIR behind"; }
"$BVCTL" down || bv_fail "down twice"
mkdir -p "$BV_RUNDIR"	# for the harness's cleanup
echo "PASS"
