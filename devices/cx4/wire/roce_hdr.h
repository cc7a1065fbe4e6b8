/* SPDX-License-Identifier: MIT */
/*
 * InfiniBand transport headers as they appear on a RoCE v2 wire.
 *
 * Every header is a byte layout, big-endian ("network order"), read and written only through the
 * accessors below so that no code depends on host struct packing or alignment: received packets
 * are arbitrary byte buffers and may start at any address.
 *
 * Sources (layouts cross-checked against each other):
 *   IBTA "InfiniBand Architecture Specification Vol. 1" (rel. 1.3/1.4) ch. 9: §9.2 Base Transport
 *   Header, §9.3 extended transport headers (DETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt,
 *   IETH); Annex A10 (congestion control: FECN/BECN in BTH byte 4, CNP); Annex A17 (RoCE v2: UDP
 *   encapsulation, port 4791, ICRC).
 *   Linux drivers/infiniband/sw/rxe/rxe_hdr.h (struct rxe_bth, rxe_reth, rxe_atmeth, rxe_aeth,
 *   rxe_atmack, rxe_immdt, rxe_ieth, rxe_deth) and include/rdma/ib_pack.h.
 *   Wireshark epan/dissectors/packet-infiniband.c (AtomicETH field order), see
 *   IBTA vol. 1 §9.3, AtomicETH (datenlord/roce-sim has Compare/Swap swapped: do not follow it).
 */
#ifndef BV_ROCE_HDR_H
#define BV_ROCE_HDR_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ib_transport.h"

/* One-line accessors, aligned by hand: keep clang-format away. */
/* clang-format off */

/* ---- big-endian loads/stores on unaligned byte pointers -------------------------------------- */

static inline uint16_t roce_get_be16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static inline uint32_t roce_get_be24(const uint8_t *p)
{
	return ((uint32_t)p[0] << 16) | ((uint32_t)p[1] << 8) | p[2];
}

static inline uint32_t roce_get_be32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return __builtin_bswap32(v);
}

static inline uint64_t roce_get_be64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return __builtin_bswap64(v);
}

static inline void roce_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void roce_put_be24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static inline void roce_put_be32(uint8_t *p, uint32_t v)
{
	v = __builtin_bswap32(v);
	memcpy(p, &v, 4);
}

static inline void roce_put_be64(uint8_t *p, uint64_t v)
{
	v = __builtin_bswap64(v);
	memcpy(p, &v, 8);
}

/* ---- encapsulation constants (Annex A17) ----------------------------------------------------- */

#define ROCE_V2_UDP_PORT	4791	/* IANA "roce", Annex A17 */
#define ROCE_IPV4_HDR_LEN	20	/* we never send IPv4 options; see roce_pkt.h */
#define ROCE_UDP_HDR_LEN	8
#define ROCE_IPUDP_LEN		(ROCE_IPV4_HDR_LEN + ROCE_UDP_HDR_LEN)
#define ROCE_ICRC_LEN		4	/* invariant CRC, last 4 bytes of the UDP payload */
#define ROCE_IPV6_HDR_LEN	40	/* RFC 8200; we never send extension headers */
#define ROCE_IP6UDP_LEN		(ROCE_IPV6_HDR_LEN + ROCE_UDP_HDR_LEN)

/* ---- RoCE v1 (IBTA vol 1 Annex A16): Ethertype 0x8915, then the GRH (§8.3), then the BTH ---- */

#define ROCE_GRH_LEN		40	/* IPVer 4 | TClass 8 | FlowLabel 20, PayLen, NxtHdr, HopLmt,
					 * SGID 16, DGID 16: the layout of an IPv6 header */
#define ROCE_GRH_IPVER		6
#define ROCE_GRH_NXTHDR_BTH	0x1b	/* §8.3.1: an IBA transport header follows */

/*
 * The network layer under the BTH, as a RoCE address's (roce_version, l3_type) selects it
 * ([PRM] roce_addr_layout): what a packet is built, checked and captured as.
 */
enum roce_net {
	ROCE_NET_IPV4 = 0,	/* RoCE v2 over IPv4: IPv4 | UDP 4791 | BTH (Annex A17) */
	ROCE_NET_IPV6 = 1,	/* RoCE v2 over IPv6: IPv6 | UDP 4791 | BTH (Annex A17) */
	ROCE_NET_GRH = 2,	/* RoCE v1: GRH | BTH, Ethertype 0x8915 (Annex A16) */
};

/* ---- Ethernet II framing of the three RoCE network types (no VLAN tag: not modelled) -------- */

#define ROCE_ETH_HDR_LEN	14	/* destination MAC, source MAC, Ethertype */
#define ROCE_ETHERTYPE_IPV4	0x0800
#define ROCE_ETHERTYPE_IPV6	0x86dd
#define ROCE_ETHERTYPE_ROCE	0x8915	/* RoCE v1 (Annex A16) */

