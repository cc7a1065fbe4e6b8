// SPDX-License-Identifier: MIT
/*
 * CRC-32 (IEEE 802.3, reflected) and the RoCE v2 ICRC; see icrc.h for the definitions.
 *
 * Two implementations with identical results:
 *  - slice-by-8 tables (portable; ~1 byte/cycle-class throughput), used for short buffers and on
 *    CPUs without carry-less multiply;
 *  - PCLMULQDQ folding for buffers >= 64 bytes on x86-64 (method of Gopal, Ozturk et al., "Fast
 *    CRC Computation for Generic Polynomials Using PCLMULQDQ Instruction", Intel 2009; the
 *    folding constants are x^k mod P for the bit-reflected CRC-32 polynomial, from that paper's
 *    appendix).  Selected once at load time with __builtin_cpu_supports.
 * tests/cx4/wire_test.c checks both against each other for every length 0..1100 and all
 * alignments, and against published packets; tests/cx4/icrc_check.py checks captures with
 * Python's zlib, an implementation independent of this one.
 */
#include <pthread.h>
#include <string.h>

#include "icrc.h"
#include "roce_hdr.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define CRC32_POLY_REFLECTED 0xedb88320u
/* Polynomials in the reflected representation: bit 31 is x^0, bit 0 is x^31. */
#define X0 0x80000000u	 /* 1 */
#define X8 0x00800000u	 /* x^8 */
#define XINV 0xdb710641u /* x^-1 mod P: (P - 1) / x, reflected */

static uint32_t crc_tab[8][256];
static uint8_t crc_top_inv[256];   /* crc_tab[0][crc_top_inv[b]] >> 24 == b */
static uint32_t xpow8_tab[64];	   /* x^(8 * 2^k) mod P */
static uint32_t xpow8_inv_tab[64]; /* x^(-8 * 2^k) mod P */
static uint32_t (*crc_bulk)(uint32_t reg, const uint8_t *p, size_t len);
static const char *crc_impl_name = "slice-by-8";
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

/* a(x) * b(x) mod P(x), both reflected (bit-serial; only used for the tables and the solver). */
static uint32_t multmodp(uint32_t a, uint32_t b)
{
	uint32_t m = X0, prod = 0;

	while (a) {
		if (a & m) {
			prod ^= b;
			a &= ~m;
		}
		m >>= 1;
		b = (b & 1) ? (b >> 1) ^ CRC32_POLY_REFLECTED : b >> 1;
	}
	return prod;
}

