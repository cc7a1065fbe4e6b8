/* SPDX-License-Identifier: MIT */
/*
 * CRC-32 and the RoCE v2 invariant CRC (ICRC).
 *
 * CRC-32 here is the IEEE 802.3 / zlib CRC (polynomial 0x04C11DB7, bit-reflected 0xEDB88320,
 * init and final XOR 0xFFFFFFFF), with zlib's calling convention: crc = roce_crc32(0, buf, len),
 * and roce_crc32(roce_crc32(0, a, n), b, m) is the CRC of a||b.  It is the CRC that IBTA vol 1
 * §7.8.1 (ICRC) specifies and that Linux rxe computes with crc32_le.
 *
 * ICRC (IBTA vol 1 §7.8.1, Annex A16 RoCE v1, Annex A17 RoCE v2; rxe_icrc.c) = CRC-32 over
 *   8 bytes of 0xFF                 (stand-in for the masked IB LRH)
 *   the network header, its variant fields set to ones:
 *     RoCE v2 / IPv4: IPv4 header with TOS (DSCP+ECN), TTL and header checksum all ones,
 *                     UDP header with checksum 0xFFFF
 *     RoCE v2 / IPv6: IPv6 header with traffic class, flow label and hop limit all ones,
 *                     UDP header with checksum 0xFFFF
 *     RoCE v1:        GRH with TClass, FlowLabel and HopLmt all ones (the IB rule of §7.8.1;
 *                     the same bytes as IPv6's; docs/roce-wire.md says why the LRH stand-in
 *                     is kept for v1 too)
 *   BTH, with byte 4 (FECN, BECN, resv6a) = 0xFF
 *   every extension header, the payload and the pad bytes
 * and is carried in the last 4 bytes of the UDP payload, least significant byte first
 * (shared/research/cx4.md §0.6, §4.5: verified against a real ConnectX-4 Lx capture).
 * Every other IPv4 field is covered, including the Identification (see roce_pkt.h for what that
 * means for a sender using a kernel UDP socket, and roce_icrc_solve_ipv4_id for receivers).
 */
#ifndef BV_ROCE_ICRC_H
#define BV_ROCE_ICRC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* CRC-32 over buf, continuing crc (0 to start).  Uses PCLMULQDQ folding when the CPU has it. */
uint32_t roce_crc32(uint32_t crc, const void *buf, size_t len);

/* Same result, always the portable slice-by-8 table code (for tests and benchmarks). */
uint32_t roce_crc32_portable(uint32_t crc, const void *buf, size_t len);

/* "pclmul" or "slice-by-8": what roce_crc32 uses on this CPU. */
const char *roce_crc32_impl(void);

/*
 * GF(2) helpers on raw CRC register differences (no init/final XOR).  Running n zero bytes
 * through the CRC multiplies the register by x^(8n) mod P; these compute that product and its
 * inverse in O(log n) (zlib's crc32_combine uses the same algebra).
 */
uint32_t roce_crc32_shift(uint32_t reg, uint64_t nbytes);
uint32_t roce_crc32_unshift(uint32_t reg, uint64_t nbytes);

/* ---- ICRC ---------------------------------------------------------------------------------- */

/*
 * ICRC of one RoCE packet of network type net (enum roce_net in roce_hdr.h).
 *   nethdr: the network header exactly as on the wire, roce_icrc_net_len(net) bytes: IPv4 + UDP
 *           (28), IPv6 + UDP (48) or the GRH (40); the variant fields may hold anything.
 *   iov:    BTH, extension headers, payload, pad (without the ICRC), in any number of pieces.
 */
uint32_t roce_icrc_net(uint8_t net, const uint8_t *nethdr, const struct iovec *iov, int iovcnt);
uint32_t roce_icrc_net_buf(uint8_t net, const uint8_t *nethdr, const uint8_t *tpkt, size_t tlen);
/* Bytes of network header the ICRC covers, -1 for an unknown type. */
int roce_icrc_net_len(uint8_t net);

/*
 * ICRC of one RoCE v2 packet over IPv4.
 *   ipudp: the 20-byte IPv4 header (no options) and 8-byte UDP header exactly as on the wire;
 *          TOS, TTL and both checksums may hold anything (they are masked).
 *   iov:   the UDP payload without the ICRC: BTH, extension headers, payload, pad, in any
 *          number of pieces (the BTH may be split across pieces).
 * Returns the CRC value; store it with roce_icrc_put.
 */
uint32_t roce_icrc_ipv4(const uint8_t *ipudp, const struct iovec *iov, int iovcnt);

/* Contiguous convenience form: tpkt = BTH..pad, tlen bytes. */
uint32_t roce_icrc_ipv4_buf(const uint8_t *ipudp, const uint8_t *tpkt, size_t tlen);

/* The ICRC travels least significant byte first (like the Ethernet FCS). */
static inline void roce_icrc_put(uint8_t *p, uint32_t icrc)
{
	p[0] = (uint8_t)icrc;
	p[1] = (uint8_t)(icrc >> 8);
	p[2] = (uint8_t)(icrc >> 16);
	p[3] = (uint8_t)(icrc >> 24);
}

static inline uint32_t roce_icrc_get(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}

/*
 * A receiver on a UDP socket sees neither the sender's IPv4 Identification nor its flags, yet
 * the ICRC covers them.  Senders that follow this library (kernel UDP socket, unconnected,
 * IP_PMTUDISC_DO) always send ID 0 with DF, so the ICRC is checked with ID 0 first.  Other
 * senders (Linux rxe, real NICs) pick arbitrary IDs; because the CRC is linear, the one ID that
 * explains a mismatch can be solved for:
 *   computed:   ICRC computed with IPv4 ID = assumed_id (DF set, fragment offset 0)
 *   received:   ICRC from the packet
 *   tlen:       bytes covered after the UDP header (BTH..pad)
 * Returns 0 and the sender's ID in *id if one exists (then the packet verifies with that ID),
 * -1 if no ID makes the ICRC match.  The check then has 16 bits of strength instead of 32
 * (a random corruption passes with probability 2^-16); see docs/roce-wire.md.
 */
int roce_icrc_solve_ipv4_id(uint32_t computed, uint32_t received, uint16_t assumed_id, size_t tlen,
			    uint16_t *id);

/* For the test suite: 0 if the byte-reversal table used by the solver is a permutation. */
int roce_crc32_selftest_top_inv(void);

#endif /* BV_ROCE_ICRC_H */
