#!/usr/bin/env python3
"""Decode a Linux mlx5_core command trace into a list of commands.

The trace is the dynamic-debug output of mlx5_core's dump_command()
(drivers/net/ethernet/mellanox/mlx5/core/cmd.c, Linux 4.4 era): for every
command it prints "dump command NAME(0xOP) INPUT", the 64-byte command queue
entry as four big-endian words per line, then each mailbox block of the
message ("command block:" + 0x240 bytes), and the same again with OUTPUT after
the firmware has answered.  Lines are "%03x: %08x %08x %08x %08x" (offset
counted across the entry and the blocks), each dump_buf() ends with an empty
line.  dump_command() stops dumping blocks once its running offset (0x40 per
entry, 0x240 per block) reaches the message length, so long messages are cut:
MANAGE_PAGES with 0x19230 input bytes shows 179 of its 202 blocks.

This tool recovers, per command, the entry fields (lengths, mailbox pointers,
token, signature, delivery status), the logical input and output messages
(16 inline bytes + 512 data bytes per block) and the exact normalised dump
text that devices/cx4/trace/cmd_trace.c produces, so a run of cx4d can be
diffed against the Linux driver.

Usage:
  trace_decode.py [-f TRACE] list            one line per command
  trace_decode.py [-f TRACE] show N          decoded entry + in/out hex of command N
  trace_decode.py [-f TRACE] dump N [N...]   command N in mlx5_core dump format (normalised)
  trace_decode.py [-f TRACE] dumpall         every command in dump format
  trace_decode.py [-f TRACE] json            all commands as JSON
  trace_decode.py [-f TRACE] selftest        re-render every dump and compare with the trace

TRACE defaults to $CX4_TRACE, else the project's copy tests/cx4/data/mlx5_core-trace-cx4lx.txt.gz
(of shared/data/), else shared/data/ found above this file.
"""

import argparse
import gzip
import json
import os
import re
import struct
import sys

TRACE_NAME = 'mlx5_core-trace-cx4lx.txt.gz'

# Layout constants (PRM "Command Queue Entry" / "Command Mailbox"; Linux struct
# mlx5_cmd_layout and struct mlx5_cmd_prot_block; kernel-abi/cx4_prm_iseg.h).
ENTRY_SIZE = 0x40
BLOCK_SIZE = 0x240
BLOCK_DATA = 0x200
INLINE = 16

# mlx5_cmd_layout: type 0x00, inlen 0x04, in_ptr 0x08, in[4] 0x10, out[4] 0x20,
# out_ptr 0x30, outlen 0x38, token 0x3C, sig 0x3D, rsvd 0x3E, status_own 0x3F.

TS_RE = re.compile(r'^\[[^\]]*\] ?')
DBG_RE = re.compile(r'^mlx5_core (\S+): \S+:(\w+):\d+:\(pid \d+\): (.*)$')
HDR_RE = re.compile(r'^dump command (?:data )?(.*)\((0x[0-9a-f]+)\) (INPUT|OUTPUT)$')
HEX_RE = re.compile(r'^([0-9a-f]{3,}): ([0-9a-f]{8}) ([0-9a-f]{8}) ([0-9a-f]{8}) ([0-9a-f]{8})$')


class TraceError(Exception):
    pass


class Dump:
    """One dump_command() call: the entry and the mailbox blocks it printed."""

    def __init__(self, name, opcode, direction, line_no):
        self.name = name
        self.opcode = opcode
        self.direction = direction
        self.line_no = line_no
        self.data = bytearray()
        self.block_marks = 0

    def add_words(self, off, words):
        if off != len(self.data):
            raise TraceError('line %d: dump offset 0x%x, expected 0x%x'
                     % (self.line_no, off, len(self.data)))
        for w in words:
            self.data += struct.pack('>I', w)

    @property
    def entry(self):
        return bytes(self.data[:ENTRY_SIZE])

    @property
    def blocks(self):
        raw = self.data[ENTRY_SIZE:]
        return [bytes(raw[i:i + BLOCK_SIZE]) for i in range(0, len(raw), BLOCK_SIZE)]

    def check(self):
        if len(self.data) < ENTRY_SIZE:
            raise TraceError('line %d: dump shorter than a command entry' % self.line_no)
        if (len(self.data) - ENTRY_SIZE) % BLOCK_SIZE:
            raise TraceError('line %d: partial mailbox block' % self.line_no)
        if self.block_marks != len(self.blocks):
            raise TraceError('line %d: %d "command block:" lines for %d blocks'
                     % (self.line_no, self.block_marks, len(self.blocks)))