/* ---- header sizes (IBTA vol 1 §9.2, §9.3; rxe_hdr.h RXE_*_BYTES) ---------------------------- */

#define ROCE_BTH_LEN		12
#define ROCE_RDETH_LEN		4	/* RD only; ConnectX-4 has no RD, listed for completeness */
#define ROCE_DETH_LEN		8
#define ROCE_RETH_LEN		16
#define ROCE_ATMETH_LEN		28
#define ROCE_AETH_LEN		4
#define ROCE_ATMACK_LEN		8
#define ROCE_IMMDT_LEN		4
#define ROCE_IETH_LEN		4
#define ROCE_CNP_LEN		16	/* CNP: 16 reserved bytes after the BTH (Annex A17) */

/* Largest BTH + extension headers of any opcode we know (CMP_SWAP / FETCH_ADD: 12 + 28). */
#define ROCE_MAX_HDR_LEN	(ROCE_BTH_LEN + ROCE_ATMETH_LEN)

/* ---- BTH: Base Transport Header, 12 bytes (IBTA vol 1 §9.2) ------------------------------------
 *  byte 0      OpCode
 *  byte 1      SE[7] M[6] PadCnt[5:4] TVer[3:0]
 *  bytes 2-3   P_Key
 *  byte 4      FECN[7] BECN[6] resv6a[5:0]   (IB base spec: resv8a; Annex A10 took bits 7:6)
 *  bytes 5-7   DestQP (24 bit)
 *  byte 8      AckReq[7] resv7[6:0]
 *  bytes 9-11  PSN (24 bit)
 */
#define ROCE_BTH_TVER		0	/* the only defined transport header version */
#define ROCE_DEFAULT_PKEY	0xffff
#define ROCE_QPN_MASK		0x00ffffffu

static inline uint8_t roce_bth_opcode(const uint8_t *bth)	{ return bth[0]; }
static inline bool roce_bth_se(const uint8_t *bth)		{ return bth[1] & 0x80; }
static inline bool roce_bth_mig(const uint8_t *bth)		{ return bth[1] & 0x40; }
static inline uint8_t roce_bth_padcnt(const uint8_t *bth)	{ return (bth[1] >> 4) & 3; }
static inline uint8_t roce_bth_tver(const uint8_t *bth)	{ return bth[1] & 0xf; }
static inline uint16_t roce_bth_pkey(const uint8_t *bth)	{ return roce_get_be16(bth + 2); }
static inline bool roce_bth_fecn(const uint8_t *bth)		{ return bth[4] & 0x80; }
static inline bool roce_bth_becn(const uint8_t *bth)		{ return bth[4] & 0x40; }
static inline uint32_t roce_bth_dqpn(const uint8_t *bth)	{ return roce_get_be24(bth + 5); }
static inline bool roce_bth_ackreq(const uint8_t *bth)		{ return bth[8] & 0x80; }
static inline uint32_t roce_bth_psn(const uint8_t *bth)	{ return roce_get_be24(bth + 9); }

/* Writes a whole BTH; reserved bits are sent as 0 (IBTA: "set to 0 by the sender"). */
static inline void roce_bth_put(uint8_t *bth, uint8_t opcode, bool se, bool mig, uint8_t padcnt,
				uint16_t pkey, bool fecn, bool becn, uint32_t dqpn, bool ackreq,
				uint32_t psn)
{
	bth[0] = opcode;
	bth[1] = (uint8_t)((se ? 0x80 : 0) | (mig ? 0x40 : 0) | ((padcnt & 3) << 4) |
			   ROCE_BTH_TVER);
	roce_put_be16(bth + 2, pkey);
	bth[4] = (uint8_t)((fecn ? 0x80 : 0) | (becn ? 0x40 : 0));
	roce_put_be24(bth + 5, dqpn & ROCE_QPN_MASK);
	bth[8] = ackreq ? 0x80 : 0;
	roce_put_be24(bth + 9, psn & IB_PSN_MASK);
}

/* ---- DETH: Datagram ETH, 8 bytes (§9.3.2): Q_Key, resv8, SrcQP(24) --------------------------- */
#define ROCE_GSI_QKEY		0x80010000u	/* well-known Q_Key of QP1 (GSI, IBTA ch. 13) */

static inline uint32_t roce_deth_qkey(const uint8_t *d)	{ return roce_get_be32(d); }
static inline uint32_t roce_deth_sqpn(const uint8_t *d)	{ return roce_get_be24(d + 5); }

static inline void roce_deth_put(uint8_t *d, uint32_t qkey, uint32_t sqpn)
{
	roce_put_be32(d, qkey);
	d[4] = 0;
	roce_put_be24(d + 5, sqpn & ROCE_QPN_MASK);
}

