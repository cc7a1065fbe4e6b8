#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Daemon-protocol corpus inputs from real traffic (bvd_proto_fuzz.c's input format).

Run a real program against a daemon under strace, the requests it sends become inputs:

    strace -f -xx -s 70000 -e trace=sendmsg -o TRACE bvctl run ibv_rc_pingpong -d cx4_0 ...
    strace2proto.py cx4|ntb TRACE OUTDIR [NAME]
    strace2proto.py ntbd-requests TRACE OUTDIR [NAME]

The second form writes inputs of tests/ntb/fuzz/ntbd_fuzz.c instead (its request records,
u8 flags | u8 op | u16 len | payload, after a first byte that asks for no set-up): the same
ntb sessions from ATTACH on, without the common ops that harness does not take.

Every client connection of the trace (a process and socket that sent bv_proto requests to a
daemon of that kind) becomes one input: its requests in order, each record carrying the
descriptors it carried (a memfd first; a socket for a CQ's completion channel). The
session byte says "no automatic HELLO or open": the capture has its own. Inputs are named
NAME-<hash of the input>: the same session twice is written once.
"""
import hashlib
import os
import re
import struct
import sys

MAGIC = 0x31505642
KIND_BASE = {"cx4": 0x100, "ntb": 0x200}
CX4_CREATE_CQ = 0x105
CALL = re.compile(r'^(\d+)\s+sendmsg\((\d+), \{(.*)\}, [A-Z_|0]+\)\s*=\s*(\d+)')
IOV = re.compile(r'iov_base="((?:\\x[0-9a-f]{2})*)"')
FDS = re.compile(r'cmsg_type=SCM_RIGHTS, cmsg_data=\[([0-9, ]*)\]')


def unhex(s):
    return bytes(int(s[i + 2:i + 4], 16) for i in range(0, len(s), 4))


def sessions(path):
    out, conn = {}, {}
    with open(path, errors="replace") as f:
        for line in f:
            m = CALL.match(line)
            if not m:
                continue
            pid, fd, body = m.group(1), m.group(2), m.group(3)
            data = b"".join(unhex(x) for x in IOV.findall(body))
            if len(data) < 24:
                continue
            magic, version, op, seq, status, plen, nfds = struct.unpack("<IHHIiII", data[:24])
            if magic != MAGIC or status != 0:
                continue  # not a request (a daemon's reply has no business here)
            fdm = FDS.search(body)
            nsent = len(fdm.group(1).split(",")) if fdm and fdm.group(1).strip() else 0
            # a HELLO opens a connection: the descriptor number may be a new socket's
            if op == 1 or (pid, fd) not in conn:
                conn[(pid, fd)] = "%s.%d" % (fd, len(out))
            out.setdefault((pid, conn[(pid, fd)]), []).append((op, data[24:24 + plen], nsent))
    return out


def record(kind, op, payload, nfds):
    base = KIND_BASE[kind]
    flags = 0
    if nfds >= 1:
        flags |= 0x02  # a memfd, sized as the request says
    if nfds >= 2:
        flags |= 0x08  # a completion channel (a datagram socket)
    if base <= op < base + 32:
        opb = op - base
    elif 1 <= op <= 16:
        opb = 0xe0 + op - 1
    else:
        opb = 0xff
        payload = struct.pack("<H", op) + payload
    return struct.pack("<BBH", flags, opb, len(payload)) + payload


def ntbd_record(op, payload, nfds):
    """ntbd_fuzz.c: flags bit 1 a 4 MiB sealed memfd travels with it; op BV_OP_NTB_BASE + op."""
    return struct.pack("<BBH", 0x02 if nfds else 0, op - KIND_BASE["ntb"],
                       len(payload) & 0x7FFF) + payload


def main():
    ntbd_requests = len(sys.argv) > 1 and sys.argv[1] == "ntbd-requests"
    if ntbd_requests:
        sys.argv[1] = "ntb"
    if len(sys.argv) not in (4, 5) or sys.argv[1] not in KIND_BASE:
        sys.exit(__doc__)
    kind, trace, outdir = sys.argv[1], sys.argv[2], sys.argv[3]
    name = sys.argv[4] if len(sys.argv) == 5 else "capture"
    os.makedirs(outdir, exist_ok=True)
    base = KIND_BASE[kind]
    written = 0
    for (pid, fd), reqs in sorted(sessions(trace).items()):
        # this kind's sessions only: they open with a HELLO naming it, or use its ops
        hello = [p for op, p, _ in reqs if op == 1]
        said = hello[0][24:40].split(b"\0")[0].decode(errors="replace") if hello else None
        if said != kind and (said or not any(base <= op < base + 32 for op, _, _ in reqs)):
            continue
        if ntbd_requests:
            data = bytes([0]) + b"".join(ntbd_record(*r) for r in reqs
                                         if base <= r[0] < base + 16)
        else:
            data = bytes([0x07]) + b"".join(record(kind, *r) for r in reqs)
        h = hashlib.sha1(data).hexdigest()[:8]
        path = os.path.join(outdir, "%s-%s" % (name, h))
        if os.path.exists(path):
            continue
        with open(path, "wb") as f:
            f.write(data)
        written += 1
        print("%s: %d requests" % (path, len(reqs)))
    if not written:
        sys.exit("strace2proto: no %s session in %s" % (kind, trace))


if __name__ == "__main__":
    main()
