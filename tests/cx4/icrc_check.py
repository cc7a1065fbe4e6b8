#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Verify the RoCE ICRC of every packet in a capture, independently of bridgeverbs' C code.

The ICRC (IBTA vol 1 Annex A17, RoCE v2; Linux rxe_icrc.c) is CRC-32 (zlib.crc32) over
    8 bytes 0xFF (masked LRH)
    + IP header with IPv4 TOS, TTL, header checksum = all ones
      (IPv6: traffic class, flow label, hop limit = all ones)
    + UDP header with checksum = 0xFFFF
    + BTH with byte 4 (FECN/BECN/resv6a) = 0xFF
    + everything after the BTH up to the ICRC,
stored little-endian in the last 4 bytes of the UDP payload (docs/roce-wire.md).
RoCE v1 (Annex A16, Ethertype 0x8915) has the GRH in the IP header's place, with TClass,
FlowLabel and HopLmt all ones (IBTA vol 1 7.8.1), and no UDP header.

Reads classic pcap (any byte order, micro- or nanosecond) and pcapng; link types Ethernet
(with 802.1Q/802.1ad tags), raw IPv4/IPv6 (228/229/101), Linux cooked (113/276) and BSD
loopback (0).  Exits 1 if any RoCE v2 packet has a wrong ICRC or cannot be checked, or if the
capture holds no RoCE v2 packet at all (unless --allow-empty).

    icrc_check.py CAPTURE [--port N] [--allow-empty] [-v]
    icrc_check.py --run WIRE_TEST_BINARY      # run the C test with -p, then check its capture
                                              # (and let tshark dissect it, if installed)
    icrc_check.py --tshark-args               # tshark's options for a header check, one a line
    icrc_check.py --tshark-selftest           # prove those options still catch bad headers
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

# tshark hands the payload after the IB transport headers to every heuristic registered on
# "infiniband.payload" (`tshark -G heuristic-decodes`, Wireshark 4.0), and one that claims a
# random payload either calls it malformed or shows the frame as another protocol: FCoIB took a
# UD payload whose first byte had 01 in its top bits, a valid SOF at byte 15, a valid EOF 4
# bytes from the end and 3 zero bytes after it ("FC 0x8915 [Malformed Packet: FC]", once in
# ~55,000 frames).  The captures carry test patterns, not those protocols, so every payload
# heuristic is off: the RoCE headers (GRH, BTH, the extended headers) are still dissected,
# and a malformed one is still reported (--tshark-selftest proves it).
IB_PAYLOAD_HEURISTICS = (
    "fc_infiniband", "eth_over_ib", "mellanox_eoib", "rpcrdma_infiniband",
    "smb_direct_infiniband", "smcr_infiniband", "nvme_rdma", "lnet_ib", "iser_infiniband",
    "sdp_infiniband", "drbd_rdma",
)


def tshark_args(off=IB_PAYLOAD_HEURISTICS):
    """tshark options for checking RoCE headers: every IB payload heuristic off."""
    args = []
    for h in off:
        args += ["--disable-heuristic", h]
    return args


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
    """ICRC over a masked IP header (or GRH), a UDP header (none for RoCE v1) and BTH..pad
    (transport without the ICRC)."""
    mudp = udp[:6] + b"\xff\xff" if udp else b""
    bth = transport[:4] + b"\xff" + transport[5:12]
    return zlib.crc32(b"\xff" * 8 + masked_ip + mudp + bth + transport[12:])


def masked_ip6(hdr):
    """An IPv6 header or a GRH with traffic class, flow label and hop limit all ones."""
    ip = bytearray(hdr[:40])
    ip[0] |= 0x0F
    ip[1:4] = b"\xff\xff\xff"
    ip[7] = 0xFF
    return bytes(ip)


