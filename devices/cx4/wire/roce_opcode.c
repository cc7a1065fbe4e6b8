// SPDX-License-Identifier: MIT
/*
 * The opcode table (see roce_opcode.h).
 *
 * Each entry names the extension headers present; their offsets are derived from that mask and
 * the fixed wire order of IBTA vol 1 §9.3 by the ROCE_OFF_* macros below, so an entry cannot
 * disagree with the header sizes (tests/cx4/wire_test.c recomputes every offset independently).
 *
 * Semantics per opcode follow IBTA vol 1 ch. 9 (the OpCode table and the reliable/unreliable
 * service rules) and were cross-checked with Linux drivers/infiniband/sw/rxe/rxe_opcode.c masks.
 */
#include <stddef.h>

#include "roce_opcode.h"

/* The table is aligned by hand: keep clang-format away until the end of it. */
/* clang-format off */

#define HLEN(m, H)	(((m) & ROCE_HM(H)) ? ROCE_##H##_LEN : 0)

/* Offset of each header = BTH + the headers before it that are present. */
#define OFF_DETH(m)	ROCE_BTH_LEN
#define OFF_RETH(m)	(OFF_DETH(m) + HLEN(m, DETH))
#define OFF_ATMETH(m)	(OFF_RETH(m) + HLEN(m, RETH))
#define OFF_AETH(m)	(OFF_ATMETH(m) + HLEN(m, ATMETH))
#define OFF_ATMACK(m)	(OFF_AETH(m) + HLEN(m, AETH))
#define OFF_IMMDT(m)	(OFF_ATMACK(m) + HLEN(m, ATMACK))
#define OFF_IETH(m)	(OFF_IMMDT(m) + HLEN(m, IMMDT))
#define OFF_CNP(m)	(OFF_IETH(m) + HLEN(m, IETH))
#define OFF_PAYLOAD(m)	(OFF_CNP(m) + HLEN(m, CNP))

#define OFF_IF(m, H)	(((m) & ROCE_HM(H)) ? OFF_##H(m) : 0)

#define ENTRY(opc, nm, m, f)						\
	[opc] = {							\
		.name = nm,						\
		.hdrs = ROCE_HM(BTH) | (m),				\
		.flags = (f),						\
		.transport = (opc) & ROCE_TRANSPORT_MASK,		\
		.hdr_len = OFF_PAYLOAD(m),				\
		.off = {						\
			[ROCE_HDR_BTH] = 0,				\
			[ROCE_HDR_DETH] = OFF_IF(m, DETH),		\
			[ROCE_HDR_RETH] = OFF_IF(m, RETH),		\
			[ROCE_HDR_ATMETH] = OFF_IF(m, ATMETH),		\
			[ROCE_HDR_AETH] = OFF_IF(m, AETH),		\
			[ROCE_HDR_ATMACK] = OFF_IF(m, ATMACK),		\
			[ROCE_HDR_IMMDT] = OFF_IF(m, IMMDT),		\
			[ROCE_HDR_IETH] = OFF_IF(m, IETH),		\
			[ROCE_HDR_CNP] = OFF_IF(m, CNP),		\
			[ROCE_HDR_PAYLOAD] = OFF_PAYLOAD(m),		\
		},							\
	}

#define RC(op)	ROCE_OPCODE(RC, op)
#define UC(op)	ROCE_OPCODE(UC, op)
#define UD(op)	ROCE_OPCODE(UD, op)

#define REQ	ROCE_F_REQ
#define RESP	ROCE_F_RESP
#define FIRST	ROCE_F_FIRST
#define MIDDLE	ROCE_F_MIDDLE
#define LAST	ROCE_F_LAST
#define ONLY	ROCE_F_ONLY
#define PAY	ROCE_F_PAYLOAD
#define SEND	ROCE_F_SEND
#define WRITE	ROCE_F_WRITE
#define READ	ROCE_F_READ
#define ATOMIC	ROCE_F_ATOMIC
#define IMM	ROCE_F_IMM
#define INV	ROCE_F_INV
#define RWQE	ROCE_F_RECV_WQE
#define RCQE	ROCE_F_RECV_CQE
#define ACKED	ROCE_F_ACKED

/*
 * Receive-WQE rules (IBTA ch. 9 responder; rxe RXE_RWR_MASK / RXE_COMP_MASK): a SEND consumes
 * the receive WQE with its first packet and completes it with its last; an RDMA WRITE with
 * immediate consumes and completes one with its last packet; plain WRITEs never touch the RQ.
 */
