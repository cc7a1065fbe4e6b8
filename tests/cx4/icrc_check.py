#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Verify the RoCE v2 ICRC of every packet in a capture, independently of bridgeverbs' C code.

The ICRC (IBTA vol 1 Annex A17, RoCE v2; Linux rxe_icrc.c) is CRC-32 (zlib.crc32) over
    8 bytes 0xFF (masked LRH)
    + IP header with IPv4 TOS, TTL, header checksum = all ones
      (IPv6: traffic class, flow label, hop limit = all ones)
    + UDP header with checksum = 0xFFFF
    + BTH with byte 4 (FECN/BECN/resv6a) = 0xFF
    + everything after the BTH up to the ICRC,
stored little-endian in the last 4 bytes of the UDP payload (shared/research/cx4.md §4.5).

Reads classic pcap (any byte order, micro- or nanosecond) and pcapng; link types Ethernet
(with 802.1Q/802.1ad tags), raw IPv4/IPv6 (228/229/101), Linux cooked (113/276) and BSD
loopback (0).  Exits 1 if any RoCE v2 packet has a wrong ICRC or cannot be checked, or if the
capture holds no RoCE v2 packet at all (unless --allow-empty).

    icrc_check.py CAPTURE [--port N] [--allow-empty] [-v]
    icrc_check.py --run WIRE_TEST_BINARY      # run the C test with -p, then check its capture
                                              # (and let tshark dissect it, if installed)
