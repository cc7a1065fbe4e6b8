# shellcheck shell=bash
# Shared by the ntb integration tests: one link (ntb_0 <-> ntb_1) per hardware profile.
NTB_ALL_PROFILES="intel-gen1 intel-gen3 intel-gen4 amd idt switchtec epf"
NTB_PROFILES=${NTB_PROFILES:-$NTB_ALL_PROFILES}

# ntb_up PROFILE: take down whatever runs, bring up a link of that profile. NTB_CONF: more
# lines for both ends' sections (e.g. "pair_req_cells = 256").
ntb_up() {
	local cfg="$BV_RUNDIR/ntb-$1.conf"
	cat >"$cfg" <<EOC
[device ntb_0]
kind = ntb
link = ntbt
side = 0
profile = $1
ip = 127.0.2.1
${NTB_CONF:-}

[device ntb_1]
kind = ntb
link = ntbt
side = 1
profile = $1
ip = 127.0.2.2
${NTB_CONF:-}
EOC
	"$BVCTL" down >/dev/null 2>&1
	bv_up "$cfg"
	# the port is ACTIVE once both daemons finished the link handshake
	for _ in $(seq 100); do
		bv_run ibv_devinfo -d ntb_1 2>/dev/null | grep -q PORT_ACTIVE &&
			bv_run ibv_devinfo -d ntb_0 2>/dev/null | grep -q PORT_ACTIVE && return 0
		sleep 0.1
	done
	bv_fail "$1: the link did not come up"
}

# ntb_gid DEV: the index of the RoCE v2 IPv4 GID (for -g / -x)
ntb_gid() {
	bv_run ibv_devinfo -v -d "$1" | sed -n 's/.*GID\[ *\([0-9]*\)\]:.*::ffff:.*RoCE v2.*/\1/p' |
		head -n1
}

ntb_wait_port() {
	bv_wait_listen "$@"
}

# ntb_pair NAME PORT CMD...: CMD -p PORT -d ntb_0 as the server, CMD -p PORT -d ntb_1 localhost
# as the client, both unmodified binaries through bvctl run (bv_pair); both must succeed.
# Output in $BV_OUT/NAME.{srv,cli}.
ntb_pair() {
	local name=$1 port=$2
	shift 2
	bv_pair "$name" "$port" "$* -p $port -d ntb_0" "$* -p $port -d ntb_1 localhost"
}

# ntb_check_counters WHAT [reads]: the model's counters on both ends (bvctl status): no read
# across the link (the data path pushes everything) and no IOMMU fault (every placement was
# checked against the peer's keys before it was made); with "reads", IOMMU faults are allowed
# (a peer died with transfers in flight: ntb_peerdeath.sh).
ntb_check_counters() {
	local st pat="xlink_reads 0, iommu_faults 0," what="reads across the link or IOMMU faults"
	[ "${2:-}" = reads ] && { pat="xlink_reads 0,"; what="reads across the link"; }
	st=$("$BVCTL" status 2>&1)
	# here-strings, not echo | grep -q: grep -q stops reading at the first match, echo dies
	# of SIGPIPE on a long status and pipefail turns that into a failure
	grep -q "counters:" <<<"$st" || { echo "$st" >&2; bv_fail "$1: no counters"; }
	grep "counters:" <<<"$st" | grep -qv "$pat" && { echo "$st" >&2; bv_fail "$1: $what"; }
	return 0
}

# ntb_iommu_faults: the IOMMU faults counted on both ends so far (bvctl status), one number.
ntb_iommu_faults() {
	"$BVCTL" status 2>&1 | sed -n 's/.*iommu_faults \([0-9]*\),.*/\1/p' |
		awk '{ n += $1 } END { print n + 0 }'
}