/* ---- RETH: RDMA ETH, 16 bytes (§9.3.3): VA(64), R_Key(32), DMA Length(32) -------------------- */
static inline uint64_t roce_reth_va(const uint8_t *r)		{ return roce_get_be64(r); }
static inline uint32_t roce_reth_rkey(const uint8_t *r)	{ return roce_get_be32(r + 8); }
static inline uint32_t roce_reth_len(const uint8_t *r)		{ return roce_get_be32(r + 12); }

static inline void roce_reth_put(uint8_t *r, uint64_t va, uint32_t rkey, uint32_t len)
{
	roce_put_be64(r, va);
	roce_put_be32(r + 8, rkey);
	roce_put_be32(r + 12, len);
}

/* ---- AtomicETH, 28 bytes (§9.3.4): VA(64), R_Key(32), Swap/Add Data(64), Compare Data(64) ------
 * Order confirmed by rxe_hdr.h (struct rxe_atmeth: va, rkey, swap_add, comp) and Wireshark
 * (infiniband.atomiceth.swapdt before .cmpdt). */
static inline uint64_t roce_atmeth_va(const uint8_t *a)	{ return roce_get_be64(a); }
static inline uint32_t roce_atmeth_rkey(const uint8_t *a)	{ return roce_get_be32(a + 8); }
static inline uint64_t roce_atmeth_swap_add(const uint8_t *a)	{ return roce_get_be64(a + 12); }
static inline uint64_t roce_atmeth_compare(const uint8_t *a)	{ return roce_get_be64(a + 20); }

static inline void roce_atmeth_put(uint8_t *a, uint64_t va, uint32_t rkey, uint64_t swap_add,
				   uint64_t compare)
{
	roce_put_be64(a, va);
	roce_put_be32(a + 8, rkey);
	roce_put_be64(a + 12, swap_add);
	roce_put_be64(a + 20, compare);
}

/* ---- AETH: ACK ETH, 4 bytes (§9.3.5): Syndrome(8), MSN(24) --------------------------------------
 * Syndrome bit 7 reserved; [6:5] type: 00 ACK, 01 RNR NAK, 10 reserved, 11 NAK; [4:0] value:
 * ACK = credit count (0x1f: "invalid", i.e. no end-to-end credits), RNR NAK = RNR timer code,
 * NAK = code below (IBTA ch. 9 AETH syndrome tables; rxe_hdr.h AETH_* constants). */
#define ROCE_AETH_TYPE_MASK	0x60
#define ROCE_AETH_ACK		0x00
#define ROCE_AETH_RNR_NAK	0x20
#define ROCE_AETH_RSVD		0x40
#define ROCE_AETH_NAK		0x60
#define ROCE_AETH_VALUE_MASK	0x1f
#define ROCE_AETH_NO_CREDIT	0x1f	/* ACK credit field "invalid": no credit limit */

#define ROCE_NAK_PSN_SEQ_ERR	0	/* PSN sequence error */
#define ROCE_NAK_INV_REQ	1	/* invalid request */
#define ROCE_NAK_REM_ACC_ERR	2	/* remote access error */
#define ROCE_NAK_REM_OP_ERR	3	/* remote operational error */
#define ROCE_NAK_INV_RD_REQ	4	/* invalid RD request (RD only) */

static inline uint8_t roce_aeth_syndrome(const uint8_t *a)	{ return a[0]; }
static inline uint32_t roce_aeth_msn(const uint8_t *a)		{ return roce_get_be24(a + 1); }

static inline void roce_aeth_put(uint8_t *a, uint8_t syndrome, uint32_t msn)
{
	a[0] = syndrome;
	roce_put_be24(a + 1, msn & 0xffffff);
}

/* ---- AtomicAckETH, 8 bytes (§9.3.6): original remote data (64) ------------------------------- */
static inline uint64_t roce_atmack_orig(const uint8_t *a)	{ return roce_get_be64(a); }
static inline void roce_atmack_put(uint8_t *a, uint64_t orig)	{ roce_put_be64(a, orig); }

/* ---- ImmDt, 4 bytes (§9.3.7): opaque; kept in network order like ibv_send_wr.imm_data ------- */
static inline uint32_t roce_immdt_raw(const uint8_t *i)
{
	uint32_t v;

	memcpy(&v, i, 4);
	return v;
}

static inline void roce_immdt_put_raw(uint8_t *i, uint32_t raw)	{ memcpy(i, &raw, 4); }

/* ---- IETH: Invalidate ETH, 4 bytes (§9.3.8): R_Key to invalidate ----------------------------- */
static inline uint32_t roce_ieth_rkey(const uint8_t *i)	{ return roce_get_be32(i); }
static inline void roce_ieth_put(uint8_t *i, uint32_t rkey)	{ roce_put_be32(i, rkey); }

/* clang-format on */

#endif /* BV_ROCE_HDR_H */