def check_grh(pkt):
    """RoCE v1: GRH (IPVer 6, NxtHdr 0x1B) | BTH ... | ICRC."""
    if len(pkt) < 40 or pkt[0] >> 4 != 6 or pkt[6] != 0x1B:
        return None
    paylen = struct.unpack(">H", pkt[4:6])[0]
    desc = "RoCE v1 grh"
    if 40 + paylen > len(pkt):
        return False, desc + ": captured frame is truncated"
    t = pkt[40:40 + paylen]
    if len(t) < 16:
        return False, desc + ": too short for BTH + ICRC"
    want = struct.unpack("<I", t[-4:])[0]
    got = roce_icrc(masked_ip6(pkt), b"", t[:-4])
    desc += " opcode 0x%02x len %d icrc %08x" % (t[0], len(t), want)
    if got != want:
        return False, desc + ": MISMATCH, computed %08x" % got
    return True, desc


def check_packet(etype, pkt, port):
    """Return None if not RoCE, else (ok, description)."""
    if etype == 0x8915:
        return check_grh(pkt)
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
        ip = masked_ip6(pkt)
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
    print("%s: %d RoCE packet(s), %d with a wrong ICRC" % (path, checked, bad))
    if bad:
        return 1
    if not checked and not allow_empty:
        print("%s: no RoCE packet found" % path)
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
        # RoCE v2 is dissected by default on UDP 4791; the payload heuristics are off
        lines = tshark_dissect(tshark, cap)
        if lines is None:
            return 1
        broken = not_clean(lines)
        print("tshark: %d frame(s) dissected, %d not clean RoCE v2" % (len(lines), len(broken)))
        for l in broken[:20]:
            print("  frame", " | ".join(l))
        return rc or (1 if broken or not lines else 0)


def tshark_dissect(tshark, cap, off=IB_PAYLOAD_HEURISTICS):
    """[frame number, protocol column, malformed, expert severities] for every frame."""
    t = subprocess.run([tshark, "-n", "-r", cap] + tshark_args(off) +
                       ["-T", "fields", "-e", "frame.number", "-e", "_ws.col.Protocol",
                        "-e", "_ws.malformed", "-e", "_ws.expert.severity"],
                       capture_output=True, text=True)
    if t.returncode:
        print("tshark failed: %s" % t.stderr.strip())
        return None
    return [(l.split("\t") + ["", "", ""])[:4] for l in t.stdout.splitlines() if l.strip()]


def not_clean(lines):
    """The frames that are not clean RoCE: RoCE v2 shows as RRoCE, RoCE v1 (Ethertype 0x8915)
    as RoCE; severity 8388608 = PI_ERROR (epan/proto.h); notes and warnings (TTL 1) are fine."""
    return [l for l in lines if l[1] not in ("RRoCE", "RoCE") or l[2] or
            "8388608" in l[3].split(",")]


# --tshark-selftest: hand-built frames, each ICRC right, so that only tshark's verdict varies.
def _ipv4_udp(payload):
    hdr = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 28 + len(payload), 1, 0x4000, 64, 17, 0,
                      bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
    s = sum(struct.unpack(">10H", hdr))
    s = (s & 0xFFFF) + (s >> 16)
    return hdr[:10] + struct.pack(">H", ~((s & 0xFFFF) + (s >> 16)) & 0xFFFF) + hdr[12:]


def _eth(etype, pkt):
    return b"\x02\0\0\0\0\x02\x02\0\0\0\0\x01" + struct.pack(">H", etype) + pkt


def _roce_v2(transport):
    udp = struct.pack(">HHHH", 49152, ROCE_PORT, 8 + len(transport) + 4, 0)
    ip = bytearray(_ipv4_udp(transport + b"\0" * 4))
    masked = bytearray(ip)
    masked[1], masked[8], masked[10:12] = 0xFF, 0xFF, b"\xff\xff"
    icrc = roce_icrc(bytes(masked), udp, transport)
    return _eth(0x0800, bytes(ip) + udp + transport + struct.pack("<I", icrc))


def _roce_v1(transport):
    gid = b"\xfe\x80" + b"\0" * 13
    grh = struct.pack(">IHBB16s16s", 6 << 28, len(transport) + 4, 0x1B, 64, gid + b"\x01",
                      gid + b"\x02")
    icrc = roce_icrc(masked_ip6(grh), b"", transport)
    return _eth(0x8915, grh + transport + struct.pack("<I", icrc))


def _bth(opcode):
    return struct.pack(">BBHII", opcode, 0, 0xFFFF, 0x11, 5)


def _ud_send(payload):
    return _bth(0x64) + struct.pack(">II", 0x11111111, 0x12) + payload


