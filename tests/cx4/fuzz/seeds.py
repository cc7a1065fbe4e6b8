#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Seed inputs for the cx4 model fuzzers (fuzz_rx.c, fuzz_cmd.c): one file per input, in the
record formats those harnesses document, so that a short run starts from packets and commands
the model takes (a valid SEND, WRITE, READ, atomic, ACK, READ response ...; ALLOC_PD,
CREATE_CQ, CREATE_QP and its transitions ...) instead of from nothing.

    seeds.py rx DIR     write the receive-path seeds into DIR
    seeds.py cmd DIR    write the command seeds into DIR
    seeds.py rx-regress DIR, cmd-regress DIR
                        write the regression inputs (rx/regress, cmd/regress): each an edge a
                        hostile peer or driver can reach and the model must refuse without
                        writing outside what it was given, named for that edge. The
                        campaigns found no crash in these two targets; these are the cases
                        the _regress tests must keep replaying whatever the corpora become.
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


MR_LEN = 64 * 1024  # fuzz_rx.c's MRs


def rx_regress():
    s = {}
    ex = 0x04  # the opcode byte as given
    # RETH/AtomicETH aimed (AIM) at the read-write MR (rkey even) or the read-only one (odd);
    # the harness folds the length to at most 63 bytes past the MR's end
    s["rc_write_crosses_rw_mr_end"] = rec(AIM | ex, Q_RC, 0x0A, 0,
                                          reth(MR_LEN - 16, 0, 79) + payload(79))
    s["rc_write_first_crosses_rw_mr_end"] = (
        rec(AIM | ex, Q_RC, 0x06, 0, reth(MR_LEN - 1024, 0, 1087) + payload(1024))
        + rec(ex, Q_RC, 0x08, 1, payload(63)))
    s["rc_read_crosses_ro_mr_end"] = rec(AIM | ex, Q_RC, 0x0C, 0, reth(MR_LEN - 8, 1, 70))
    s["rc_write_into_ro_mr"] = rec(AIM | ex, Q_RC, 0x0A, 0, reth(0, 1, 64) + payload(64))
    s["rc_atomic_misaligned"] = rec(AIM | ex, Q_RC, 0x14, 0, struct.pack(">QIQQ", 3, 0, 1, 0))
    s["rc_atomic_on_ro_mr"] = rec(AIM | ex, Q_RC, 0x13, 0, struct.pack(">QIQQ", 64, 1, 5, 0))
    s["rc_atomic_crosses_rw_mr_end"] = rec(AIM | ex, Q_RC, 0x14, 0,
                                           struct.pack(">QIQQ", MR_LEN - 4, 0, 1, 0))
    # the replayed READ flood: one READ, then the same PSN again and again (each replay must
    # not count as another outstanding READ: docs/reliability.md, res_active)
    s["rc_read_replayed_7_times"] = b"".join(
        rec(AIM | ex, Q_RC, 0x0C, 0, reth(0, 0, 4000)) for _ in range(8))
    # more than a receive WQE holds, a READ response longer than the READ, PSNs far off
    s["rc_send_longer_than_recv"] = rec(ex, Q_RC, 0x04, 0, payload(4096))
    s["srq_send_longer_than_recv"] = rec(ex, Q_RC_SRQ, 0x04, 0, payload(4096))
    s["rc_read_resp_longer_than_read"] = rec(ex, Q_RC, 0x10, 0, b"\0\0\0\0" + payload(4096))
    s["rc_send_psn_half_space_ahead"] = rec(ex | 0x08, Q_RC, 0x04, 0, b"\x80\0\0" + payload(8))
    s["rc_ack_psn_behind"] = rec(ex, Q_RC, 0x11, -100, b"\0\0\0\7")
    # the wrong QP, the wrong Q_Key, a header cut short, a wrong ICRC
    s["rc_send_unknown_dqpn"] = rec(ex | 0x20, Q_RC, 0x04, 0, b"\xff\xff\xfe" + payload(16))
    s["ud_send_wrong_qkey"] = rec(ex | 0x40, Q_UD, 0x64, 0,
                                  struct.pack(">II", 0xDEADBEEF, 0x77) + payload(64))
    s["ud_send_without_deth_room"] = rec(ex, Q_UD, 0x64, 0, b"\0\0")
    s["raw_bth_cut_to_8"] = rec(0x01, 0, 0, 0, bytes([0x04, 0, 0xFF, 0xFF, 0, 0, 0, 1]))
    s["raw_wrong_icrc"] = rec(0x03, 0, 0, 0, bytes([0x04, 0x40, 0xFF, 0xFF, 0, 0, 0, 1,
                                                    0, 0, 0, 0]) + payload(32) + b"\xde\xad\xbe\xef")
    s["rc_opcode_reserved_0x1f"] = rec(ex, Q_RC, 0x1F, 0, payload(16))
    return s