const struct roce_opcode_info roce_opcode_table[256] = {
	/* ---- RC: requests (every one must be acknowledged) ---- */
	ENTRY(RC(SEND_FIRST), "RC_SEND_FIRST", 0,
	      REQ | ACKED | SEND | FIRST | PAY | RWQE),
	ENTRY(RC(SEND_MIDDLE), "RC_SEND_MIDDLE", 0,
	      REQ | ACKED | SEND | MIDDLE | PAY),
	ENTRY(RC(SEND_LAST), "RC_SEND_LAST", 0,
	      REQ | ACKED | SEND | LAST | PAY | RCQE),
	ENTRY(RC(SEND_LAST_IMM), "RC_SEND_LAST_WITH_IMMEDIATE", ROCE_HM(IMMDT),
	      REQ | ACKED | SEND | LAST | PAY | IMM | RCQE),
	ENTRY(RC(SEND_ONLY), "RC_SEND_ONLY", 0,
	      REQ | ACKED | SEND | ONLY | PAY | RWQE | RCQE),
	ENTRY(RC(SEND_ONLY_IMM), "RC_SEND_ONLY_WITH_IMMEDIATE", ROCE_HM(IMMDT),
	      REQ | ACKED | SEND | ONLY | PAY | IMM | RWQE | RCQE),
	ENTRY(RC(RDMA_WRITE_FIRST), "RC_RDMA_WRITE_FIRST", ROCE_HM(RETH),
	      REQ | ACKED | WRITE | FIRST | PAY),
	ENTRY(RC(RDMA_WRITE_MIDDLE), "RC_RDMA_WRITE_MIDDLE", 0,
	      REQ | ACKED | WRITE | MIDDLE | PAY),
	ENTRY(RC(RDMA_WRITE_LAST), "RC_RDMA_WRITE_LAST", 0,
	      REQ | ACKED | WRITE | LAST | PAY),
	ENTRY(RC(RDMA_WRITE_LAST_IMM), "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", ROCE_HM(IMMDT),
	      REQ | ACKED | WRITE | LAST | PAY | IMM | RWQE | RCQE),
	ENTRY(RC(RDMA_WRITE_ONLY), "RC_RDMA_WRITE_ONLY", ROCE_HM(RETH),
	      REQ | ACKED | WRITE | ONLY | PAY),
	ENTRY(RC(RDMA_WRITE_ONLY_IMM), "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
	      ROCE_HM(RETH) | ROCE_HM(IMMDT),
	      REQ | ACKED | WRITE | ONLY | PAY | IMM | RWQE | RCQE),
	ENTRY(RC(RDMA_READ_REQUEST), "RC_RDMA_READ_REQUEST", ROCE_HM(RETH),
	      REQ | ACKED | READ | ONLY),
	ENTRY(RC(COMPARE_SWAP), "RC_COMPARE_SWAP", ROCE_HM(ATMETH),
	      REQ | ACKED | ATOMIC | ONLY),
	ENTRY(RC(FETCH_ADD), "RC_FETCH_ADD", ROCE_HM(ATMETH),
	      REQ | ACKED | ATOMIC | ONLY),
	ENTRY(RC(SEND_LAST_INV), "RC_SEND_LAST_WITH_INVALIDATE", ROCE_HM(IETH),
	      REQ | ACKED | SEND | LAST | PAY | INV | RCQE),
	ENTRY(RC(SEND_ONLY_INV), "RC_SEND_ONLY_WITH_INVALIDATE", ROCE_HM(IETH),
	      REQ | ACKED | SEND | ONLY | PAY | INV | RWQE | RCQE),

	/* ---- RC: responses.  READ responses FIRST/LAST/ONLY carry an AETH, MIDDLE does not. */
	ENTRY(RC(RDMA_READ_RESPONSE_FIRST), "RC_RDMA_READ_RESPONSE_FIRST", ROCE_HM(AETH),
	      RESP | READ | FIRST | PAY),
	ENTRY(RC(RDMA_READ_RESPONSE_MIDDLE), "RC_RDMA_READ_RESPONSE_MIDDLE", 0,
	      RESP | READ | MIDDLE | PAY),
	ENTRY(RC(RDMA_READ_RESPONSE_LAST), "RC_RDMA_READ_RESPONSE_LAST", ROCE_HM(AETH),
	      RESP | READ | LAST | PAY),
	ENTRY(RC(RDMA_READ_RESPONSE_ONLY), "RC_RDMA_READ_RESPONSE_ONLY", ROCE_HM(AETH),
	      RESP | READ | ONLY | PAY),
	ENTRY(RC(ACKNOWLEDGE), "RC_ACKNOWLEDGE", ROCE_HM(AETH),
	      RESP | ROCE_F_ACK | ONLY),
	ENTRY(RC(ATOMIC_ACKNOWLEDGE), "RC_ATOMIC_ACKNOWLEDGE", ROCE_HM(AETH) | ROCE_HM(ATMACK),
	      RESP | ATOMIC | ONLY),

	/* ---- UC: SEND and RDMA WRITE only, never acknowledged ---- */
	ENTRY(UC(SEND_FIRST), "UC_SEND_FIRST", 0,
	      REQ | SEND | FIRST | PAY | RWQE),
	ENTRY(UC(SEND_MIDDLE), "UC_SEND_MIDDLE", 0,
	      REQ | SEND | MIDDLE | PAY),
	ENTRY(UC(SEND_LAST), "UC_SEND_LAST", 0,
	      REQ | SEND | LAST | PAY | RCQE),
	ENTRY(UC(SEND_LAST_IMM), "UC_SEND_LAST_WITH_IMMEDIATE", ROCE_HM(IMMDT),
	      REQ | SEND | LAST | PAY | IMM | RCQE),
	ENTRY(UC(SEND_ONLY), "UC_SEND_ONLY", 0,
	      REQ | SEND | ONLY | PAY | RWQE | RCQE),
	ENTRY(UC(SEND_ONLY_IMM), "UC_SEND_ONLY_WITH_IMMEDIATE", ROCE_HM(IMMDT),
	      REQ | SEND | ONLY | PAY | IMM | RWQE | RCQE),
	ENTRY(UC(RDMA_WRITE_FIRST), "UC_RDMA_WRITE_FIRST", ROCE_HM(RETH),
	      REQ | WRITE | FIRST | PAY),
	ENTRY(UC(RDMA_WRITE_MIDDLE), "UC_RDMA_WRITE_MIDDLE", 0,
	      REQ | WRITE | MIDDLE | PAY),
	ENTRY(UC(RDMA_WRITE_LAST), "UC_RDMA_WRITE_LAST", 0,
	      REQ | WRITE | LAST | PAY),
	ENTRY(UC(RDMA_WRITE_LAST_IMM), "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE", ROCE_HM(IMMDT),
	      REQ | WRITE | LAST | PAY | IMM | RWQE | RCQE),
	ENTRY(UC(RDMA_WRITE_ONLY), "UC_RDMA_WRITE_ONLY", ROCE_HM(RETH),
	      REQ | WRITE | ONLY | PAY),
	ENTRY(UC(RDMA_WRITE_ONLY_IMM), "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
	      ROCE_HM(RETH) | ROCE_HM(IMMDT),
	      REQ | WRITE | ONLY | PAY | IMM | RWQE | RCQE),

	/* ---- UD: single-packet SENDs with a DETH ---- */
	ENTRY(UD(SEND_ONLY), "UD_SEND_ONLY", ROCE_HM(DETH),
	      REQ | SEND | ONLY | PAY | RWQE | RCQE),
	ENTRY(UD(SEND_ONLY_IMM), "UD_SEND_ONLY_WITH_IMMEDIATE", ROCE_HM(DETH) | ROCE_HM(IMMDT),
	      REQ | SEND | ONLY | PAY | IMM | RWQE | RCQE),

	/* ---- CNP (Annex A17): BTH with BECN set + 16 reserved bytes, no payload ---- */
	ENTRY(ROCE_OPCODE_CNP, "CNP", ROCE_HM(CNP), ROCE_F_CNP | ONLY),
};

/* clang-format on */

const char *roce_opcode_name(uint8_t opcode)
{
	const struct roce_opcode_info *i = roce_opcode_info(opcode);

	return i ? i->name : "UNKNOWN";
}

int roce_check_payload_len(uint8_t opcode, uint32_t payload_len, uint32_t pmtu)
{
	const struct roce_opcode_info *i = roce_opcode_info(opcode);
	uint32_t pos;

	if (!i)
		return -1;
	if (!(i->flags & ROCE_F_PAYLOAD))
		return payload_len ? -1 : 0;
	if (!pmtu)
		return -1;

	pos = i->flags & (ROCE_F_FIRST | ROCE_F_MIDDLE | ROCE_F_LAST);
	switch (pos) {
	case ROCE_F_ONLY:
		return payload_len <= pmtu ? 0 : -1;
	case ROCE_F_FIRST:
	case ROCE_F_MIDDLE:
		return payload_len == pmtu ? 0 : -1;
	case ROCE_F_LAST:
		return (payload_len >= 1 && payload_len <= pmtu) ? 0 : -1;
	default:
		return -1;
	}
}
