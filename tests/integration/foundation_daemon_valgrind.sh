#!/bin/bash
# The daemons under valgrind: serving clients, losing them, and shutting down make no memory
# errors and leak nothing.
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"
[ "${BV_VALGRIND:-1}" = 1 ] || { echo "SKIP: valgrind disabled (sanitizer build)"; exit 77; }

vgdir=$(mktemp -d /tmp/bvvg.XXXXXX)
export BV_DAEMON_WRAPPER="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --log-file=$vgdir/vg.%p.log"
bv_up
unset BV_DAEMON_WRAPPER
bv_run "$BV_BUILD_DIR/bin/test_open_all" 4 >/dev/null || bv_fail "open_all"
bv_run ibv_devinfo -v >/dev/null || bv_fail "ibv_devinfo"
"$BVCTL" status >/dev/null || bv_fail "status"
"$BVCTL" down || bv_fail "down"
mkdir -p "$BV_RUNDIR"
bad=0
for f in "$vgdir"/vg.*.log; do
	[ -s "$f" ] || continue
	echo "--- $f ---"; cat "$f"; bad=1
done
[ "$(ls "$vgdir" | wc -l)" -ge 4 ] || { ls "$vgdir"; bad=1; echo "daemons did not run under valgrind"; }
rm -rf "$vgdir"
[ $bad = 0 ] || bv_fail "valgrind reported errors in the daemons"
echo "PASS"
