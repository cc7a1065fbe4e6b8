/* SPDX-License-Identifier: MIT */
/*
 * The IBTA transport arithmetic every reliable transport here shares (the cx4 model's RoCE
 * requester, responder and completer; the ntb provider's): 24-bit PSNs, the local ACK timeout
 * and the RNR NAK timer encodings. One copy, so that the two transports cannot drift apart.
 *
 * Sources:
 *   [IBTA]  InfiniBand Architecture Specification vol 1 rel 1.4: 9.7.1 (PSNs, modulo 2^24,
 *           half the space ahead), 9.7.5.2.8 table 45 (RNR NAK timer field), 9.7.6.1.3
 *           (transport timer: 4.096 us * 2^Local ACK Timeout, 0 = infinite).
 *   [rxe]   Linux drivers/infiniband/sw/rxe/rxe_hdr.h psn_compare(), rxe_comp.c rnrnak_usec
 *           (its 61410 for code 25 is a typo of the table's 61.44 ms).
 */
#ifndef IB_TRANSPORT_H
#define IB_TRANSPORT_H

#include <stdint.h>

#define IB_PSN_MASK		0x00ffffffu

static inline uint32_t ib_psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & IB_PSN_MASK;
}

/* a - b modulo 2^24: how far a is ahead of b, unsigned. */
static inline uint32_t ib_psn_sub(uint32_t a, uint32_t b)
{
	return (a - b) & IB_PSN_MASK;
}

/* a - b as a signed distance ([IBTA] 9.7.1, [rxe] psn_compare): < 0 if a is before b. */
static inline int32_t ib_psn_cmp(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

/* The transport timer of a Local ACK Timeout t, in ns; 0 for t = 0 (infinite). */
static inline uint64_t ib_ack_timeout_ns(uint8_t t)
{
	return t ? 4096ull << (t > 31 ? 31 : t) : 0;
}

/* An RNR NAK timer code (5 bits) in microseconds ([IBTA] table 45; code 0 is the longest). */
static inline uint32_t ib_rnr_timer_usec(uint8_t code)
{
	static const uint32_t usec[32] = {
		655360, 10,    20,    30,    40,    60,     80,     120,    160,    240,    320,
		480,	640,   960,   1280,  1920,  2560,   3840,   5120,   7680,   10240,  15360,
		20480,	30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
	};

	return usec[code & 0x1f];
}

#endif /* IB_TRANSPORT_H */