def _write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", i, 0, len(fr), len(fr)) + fr)


def tshark_selftest():
    """The header check is strict and the payload heuristics cannot fail it: good frames are
    clean, a payload FCoIB claims with the heuristics on is clean with them off, and every
    malformed GRH/BTH/extended header is still reported."""
    tshark = shutil.which("tshark")
    if not tshark:
        print("FAIL: tshark is missing (tools/install-deps.sh installs it)")
        return 1
    fcoib = bytearray(range(64))
    fcoib[0], fcoib[15], fcoib[-4], fcoib[-3:] = 0x40, 0x2E, 0x42, b"\0\0\0"  # SOFi3, EOFt
    cases = [  # (frame, clean?, what)
        (_roce_v2(_ud_send(bytes(range(32)))), True, "RoCE v2 UD SEND"),
        (_roce_v1(_ud_send(bytes(range(32)))), True, "RoCE v1 UD SEND"),
        (_roce_v2(_ud_send(bytes(fcoib))), True, "RoCE v2 UD SEND, an FCoIB-like payload"),
        (_roce_v1(_ud_send(bytes(fcoib))), True, "RoCE v1 UD SEND, an FCoIB-like payload"),
        (_roce_v2(_bth(0x64)[:8]), False, "RoCE v2, BTH cut to 8 bytes"),
        (_roce_v2(_bth(0x64)), False, "RoCE v2 UD SEND without its DETH"),
        (_roce_v2(_bth(0x0C) + b"\0" * 4), False, "RoCE v2 RDMA READ request, RETH cut"),
        (_roce_v1(_bth(0x64)[:6]), False, "RoCE v1, BTH cut to 6 bytes"),
        (_roce_v1(_bth(0x0A) + b"\0" * 4), False, "RoCE v1 RDMA WRITE, RETH cut"),
    ]
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        cap = os.path.join(d, "selftest.pcap")
        _write_pcap(cap, [c[0] for c in cases])
        lines = tshark_dissect(tshark, cap)
        if lines is None or len(lines) != len(cases):
            print("FAIL: tshark dissected %s of %d frames" % (lines and len(lines), len(cases)))
            return 1
        broken = {l[0] for l in not_clean(lines)}
        for n, (_, clean, what) in enumerate(cases, 1):
            ok = (str(n) not in broken) == clean
            bad += not ok
            print("%s frame %d: %s: %s" % ("ok  " if ok else "FAIL", n, what,
                                           "clean" if str(n) not in broken else "reported"))
        # the FCoIB-like payload matters: with the heuristic on, it is not shown as RoCE
        on = tshark_dissect(tshark, cap, [h for h in IB_PAYLOAD_HEURISTICS
                                          if h != "fc_infiniband"])
        claimed = [l for l in on or [] if l[0] in ("3", "4") and l[1] not in ("RRoCE", "RoCE")]
        print("%s with fc_infiniband on, frames 3 and 4 show as %s" %
              ("ok  " if len(claimed) == 2 else "FAIL", [l[1] for l in on or []][2:4]))
        bad += len(claimed) != 2
        if check_capture(cap, ROCE_PORT, False, False) == 0:
            print("FAIL: icrc_check passed a capture with cut headers")  # the frames are short
            bad += 1
    print("tshark self-test: %s" % ("PASS" if not bad else "%d FAILED" % bad))
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("capture", nargs="?")
    ap.add_argument("--port", type=int, default=ROCE_PORT, help="RoCE v2 UDP port (4791)")
    ap.add_argument("--allow-empty", action="store_true")
    ap.add_argument("--run", metavar="WIRE_TEST", help="run wire_test -p and check its capture")
    ap.add_argument("--tshark-args", action="store_true", help="print tshark's options")
    ap.add_argument("--tshark-selftest", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    if a.tshark_args:
        print("\n".join(tshark_args()))
        return 0
    if a.tshark_selftest:
        return tshark_selftest()
    if a.run:
        return run_wire_test(a.run)
    if not a.capture:
        ap.error("a capture file or --run is required")
    return check_capture(a.capture, a.port, a.allow_empty, a.verbose)


if __name__ == "__main__":
    sys.exit(main())
