/* SPDX-License-Identifier: MIT */
/*
 * RoCE v2 / InfiniBand transport opcodes: one table entry per opcode (IBTA vol 1 §9.2, the BTH
 * OpCode field: bits 7:5 transport service, 4:0 operation), describing which extension headers
 * follow the BTH, where, and what the packet means to the requester/responder engines.
 *
 * The table is data, in the style of Linux rxe_opcode.c, so that the packet parser, builder and
 * the model's requester/responder all ask the same question ("does this opcode carry a RETH?",
 * "is this the last packet of a message?") instead of each keeping its own switch ladder.
 *
 * Covered: every RC, UC and UD opcode a ConnectX-4 sends or accepts, and the RoCE v2 CNP.
 * Not covered (parse as "unknown opcode"): RD (0x40-0x5f, ConnectX-4 has no RD), XRC (0xa0-0xbf,
 * needs XRCETH; not modelled), IBTA 1.5 FLUSH/ATOMIC_WRITE (0x1c/0x1d, not on ConnectX-4),
 * RC 0x15 and 0x18-0x1b (reserved), manufacturer-specific 0xc0-0xff.
 */
#ifndef BV_ROCE_OPCODE_H
#define BV_ROCE_OPCODE_H

#include <stdint.h>

#include "roce_hdr.h"

/* Transport service, BTH opcode bits 7:5. */
enum roce_transport {
	ROCE_TRANSPORT_RC = 0x00,
	ROCE_TRANSPORT_UC = 0x20,
	ROCE_TRANSPORT_RD = 0x40,
	ROCE_TRANSPORT_UD = 0x60,
	ROCE_TRANSPORT_CNP = 0x80, /* Annex A17: "CNP" service; only opcode 0x81 is defined */
	ROCE_TRANSPORT_XRC = 0xa0,
};

#define ROCE_TRANSPORT_MASK 0xe0

/* Operation, BTH opcode bits 4:0 (IBTA vol 1 table "OpCode field", include/rdma/ib_pack.h). */
enum roce_operation {
	ROCE_OP_SEND_FIRST = 0x00,
	ROCE_OP_SEND_MIDDLE = 0x01,
	ROCE_OP_SEND_LAST = 0x02,
	ROCE_OP_SEND_LAST_IMM = 0x03,
	ROCE_OP_SEND_ONLY = 0x04,
	ROCE_OP_SEND_ONLY_IMM = 0x05,
	ROCE_OP_RDMA_WRITE_FIRST = 0x06,
	ROCE_OP_RDMA_WRITE_MIDDLE = 0x07,
	ROCE_OP_RDMA_WRITE_LAST = 0x08,
	ROCE_OP_RDMA_WRITE_LAST_IMM = 0x09,
	ROCE_OP_RDMA_WRITE_ONLY = 0x0a,
	ROCE_OP_RDMA_WRITE_ONLY_IMM = 0x0b,
	ROCE_OP_RDMA_READ_REQUEST = 0x0c,
	ROCE_OP_RDMA_READ_RESPONSE_FIRST = 0x0d,
	ROCE_OP_RDMA_READ_RESPONSE_MIDDLE = 0x0e,
	ROCE_OP_RDMA_READ_RESPONSE_LAST = 0x0f,
	ROCE_OP_RDMA_READ_RESPONSE_ONLY = 0x10,
	ROCE_OP_ACKNOWLEDGE = 0x11,
	ROCE_OP_ATOMIC_ACKNOWLEDGE = 0x12,
	ROCE_OP_COMPARE_SWAP = 0x13,
	ROCE_OP_FETCH_ADD = 0x14,
	ROCE_OP_SEND_LAST_INV = 0x16,
	ROCE_OP_SEND_ONLY_INV = 0x17,
	ROCE_OP_CNP = 0x01, /* with ROCE_TRANSPORT_CNP */
};

/* Full opcodes, for readability at call sites. */
#define ROCE_OPCODE(t, op) ((uint8_t)(ROCE_TRANSPORT_##t | ROCE_OP_##op))
#define ROCE_OPCODE_CNP ROCE_OPCODE(CNP, CNP) /* 0x81 */

/* Headers that may follow the BTH, in the order they appear on the wire (IBTA vol 1 §9.3:
 * BTH, [RDETH], [DETH], [RETH], [AtomicETH], [AETH], [AtomicAckETH], [ImmDt], [IETH], payload).
 * ROCE_HDR_CNP is the 16 reserved bytes of a CNP. */