/* 8 bytes as a little-endian word: slice-by-8 consumes the lowest-addressed byte first. */
static inline uint64_t load_le64(const uint8_t *p)
{
	uint64_t w;

	memcpy(&w, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	return w;
}

/* Slice-by-8 on the raw register: reg is the CRC state (already inverted). */
static uint32_t crc_sb8(uint32_t reg, const uint8_t *p, size_t len)
{
	while (len && ((uintptr_t)p & 7)) {
		reg = (reg >> 8) ^ crc_tab[0][(reg ^ *p++) & 0xff];
		len--;
	}
	while (len >= 8) {
		uint64_t w = load_le64(p) ^ reg;

		reg = crc_tab[7][w & 0xff] ^ crc_tab[6][(w >> 8) & 0xff] ^
		      crc_tab[5][(w >> 16) & 0xff] ^ crc_tab[4][(w >> 24) & 0xff] ^
		      crc_tab[3][(w >> 32) & 0xff] ^ crc_tab[2][(w >> 40) & 0xff] ^
		      crc_tab[1][(w >> 48) & 0xff] ^ crc_tab[0][w >> 56];
		p += 8;
		len -= 8;
	}
	while (len--)
		reg = (reg >> 8) ^ crc_tab[0][(reg ^ *p++) & 0xff];
	return reg;
}

#if defined(__x86_64__)
#define CLMUL_TARGET __attribute__((target("pclmul,sse4.1")))

/* Fold the 128-bit accumulator x forward by the distance encoded in k and add next. */
CLMUL_TARGET static inline __m128i fold128(__m128i x, __m128i k, __m128i next)
{
	__m128i lo = _mm_clmulepi64_si128(x, k, 0x00);
	__m128i hi = _mm_clmulepi64_si128(x, k, 0x11);

	return _mm_xor_si128(_mm_xor_si128(lo, hi), next);
}

/*
 * Raw register in, raw register out; len >= 64.  Consumes len & ~15 bytes via folding and the
 * rest with the tables.
 */
CLMUL_TARGET static uint32_t crc_clmul(uint32_t reg, const uint8_t *p, size_t len)
{
	/* (hi, lo) pairs: fold by 512 bits, fold by 128 bits, 64->32 bits, Barrett (u', P'). */
	const __m128i k512 = _mm_set_epi64x(0x1c6e41596, 0x154442bd4);
	const __m128i k128 = _mm_set_epi64x(0x0ccaa009e, 0x1751997d0);
	const __m128i k64 = _mm_set_epi64x(0, 0x163cd6124);
	const __m128i kbar = _mm_set_epi64x(0x1f7011641, 0x1db710641);
	const __m128i lo32 = _mm_setr_epi32(-1, 0, -1, 0);
	__m128i a0, a1, a2, a3, t;

	a0 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p), _mm_cvtsi32_si128((int)reg));
	a1 = _mm_loadu_si128((const __m128i *)(p + 16));
	a2 = _mm_loadu_si128((const __m128i *)(p + 32));
	a3 = _mm_loadu_si128((const __m128i *)(p + 48));
	p += 64;
	len -= 64;

	/* Four independent lanes keep the multiplier pipeline busy. */
	while (len >= 64) {
		a0 = fold128(a0, k512, _mm_loadu_si128((const __m128i *)p));
		a1 = fold128(a1, k512, _mm_loadu_si128((const __m128i *)(p + 16)));
		a2 = fold128(a2, k512, _mm_loadu_si128((const __m128i *)(p + 32)));
		a3 = fold128(a3, k512, _mm_loadu_si128((const __m128i *)(p + 48)));
		p += 64;
		len -= 64;
	}

	a0 = fold128(a0, k128, a1);
	a0 = fold128(a0, k128, a2);
	a0 = fold128(a0, k128, a3);
	while (len >= 16) {
		a0 = fold128(a0, k128, _mm_loadu_si128((const __m128i *)p));
		p += 16;
		len -= 16;
	}

	/* 128 -> 64 bits: low half times x^(k4), added to the high half. */
	t = _mm_clmulepi64_si128(a0, k128, 0x10);
	a0 = _mm_xor_si128(_mm_srli_si128(a0, 8), t);
	/* 64 -> 32 bits. */
	t = _mm_srli_si128(a0, 4);
	a0 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(a0, lo32), k64, 0x00), t);
	/* Barrett reduction to the 32-bit remainder. */
	t = _mm_clmulepi64_si128(_mm_and_si128(a0, lo32), kbar, 0x10);
	t = _mm_clmulepi64_si128(_mm_and_si128(t, lo32), kbar, 0x00);
	a0 = _mm_xor_si128(a0, t);
	reg = (uint32_t)_mm_extract_epi32(a0, 1);

	return len ? crc_sb8(reg, p, len) : reg;
}
#endif

static void crc_init(void)
{
	uint32_t x;
	int i, k;

	for (i = 0; i < 256; i++) {
		uint32_t c = (uint32_t)i;

		for (k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ CRC32_POLY_REFLECTED : c >> 1;
		crc_tab[0][i] = c;
	}
	for (i = 0; i < 256; i++)
		for (k = 1; k < 8; k++)
			crc_tab[k][i] =
			    (crc_tab[k - 1][i] >> 8) ^ crc_tab[0][crc_tab[k - 1][i] & 0xff];
	/* The top bytes of the 256 table entries are a permutation (the property byte-wise CRC
	 * reversal relies on); the test suite checks it. */
	for (i = 0; i < 256; i++)
		crc_top_inv[crc_tab[0][i] >> 24] = (uint8_t)i;

	xpow8_tab[0] = X8;
	x = XINV;
	for (k = 0; k < 3; k++)
		x = multmodp(x, x); /* x^-8 */
	xpow8_inv_tab[0] = x;
	for (k = 1; k < 64; k++) {
		xpow8_tab[k] = multmodp(xpow8_tab[k - 1], xpow8_tab[k - 1]);
		xpow8_inv_tab[k] = multmodp(xpow8_inv_tab[k - 1], xpow8_inv_tab[k - 1]);
	}

	crc_bulk = crc_sb8;
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1")) {
		crc_bulk = crc_clmul;
		crc_impl_name = "pclmul";
	}
#endif
}

