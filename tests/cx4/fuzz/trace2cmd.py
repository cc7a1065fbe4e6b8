#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Command-interface corpus inputs from real traffic (fuzz_cmd.c's record format).

    trace2cmd.py OUTDIR NAME TRACE...

A trace is mlx5_core's dump_command() output: Linux's (tests/cx4/data/, a real ConnectX-4 Lx)
or cx4d's (--trace, or "trace = FILE" in a device section). Its commands, decoded by
../trace_decode.py, become records in trace order, eight to an input: the opcode, op_mod,
input and output lengths as the driver gave them, and the first 255 bytes of the input
message after its header; commands that carry a PAS list get the harness's scratch pages
there (flag 0x40: the trace's addresses were the driver's). Inputs are NAME-<first
opcode>-<hash>.
"""
import hashlib
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import trace_decode  # noqa: E402

RAW_OP, LENGTHS, PAS = 0x01, 0x02, 0x40
# commands whose input has a PAS / MTT list (fuzz_cmd.c flag 0x40 rewrites it)
WITH_PAS = {0x108, 0x200, 0x301, 0x400, 0x500, 0x700}
PER_INPUT = 8


def record(c):
    body = bytes.fromhex(c["input"])[8:8 + 255].rstrip(b"\0")
    flags = RAW_OP | LENGTHS | (PAS if c["opcode"] in WITH_PAS else 0)
    in_len = min(c["in_len"], 0xFFFF)
    out_len = min(c["out_len"], 0xFFFF)
    return struct.pack("<HHBHHB", c["opcode"], c["op_mod"], flags, in_len, out_len,
                       len(body)) + body


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    out, name = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    n = 0
    for path in sys.argv[3:]:
        cmds = [c.as_dict() for c in trace_decode.load(path)]
        for i in range(0, len(cmds), PER_INPUT):
            group = cmds[i:i + PER_INPUT]
            data = b"".join(record(c) for c in group)
            h = hashlib.sha1(data).hexdigest()[:8]
            with open(os.path.join(out, "%s-%03x-%s" % (name, group[0]["opcode"], h)),
                      "wb") as f:
                f.write(data)
            n += 1
    print("trace2cmd: %d inputs" % n)


if __name__ == "__main__":
    main()