enum roce_hdr_idx {
	ROCE_HDR_BTH,
	ROCE_HDR_DETH,
	ROCE_HDR_RETH,
	ROCE_HDR_ATMETH,
	ROCE_HDR_AETH,
	ROCE_HDR_ATMACK,
	ROCE_HDR_IMMDT,
	ROCE_HDR_IETH,
	ROCE_HDR_CNP,
	ROCE_HDR_PAYLOAD,
	ROCE_HDR_NUM
};

#define ROCE_HM(h) (1u << ROCE_HDR_##h)

/* Packet semantics (roce_opcode_info.flags). */
enum {
	ROCE_F_REQ = 1u << 0,	/* sent by a requester */
	ROCE_F_RESP = 1u << 1,	/* sent by a responder (ACK/NAK, READ response, atomic ACK) */
	ROCE_F_FIRST = 1u << 2, /* first packet of a message ("only" = FIRST|LAST) */
	ROCE_F_MIDDLE = 1u << 3,
	ROCE_F_LAST = 1u << 4,
	ROCE_F_PAYLOAD =
	    1u << 5, /* carries a payload (0..PMTU bytes, see roce_check_payload_len) */
	ROCE_F_SEND = 1u << 6,
	ROCE_F_WRITE = 1u << 7,
	ROCE_F_READ = 1u << 8,	    /* READ request or READ response */
	ROCE_F_ATOMIC = 1u << 9,    /* atomic request or atomic ACK */
	ROCE_F_ACK = 1u << 10,	    /* ACKNOWLEDGE (ACK, RNR NAK, NAK) */
	ROCE_F_IMM = 1u << 11,	    /* carries ImmDt */
	ROCE_F_INV = 1u << 12,	    /* carries IETH (send with invalidate) */
	ROCE_F_RECV_WQE = 1u << 13, /* responder consumes a receive WQE with this packet */
	ROCE_F_RECV_CQE = 1u << 14, /* responder completes a receive WQE with this packet */
	ROCE_F_ACKED = 1u << 15,    /* RC request: responder must acknowledge it (explicit ACK,
				     * READ response or atomic ACK; ACKs may be coalesced) */
	ROCE_F_CNP = 1u << 16,	    /* congestion notification packet */
};

#define ROCE_F_ONLY (ROCE_F_FIRST | ROCE_F_LAST)

struct roce_opcode_info {
	const char *name;	   /* NULL: opcode not defined/supported */
	uint32_t hdrs;		   /* ROCE_HM(...) of the headers present (BTH always) */
	uint32_t flags;		   /* ROCE_F_* */
	uint8_t transport;	   /* enum roce_transport */
	uint8_t hdr_len;	   /* BTH + all extension headers = payload offset */
	uint8_t off[ROCE_HDR_NUM]; /* byte offset from the BTH of each header present */
};

extern const struct roce_opcode_info roce_opcode_table[256];

/* Table entry for a defined opcode, NULL for anything we do not accept. */
static inline const struct roce_opcode_info *roce_opcode_info(uint8_t opcode)
{
	const struct roce_opcode_info *i = &roce_opcode_table[opcode];

	return i->name ? i : NULL;
}

/* "RC_SEND_FIRST" etc., or "UNKNOWN". */
const char *roce_opcode_name(uint8_t opcode);

/* IB MTU enum (1..5, IBTA "PMTU" / ibv_mtu / qpc.mtu) -> bytes, 0 if invalid. */
static inline uint32_t roce_mtu_bytes(unsigned int ib_mtu)
{
	return (ib_mtu >= 1 && ib_mtu <= 5) ? 128u << ib_mtu : 0;
}

/* Payload length rule of IBTA ch. 9 (packet payload length vs. PMTU, as implemented by rxe
 * check_length in rxe_resp.c): first and middle packets carry exactly PMTU bytes, last packets
 * 1..PMTU, "only" packets 0..PMTU; opcodes without payload carry none.  pmtu in bytes.
 * Returns 0 if valid, -1 if not (including unknown opcodes). */
int roce_check_payload_len(uint8_t opcode, uint32_t payload_len, uint32_t pmtu);

#endif /* BV_ROCE_OPCODE_H */