static inline void crc_ready(void)
{
	pthread_once(&crc_once, crc_init);
}

uint32_t roce_crc32(uint32_t crc, const void *buf, size_t len)
{
	crc_ready();
	if (len >= 64)
		return ~crc_bulk(~crc, buf, len);
	return ~crc_sb8(~crc, buf, len);
}

uint32_t roce_crc32_portable(uint32_t crc, const void *buf, size_t len)
{
	crc_ready();
	return ~crc_sb8(~crc, buf, len);
}

const char *roce_crc32_impl(void)
{
	crc_ready();
	return crc_impl_name;
}

static uint32_t mult_xpow(uint32_t reg, uint64_t n, const uint32_t *tab)
{
	int k;

	for (k = 0; n && reg; k++, n >>= 1)
		if (n & 1)
			reg = multmodp(tab[k], reg);
	return reg;
}

uint32_t roce_crc32_shift(uint32_t reg, uint64_t nbytes)
{
	crc_ready();
	return mult_xpow(reg, nbytes, xpow8_tab);
}

uint32_t roce_crc32_unshift(uint32_t reg, uint64_t nbytes)
{
	crc_ready();
	return mult_xpow(reg, nbytes, xpow8_inv_tab);
}

/* ---- ICRC ---------------------------------------------------------------------------------- */

/*
 * The masked pseudo-header: 8 x 0xFF (the LRH RoCE has not), the network header, the BTH.
 * Longest with IPv6 + UDP: 8 + 48 + 12 bytes.
 */
#define PH_NET 8
#define PH_MAX (PH_NET + 48 + 12)

int roce_icrc_net_len(uint8_t net)
{
	switch (net) {
	case ROCE_NET_IPV4:
		return ROCE_IPUDP_LEN;
	case ROCE_NET_IPV6:
		return ROCE_IP6UDP_LEN;
	case ROCE_NET_GRH:
		return ROCE_GRH_LEN;
	default:
		return -1;
	}
}

/*
 * The variant fields of each network header, set to ones: IPv4 TOS, TTL and header
 * checksum (Annex A17); IPv6 traffic class, flow label and hop limit (Annex A17, rxe_icrc.c);
 * the GRH's TClass, FlowLabel and HopLmt (§7.8.1, the same bytes as IPv6's); the UDP checksum.
 */
static void mask_net(uint8_t net, uint8_t *h)
{
	switch (net) {
	case ROCE_NET_IPV4:
		h[1] = 0xff;		/* TOS: DSCP + ECN */
		h[8] = 0xff;		/* TTL */
		h[10] = h[11] = 0xff;	/* header checksum */
		h[ROCE_IPV4_HDR_LEN + 6] = h[ROCE_IPV4_HDR_LEN + 7] = 0xff; /* UDP checksum */
		break;
	case ROCE_NET_IPV6:
	case ROCE_NET_GRH:
		h[0] |= 0x0f;		/* traffic class (high nibble) ... */
		h[1] = h[2] = h[3] = 0xff; /* ... its low nibble and the flow label */
		h[7] = 0xff;		/* hop limit */
		if (net == ROCE_NET_IPV6)
			h[ROCE_IPV6_HDR_LEN + 6] = h[ROCE_IPV6_HDR_LEN + 7] = 0xff;
		break;
	}
}

