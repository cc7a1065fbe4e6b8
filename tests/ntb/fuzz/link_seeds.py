#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Seed inputs for ntb_link_fuzz.c (its record format: link byte, then u8 op | u8 a | u32 b):
what a peer ntbd really sends in a bring-up (the handshake's five commands, each acknowledged),
on either link (scratchpads, message registers), then the same interrupted, repeated, out of
order, after a link bounce or a restart, and the link header a READY peer writes.

    link_seeds.py DIR
"""
import os
import struct
import sys

REAL, ACK, BOUNCE, SESSION, HEADER, WAIT, SAY, SPAD, MSG, DB = 5, 6, 3, 7, 8, 9, 4, 0, 1, 2


def r(op, a=0, b=0):
    return struct.pack("<BBI", op, a, b)


def handshake(epoch=7):
    return b"".join(r(REAL, i, epoch) + r(ACK) + r(WAIT, 2) for i in range(5))


def seeds():
    s = {}
    for link, name in ((0, "spads"), (1, "msgs")):
        p = bytes([link])
        s[name + "_bringup"] = p + handshake()
        s[name + "_bounce_bringup"] = p + r(BOUNCE) + r(WAIT, 5) + handshake(8)
        s[name + "_restart_midway"] = (p + r(SESSION) + b"".join(r(REAL, i) for i in range(3)) +
                                       r(SESSION) + handshake(9))
        s[name + "_out_of_order"] = p + b"".join(r(REAL, i) + r(ACK) for i in (4, 3, 1, 2, 0))
        s[name + "_repeat"] = p + b"".join(r(REAL, 0) for _ in range(4)) + handshake(3)
        s[name + "_old_version"] = p + r(SAY, 1, 99) + r(ACK) + handshake()
        s[name + "_bad_window"] = p + r(SAY, 2, 5) + r(SAY, 0x80 | 3, 0x100000) + r(ACK)
        s[name + "_header_after_ready"] = (p + handshake() + r(HEADER, 4, 60001) +
                                           r(HEADER, 3, 1) + r(WAIT, 25) + r(HEADER, 0, 0) +
                                           r(WAIT, 25))
        s[name + "_raw"] = p + r(SPAD, 0, 0x01AB0001) + r(MSG, 0, 0x01AB0001) + r(DB, 0, 1) + \
            r(SPAD, 3, 0xFFFF0000) + r(WAIT, 30)
    return s


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    os.makedirs(sys.argv[1], exist_ok=True)
    for name, data in seeds().items():
        with open(os.path.join(sys.argv[1], "seed_" + name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
