#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Seed inputs of cm_mad_fuzz (tests/rdmacm/fuzz/cm_mad_fuzz.c explains the record format):
the exchanges a peer CM has with ours, as records the harness patches into place (header,
comm ids, service id, cma header), so that mutation starts from inside the state machines.

    seeds.py DIR    writes one file per seed into DIR
"""
import os
import struct
import sys

ATTR = {"REQ": 0, "MRA": 1, "REJ": 2, "REP": 3, "RTU": 4, "DREQ": 5, "DREP": 6,
        "SIDR_REQ": 7, "SIDR_REP": 8, "LAP": 9, "APR": 10}
WHO = {"L": 0, "A": 1, "U": 2, "N": 3}        # listener, active RC, active UD, newest conn

HDR, COMM, SID, CMA, TID, GID, SHORT = 2, 4, 8, 8, 16, 32, 128
REQUEST = 1
ACCEPT, DISCONNECT = 0x40, 0x20


def fld(m, off, shift, width, v):
    """a big-endian dword field, as kernel-abi/cx4_prm_fld.h lays them out"""
    d = struct.unpack_from(">I", m, off)[0]
    mask = ((1 << width) - 1) << shift
    struct.pack_into(">I", m, off, (d & ~mask) | ((v << shift) & mask))


def mad(**f):
    m = bytearray(256)
    for (off, shift, width), v in f.values():
        fld(m, off, shift, width, v)
    return m


OPS = ["ATTACH", "DETACH", "CREATE_ID", "DESTROY_ID", "BIND", "RESOLVE_ADDR",
       "RESOLVE_ROUTE", "LISTEN", "CONNECT", "ACCEPT", "REJECT", "DISCONNECT",
       "INIT_QP_ATTR", "NOTIFY", "SET_OPTION", "MIGRATE", "QUERY"]


def rec(flags, attr, who, body):
    """a MAD from the peer, to the id `who`"""
    sel = ATTR[attr] | WHO[who] << 4
    return bytes([flags, sel]) + struct.pack("<H", len(body)) + bytes(body)


def call(op, who, body=b""):
    """a request of the library about the id `who` (its handle patched in, its size right)"""
    sel = OPS.index(op) | WHO[who] << 5
    body = bytes(4) + bytes(body)
    return bytes([REQUEST | COMM | CMA, sel]) + struct.pack("<H", len(body)) + body


def req(comm=0x1000, qpn=0x77, psn=0x100):
    m = mad(comm=((0x18, 0, 32), comm), qpn=((0x38, 8, 24), qpn),
            rr=((0x38, 0, 8), 1), idp=((0x3c, 0, 8), 1), rto=((0x40, 3, 5), 16),
            psn=((0x44, 8, 24), psn), lto=((0x44, 3, 5), 16), retry=((0x44, 0, 3), 7),
            pkey=((0x48, 16, 16), 0xffff), mtu=((0x48, 12, 4), 3), rnr=((0x48, 8, 3), 7),
            maxr=((0x48, 4, 4), 15), hop=((0x74, 16, 8), 64), ack=((0x74, 3, 5), 18))
    struct.pack_into(">Q", m, 0x28, 0x0002c90300002222)
    m[0x50:0x60] = bytes(10) + b"\xff\xff" + bytes([127, 0, 1, 2])   # primary local GID
    m[0x60:0x70] = bytes(10) + b"\xff\xff" + bytes([127, 0, 1, 1])   # primary remote GID
    struct.pack_into(">H", m, 0xa4 + 2, 40000)                         # cma hdr port
    return m


def rep(comm=0x2000, qpn=0x88, psn=0x200):
    m = mad(comm=((0x18, 0, 32), comm), qpn=((0x24, 8, 24), qpn), psn=((0x2c, 8, 24), psn),
            rr=((0x30, 24, 8), 1), idp=((0x30, 16, 8), 1), tad=((0x30, 11, 5), 16),
            rnr=((0x30, 5, 3), 7))
    struct.pack_into(">Q", m, 0x34, 0x0002c90300002222)
    return m


def simple(comm=0x2000, **extra):
    return mad(comm=((0x18, 0, 32), comm), **extra)


def sidr_rep(status=0, qpn=0x99, qkey=0x01234567):
    m = mad(st=((0x1c, 24, 8), status), qpn=((0x20, 8, 24), qpn))
    struct.pack_into(">I", m, 0x2c, qkey)
    return m


F = HDR | COMM
SEEDS = {
    # passive: a REQ for the listener, accepted; RTU; the peer disconnects
    "passive-established": [rec(ACCEPT | HDR | SID, "REQ", "L", req()),
                            rec(F, "RTU", "N", simple(0x1000)),
                            rec(F, "DREQ", "N", simple(0x1000, q=((0x20, 8, 24), 0x123)))],
    # passive, we disconnect once established; the peer's DREP
    "passive-we-disconnect": [rec(ACCEPT | DISCONNECT | HDR | SID, "REQ", "L", req()),
                              rec(F, "RTU", "N", simple(0x1000)),
                              rec(F, "DREP", "N", simple(0x1000))],
    # passive: the REQ comes twice (a retry), an MRA for our REP, a REJ
    "passive-dup-mra-rej": [rec(ACCEPT | HDR | SID, "REQ", "L", req()),
                            rec(HDR | SID, "REQ", "L", req()),
                            rec(F, "MRA", "N", simple(0x1000, m=((0x20, 30, 2), 1),
                                                      t=((0x20, 19, 5), 20))),
                            rec(F, "REJ", "N", simple(0x1000, r=((0x20, 0, 16), 28)))],
    # passive, not accepted: the library rejects it
    "passive-pending": [rec(HDR | SID, "REQ", "L", req()),
                        call("REJECT", "N", b"\x1c")],
    # a REQ for nobody (REJ 8 goes out), one with a bad cma header
    "req-no-listener": [rec(HDR, "REQ", "L", req())],
    "req-bad-hdr": [rec(HDR | SID, "REQ", "L", req()[:0xa4] + b"\x07\x99" + bytes(90))],
    # active: our REQ answered by REP; we RTU (library ACCEPT has_conn 0); DREQ from them
    "active-rep": [rec(F, "REP", "A", rep()),
                   call("ACCEPT", "A"),            # has_conn 0: the RTU
                   rec(F, "DREQ", "A", simple(0x2000, q=((0x20, 8, 24), 0x125)))],
    "active-mra-rep": [rec(F, "MRA", "A", simple(0x2000, m=((0x20, 30, 2), 0),
                                                 t=((0x20, 19, 5), 18))),
                       rec(F, "REP", "A", rep()), rec(F, "REP", "A", rep())],
    "active-rej": [rec(F, "REJ", "A", simple(0x2000, r=((0x20, 0, 16), 28)))],
    "active-rej-stale": [rec(F, "REJ", "A", simple(0x2000, r=((0x20, 0, 16), 10)))],
    "active-lap": [rec(F, "REP", "A", rep()), rec(F, "LAP", "A", simple(0x2000)),
                   rec(F, "APR", "A", simple(0x2000))],
    # UD: the SIDR_REQ answered, or refused
    "sidr-rep": [rec(HDR | COMM, "SIDR_REP", "U", sidr_rep())],
    "sidr-rep-reject": [rec(HDR | COMM, "SIDR_REP", "U", sidr_rep(status=1))],
    "sidr-req": [rec(ACCEPT | HDR | SID, "SIDR_REQ", "L", simple(0x3000))],
    # malformed: short, wrong class, wrong method, unknown attribute
    "short": [rec(SHORT | HDR, "REQ", "L", req()[:100])],
    "bad-class": [rec(0, "REQ", "L", b"\x01\x04\x02\x03" + bytes(252))],
    "unknown-attr": [rec(0, "REQ", "L", b"\x01\x07\x02\x03" + bytes(12) + b"\x00\x33")],
    "dreq-stale": [rec(HDR, "DREQ", "L", simple(0x4444))],
}


def request_seeds():
    """each request about each kind of id, and the QP attributes of every transition"""
    out = {}
    for op in OPS:
        for who in ("A", "N", "L", "U"):
            out["call-%s-%s" % (op.lower(), who)] = [call(op, who)]
    out["call-init-qp-attr-states"] = [call("INIT_QP_ATTR", w, struct.pack("<I", s))
                                       for w in ("A", "U") for s in (1, 2, 3)]
    out["passive-qp-attr"] = [rec(ACCEPT | HDR | SID, "REQ", "L", req())] + \
        [call("INIT_QP_ATTR", "N", struct.pack("<I", s)) for s in (1, 2, 3)]
    return out


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    seeds = dict(SEEDS)
    seeds.update(request_seeds())
    for name, recs in seeds.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(b"".join(recs))


if __name__ == "__main__":
    main()