uint32_t roce_icrc_net(uint8_t net, const uint8_t *nethdr, const struct iovec *iov, int iovcnt)
{
	uint8_t ph[PH_MAX];
	int nl = roce_icrc_net_len(net);
	size_t have = 0, skip = 0, bth;
	uint32_t crc;
	int i;

	if (nl < 0)
		nl = 0; /* caller error: CRC what there is */
	bth = PH_NET + (size_t)nl;
	memset(ph, 0xff, PH_NET); /* masked LRH stand-in */
	memcpy(ph + PH_NET, nethdr, (size_t)nl);
	mask_net(net, ph + PH_NET);

	/* Gather the BTH, which the caller may have split. */
	for (i = 0; i < iovcnt && have < 12; i++) {
		size_t n = iov[i].iov_len < 12 - have ? iov[i].iov_len : 12 - have;

		memcpy(ph + bth + have, iov[i].iov_base, n);
		have += n;
		skip = n;
	}
	if (have < 12) /* caller error: no BTH; CRC what there is */
		memset(ph + bth + have, 0, 12 - have);
	ph[bth + 4] = 0xff; /* FECN, BECN, resv6a */

	crc = roce_crc32(0, ph, bth + have);
	/* i now indexes the piece after the one the BTH ended in; finish that one first. */
	if (i > 0 && skip < iov[i - 1].iov_len)
		crc = roce_crc32(crc, (const uint8_t *)iov[i - 1].iov_base + skip,
				 iov[i - 1].iov_len - skip);
	for (; i < iovcnt; i++)
		crc = roce_crc32(crc, iov[i].iov_base, iov[i].iov_len);
	return crc;
}

uint32_t roce_icrc_ipv4(const uint8_t *ipudp, const struct iovec *iov, int iovcnt)
{
	return roce_icrc_net(ROCE_NET_IPV4, ipudp, iov, iovcnt);
}

uint32_t roce_icrc_net_buf(uint8_t net, const uint8_t *nethdr, const uint8_t *tpkt, size_t tlen)
{
	struct iovec iov = {.iov_base = (void *)tpkt, .iov_len = tlen};

	return roce_icrc_net(net, nethdr, &iov, 1);
}

uint32_t roce_icrc_ipv4_buf(const uint8_t *ipudp, const uint8_t *tpkt, size_t tlen)
{
	struct iovec iov = {.iov_base = (void *)tpkt, .iov_len = tlen};

	return roce_icrc_ipv4(ipudp, &iov, 1);
}

/*
 * With the difference d = computed ^ received (the final XOR cancels), d equals the CRC register
 * difference caused by the two ID bytes, carried through the 22 + tlen bytes that follow them
 * (rest of the IPv4 header, UDP header, transport packet).  Undo that carry, then find bytes
 * (b0, b1) that, fed into a zero register, produce the remaining difference:
 *   after b0: r1 = T[b0];  after b1: r2 = (r1 >> 8) ^ T[(r1 ^ b1) & 0xff].
 * The top byte of r2 selects the second table index (top bytes of T are a permutation); the
 * remaining 24 bits must equal r1 >> 8 = T[b0] >> 8, which selects b0 by its top byte and must
 * then match in all 24 bits: that last comparison is the 16 bits of residual strength.
 */
int roce_icrc_solve_ipv4_id(uint32_t computed, uint32_t received, uint16_t assumed_id, size_t tlen,
			    uint16_t *id)
{
	uint32_t r2, hi24;
	uint8_t i1, b0, b1;

	crc_ready();
	r2 = roce_crc32_unshift(computed ^ received, 22 + (uint64_t)tlen);
	i1 = crc_top_inv[r2 >> 24];
	hi24 = r2 ^ crc_tab[0][i1]; /* == r1 >> 8, top byte now 0 */
	b0 = crc_top_inv[(hi24 >> 16) & 0xff];
	if ((crc_tab[0][b0] >> 8) != hi24)
		return -1;
	b1 = (uint8_t)(i1 ^ (crc_tab[0][b0] & 0xff));
	*id = assumed_id ^ (uint16_t)((b0 << 8) | b1);
	return 0;
}

int roce_crc32_selftest_top_inv(void)
{
	int i;

	crc_ready();
	for (i = 0; i < 256; i++)
		if ((crc_tab[0][crc_top_inv[i]] >> 24) != (uint32_t)i)
			return -1;
	return 0;
}