def cmd_regress():
    s = {}
    alloc = cmd(0x800) + cmd(0x802) + cmd(0x816)
    # a broken mailbox chain: wrong token, wrong block number, a bad next pointer
    big = [(0x10 + 0x0C, be32(6 << 24 | 16)), (0x10 + 0x14, be32(0x10))]
    s["create_cq_mailbox_wrong_token"] = alloc + cmd(0x400, flags=RAW_OP | PAS | 0x04,
                                                      ilen=0x118, fields=big)
    s["create_cq_mailbox_wrong_block"] = alloc + cmd(0x400, flags=RAW_OP | PAS | 0x08,
                                                      ilen=0x118, fields=big)
    s["create_cq_mailbox_bad_next"] = alloc + cmd(0x400, flags=RAW_OP | PAS | 0x10,
                                                   ilen=0x118, fields=big)
    s["entry_bad_type"] = cmd(0x800, flags=RAW_OP | 0x20)
    # lengths: none, shorter than the header, an output far larger than any command's
    s["alloc_pd_input_length_0"] = cmd(0x800, flags=RAW_OP | 0x02, ilen=0, olen=0x10)
    s["alloc_pd_input_length_4"] = cmd(0x800, flags=RAW_OP | 0x02, ilen=4, olen=0x10)
    s["query_hca_cap_output_64k"] = cmd(0x100, op_mod=1, flags=RAW_OP | 0x02, ilen=0x10,
                                        olen=0xFFFF)
    s["opcode_unknown_0x7fff"] = cmd(0x7FFF)
    # objects that do not exist, or that are someone else's
    s["destroy_cq_never_made"] = cmd(0x401, fields=[(0x08, be32(0xFFFFFF))])
    s["destroy_qp_twice"] = alloc + cmd(0x501, fields=[(0x08, be32(0x100))]) * 2
    s["dealloc_pd_unknown"] = cmd(0x801, fields=[(0x08, be32(0xABCDE))])
    # a memory key of the largest length with one translation entry (cx4d's 64 PB REG_MR)
    s["create_mkey_length_max_one_mtt"] = alloc + cmd(
        0x200, ilen=0x110, fields=[(0x10, be32(3 << 10)), (0x14, be32(0xFFFFFF00)),
                                   (0x1C, be32(1)), (0x20, be64(0x10000000)),
                                   (0x28, be64(0xFFFFFFFFFFFFF000))])
    s["manage_pages_give_0"] = cmd(0x108, op_mod=1, flags=RAW_OP | PAS, ilen=0x20,
                                   fields=[(0x0C, be32(0))])
    s["manage_pages_give_more_than_pas"] = cmd(0x108, op_mod=1, flags=RAW_OP | PAS | 0x02,
                                               ilen=0x20, fields=[(0x0C, be32(100000))])
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
    kinds = {"rx": (rx_seeds, "seed_"), "cmd": (cmd_seeds, "seed_"),
             "rx-regress": (rx_regress, ""), "cmd-regress": (cmd_regress, "")}
    if len(sys.argv) != 3 or sys.argv[1] not in kinds:
        sys.exit(__doc__)
    make, prefix = kinds[sys.argv[1]]
    os.makedirs(sys.argv[2], exist_ok=True)
    for name, data in make().items():
        with open(os.path.join(sys.argv[2], prefix + name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
