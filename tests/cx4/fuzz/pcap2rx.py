#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Receive-path corpus inputs from real traffic (fuzz_rx.c's record format).

    pcap2rx.py OUTDIR CAPTURE.pcap...

Every RoCE v2 packet of the captures (the model's pcap option: Ethernet, IPv4 or IPv6, UDP
4791) becomes a built record: its BTH opcode as is, its extension headers and payload as the
body (they are in wire order, the order fuzz_rx takes them), RETH/AtomicETH aimed at the
harness's MRs, the PSN relative to what the harness's QP expects, SE/AckReq kept. The QP is
the harness's one of the packet's transport (RC, or RC with SRQ for SENDs of a capture whose
name says srq; UC; UD). Packets of one direction of one capture are grouped up to 8 per
input, a new input at a message's first packet; at most two inputs per sequence of
(transport, opcode) are written, each named after its capture and its opcodes.
"""
import hashlib
import os
import struct
import sys

ROCE_PORT = 4791
Q_RC, Q_RC_SRQ, Q_UC, Q_UD = 0, 1, 2, 3
F_OPCODE, F_AIM, F_SE = 0x04, 0x10, 0x80
MAX_INPUT = 12000  # the target's -max_len
MAX_REC = 8


def packets(path):
    with open(path, "rb") as f:
        d = f.read()
    if len(d) < 24:
        return
    magic = struct.unpack("<I", d[:4])[0]
    endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    linktype = struct.unpack(endian + "I", d[20:24])[0]
    off = 24
    while off + 16 <= len(d):
        _, _, incl, _ = struct.unpack(endian + "IIII", d[off:off + 16])
        frame = d[off + 16:off + 16 + incl]
        off += 16 + incl
        if linktype == 1:  # Ethernet
            if len(frame) < 14:
                continue
            etype, l3 = struct.unpack(">H", frame[12:14])[0], frame[14:]
        else:  # raw IP
            etype, l3 = (0x0800 if frame and frame[0] >> 4 == 4 else 0x86DD), frame
        if etype == 0x0800 and len(l3) >= 20:
            ihl = (l3[0] & 15) * 4
            if l3[9] != 17:
                continue
            src, dst, l4 = l3[12:16], l3[16:20], l3[ihl:]
        elif etype == 0x86DD and len(l3) >= 40:
            if l3[6] != 17:
                continue
            src, dst, l4 = l3[8:24], l3[24:40], l3[40:]
        else:
            continue
        if len(l4) < 8 + 16 or struct.unpack(">H", l4[2:4])[0] != ROCE_PORT:
            continue
        yield (src, dst), l4[8:]


def qp_of(op, srq):
    if op < 0x20:
        return Q_RC_SRQ if srq and op <= 0x05 else Q_RC
    if op < 0x40:
        return Q_UC
    if 0x60 <= op < 0x80:
        return Q_UD
    return None


def is_response(op):
    return 0x0D <= op <= 0x12


def starts_message(op):
    # FIRST / ONLY of SEND, WRITE, READ responses; READ and atomic requests; ACKs
    low = op & 0x1F
    return low in (0x00, 0x04, 0x05, 0x06, 0x0A, 0x0B, 0x0C, 0x0D, 0x10, 0x11, 0x12, 0x13,
                   0x14) or op >= 0x60


def records(pkts, srq):
    req = resp = 0
    for op, payload in pkts:
        q = qp_of(op, srq)
        flags = F_OPCODE | F_AIM
        if payload[1] & 0x80 or payload[8] & 0x80:
            flags |= F_SE
        if is_response(op):
            delta, resp = resp, resp + 1
        else:
            delta, req = req, req + 1
        body = payload[12:-4]
        yield bytes([flags, q, op, delta & 0xFF]) + struct.pack("<H", len(body)) + body


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    seen = {}
    written = 0
    for cap in sys.argv[2:]:
        base = os.path.splitext(os.path.basename(cap))[0]
        srq = "srq" in base
        flows = {}
        for flow, p in packets(cap):
            op = p[0]
            if qp_of(op, srq) is not None:
                flows.setdefault(flow, []).append((op, p))
        for flow, pkts in flows.items():
            groups, cur = [], []
            for op, p in pkts:
                if cur and (len(cur) >= MAX_REC or (starts_message(op) and len(cur) >= 3)):
                    groups.append(cur)
                    cur = []
                cur.append((op, p))
            if cur:
                groups.append(cur)
            for g in groups:
                data = b"".join(records(g, srq))
                while len(data) > MAX_INPUT and len(g) > 1:
                    g = g[:-1]
                    data = b"".join(records(g, srq))
                if len(data) > MAX_INPUT:
                    continue
                sig = tuple((qp_of(op, srq), op) for op, _ in g)
                if seen.get(sig, 0) >= 2:
                    continue
                seen[sig] = seen.get(sig, 0) + 1
                name = "%s-%s-%s" % (base, "-".join("%02x" % op for op, _ in g[:4]),
                                     hashlib.sha1(data).hexdigest()[:6])
                with open(os.path.join(out, name), "wb") as f:
                    f.write(data)
                written += 1
    print("pcap2rx: %d inputs, %d opcode sequences" % (written, len(seen)))


if __name__ == "__main__":
    main()
