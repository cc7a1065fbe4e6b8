#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Seed inputs for the cx4 model fuzzers (fuzz_rx.c, fuzz_cmd.c): one file per input, in the
record formats those harnesses document, so that a short run starts from packets and commands
the model takes (a valid SEND, WRITE, READ, atomic, ACK, READ response ...; ALLOC_PD,
CREATE_CQ, CREATE_QP and its transitions ...) instead of from nothing.

    seeds.py rx DIR     write the receive-path seeds into DIR
    seeds.py cmd DIR    write the command seeds into DIR
"""
import os
import struct
import sys

# ---- receive path: [flags, qp, opcode, psn delta, len (LE16), body] ---------------------------
AIM = 0x10
Q_RC, Q_RC_SRQ, Q_UC, Q_UD = 0, 1, 2, 3


def rec(flags, qp, op, delta, body=b""):
    return bytes([flags, qp, op, delta & 0xFF]) + struct.pack("<H", len(body)) + body


def reth(va, rkey, length):
    return struct.pack(">QII", va, rkey, length)


def payload(n, seed=1):
    return bytes((i * 31 + seed) & 0xFF for i in range(n))


def rx_seeds():
    s = {}
    # RC requests (the opcode byte is taken modulo 0x15 for RC QPs: the RC opcode itself)
    s["rc_send_only"] = rec(0, Q_RC, 0x04, 0, payload(100))
    s["rc_send_imm"] = rec(0, Q_RC, 0x05, 0, b"\x12\x34\x56\x78" + payload(64))
    s["rc_send_3"] = (rec(0, Q_RC, 0x00, 0, payload(1024)) + rec(0, Q_RC, 0x01, 1, payload(1024, 2))
                      + rec(0x80, Q_RC, 0x02, 2, payload(200, 3)))
    s["rc_write_only"] = rec(AIM, Q_RC, 0x0A, 0, reth(100, 0, 300) + payload(300))
    s["rc_write_2"] = (rec(AIM, Q_RC, 0x06, 0, reth(0, 0, 1500) + payload(1024))
                       + rec(0x80, Q_RC, 0x09, 1, b"\0\0\0\7" + payload(476)))
    s["rc_write_ro"] = rec(AIM, Q_RC, 0x0A, 0, reth(8, 1, 64) + payload(64))
    s["rc_read"] = rec(AIM, Q_RC, 0x0C, 0, reth(64, 0, 3000))
    s["rc_read_ro"] = rec(AIM, Q_RC, 0x0C, 0, reth(4096, 1, 5000))
    s["rc_read_dup"] = rec(AIM, Q_RC, 0x0C, 0, reth(0, 0, 2048)) + rec(AIM, Q_RC, 0x0C, -2, reth(0, 0, 2048))
    s["rc_cmp_swap"] = rec(AIM, Q_RC, 0x13, 0, struct.pack(">QIQQ", 64, 0, 5, 0))
    s["rc_fetch_add"] = rec(AIM, Q_RC, 0x14, 0, struct.pack(">QIQQ", 128, 0, 1, 0))
    s["rc_gap"] = rec(0, Q_RC, 0x04, 3, payload(10))
    s["rc_dup"] = rec(0, Q_RC, 0x04, 0, payload(10)) + rec(0, Q_RC, 0x04, -1, payload(10))
    # RC responses to the harness's READ (3 PSNs), SEND (2), WRITE (2), fetch-and-add (1)
    s["rc_read_resp"] = (rec(0, Q_RC, 0x0D, 0, b"\0\0\0\0" + payload(1024))
                         + rec(0, Q_RC, 0x0E, 1, b"\0\0\0\1" + payload(1024, 2))
                         + rec(0, Q_RC, 0x0F, 2, b"\0\0\0\2" + payload(952, 3)))
    s["rc_read_resp_gap"] = rec(0, Q_RC, 0x0E, 1, b"\0\0\0\1" + payload(1024, 2))
    s["rc_ack_all"] = rec(0, Q_RC, 0x11, 6, b"\0\0\0\4") + rec(0, Q_RC, 0x12, 7, b"\0\0\0\5" + struct.pack(">Q", 9))
    s["rc_nak_seq"] = rec(0, Q_RC, 0x11, 3, b"\x60\0\0\1")
    s["rc_nak_rnr"] = rec(0, Q_RC, 0x11, 3, b"\x21\0\0\1")
    s["rc_nak_acc"] = rec(0, Q_RC, 0x11, 0, b"\x62\0\0\1")
    # RC with the SRQ, UC, UD
    s["srq_send"] = rec(0, Q_RC_SRQ, 0x04, 0, payload(500))
    s["uc_send"] = rec(0, Q_UC, 0x04, 0, payload(700))
    s["uc_write"] = rec(AIM, Q_UC, 0x0A, 0, reth(0, 0, 100) + payload(100))
    s["uc_send_2"] = rec(0, Q_UC, 0x00, 0, payload(1024)) + rec(0, Q_UC, 0x02, 1, payload(24))
    s["ud_send"] = rec(0, Q_UD, 0x00, 0, struct.pack(">II", 0, 0x77) + payload(256))
    s["ud_send_imm"] = rec(0, Q_UD, 0x01, 0, struct.pack(">II", 0, 0x77) + b"\1\2\3\4" + payload(8))
    s["raw_cnp"] = rec(0x01, 0, 0, 0, bytes([0x81, 0x40, 0xFF, 0xFF, 0, 0, 1, 0, 0, 0, 0, 0]) + bytes(16) + bytes(4))
    return s


# ---- commands: [opcode (LE16), op_mod (LE16), flags, in length (LE16), out length (LE16), n,
# body]; the body lands at byte 8 of the input message -------------------------------------
RAW_OP, PAS = 0x01, 0x40


def cmd(op, op_mod=0, flags=RAW_OP, ilen=0, olen=0x100, fields=()):
    body = bytearray()
    for off, data in fields:  # message offsets
        at = off - 8
        if len(body) < at + len(data):
            body.extend(bytes(at + len(data) - len(body)))
        body[at:at + len(data)] = data
    assert len(body) <= 255
    return (struct.pack("<HHBHH", op, op_mod, flags, ilen, olen) + bytes([len(body)]) + bytes(body))


def be32(v):
    return struct.pack(">I", v)


def be64(v):
    return struct.pack(">Q", v)


def cmd_seeds():
    s = {}
    uar, eqn = 16, 0x10  # the harness's UAR page and EQ (the first the model hands out)
    alloc = cmd(0x800) + cmd(0x802) + cmd(0x816)
    cq = cmd(0x400, flags=RAW_OP | PAS, ilen=0x118,
             fields=[(0x10 + 0x0C, be32(6 << 24 | uar)), (0x10 + 0x14, be32(eqn)),
                     (0x10 + 0x38, be64(0))])
    s["alloc"] = alloc
    s["cq"] = alloc + cq + cmd(0x402, fields=[(0x08, be32(1))]) + cmd(0x401, fields=[(0x08, be32(1))])
    qpc = 0x18
    qp = cmd(0x500, flags=RAW_OP | PAS, ilen=0x118,
             fields=[(qpc + 0x00, be32(0 << 16 | 3 << 11)), (qpc + 0x04, be32(1)),
                     (qpc + 0x08, be32(4 << 19 | 2 << 16 | 4 << 11)), (qpc + 0x0C, be32(uar)),
                     (qpc + 0x7C, be32(1)), (qpc + 0x9C, be32(1)), (qpc + 0xA0, be64(0))])
    s["qp"] = alloc + cq + qp + cmd(0x502, ilen=0x110, fields=[(0x08, be32(0x100))]) + \
        cmd(0x503, ilen=0x110, fields=[(0x08, be32(0x100)), (qpc + 0x08, be32(3 << 29))]) + \
        cmd(0x50B, olen=0x200, fields=[(0x08, be32(0x100))])
    s["eq"] = cmd(0x301, flags=RAW_OP | PAS, ilen=0x118,
                  fields=[(0x10 + 0x0C, be32(4 << 24 | uar)), (0x10 + 0x14, be32(3)),
                          (0x58, be64(1 << 0x0A))]) + cmd(0x303, fields=[(0x08, be32(0x11))])
    s["mkey_pa"] = alloc + cmd(0x200, ilen=0x110,
                               fields=[(0x10, be32(3 << 10)), (0x14, be32(0xFFFFFF00)),
                                       (0x1C, be32(1)), (0x20, be64(0x10000000)), (0x28, be64(4096))])
    s["pages"] = cmd(0x107, op_mod=3) + cmd(0x108, op_mod=1, flags=RAW_OP | PAS, ilen=0x20,
                                            fields=[(0x0C, be32(2))])
    s["caps"] = cmd(0x100, op_mod=1, olen=0x1010) + cmd(0x101, olen=0x1010) + cmd(0x10A)
    s["vport"] = cmd(0x750) + cmd(0x754, olen=0x200) + cmd(0x760, olen=0x40) + \
        cmd(0x805, ilen=0x20, olen=0x20, fields=[(0x0C, be32(0x5004))])
    s["srq"] = alloc + cq + cmd(0x700, flags=RAW_OP | PAS, ilen=0x118,
                                fields=[(0x10 + 0x0C, be32(5 << 24 | 2 << 16)), (0x10 + 0x18, be32(1))])
    return s


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("rx", "cmd"):
        sys.exit(__doc__)
    seeds = rx_seeds() if sys.argv[1] == "rx" else cmd_seeds()
    os.makedirs(sys.argv[2], exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(sys.argv[2], "seed_" + name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
