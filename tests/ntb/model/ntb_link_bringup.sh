#!/bin/bash
# ntbd brings the link up with its peer on every hardware profile (mailbox over message
# registers on idt, scratchpads elsewhere); the port is ACTIVE exactly while the link is; a
# killed peer daemon takes it DOWN (with IBV_EVENT_PORT_ERR to clients) and a restarted one
# brings it back (IBV_EVENT_PORT_ACTIVE); bvctl status shows the link state; the bring-up
# makes no reads across the link.
. "$BV_SOURCE_DIR/tests/lib/harness.sh"
bv_isolate_net "$@"

profiles=${NTB_PROFILES:-"intel-gen1 intel-gen3 intel-gen4 amd idt switchtec epf"}

port_state() {	# port_state DEV: PORT_ACTIVE, PORT_DOWN, ...
	bv_run ibv_devinfo -d "$1" 2>&1 | sed -n 's/.*state:[[:space:]]*\(PORT_[A-Z]*\).*/\1/p' | head -1
}

wait_status() {	# wait_status PATTERN: bvctl status matches within 10 s
	for _ in $(seq 100); do
		local out
		out=$("$BVCTL" status 2>&1)	# nonzero while a daemon is down
		echo "$out" | grep -Eq -- "$1" && return 0
		sleep 0.1
	done
	"$BVCTL" status >&2
	return 1
}

conf=$(mktemp /tmp/ntb-conf.XXXXXX)
trap 'rm -f "$conf"; bv_cleanup' EXIT
for p in $profiles; do
	bv_note "profile $p"
	cat >"$conf" <<CONF
[device ntb_0]
kind = ntb
link = l$p
side = 0
profile = $p
ip = 127.0.2.1

[device ntb_1]
kind = ntb
link = l$p
side = 1
profile = $p
ip = 127.0.2.2
CONF
	bv_up "$conf"
	wait_status "side 0, profile $p: READY" || bv_fail "$p: side 0 not READY"
	wait_status "side 1, profile $p: READY" || bv_fail "$p: side 1 not READY"
	[ "$(port_state ntb_0)" = PORT_ACTIVE ] || bv_fail "$p: ntb_0 port not ACTIVE"
	[ "$(port_state ntb_1)" = PORT_ACTIVE ] || bv_fail "$p: ntb_1 port not ACTIVE"
	if [ "$p" = idt ]; then
		grep -q "mailbox over message registers" "$BV_RUNDIR/ntb_0.log" || bv_fail "idt: msgs"
	else
		grep -q "mailbox over scratchpads" "$BV_RUNDIR/ntb_0.log" || bv_fail "$p: spads"
	fi

	# a client watching async events sees the port go down and come back
	timeout -k 5 30 "$BVCTL" run -- ibv_asyncwatch -d ntb_0 >"$BV_RUNDIR/events" 2>&1 &
	watcher=$!
	sleep 0.5
	pid=$(cat "$BV_RUNDIR/ntb_1.pid")
	kill -KILL "$pid"
	while bv_pid_alive "$pid"; do sleep 0.05; done
	wait_status "side 0, profile $p: DOWN" || bv_fail "$p: side 0 still up after peer death"
	[ "$(port_state ntb_0)" = PORT_DOWN ] || bv_fail "$p: ntb_0 port not DOWN"
	"$BVCTL" --config "$conf" up >/dev/null || bv_fail "$p: restart ntb_1"
	wait_status "side 0, profile $p: READY" || bv_fail "$p: not READY after restart"
	[ "$(port_state ntb_0)" = PORT_ACTIVE ] || bv_fail "$p: ntb_0 not ACTIVE after restart"
	sleep 0.3
	kill "$watcher" 2>/dev/null
	wait "$watcher" 2>/dev/null
	grep -q "IBV_EVENT_PORT_ERR" "$BV_RUNDIR/events" || { cat "$BV_RUNDIR/events"; bv_fail "$p: no PORT_ERR"; }
	grep -q "IBV_EVENT_PORT_ACTIVE" "$BV_RUNDIR/events" || { cat "$BV_RUNDIR/events"; bv_fail "$p: no PORT_ACTIVE"; }

	# both ends' counters, each with no read across the link
	st=$("$BVCTL" status 2>&1)
	[ "$(grep -c "counters:" <<<"$st")" = 2 ] || { echo "$st"; bv_fail "$p: not two counter lines"; }
	grep "counters:" <<<"$st" | grep -qv "xlink_reads 0," &&
		{ echo "$st"; bv_fail "$p: reads across the link"; }
	rm -f "$BV_RUNDIR/events"
	"$BVCTL" down >/dev/null || bv_fail "$p: bvctl down"
done
echo PASS