"""
import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

ROCE_PORT = 4791


def read_pcap(data):
    """Yield (linktype, frame bytes, original length) from a classic pcap or pcapng file."""
    if len(data) < 4:
        raise ValueError("file too short")
    magic = data[:4]
    if magic == b"\x0a\x0d\x0d\x0a":
        yield from read_pcapng(data)
        return
    for endian in ("<", ">"):
        (m,) = struct.unpack(endian + "I", magic)
        if m in (0xA1B2C3D4, 0xA1B23C4D):
            break
    else:
        raise ValueError("not a pcap/pcapng file (magic %s)" % magic.hex())
    if len(data) < 24:
        raise ValueError("truncated pcap header")
    linktype = struct.unpack(endian + "I", data[20:24])[0] & 0x0FFFFFFF
    off = 24
    while off + 16 <= len(data):
        _, _, incl, orig = struct.unpack(endian + "IIII", data[off:off + 16])
        off += 16
        if off + incl > len(data):
            raise ValueError("truncated record at offset %d" % (off - 16))
        yield linktype, data[off:off + incl], orig
        off += incl
    if off != len(data):
        raise ValueError("trailing garbage at offset %d" % off)


def read_pcapng(data):
    off = 0
    endian = "<"
    links = []
    while off + 12 <= len(data):
        btype = struct.unpack(endian + "I", data[off:off + 4])[0]
        if btype == 0x0A0D0D0A:  # section header: learn byte order
            bom = data[off + 8:off + 12]
            endian = "<" if bom == b"\x4d\x3c\x2b\x1a" else ">"
            links = []
        blen = struct.unpack(endian + "I", data[off + 4:off + 8])[0]
        if blen < 12 or off + blen > len(data):
            raise ValueError("bad pcapng block at offset %d" % off)
        body = data[off + 8:off + blen - 4]
        if btype == 1:  # interface description
            links.append(struct.unpack(endian + "H", body[:2])[0])
        elif btype == 6:  # enhanced packet
            ifc, _, _, cap, orig = struct.unpack(endian + "IIIII", body[:20])
            yield links[ifc], body[20:20 + cap], orig
        elif btype == 3:  # simple packet (interface 0)
            orig = struct.unpack(endian + "I", body[:4])[0]
            yield links[0], body[4:4 + min(orig, len(body) - 4)], orig
        off += blen


def network_layer(linktype, frame):
    """Return (ethertype, payload) for the supported link types, or None."""
    if linktype == 1:  # Ethernet
        if len(frame) < 14:
            return None
        etype, off = struct.unpack(">H", frame[12:14])[0], 14
        while etype in (0x8100, 0x88A8) and len(frame) >= off + 4:
            etype, off = struct.unpack(">H", frame[off + 2:off + 4])[0], off + 4
        return etype, frame[off:]
    if linktype in (228, 229, 101, 12, 14):  # raw IP
        if not frame:
            return None
        return (0x0800 if frame[0] >> 4 == 4 else 0x86DD), frame
    if linktype == 113:  # Linux cooked v1
        return (struct.unpack(">H", frame[14:16])[0], frame[16:]) if len(frame) >= 16 else None
    if linktype == 276:  # Linux cooked v2
        return (struct.unpack(">H", frame[0:2])[0], frame[20:]) if len(frame) >= 20 else None
    if linktype == 0:  # BSD loopback: 4-byte address family, host order
        if len(frame) < 4:
            return None
        fam = struct.unpack("<I", frame[:4])[0]
        if fam > 0xFFFF:
            fam = struct.unpack(">I", frame[:4])[0]
        return (0x0800 if fam == 2 else 0x86DD), frame[4:]
    return None


def roce_icrc(masked_ip, udp, transport):
    """ICRC over a masked IP header, a UDP header and BTH..pad (transport without the ICRC)."""
    mudp = udp[:6] + b"\xff\xff"
    bth = transport[:4] + b"\xff" + transport[5:12]
    return zlib.crc32(b"\xff" * 8 + masked_ip + mudp + bth + transport[12:])


def check_packet(etype, pkt, port):
    """Return None if not RoCE v2, else (ok, description)."""
    if etype == 0x0800:
        if len(pkt) < 20 or pkt[0] >> 4 != 4:
            return None
        ihl = (pkt[0] & 0xF) * 4
        tot = struct.unpack(">H", pkt[2:4])[0]
        if pkt[9] != 17 or ihl < 20 or len(pkt) < ihl + 8:
            return None
        if struct.unpack(">H", pkt[6:8])[0] & 0x3FFF:
            return None  # fragment: reassembled by the receiver, not checkable here
        ip = bytearray(pkt[:ihl])
        ip[1] = 0xFF  # TOS
        ip[8] = 0xFF  # TTL
        ip[10:12] = b"\xff\xff"  # header checksum
        end = tot
    elif etype == 0x86DD:
        if len(pkt) < 48 or pkt[0] >> 4 != 6 or pkt[6] != 17:
            return None  # (extension headers are not used by RoCE v2)
        ip = bytearray(pkt[:40])
        ip[0] |= 0x0F  # traffic class, flow label
        ip[1:4] = b"\xff\xff\xff"
        ip[7] = 0xFF  # hop limit
        ihl = 40
        end = 40 + struct.unpack(">H", pkt[4:6])[0]
    else:
        return None
    udp = pkt[ihl:ihl + 8]
    sport, dport, ulen = struct.unpack(">HHH", udp[:6])
    if dport != port:
        return None
    desc = "%s:%d -> port %d" % (etype == 0x0800 and ".".join(map(str, pkt[12:16])) or "v6",
                                  sport, dport)
    if end > len(pkt):
        return False, desc + ": captured frame is truncated (%d of %d bytes)" % (len(pkt), end)
    payload = pkt[ihl + 8:ihl + ulen] if ulen >= 8 else b""
    if ulen != end - ihl or len(payload) < 16:
        return False, desc + ": bad UDP length %d or too short for BTH + ICRC" % ulen
    want = struct.unpack("<I", payload[-4:])[0]
    got = roce_icrc(bytes(ip), udp, payload[:-4])
    desc += " opcode 0x%02x len %d icrc %08x" % (payload[0], len(payload), want)
    if got != want:
        return False, desc + ": MISMATCH, computed %08x" % got
    return True, desc


def check_capture(path, port, allow_empty, verbose):
    with open(path, "rb") as f:
        data = f.read()
    checked = bad = 0
    try:
        for n, (linktype, frame, orig) in enumerate(read_pcap(data), 1):
            net = network_layer(linktype, frame)
            if net is None:
                continue
            r = check_packet(net[0], net[1], port)
            if r is None:
                continue
            ok, desc = r
            if ok and len(frame) < orig:
                ok, desc = False, desc + ": snapped frame (%d of %d bytes)" % (len(frame), orig)
            checked += 1
            if not ok:
                bad += 1
                print("frame %d: %s" % (n, desc))
            elif verbose:
                print("frame %d: ok %s" % (n, desc))
    except ValueError as e:
        print("%s: %s" % (path, e))
        return 1
    print("%s: %d RoCE v2 packet(s), %d with a wrong ICRC" % (path, checked, bad))
    if bad:
        return 1
    if not checked and not allow_empty:
        print("%s: no RoCE v2 packet found" % path)
        return 1
    return 0


def run_wire_test(binary):
    """Run the C unit test with a capture, verify it here, and let tshark dissect it."""
    with tempfile.TemporaryDirectory() as d:
        cap = os.path.join(d, "wire.pcap")
        r = subprocess.run([binary, "-p", cap])
        if r.returncode:
            print("%s failed (%d)" % (binary, r.returncode))
            return 1
        rc = check_capture(cap, ROCE_PORT, False, False)
        tshark = shutil.which("tshark")
        if not tshark:
            print("FAIL: tshark is missing (tools/install-deps.sh installs it)")
            return 1
        # RoCE v2 is dissected by default on UDP 4791.  The RPC-over-RDMA heuristic treats
        # arbitrary SEND payloads as RPC and calls them malformed: turn it off.
        t = subprocess.run([tshark, "-n", "-r", cap, "--disable-protocol", "rpcordma",
                            "-T", "fields", "-e", "frame.number", "-e", "_ws.col.Protocol",
                            "-e", "_ws.malformed", "-e", "_ws.expert.severity"],
                           capture_output=True, text=True)
        if t.returncode:
            print("tshark failed: %s" % t.stderr.strip())
            return 1
        lines = [l.split("\t") for l in t.stdout.splitlines() if l.strip()]
        # severity 8388608 = PI_ERROR (epan/proto.h); notes/warnings (e.g. TTL 1) are fine
        broken = [l for l in lines if len(l) < 2 or l[1] != "RRoCE" or
                  (len(l) > 2 and l[2]) or (len(l) > 3 and "8388608" in l[3].split(","))]
        print("tshark: %d frame(s) dissected, %d not clean RoCE v2" % (len(lines), len(broken)))
        for l in broken[:20]:
            print("  frame", " | ".join(l))
        return rc or (1 if broken or not lines else 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("capture", nargs="?")
    ap.add_argument("--port", type=int, default=ROCE_PORT, help="RoCE v2 UDP port (4791)")
    ap.add_argument("--allow-empty", action="store_true")
    ap.add_argument("--run", metavar="WIRE_TEST", help="run wire_test -p and check its capture")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    if a.run:
        return run_wire_test(a.run)
    if not a.capture:
        ap.error("a capture file or --run is required")
    return check_capture(a.capture, a.port, a.allow_empty, a.verbose)


if __name__ == "__main__":
    sys.exit(main())
