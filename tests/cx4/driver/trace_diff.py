#!/usr/bin/env python3
"""Compare cx4d's bring-up commands with Linux mlx5_core's (the CX4 Lx trace).

Both traces are parsed with tests/cx4/trace_decode.py. The Linux trace is the bring-up of
Linux 4.4 mlx5_core (42 commands); cx4d's trace is a --trace run of the daemon (bring-up,
then whatever followed). Commands are aligned in order by (opcode, op_mod); for every pair
the inputs must be equal byte for byte, except where the two devices legitimately differ:

  MANAGE_PAGES  the page addresses (the PAS list) and their number, which is what each
                device asked for in the QUERY_PAGES just before (checked: the count
                matches that answer, the addresses are 4 KB aligned and distinct)
  CREATE_EQ     the EQ buffer's PAS address (checked: 4 KB aligned)
  SET_HCA_CAP   the capability page is a copy of the device's own current capabilities:
                what must match is which fields the driver changed, and to what

Commands only one side issues are listed; each must be one of the explained differences
below (docs/cx4-driver.md, "Bring-up against the Linux trace"), or the test fails.

Usage: trace_diff.py OURS [LINUX]   (LINUX defaults as in trace_decode.py)
"""

import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import trace_decode  # noqa: E402

OP_NAMES = {
	0x100: 'QUERY_HCA_CAP', 0x101: 'QUERY_ADAPTER', 0x102: 'INIT_HCA', 0x103: 'TEARDOWN_HCA',
	0x104: 'ENABLE_HCA', 0x105: 'DISABLE_HCA', 0x107: 'QUERY_PAGES', 0x108: 'MANAGE_PAGES',
	0x109: 'SET_HCA_CAP', 0x10a: 'QUERY_ISSI', 0x10b: 'SET_ISSI', 0x301: 'CREATE_EQ',
	0x302: 'DESTROY_EQ', 0x750: 'QUERY_VPORT_STATE', 0x754: 'QUERY_NIC_VPORT_CONTEXT',
	0x755: 'MODIFY_NIC_VPORT_CONTEXT', 0x761: 'SET_ROCE_ADDRESS', 0x802: 'ALLOC_UAR',
	0x803: 'DEALLOC_UAR', 0x805: 'ACCESS_REG', 0x203: 'QUERY_SPECIAL_CONTEXTS',
	0x800: 'ALLOC_PD', 0x801: 'DEALLOC_PD', 0x400: 'CREATE_CQ', 0x401: 'DESTROY_CQ',
	0x500: 'CREATE_QP', 0x501: 'DESTROY_QP', 0x502: 'RST2INIT_QP', 0x503: 'INIT2RTR_QP',
	0x504: 'RTR2RTS_QP', 0x50a: '2RST_QP',
}

# Commands cx4d may issue that the Linux 4.4 bring-up does not, and why.
EXTRA_OK = {
	(0x100, 0x7): 'QUERY_HCA_CAP(atomic, cur) before INIT_HCA: newer Linux '
		      'handle_hca_cap_atomic() reads it to ask for host-order atomic replies',
	(0x109, 0x6): 'SET_HCA_CAP(atomic): atomic_req_8B_endianness_mode = 1 (newer Linux); '
		      'upstream mlx5_ib advertises IB_ATOMIC_HCA only in that mode',
	(0x107, 0x3): 'QUERY_PAGES(regular) after INIT_HCA, as the issue and Snabb do; Linux 4.4 '
		      'waits for page-request events instead',
	(0x754, 0x0): 'QUERY_NIC_VPORT_CONTEXT: the port MAC (Linux: mlx5e/mlx5_ib, later)',
	(0x755, 0x0): 'MODIFY_NIC_VPORT_CONTEXT roce_en=1 (Linux: mlx5_ib '
		      'mlx5_nic_vport_enable_roce, later)',
	(0x761, 0x0): 'SET_ROCE_ADDRESS: the RoCE GID table (Linux: the IB core GID cache '
		      'through mlx5_ib, later)',
	(0x750, 0x0): 'QUERY_VPORT_STATE: port state for query_port (Linux: mlx5_ib, later)',
	(0x805, 0x1): 'ACCESS_REG read of PMTU/PTYS: MTU and speed for query_port (Linux: '
		      'mlx5_ib/mlx5e, later)',
	# QP1 for the connection manager's MADs (devices/cx4/daemon/gsi.c); Linux: mlx5_ib's
	# GSI QP for the MAD layer (mlx5_ib_create_gsi), later
	(0x203, 0x0): 'QUERY_SPECIAL_CONTEXTS: the reserved lkey of the GSI QP\'s buffers',
	(0x800, 0x0): 'ALLOC_PD: the GSI QP\'s PD (Linux: ib_alloc_pd for the MAD agent)',
	(0x400, 0x0): 'CREATE_CQ: the GSI QP\'s CQ (Linux: ib_mad\'s CQ)',
	(0x500, 0x0): 'CREATE_QP st=QP1: the GSI QP (Linux: mlx5_ib_create_gsi)',
	(0x502, 0x0): 'RST2INIT_QP: the GSI QP, Q_Key 0x80010000',
	(0x503, 0x0): 'INIT2RTR_QP: the GSI QP',
	(0x504, 0x0): 'RTR2RTS_QP: the GSI QP',
	(0x50a, 0x0): '2RST_QP: the GSI QP, at teardown',
	(0x501, 0x0): 'DESTROY_QP: the GSI QP, at teardown',
	(0x401, 0x0): 'DESTROY_CQ: the GSI QP\'s CQ, at teardown',
	(0x801, 0x0): 'DEALLOC_PD: the GSI QP\'s PD, at teardown',
}