def be32(b, off):
    return struct.unpack_from('>I', b, off)[0]


def be64(b, off):
    return struct.unpack_from('>Q', b, off)[0]


def blocks_needed(length):
    """Mailbox blocks a message of `length` bytes uses (16 bytes ride inline)."""
    return max(0, (length - INLINE + BLOCK_DATA - 1) // BLOCK_DATA)


def blocks_dumped(length, nblocks):
    """How many blocks Linux dump_command() prints for a message (see module doc)."""
    off, n = ENTRY_SIZE, 0
    while n < nblocks and off < length:
        off += BLOCK_SIZE
        n += 1
    return n


class Command:
    """An INPUT dump paired with its OUTPUT dump."""

    def __init__(self, index, din, dout):
        self.index = index
        self.din = din
        self.dout = dout
        e = din.entry
        self.name = din.name
        self.opcode = be32(e, 0x10) >> 16
        self.op_mod = be32(e, 0x14) & 0xffff
        self.in_len = be32(e, 0x04)
        self.out_len = be32(e, 0x38)
        self.in_ptr = be64(e, 0x08)
        self.out_ptr = be64(e, 0x30)
        self.token = e[0x3C]
        self.signature = e[0x3D]
        self.input, self.input_complete = self._assemble(e[0x10:0x20], din.blocks, self.in_len)
        if dout is not None:
            eo = dout.entry
            self.output, self.output_complete = self._assemble(eo[0x20:0x30], dout.blocks,
                                       self.out_len)
            self.delivery_status = eo[0x3F] >> 1
            self.owner_after = eo[0x3F] & 1
        else:
            self.output, self.output_complete = b'', False
            self.delivery_status = None
            self.owner_after = None

    @staticmethod
    def _assemble(inline, blocks, length):
        msg = bytearray(inline)
        for b in blocks:
            msg += b[:BLOCK_DATA]
        complete = len(msg) >= length
        return bytes(msg[:length]), complete

    @property
    def status(self):
        return self.output[0] if len(self.output) >= 1 else None

    @property
    def syndrome(self):
        return be32(self.output, 4) if len(self.output) >= 8 else None

    def summary(self):
        """A few decoded fields per command (offsets: kernel-abi/cx4_prm_cmd.h)."""
        i, o, op = self.input, self.output, self.opcode
        s = []
        try:
            if op == 0x10a:
                s.append('current_issi=%d supported_issi_dw0=0x%x' % (be32(o, 8) & 0xffff,
                                              be32(o, 0x6c)))
            elif op == 0x10b:
                s.append('issi=%d' % (be32(i, 8) & 0xffff))
            elif op == 0x107:
                s.append('num_pages=%d' % struct.unpack_from('>i', o, 0xc)[0])
            elif op == 0x108:
                s.append('npages=%d' % be32(i, 0xc))
            elif op == 0x805:
                s.append('register_id=0x%04x argument=0x%x' % (be32(i, 8) & 0xffff,
                                           be32(i, 0xc)))
            elif op in (0x100, 0x109):
                s.append('cap_type=%d %s' % (self.op_mod >> 1,
                                 ('cur' if self.op_mod & 1 else 'max')
                                 if op == 0x100 else 'set'))
            elif op == 0x802:
                s.append('uar=0x%x' % (be32(o, 8) & 0xffffff))
            elif op == 0x301:
                s.append('eqn=0x%x log_eq_size=%d uar_page=0x%x intr=%d mask=0x%x'
                     % (be32(o, 8) & 0xff, (be32(i, 0x1c) >> 24) & 0x1f,
                        be32(i, 0x1c) & 0xffffff, be32(i, 0x24) & 0xff,
                        be64(i, 0x58)))
        except struct.error:
            s.append('(truncated)')
        return ' '.join(s)

    def line(self):
        flags = []
        if not self.input_complete:
            flags.append('in-truncated')
        if self.dout is None:
            flags.append('no-output')
        elif not self.output_complete:
            flags.append('out-truncated')
        st = '--' if self.status is None else '0x%02x' % self.status
        return ('%3d 0x%03x %-28s op_mod=0x%x in=0x%x out=0x%x token=0x%02x status=%s %s%s'
            % (self.index, self.opcode, self.name, self.op_mod, self.in_len, self.out_len,
               self.token, st, self.summary(), (' [' + ','.join(flags) + ']') if flags else ''))

    def as_dict(self):
        return {
            'index': self.index, 'opcode': self.opcode, 'name': self.name,
            'op_mod': self.op_mod, 'in_len': self.in_len, 'out_len': self.out_len,
            'in_ptr': self.in_ptr, 'out_ptr': self.out_ptr, 'token': self.token,
            'signature': self.signature, 'delivery_status': self.delivery_status,
            'status': self.status, 'syndrome': self.syndrome,
            'input': self.input.hex(), 'input_complete': self.input_complete,
            'output': self.output.hex(), 'output_complete': self.output_complete,
            'in_blocks_dumped': len(self.din.blocks),
            'out_blocks_dumped': len(self.dout.blocks) if self.dout else 0,
        }


def render_dump(dump):
    """The dump as mlx5_core prints it, minus dmesg timestamps and dev_dbg prefixes.

    This is the exact text cx4_trace_dump() (devices/cx4/trace/cmd_trace.c) writes."""
    out = ['dump command %s(0x%x) %s' % (dump.name, dump.opcode, dump.direction)]

    def words(buf, base):
        for i in range(0, len(buf), 16):
            w = struct.unpack_from('>4I', buf, i)
            out.append('%03x: %08x %08x %08x %08x' % ((base + i,) + w))
        out.append('')

    words(dump.entry, 0)
    off = ENTRY_SIZE
    for b in dump.blocks:
        out.append('command block:')
        words(b, off)
        off += BLOCK_SIZE
    return out


def open_trace(path):
    if path.endswith('.gz'):
        return gzip.open(path, 'rt', errors='replace')
    return open(path, 'rt', errors='replace')


def parse_dumps(path):
    """Return (dumps, normalised_lines_per_dump) in trace order."""
    dumps, raw = [], []
    cur = None
    with open_trace(path) as f:
        for no, line in enumerate(f, 1):
            line = line.rstrip('\n')
            body = TS_RE.sub('', line, count=1) if line.startswith('[') else line
            m = DBG_RE.match(body)
            if m:
                msg = m.group(3)
                h = HDR_RE.match(msg)
                if h:
                    if cur is not None:
                        cur.check()
                    cur = Dump(h.group(1), int(h.group(2), 16), h.group(3), no)
                    dumps.append(cur)
                    raw.append([msg])
                    continue
                if msg == 'command block:' and cur is not None:
                    cur.block_marks += 1
                    raw[-1].append(msg)
                    continue
                # any other mlx5_core message ends the dump in progress
                if cur is not None:
                    cur.check()
                    cur = None
                continue
            if cur is None:
                continue
            x = HEX_RE.match(body)
            if x:
                cur.add_words(int(x.group(1), 16), [int(x.group(k), 16) for k in range(2, 6)])
                raw[-1].append(body)
            elif body == '':
                raw[-1].append('')
            # other kernel messages (usbcore, EDAC...) may interleave: ignore them
    if cur is not None:
        cur.check()
    # drop trailing blanks that belong to the gap after a dump
    for r in raw:
        while len(r) > 1 and r[-1] == '' and r[-2] == '':
            r.pop()
    return dumps, raw


def load(path=None):
    """Parse the trace into a list of Command (INPUT/OUTPUT pairs, trace order)."""
    dumps, _ = parse_dumps(path or default_trace())
    cmds, pending = [], []
    for d in dumps:
        if d.direction == 'INPUT':
            pending.append(d)
            continue
        # an OUTPUT belongs to the oldest pending INPUT with the same token
        tok = d.entry[0x3C]
        for k, p in enumerate(pending):
            if p.entry[0x3C] == tok and p.opcode == d.opcode:
                cmds.append((p.line_no, p, d))
                del pending[k]
                break
        else:
            raise TraceError('line %d: OUTPUT without INPUT (token 0x%02x)' % (d.line_no, tok))
    for p in pending:
        cmds.append((p.line_no, p, None))
    cmds.sort(key=lambda t: t[0])
    return [Command(i, p, d) for i, (_, p, d) in enumerate(cmds)]


def default_trace():
    env = os.environ.get('CX4_TRACE')
    if env:
        return env
    d = os.path.dirname(os.path.abspath(__file__))
    # the project's copy (tests/cx4/data), so a clone needs nothing outside itself
    cand = os.path.join(d, 'data', TRACE_NAME)
    if os.path.exists(cand):
        return cand
    while True:
        cand = os.path.join(d, 'shared', 'data', TRACE_NAME)
        if os.path.exists(cand):
            return cand
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    # none found: name the project's copy, so that the error says where it belongs
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data', TRACE_NAME)


def hexlines(buf):
    return ['%04x: %s' % (i, ' '.join('%08x' % w for w in
                       struct.unpack_from('>%dI' % (min(16, len(buf) - i) // 4), buf, i)))
        for i in range(0, len(buf) - len(buf) % 4, 16)]


def selftest(path):
    dumps, raw = parse_dumps(path)
    bad = 0
    for d, r in zip(dumps, raw):
        want = render_dump(d)
        got = r + [''] * (len(want) - len(r)) if len(r) < len(want) else r
        if got[:len(want)] != want:
            bad += 1
            print('mismatch in dump at line %d' % d.line_no, file=sys.stderr)
    cmds = load(path)
    for c in cmds:
        if c.dout is None:
            bad += 1
            print('command %d has no OUTPUT' % c.index, file=sys.stderr)
            continue
        if c.din.entry[0x3F] != 1 or c.owner_after != 0 or c.delivery_status != 0:
            bad += 1
            print('command %d: unexpected ownership/status' % c.index, file=sys.stderr)
        if len(c.din.blocks) != blocks_dumped(c.in_len, blocks_needed(c.in_len)):
            bad += 1
            print('command %d: input block count' % c.index, file=sys.stderr)
        if len(c.dout.blocks) != blocks_dumped(c.out_len, blocks_needed(c.out_len)):
            bad += 1
            print('command %d: output block count' % c.index, file=sys.stderr)
        # blocks carry block numbers 0.. and the entry token (PRM mailbox format)
        for blks in (c.din.blocks, c.dout.blocks):
            for n, b in enumerate(blks):
                if be32(b, 0x238) != n or b[0x23D] != c.token:
                    bad += 1
                    print('command %d: block %d control' % (c.index, n), file=sys.stderr)
    print('%d dumps, %d commands, %d problems' % (len(dumps), len(cmds), bad))
    return 1 if bad else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('-f', '--trace', default=None, help='trace file (.txt or .txt.gz)')
    sub = ap.add_subparsers(dest='cmd')
    sub.add_parser('list')
    p = sub.add_parser('show')
    p.add_argument('n', type=int)
    p = sub.add_parser('dump')
    p.add_argument('n', type=int, nargs='+')
    sub.add_parser('dumpall')
    sub.add_parser('json')
    sub.add_parser('selftest')
    a = ap.parse_args(argv)
    path = a.trace or default_trace()
    try:
        if a.cmd == 'selftest':
            return selftest(path)
        cmds = load(path)
        if a.cmd in (None, 'list'):
            for c in cmds:
                print(c.line())
        elif a.cmd == 'show':
            c = cmds[a.n]
            print(c.line())
            print('entry: in_ptr=0x%x out_ptr=0x%x signature=0x%02x delivery_status=%s'
                  % (c.in_ptr, c.out_ptr, c.signature, c.delivery_status))
            print('input (%d of 0x%x bytes):' % (len(c.input), c.in_len))
            print('\n'.join(hexlines(c.input)))
            print('output (%d of 0x%x bytes):' % (len(c.output), c.out_len))
            print('\n'.join(hexlines(c.output)))
        elif a.cmd in ('dump', 'dumpall'):
            sel = a.n if a.cmd == 'dump' else range(len(cmds))
            for n in sel:
                c = cmds[n]
                print('\n'.join(render_dump(c.din)))
                if c.dout is not None:
                    print('\n'.join(render_dump(c.dout)))
        elif a.cmd == 'json':
            json.dump([c.as_dict() for c in cmds], sys.stdout, indent=1)
            print()
    except (OSError, TraceError, IndexError) as e:
        print('trace_decode: %s' % e, file=sys.stderr)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())