# Commands Linux issues that cx4d may leave out, and why.
MISSING_OK = {
	(0x100, 0x3): 'QUERY_HCA_CAP(Ethernet offloads): queried, like Linux, only when the '
		      'device reports eth_net_offloads',
	(0x100, 0x2): 'QUERY_HCA_CAP(Ethernet offloads, max): see above',
	(0x100, 0xf): 'QUERY_HCA_CAP(flow table): queried, like Linux, only when the device '
		      'reports nic_flow_table',
	(0x100, 0xe): 'QUERY_HCA_CAP(flow table, max): see above',
	(0x802, 0x0): 'ALLOC_UAR: Linux 4.4 allocates 4 UAR pages for its own BlueFlame '
		      'registers; cx4d needs one (EQ doorbells), clients get their own',
	(0x301, 0x0): 'CREATE_EQ: one completion EQ per CPU; the trace machine had 12 CPUs',
}


def be32(b, off):
	return struct.unpack_from('>I', b, off)[0]


def key(c):
	return (c.opcode, c.op_mod)


def name(k):
	return '%s(0x%x) op_mod 0x%x' % (OP_NAMES.get(k[0], 'op'), k[0], k[1])


def check_pas(buf, start, n, what, problems):
	"""PAS entries present in the dump (Linux-format dumps cut short messages)."""
	seen = set()
	n = min(n, max(0, (len(buf) - start) // 8))
	for i in range(n):
		a = struct.unpack_from('>Q', buf, start + 8 * i)[0]
		if not a or a & 0xfff or a in seen:
			problems.append('%s: PAS entry %d is 0x%x (not a distinct 4 KB page)'
					% (what, i, a))
			return
		seen.add(a)


def cap_changes(cur, setv):
	"""(word offset, new value) for every capability dword the driver changed."""
	out = []
	for off in range(0, 0x1000, 4):
		a, b = be32(cur, 0x10 + off), be32(setv, 0x10 + off)
		if a != b:
			out.append((off, a, b))
	return out


def compare(lc, oc, lprev, oprev, problems, notes):
	"""Compare one aligned pair; lprev/oprev: the commands before each (for context)."""
	what = name(key(lc))
	li, oi = lc.input, oc.input
	if not lc.input_complete:
		notes.append('%s: Linux dumped only %d of %d input bytes; compared those'
			     % (what, len(li), lc.in_len))
	if lc.opcode == 0x108:
		if li[:0x0c] != oi[:0x0c]:
			problems.append('%s: header differs: %s vs %s' % (what, li[:0x0c].hex(),
									     oi[:0x0c].hex()))
		n = be32(oi, 0x0c)
		asked = [p for p in oprev if p.opcode == 0x107]
		if asked and struct.unpack_from('>i', asked[-1].output, 0x0c)[0] != n:
			problems.append('%s: gives %d pages, the device asked for %d'
					% (what, n, struct.unpack_from('>i', asked[-1].output, 0xc)[0]))
		if oc.in_len != 0x10 + 8 * n:
			problems.append('%s: input length 0x%x for %d pages' % (what, oc.in_len, n))
		check_pas(oi, 0x10, n, what, problems)
		notes.append('%s: %d pages, as the device asked (Linux: %d)'
			     % (what, n, be32(li, 0x0c)))
		return
	if lc.opcode == 0x301:
		if li[:0x110] != oi[:0x110]:
			for off in range(0, 0x110, 4):
				if li[off:off + 4] != oi[off:off + 4]:
					problems.append('%s: input dword 0x%x: Linux %s, cx4d %s'
							% (what, off, li[off:off + 4].hex(),
							   oi[off:off + 4].hex()))
		check_pas(oi, 0x110, 1, what, problems)
		return
	if lc.opcode == 0x109:
		lcur = [p for p in lprev if p.opcode == 0x100 and p.op_mod == (lc.op_mod | 1)]
		ocur = [p for p in oprev if p.opcode == 0x100 and p.op_mod == (oc.op_mod | 1)]
		if not lcur or not ocur:
			problems.append('%s: no QUERY_HCA_CAP(cur) before it' % what)
			return
		lch = cap_changes(lcur[-1].output, li)
		och = cap_changes(ocur[-1].output, oi)
		notes.append('%s: Linux changed %s; cx4d changed %s' % (
			what, ['0x%x: %08x->%08x' % x for x in lch] or 'nothing',
			['0x%x: %08x->%08x' % x for x in och] or 'nothing'))
		# the driver's own edits: same fields set to the same values where both changed them
		ldict = {off: new for off, _, new in lch}
		for off, old, new in och:
			if off in ldict and ldict[off] != new:
				problems.append('%s: capability dword 0x%x set to %08x, Linux %08x'
						% (what, off, new, ldict[off]))
		return
	n = min(len(li), len(oi))
	if lc.in_len != oc.in_len:
		problems.append('%s: input length 0x%x, Linux 0x%x' % (what, oc.in_len, lc.in_len))
	if li[:n] != oi[:n]:
		for off in range(0, n, 4):
			if li[off:off + 4] != oi[off:off + 4]:
				problems.append('%s: input dword 0x%x: Linux %s, cx4d %s'
						% (what, off, li[off:off + 4].hex(), oi[off:off + 4].hex()))


def check_transport(ours, problems):
	"""PRM command transport of every command cx4d posted: type 7, ownership handed over and
	returned, delivery OK, entry signature ~xor, tokens 1..255 in order (never 0), every
	mailbox block numbered in chain order and carrying the entry's token."""
	prev = 0
	for c in ours:
		e = c.din.entry
		x = 0
		for b in e:
			x ^= b
		tag = 'cx4d %d %s' % (c.index, name(key(c)))
		if e[0] != 7 or e[0x3f] != 1 or c.owner_after != 0 or c.delivery_status != 0:
			problems.append('%s: entry type/ownership/delivery %d/%d/%s/%s'
					% (tag, e[0], e[0x3f], c.owner_after, c.delivery_status))
		if x != 0xff:
			problems.append('%s: entry signature does not make the entry xor to 0xff' % tag)
		want = prev % 255 + 1
		if c.token != want:
			problems.append('%s: token 0x%02x after 0x%02x' % (tag, c.token, prev))
		prev = c.token
		for blks in (c.din.blocks, c.dout.blocks if c.dout else []):
			for n, b in enumerate(blks):
				if be32(b, 0x238) != n or b[0x23d] != c.token:
					problems.append('%s: mailbox block %d number/token' % (tag, n))


def main(argv):
	if len(argv) < 2:
		print(__doc__)
		return 2
	ours = trace_decode.load(argv[1])
	linux = trace_decode.load(argv[2] if len(argv) > 2 else None)
	problems, notes = [], []
	check_transport(ours, problems)
	# cx4d's bring-up ends where its teardown begins
	end = next((i for i, c in enumerate(ours) if c.opcode in (0x302, 0x103, 0x105)), len(ours))
	ours = ours[:end]
	j = 0
	matched = 0
	for i, lc in enumerate(linux):
		k = key(lc)
		found = next((x for x in range(j, len(ours)) if key(ours[x]) == k), None)
		if found is None:
			why = MISSING_OK.get(k)
			(notes if why else problems).append('Linux %d %s: not issued by cx4d%s'
							    % (i, name(k), ' - ' + why if why else ''))
			continue
		for x in range(j, found):
			why = EXTRA_OK.get(key(ours[x]))
			(notes if why else problems).append('cx4d %d %s: not in the Linux trace%s'
							    % (x, name(key(ours[x])),
							       ' - ' + why if why else ''))
		compare(lc, ours[found], linux[:i], ours[:found], problems, notes)
		if ours[found].status:
			problems.append('cx4d %d %s: status 0x%x' % (found, name(k), ours[found].status))
		matched += 1
		j = found + 1
	for x in range(j, len(ours)):
		why = EXTRA_OK.get(key(ours[x]))
		(notes if why else problems).append('cx4d %d %s: not in the Linux trace%s'
						    % (x, name(key(ours[x])), ' - ' + why if why else ''))
	print('%d Linux bring-up commands, %d cx4d bring-up commands, %d aligned'
	      % (len(linux), len(ours), matched))
	for n in notes:
		print('  note: ' + n)
	for p in problems:
		print('  DIFFERENCE: ' + p)
	print('PASS' if not problems else 'FAIL: %d unexplained differences' % len(problems))
	return 1 if problems else 0


if __name__ == '__main__':
	sys.exit(main(sys.argv))
