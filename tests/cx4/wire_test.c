// SPDX-License-Identifier: MIT
/*
 * RoCE v2 wire layer (devices/cx4/wire): header layouts, the opcode table, CRC-32/ICRC against
 * published packets, build/parse round trips for every opcode, hostile packets, a loopback
 * exchange between two UDP ports checking every byte, and (when the test may create a network
 * namespace) a byte-for-byte comparison of our IPv4/UDP header with the one Linux writes,
 * observed through a TUN device.
 *
 * Usage: wire_test [-p capture.pcap]   (-p: write every packet to a pcap for icrc_check.py)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bv_expect.h"
#include "bv_rand.h"
#include "icrc.h"
#include "pcap.h"
#include "roce_hdr.h"
#include "roce_opcode.h"
#include "roce_pkt.h"
#include "udp_port.h"

static struct roce_pcap *pcap;

/* reproducible pseudo-random test data */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	return bv_rand64(&rng_state);
}

static void rnd_fill(uint8_t *p, size_t n)
{
	while (n--)
		*p++ = (uint8_t)rnd();
}

static size_t unhex(const char *s, uint8_t *out)
{
	size_t n = 0;

	while (*s) {
		unsigned int v;

		if (*s == ' ' || *s == '|' || *s == '\n') {
			s++;
			continue;
		}
		if (sscanf(s, "%2x", &v) != 1)
			abort();
		out[n++] = (uint8_t)v;
		s += 2;
	}
	return n;
}

static uint32_t ip4(const char *s)
{
	return inet_addr(s);
}

/* ---- published packets (scapy test/contrib/roce.uts; docs/roce-wire.md) -----------------------
 */

/* Real ConnectX-4 Lx CNP, from scapy test/contrib/roce.uts ("RoCE CNP captured on ConnectX-4
 * Lx"): Ethernet | IPv4 TOS 0xc2 ID 0x718c DF TTL 64 | UDP 0 -> 4791 csum 0 | BTH 0x81 BECN
 * dqpn 0x118 | 16 reserved | ICRC 82 fd 00 2a. */
static const char cnp_hex[] = "e41d2dab2bc2 7cfe90643b32 0800"
			      "45c2 003c 718c 4000 4011 9161 0a001101 0a001201"
			      "0000 12b7 0028 0000"
			      "8100 ffff 4000 0118 0000 0000"
			      "00000000000000000000000000000000"
			      "82fd002a";

/* scapy roce.uts "RoCE layer": UC SEND_ONLY, MigReq, PadCnt 2, P_Key 0xffff, dqpn 211, PSN
 * 13571856, 18 payload bytes + 2 pad; IPv4 TOS 1, ID 1144, DF, TTL 64, 192.168.0.7 -> itself,
 * UDP 49152 -> 4791; expected IPv4 checksum 0xb4d5 and ICRC bytes 78 f3 53 f3. */
static const uint8_t uc_payload[18] = {'F',  '0',  0x81, 0x8b, 0xe2, 0x89, '5',	 0xd9, 0x0e,
				       0x9a, 0x95, 'P',	 'T',  0x01, 0xbe, 0x88, '^',  'P'};

static void test_vectors(void)
{
	uint8_t f[128], g[128], out[128];
	struct roce_pkt pkt;
	struct roce_addr a;
	struct roce_tx_hdr h;
	size_t n = unhex(cnp_hex, f);
	const uint8_t *ip = f + 14;
	size_t tl = n - 14 - ROCE_IPUDP_LEN;
	ssize_t r;
	uint16_t id;

	EXPECT_EQ(n, 74);
	/* ICRC over the captured header */
	EXPECT_EQ(roce_icrc_ipv4_buf(ip, ip + ROCE_IPUDP_LEN, tl - 4), 0x2a00fd82);
	EXPECT_EQ(roce_icrc_get(f + n - 4), 0x2a00fd82);

	/* parse the IPv4 form */
	EXPECT_EQ(roce_parse_ipv4(ip, n - 14, 0, &pkt), 0);
	EXPECT_EQ(pkt.opcode, 0x81);
	EXPECT(pkt.info->flags & ROCE_F_CNP);
	EXPECT(pkt.becn && !pkt.fecn && !pkt.se && !pkt.mig && !pkt.ackreq);
	EXPECT_EQ(pkt.dqpn, 0x118);
	EXPECT_EQ(pkt.pkey, 0xffff);
	EXPECT_EQ(pkt.psn, 0);
	EXPECT_EQ(pkt.payload_len, 0);
	EXPECT_EQ(pkt.addr.tos, 0xc2);
	EXPECT_EQ(pkt.addr.ttl, 64);
	EXPECT_EQ(pkt.addr.ip_id, 0x718c);
	EXPECT_EQ(pkt.addr.saddr, ip4("10.0.17.1"));
	EXPECT_EQ(pkt.addr.daddr, ip4("10.0.18.1"));
	EXPECT_EQ(pkt.addr.sport, 0);
	EXPECT_EQ(pkt.addr.dport, 4791);

	/* rebuild it from its fields: must equal the capture byte for byte */
	a = pkt.addr;
	memset(&h, 0, sizeof(h));
	h.opcode = ROCE_OPCODE_CNP;
	h.pkey = 0xffff;
	h.becn = true;
	h.dqpn = 0x118;
	r = roce_build_ipv4(out, sizeof(out), &h, NULL, 0, &a);
	EXPECT_EQ(r, n - 14);
	EXPECT(r == (ssize_t)(n - 14) && !memcmp(out, ip, n - 14));

	/* the UDP form as a socket would deliver it: the real sender used IP ID 0x718c, which a
	 * socket does not report.  ID 0 must fail; solving must recover 0x718c. */
	a.ip_id = 0;
	EXPECT_EQ(roce_parse_udp(ip + 28, tl, &a, 0, &pkt), ROCE_EICRC);
	EXPECT_EQ(roce_parse_udp(ip + 28, tl, &a, ROCE_PARSE_SOLVE_ID, &pkt), 0);
	EXPECT(pkt.ip_id_solved);
	EXPECT_EQ(pkt.addr.ip_id, 0x718c);
	/* solver directly: ICRC computed with ID 0 vs. the real one -> 0x718c; vs. a corrupted
	 * one -> no ID explains it */
	memcpy(g, ip, 28);
	roce_put_be16(g + 4, 0);
	EXPECT_EQ(roce_icrc_solve_ipv4_id(roce_icrc_ipv4_buf(g, ip + 28, tl - 4),
					  roce_icrc_get(f + n - 4), 0, tl - 4, &id),
		  0);
	EXPECT_EQ(id, 0x718c);
	EXPECT_EQ(roce_icrc_solve_ipv4_id(roce_icrc_ipv4_buf(g, ip + 28, tl - 4),
					  roce_icrc_get(f + n - 4) ^ 1, 0, tl - 4, &id),
		  -1);
	/* the assumed ID is an XOR base: assuming 0x0100 still finds 0x718c */
	roce_put_be16(g + 4, 0x0100);
	EXPECT_EQ(roce_icrc_solve_ipv4_id(roce_icrc_ipv4_buf(g, ip + 28, tl - 4),
					  roce_icrc_get(f + n - 4), 0x0100, tl - 4, &id),
		  0);
	EXPECT_EQ(id, 0x718c);
	if (pcap)
		EXPECT_EQ(roce_pcap_write_ipv4(pcap, ip, n - 14), 0);

	/* scapy UC SEND_ONLY */
	memset(&h, 0, sizeof(h));
	h.opcode = ROCE_OPCODE(UC, SEND_ONLY);
	h.mig = true;
	h.pkey = 0xffff;
	h.dqpn = 211;
	h.psn = 13571856;
	a = (struct roce_addr){.saddr = ip4("192.168.0.7"),
			       .daddr = ip4("192.168.0.7"),
			       .sport = 49152,
			       .dport = 4791,
			       .tos = 1,
			       .ttl = 64,
			       .ip_id = 1144};
	r = roce_build_ipv4(g, sizeof(g), &h, uc_payload, sizeof(uc_payload), &a);
	EXPECT_EQ(r, 64);
	EXPECT_EQ(roce_get_be16(g + 10), 0xb4d5);
	EXPECT_EQ(g[28 + 1], 0x40 | (2 << 4)); /* MigReq, PadCnt 2, TVer 0 */
	EXPECT(!memcmp(g + r - 4, "\x78\xf3\x53\xf3", 4));
	EXPECT_EQ(roce_parse_ipv4(g, (size_t)r, 0, &pkt), 0);
	EXPECT_EQ(pkt.payload_len, 18);
	EXPECT_EQ(pkt.padcnt, 2);
	EXPECT(!memcmp(pkt.payload, uc_payload, 18));
	if (pcap)
		EXPECT_EQ(roce_pcap_write_ipv4(pcap, g, (size_t)r), 0);
}

/* ---- header layouts ------------------------------------------------------------------------- */

static void test_headers(void)
{
	uint8_t b[64];
	static const uint8_t atm_expect[28] = {
	    0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, /* VA */
	    0xa1, 0xa2, 0xa3, 0xa4,			    /* R_Key */
	    0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, /* Swap/Add */
	    0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, /* Compare */
	};
	static const uint8_t bth_expect[12] = {0x0b, 0xa0, 0x12, 0x34, 0x80, 0xab,
					       0xcd, 0xef, 0x80, 0x65, 0x43, 0x21};

	roce_bth_put(b, 0x0b, true, false, 2, 0x1234, true, false, 0xabcdef, true, 0x654321);
	EXPECT(!memcmp(b, bth_expect, 12));
	EXPECT_EQ(roce_bth_opcode(b), 0x0b);
	EXPECT(roce_bth_se(b) && !roce_bth_mig(b) && roce_bth_fecn(b) && !roce_bth_becn(b));
	EXPECT_EQ(roce_bth_padcnt(b), 2);
	EXPECT_EQ(roce_bth_tver(b), 0);
	EXPECT_EQ(roce_bth_pkey(b), 0x1234);
	EXPECT_EQ(roce_bth_dqpn(b), 0xabcdef);
	EXPECT(roce_bth_ackreq(b));
	EXPECT_EQ(roce_bth_psn(b), 0x654321);
	roce_bth_put(b, 0xff, false, true, 3, 0xffff, false, true, 0xffffffff, false, 0xffffffff);
	EXPECT_EQ(b[1], 0x70);
	EXPECT_EQ(b[4], 0x40);
	EXPECT_EQ(roce_bth_dqpn(b), 0xffffff); /* masked to 24 bits */
	EXPECT_EQ(b[8], 0);

	roce_atmeth_put(b, 0x0102030405060708ull, 0xa1a2a3a4, 0x1112131415161718ull,
			0x2122232425262728ull);
	EXPECT(!memcmp(b, atm_expect, 28));
	EXPECT_EQ(roce_atmeth_swap_add(b), 0x1112131415161718ll);
	EXPECT_EQ(roce_atmeth_compare(b), 0x2122232425262728ll);

	roce_reth_put(b, 0xfedcba9876543210ull, 0x11223344, 0x55667788);
	EXPECT(!memcmp(b, "\xfe\xdc\xba\x98\x76\x54\x32\x10\x11\x22\x33\x44\x55\x66\x77\x88", 16));
	roce_aeth_put(b, ROCE_AETH_NAK | ROCE_NAK_REM_ACC_ERR, 0x123456);
	EXPECT(!memcmp(b, "\x62\x12\x34\x56", 4));
	roce_deth_put(b, ROCE_GSI_QKEY, 1);
	EXPECT(!memcmp(b, "\x80\x01\x00\x00\x00\x00\x00\x01", 8));

	EXPECT(ib_psn_cmp(5, 3) > 0);
	EXPECT(ib_psn_cmp(3, 5) < 0);
	EXPECT(ib_psn_cmp(0, 0xffffff) > 0); /* wraps */
	EXPECT(ib_psn_cmp(0xffffff, 0) < 0);
	EXPECT_EQ(ib_psn_cmp(0x7ff, 0x7ff), 0);
	EXPECT_EQ(ib_psn_add(0xffffff, 2), 1);
	EXPECT_EQ(ib_psn_sub(1, 0xffffff), 2);
	EXPECT_EQ(ib_ack_timeout_ns(0), 0); /* infinite */
	EXPECT_EQ(ib_ack_timeout_ns(1), 8192);
	EXPECT_EQ(ib_ack_timeout_ns(31), 4096ull << 31);
	EXPECT_EQ(ib_ack_timeout_ns(40), 4096ull << 31);
}

/* ---- opcode table --------------------------------------------------------------------------- */

/* Every opcode we accept, with its extension headers typed independently of the library. */
enum { D = 1, R = 2, A = 4, K = 8, Q = 16, I = 32, V = 64, C = 128 };
static const struct {
	uint8_t op;
	unsigned int hdrs; /* D DETH, R RETH, A AtomicETH, K AETH, Q AtomicAckETH, I ImmDt, V IETH,
			    * C CNP */
	bool payload;
} expected_ops[] = {
    {0x00, 0, 1},     {0x01, 0, 1}, {0x02, 0, 1}, {0x03, I, 1}, {0x04, 0, 1},	  {0x05, I, 1},
    {0x06, R, 1},     {0x07, 0, 1}, {0x08, 0, 1}, {0x09, I, 1}, {0x0a, R, 1},	  {0x0b, R | I, 1},
    {0x0c, R, 0},     {0x0d, K, 1}, {0x0e, 0, 1}, {0x0f, K, 1}, {0x10, K, 1},	  {0x11, K, 0},
    {0x12, K | Q, 0}, {0x13, A, 0}, {0x14, A, 0}, {0x16, V, 1}, {0x17, V, 1},	  {0x20, 0, 1},
    {0x21, 0, 1},     {0x22, 0, 1}, {0x23, I, 1}, {0x24, 0, 1}, {0x25, I, 1},	  {0x26, R, 1},
    {0x27, 0, 1},     {0x28, 0, 1}, {0x29, I, 1}, {0x2a, R, 1}, {0x2b, R | I, 1}, {0x64, D, 1},
    {0x65, D | I, 1}, {0x81, C, 0},
};

#define N_OPS (sizeof(expected_ops) / sizeof(expected_ops[0]))

static void test_opcode_table(void)
{
	/* wire order and sizes (IBTA vol 1 §9.3), typed again here */
	static const struct {
		unsigned int bit;
		enum roce_hdr_idx idx;
		unsigned int len;
	} order[] = {
	    {D, ROCE_HDR_DETH, 8}, {R, ROCE_HDR_RETH, 16},  {A, ROCE_HDR_ATMETH, 28},
	    {K, ROCE_HDR_AETH, 4}, {Q, ROCE_HDR_ATMACK, 8}, {I, ROCE_HDR_IMMDT, 4},
	    {V, ROCE_HDR_IETH, 4}, {C, ROCE_HDR_CNP, 16},
	};
	unsigned int seen = 0, op, k, j;

	for (op = 0; op < 256; op++) {
		const struct roce_opcode_info *i = roce_opcode_info((uint8_t)op);
		int e = -1;

		for (k = 0; k < N_OPS; k++)
			if (expected_ops[k].op == op)
				e = (int)k;
		if (e < 0) {
			EXPECT(i == NULL);
			if (i)
				fprintf(stderr, "  unexpected opcode 0x%02x\n", op);
			EXPECT(!strcmp(roce_opcode_name((uint8_t)op), "UNKNOWN"));
			EXPECT_EQ(roce_hdr_len((uint8_t)op), ROCE_EOPCODE);
			continue;
		}
		seen++;
		EXPECT(i != NULL);
		if (!i)
			continue;
		unsigned int off = 12, hdrs = 1u << ROCE_HDR_BTH;

		for (j = 0; j < sizeof(order) / sizeof(order[0]); j++) {
			if (!(expected_ops[e].hdrs & order[j].bit)) {
				EXPECT_EQ(i->off[order[j].idx], 0);
				continue;
			}
			hdrs |= 1u << order[j].idx;
			EXPECT_EQ(i->off[order[j].idx], off);
			off += order[j].len;
		}
		EXPECT_EQ(i->hdrs, hdrs);
		EXPECT_EQ(i->hdr_len, off);
		EXPECT_EQ(i->off[ROCE_HDR_PAYLOAD], off);
		EXPECT_EQ(roce_hdr_len((uint8_t)op), (int)off);
		EXPECT_EQ(!!(i->flags & ROCE_F_PAYLOAD), expected_ops[e].payload);
		EXPECT_EQ(i->transport, op & 0xe0);

		/* names say the transport */
		EXPECT(!strncmp(i->name,
				op < 0x20   ? "RC_"
				: op < 0x40 ? "UC_"
				: op < 0x80 ? "UD_"
					    : "CNP",
				3));
		/* position flags: exactly one of first/middle/last/only */
		unsigned int pos = i->flags & (ROCE_F_FIRST | ROCE_F_MIDDLE | ROCE_F_LAST);

		EXPECT(pos == ROCE_F_FIRST || pos == ROCE_F_MIDDLE || pos == ROCE_F_LAST ||
		       pos == ROCE_F_ONLY);
		/* RC requests are acknowledged, nothing else is */
		EXPECT_EQ(!!(i->flags & ROCE_F_ACKED), op < 0x20 && (i->flags & ROCE_F_REQ));
		EXPECT_EQ(!!(i->flags & ROCE_F_IMM), !!(expected_ops[e].hdrs & I));
		EXPECT_EQ(!!(i->flags & ROCE_F_INV), !!(expected_ops[e].hdrs & V));
		/* requests xor responses, except the CNP which is neither */
		EXPECT_EQ(!!(i->flags & ROCE_F_REQ) + !!(i->flags & ROCE_F_RESP),
			  op == 0x81 ? 0 : 1);
		/* receive WQE use: SEND first/only and WRITE-with-immediate last/only */
		bool rwqe = ((i->flags & ROCE_F_SEND) && (i->flags & ROCE_F_FIRST)) ||
			    ((i->flags & ROCE_F_WRITE) && (i->flags & ROCE_F_IMM));
		bool rcqe = ((i->flags & ROCE_F_SEND) && (i->flags & ROCE_F_LAST)) ||
			    ((i->flags & ROCE_F_WRITE) && (i->flags & ROCE_F_IMM));

		EXPECT_EQ(!!(i->flags & ROCE_F_RECV_WQE), rwqe);
		EXPECT_EQ(!!(i->flags & ROCE_F_RECV_CQE), rcqe);
		/* names are unique */
		for (j = 0; j < op; j++)
			if (roce_opcode_info((uint8_t)j))
				EXPECT(strcmp(roce_opcode_info((uint8_t)j)->name, i->name));
	}
	EXPECT_EQ(seen, N_OPS);
	EXPECT(!strcmp(roce_opcode_name(0x0b), "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE"));
	EXPECT(!strcmp(roce_opcode_name(0x81), "CNP"));

	/* payload length rules vs PMTU */
	EXPECT_EQ(roce_check_payload_len(0x04, 0, 1024), 0); /* SEND ONLY may be empty */
	EXPECT_EQ(roce_check_payload_len(0x04, 1024, 1024), 0);
	EXPECT_EQ(roce_check_payload_len(0x04, 1025, 1024), -1);
	EXPECT_EQ(roce_check_payload_len(0x00, 1024, 1024), 0); /* FIRST = PMTU exactly */
	EXPECT_EQ(roce_check_payload_len(0x00, 1020, 1024), -1);
	EXPECT_EQ(roce_check_payload_len(0x0e, 4096, 4096), 0); /* READ RESP MIDDLE */
	EXPECT_EQ(roce_check_payload_len(0x0e, 4095, 4096), -1);
	EXPECT_EQ(roce_check_payload_len(0x08, 0, 256), -1); /* LAST needs >= 1 byte */
	EXPECT_EQ(roce_check_payload_len(0x08, 1, 256), 0);
	EXPECT_EQ(roce_check_payload_len(0x08, 257, 256), -1);
	EXPECT_EQ(roce_check_payload_len(0x11, 0, 256), 0); /* ACK: no payload */
	EXPECT_EQ(roce_check_payload_len(0x11, 4, 256), -1);
	EXPECT_EQ(roce_check_payload_len(0x15, 0, 256), -1); /* reserved opcode */
	EXPECT_EQ(roce_mtu_bytes(1), 256);
	EXPECT_EQ(roce_mtu_bytes(5), 4096);
	EXPECT_EQ(roce_mtu_bytes(6), 0);
	EXPECT_EQ(ib_rnr_timer_usec(0), 655360);
	EXPECT_EQ(ib_rnr_timer_usec(1), 10);
	EXPECT_EQ(ib_rnr_timer_usec(25), 61440);
	EXPECT_EQ(ib_rnr_timer_usec(31), 491520);
}

/* ---- CRC-32 --------------------------------------------------------------------------------- */

static void test_crc(void)
{
	static uint8_t buf[70000];
	uint32_t reg;
	size_t len, off, cut;
	int bad = 0;

	EXPECT_EQ(roce_crc32(0, "123456789", 9), 0xcbf43926); /* the CRC-32 check value */
	EXPECT_EQ(roce_crc32_portable(0, "123456789", 9), 0xcbf43926);
	EXPECT_EQ(roce_crc32(0, "", 0), 0);
	EXPECT_EQ(roce_crc32_selftest_top_inv(), 0);
	printf("crc32 implementation: %s\n", roce_crc32_impl());

	rnd_fill(buf, sizeof(buf));
	for (off = 0; off < 16; off++)
		for (len = 0; len <= 1100; len++)
			if (roce_crc32(0, buf + off, len) != roce_crc32_portable(0, buf + off, len))
				bad++;
	EXPECT_EQ(bad, 0);
	/* packet sizes, with a register carried in */
	for (len = 1100; len <= 4200; len++)
		if (roce_crc32(len, buf + (len & 15), len) !=
		    roce_crc32_portable(len, buf + (len & 15), len))
			bad++;
	EXPECT_EQ(bad, 0);
	EXPECT_EQ(roce_crc32(0, buf + 3, 65536), roce_crc32_portable(0, buf + 3, 65536));
	/* chaining at any split point gives the CRC of the whole */
	for (cut = 0; cut <= 300; cut += 7)
		EXPECT_EQ(roce_crc32(roce_crc32(0, buf, cut), buf + cut, 300 - cut),
			  roce_crc32(0, buf, 300));

	/* shift = feeding zero bytes to the raw register; unshift undoes it */
	memset(buf, 0, 5000);
	for (len = 0; len < 5000; len += 333) {
		reg = (uint32_t)rnd();
		EXPECT_EQ(roce_crc32_shift(reg, len), ~roce_crc32(~reg, buf, len));
		EXPECT_EQ(roce_crc32_unshift(roce_crc32_shift(reg, len), len), reg);
	}
}

/* ---- build / parse round trips --------------------------------------------------------------- */

static void random_hdr(struct roce_tx_hdr *h, uint8_t op)
{
	memset(h, 0, sizeof(*h));
	h->opcode = op;
	h->se = rnd() & 1;
	h->mig = rnd() & 1;
	h->fecn = rnd() & 1;
	h->becn = rnd() & 1;
	h->ackreq = rnd() & 1;
	h->pkey = (uint16_t)rnd();
	h->dqpn = (uint32_t)rnd() & 0xffffff;
	h->psn = (uint32_t)rnd() & 0xffffff;
	h->reth.va = rnd();
	h->reth.rkey = (uint32_t)rnd();
	h->reth.len = (uint32_t)rnd();
	h->atomic.va = rnd();
	h->atomic.rkey = (uint32_t)rnd();
	h->atomic.swap_add = rnd();
	h->atomic.compare = rnd();
	/* a well-formed syndrome: ACK, RNR NAK or NAK (type 10 and bit 7 are reserved) */
	h->aeth.syndrome = (uint8_t)((rnd() % 3) * 0x20 + (rnd() & 0x1f));
	if (h->aeth.syndrome >= 0x40)
		h->aeth.syndrome += 0x20;
	h->aeth.msn = (uint32_t)rnd() & 0xffffff;
	h->atomic_ack_orig = rnd();
	h->imm_raw = (uint32_t)rnd();
	h->ieth_rkey = (uint32_t)rnd();
	h->deth.qkey = (uint32_t)rnd();
	h->deth.sqpn = (uint32_t)rnd() & 0xffffff;
}

/* Every field of h and every payload byte must come back from pkt. */
static void check_parsed(const struct roce_pkt *p, const struct roce_tx_hdr *h,
			 const uint8_t *payload, size_t plen)
{
	const struct roce_opcode_info *i = roce_opcode_info(h->opcode);
	const uint8_t *x;

	EXPECT_EQ(p->opcode, h->opcode);
	EXPECT(p->info == i);
	EXPECT_EQ(p->se, h->se);
	EXPECT_EQ(p->mig, h->mig);
	EXPECT_EQ(p->fecn, h->fecn);
	EXPECT_EQ(p->becn, h->becn);
	EXPECT_EQ(p->ackreq, h->ackreq);
	EXPECT_EQ(p->pkey, h->pkey);
	EXPECT_EQ(p->dqpn, h->dqpn);
	EXPECT_EQ(p->psn, h->psn);
	EXPECT_EQ(p->padcnt, (4 - plen % 4) % 4);
	EXPECT_EQ(p->payload_len, plen);
	EXPECT_EQ(p->tlen, i->hdr_len + plen + p->padcnt + 4);
	EXPECT(plen == 0 || !memcmp(p->payload, payload, plen));
	for (size_t k = 0; k < p->padcnt; k++)
		EXPECT_EQ(p->payload[plen + k], 0);
	if ((x = roce_pkt_hdr(p, ROCE_HDR_RETH))) {
		EXPECT_EQ(roce_reth_va(x), h->reth.va);
		EXPECT_EQ(roce_reth_rkey(x), h->reth.rkey);
		EXPECT_EQ(roce_reth_len(x), h->reth.len);
	}
	if ((x = roce_pkt_hdr(p, ROCE_HDR_ATMETH))) {
		EXPECT_EQ(roce_atmeth_va(x), h->atomic.va);
		EXPECT_EQ(roce_atmeth_rkey(x), h->atomic.rkey);
		EXPECT_EQ(roce_atmeth_swap_add(x), h->atomic.swap_add);
		EXPECT_EQ(roce_atmeth_compare(x), h->atomic.compare);
	}
	if ((x = roce_pkt_hdr(p, ROCE_HDR_AETH))) {
		EXPECT_EQ(roce_aeth_syndrome(x), h->aeth.syndrome);
		EXPECT_EQ(roce_aeth_msn(x), h->aeth.msn);
	}
	if ((x = roce_pkt_hdr(p, ROCE_HDR_ATMACK)))
		EXPECT_EQ(roce_atmack_orig(x), h->atomic_ack_orig);
	if ((x = roce_pkt_hdr(p, ROCE_HDR_IMMDT)))
		EXPECT_EQ(roce_immdt_raw(x), h->imm_raw);
	if ((x = roce_pkt_hdr(p, ROCE_HDR_IETH)))
		EXPECT_EQ(roce_ieth_rkey(x), h->ieth_rkey);
	if ((x = roce_pkt_hdr(p, ROCE_HDR_DETH))) {
		EXPECT_EQ(roce_deth_qkey(x), h->deth.qkey);
		EXPECT_EQ(roce_deth_sqpn(x), h->deth.sqpn);
	}
	if ((x = roce_pkt_hdr(p, ROCE_HDR_CNP)))
		for (int k = 0; k < 16; k++)
			EXPECT_EQ(x[k], 0);
}

static const size_t plens[] = {0, 1, 2, 3, 4, 5, 7, 255, 256, 1023, 4096};

static void test_roundtrip(void)
{
	static uint8_t payload[4096], buf[8192], zc[8192], frame[8192];
	struct roce_addr a = {.saddr = ip4("127.77.0.1"),
			      .daddr = ip4("127.77.0.2"),
			      .sport = 4791,
			      .dport = 4791,
			      .tos = 0x02,
			      .ttl = 64};
	struct roce_tx_hdr h;
	struct roce_pkt p;
	size_t k, li;

	rnd_fill(payload, sizeof(payload));
	for (k = 0; k < N_OPS; k++) {
		uint8_t op = expected_ops[k].op;

		for (li = 0; li < sizeof(plens) / sizeof(plens[0]); li++) {
			size_t plen = plens[li];
			ssize_t n, m, q;
			int hl, tl;

			random_hdr(&h, op);
			if (!expected_ops[k].payload && plen) {
				EXPECT_EQ(roce_build_udp(buf, sizeof(buf), &h, payload, plen, &a),
					  ROCE_EINVAL);
				continue;
			}
			n = roce_build_udp(buf, sizeof(buf), &h, payload, plen, &a);
			EXPECT_EQ(n, roce_udp_len(op, plen));
			if (n <= 0)
				continue;
			EXPECT_EQ(n % 4, 0);
			EXPECT_EQ(roce_parse_udp(buf, (size_t)n, &a, 0, &p), 0);
			check_parsed(&p, &h, payload, plen);
			EXPECT(!p.ip_id_solved);

			/* zero-copy path (headers, payload in 3 pieces, tail) gives the same bytes
			 */
			hl = roce_write_hdrs(zc, sizeof(zc), &h, plen);
			EXPECT_EQ(hl, roce_opcode_info(op)->hdr_len);
			struct iovec iov[4] = {
			    {zc, (size_t)hl},
			    {payload, plen / 3},
			    {payload + plen / 3, plen / 3},
			    {payload + 2 * (plen / 3), plen - 2 * (plen / 3)},
			};
			uint8_t tail[8];

			tl = roce_write_tail(tail, &a, iov, 4);
			EXPECT_EQ(hl + (ssize_t)plen + tl, n);
			EXPECT(!memcmp(zc, buf, (size_t)hl));
			EXPECT(tl > 0 && !memcmp(tail, buf + hl + plen, (size_t)tl));
			/* ICRC over a BTH split across pieces */
			struct iovec split[3] = {
			    {zc, 5}, {zc + 5, (size_t)hl - 5}, {buf + hl, plen + (size_t)tl - 4}};

			roce_ipv4_udp_hdr(frame, &a, (size_t)n);
			EXPECT_EQ(roce_icrc_ipv4(frame, split, 3), roce_icrc_get(buf + n - 4));

			/* IPv4 form */
			m = roce_build_ipv4(frame, sizeof(frame), &h, payload, plen, &a);
			EXPECT_EQ(m, n + 28);
			EXPECT(m == n + 28 && !memcmp(frame + 28, buf, (size_t)n));
			EXPECT_EQ(roce_parse_ipv4(frame, (size_t)m, 0, &p), 0);
			check_parsed(&p, &h, payload, plen);
			EXPECT_EQ(p.addr.tos, a.tos);
			EXPECT_EQ(p.addr.ttl, a.ttl);
			if (pcap && (plen == 5 || !expected_ops[k].payload))
				EXPECT_EQ(roce_pcap_write_ipv4(pcap, frame, (size_t)m), 0);

			/* payload already in place in the output buffer: not copied twice */
			memcpy(zc + hl, payload, plen);
			q = roce_build_udp(zc, sizeof(zc), &h, zc + hl, plen, &a);
			EXPECT(q == n && !memcmp(zc, buf, (size_t)n));

			/* too small output buffers */
			EXPECT_EQ(roce_build_udp(zc, (size_t)n - 1, &h, payload, plen, &a),
				  ROCE_ENOSPC);
			EXPECT_EQ(roce_build_ipv4(zc, (size_t)m - 1, &h, payload, plen, &a),
				  ROCE_ENOSPC);
		}
	}

	/* builder argument checks */
	random_hdr(&h, 0x04);
	h.dqpn = 0x1000000;
	EXPECT_EQ(roce_build_udp(buf, sizeof(buf), &h, payload, 4, &a), ROCE_EINVAL);
	random_hdr(&h, 0x04);
	h.psn = 0x1000000;
	EXPECT_EQ(roce_build_udp(buf, sizeof(buf), &h, payload, 4, &a), ROCE_EINVAL);
	random_hdr(&h, ROCE_OPCODE(UD, SEND_ONLY));
	h.deth.sqpn = 0x1000000;
	EXPECT_EQ(roce_build_udp(buf, sizeof(buf), &h, payload, 4, &a), ROCE_EINVAL);
	random_hdr(&h, ROCE_OPCODE(RC, ACKNOWLEDGE));
	h.aeth.msn = 0x1000000;
	EXPECT_EQ(roce_build_udp(buf, sizeof(buf), &h, NULL, 0, &a), ROCE_EINVAL);
	random_hdr(&h, 0x15);
	EXPECT_EQ(roce_build_udp(buf, sizeof(buf), &h, payload, 4, &a), ROCE_EOPCODE);
	random_hdr(&h, 0x04);
	/* the largest datagram is 65507 bytes; a RoCE packet is a multiple of 4: 65504 */
	EXPECT_EQ(roce_udp_len(0x04, 65488), 65504);
	EXPECT_EQ(roce_udp_len(0x04, 65489), ROCE_EINVAL);
	EXPECT_EQ(roce_build_udp(buf, sizeof(buf), &h, payload, 65489, &a), ROCE_EINVAL);
	EXPECT(strcmp(roce_strerror(ROCE_EICRC), "ICRC mismatch") == 0);
	EXPECT(strcmp(roce_strerror(-999), "unknown error") == 0);
}

/* ---- ICRC masking rules -----------------------------------------------------------------------
 */

static void test_masking(void)
{
	static uint8_t payload[100];
	uint8_t f[256], g[256];
	struct roce_addr a = {.saddr = ip4("10.1.2.3"),
			      .daddr = ip4("10.4.5.6"),
			      .sport = 51234,
			      .dport = 4791,
			      .tos = 0,
			      .ttl = 64};
	struct roce_tx_hdr h;
	uint32_t base, c;
	ssize_t n;
	size_t byte;
	int bit;

	rnd_fill(payload, sizeof(payload));
	random_hdr(&h, ROCE_OPCODE(RC, RDMA_WRITE_ONLY_IMM));
	n = roce_build_ipv4(f, sizeof(f), &h, payload, 37, &a);
	EXPECT(n > 0);
	base = roce_icrc_ipv4_buf(f, f + 28, (size_t)n - 32);
	EXPECT_EQ(base, roce_icrc_get(f + n - 4));

	/* Masked: IPv4 TOS (1), TTL (8), checksum (10-11), UDP checksum (26-27), BTH byte 4 (32).
	 * Every other bit of the covered bytes changes the ICRC. */
	for (byte = 0; byte < (size_t)n - 4; byte++) {
		bool masked = byte == 1 || byte == 8 || byte == 10 || byte == 11 || byte == 26 ||
			      byte == 27 || byte == 28 + 4;

		for (bit = 0; bit < 8; bit++) {
			memcpy(g, f, (size_t)n);
			g[byte] ^= (uint8_t)(1 << bit);
			c = roce_icrc_ipv4_buf(g, g + 28, (size_t)n - 32);
			if (masked != (c == base))
				fprintf(stderr, "  masking wrong at byte %zu bit %d\n", byte, bit);
			EXPECT_EQ(masked, c == base);
		}
	}

	/* FECN/BECN set in flight (switch marking) do not invalidate the packet; the IPv4 form
	 * re-checks the IP checksum, so update it the way a router would. */
	memcpy(g, f, (size_t)n);
	g[28 + 4] |= 0xc0;
	g[1] = 0x03; /* ECN CE */
	g[8] = 7;    /* TTL decremented */
	g[10] = g[11] = 0;
	{
		uint32_t sum = 0;

		for (int k = 0; k < 20; k += 2)
			sum += (uint32_t)(g[k] << 8 | g[k + 1]);
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		roce_put_be16(g + 10, (uint16_t)~sum);
	}
	struct roce_pkt p;

	EXPECT_EQ(roce_parse_ipv4(g, (size_t)n, 0, &p), 0);
	EXPECT(p.fecn && p.becn);
	EXPECT_EQ(p.addr.tos, 3);
	EXPECT_EQ(p.addr.ttl, 7);
}

/* ---- hostile packets ----------------------------------------------------------------------- */

/* Recompute the ICRC of a (tampered) UDP-form packet so that a later check is what fails. */
static void reseal(uint8_t *buf, size_t len, const struct roce_addr *a)
{
	uint8_t ipudp[ROCE_IPUDP_LEN];

	roce_ipv4_udp_hdr(ipudp, a, len);
	roce_icrc_put(buf + len - ROCE_ICRC_LEN,
		      roce_icrc_ipv4_buf(ipudp, buf, len - ROCE_ICRC_LEN));
}

/* Parse from an exact-size heap copy so that AddressSanitizer sees any overread. */
static int parse_udp_copy(const uint8_t *buf, size_t len, const struct roce_addr *a,
			  unsigned int flags, struct roce_pkt *p)
{
	uint8_t *c = malloc(len ? len : 1);
	int r;

	memcpy(c, buf, len);
	r = roce_parse_udp(c, len, a, flags, p);
	if (!r) {
		/* what the parser returns must lie inside the buffer */
		EXPECT(p->payload >= c && p->payload + p->payload_len + p->padcnt + 4 == c + len);
		EXPECT(p->info->hdr_len + p->payload_len + p->padcnt + 4u == len);
	}
	free(c);
	return r;
}

static int parse_ipv4_copy(const uint8_t *buf, size_t len, unsigned int flags, struct roce_pkt *p)
{
	uint8_t *c = malloc(len ? len : 1);
	int r;

	memcpy(c, buf, len);
	r = roce_parse_ipv4(c, len, flags, p);
	if (!r)
		EXPECT(p->payload >= c && p->payload + p->payload_len <= c + len);
	free(c);
	return r;
}

static void ip_csum_fix(uint8_t *ip)
{
	uint32_t sum = 0;

	ip[10] = ip[11] = 0;
	for (int k = 0; k < 20; k += 2)
		sum += (uint32_t)(ip[k] << 8 | ip[k + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	roce_put_be16(ip + 10, (uint16_t)~sum);
}

static void test_hostile(void)
{
	static uint8_t payload[300], b[1024], f[1024], g[1024];
	struct roce_addr a = {.saddr = ip4("127.77.0.1"),
			      .daddr = ip4("127.77.0.2"),
			      .sport = 4791,
			      .dport = 4791,
			      .ttl = 64};
	struct roce_tx_hdr h;
	struct roce_pkt p;
	ssize_t n, m;
	size_t len, byte;
	int bit, r, bad;

	rnd_fill(payload, sizeof(payload));
	random_hdr(&h, ROCE_OPCODE(RC, SEND_ONLY_IMM));
	n = roce_build_udp(b, sizeof(b), &h, payload, 201, &a); /* pad 3 */
	EXPECT(n > 0);
	m = roce_build_ipv4(f, sizeof(f), &h, payload, 201, &a);
	EXPECT_EQ(m, n + 28);

	/* every truncation is refused, in both forms */
	for (len = 0; len < (size_t)n; len++)
		EXPECT(parse_udp_copy(b, len, &a, 0, &p) < 0);
	/* without the ICRC a cut at a 4-byte boundary can look valid; it must stay in bounds */
	for (len = 0; len < (size_t)n; len++)
		parse_udp_copy(b, len, &a, ROCE_PARSE_NO_ICRC, &p);
	for (len = 0; len < (size_t)m; len++)
		EXPECT(parse_ipv4_copy(f, len, 0, &p) < 0);
	EXPECT_EQ(parse_udp_copy(b, 15, &a, 0, &p), ROCE_ETRUNC);
	EXPECT_EQ(parse_ipv4_copy(f, 19, 0, &p), ROCE_ETRUNC);

	/* trailing bytes after the IPv4 total length (Ethernet padding) are ignored */
	memcpy(g, f, (size_t)m);
	memset(g + m, 0xee, 18);
	EXPECT_EQ(parse_ipv4_copy(g, (size_t)m + 18, 0, &p), 0);

	/* any single-bit error outside the masked fields is an ICRC error */
	bad = 0;
	for (byte = 0; byte < (size_t)n; byte++) {
		for (bit = 0; bit < 8; bit++) {
			memcpy(g, b, (size_t)n);
			g[byte] ^= (uint8_t)(1 << bit);
			r = parse_udp_copy(g, (size_t)n, &a, 0, &p);
			if (byte == 4 ? r != 0 : r != ROCE_EICRC)
				bad++;
		}
	}
	EXPECT_EQ(bad, 0);
	/* ID solving keeps catching single-bit errors: no flip of a 4 KiB packet is explained
	 * by some IPv4 ID */
	{
		static uint8_t big[4200], bigpay[4096];
		struct roce_tx_hdr hb;
		ssize_t nb;

		rnd_fill(bigpay, sizeof(bigpay));
		random_hdr(&hb, ROCE_OPCODE(RC, RDMA_WRITE_MIDDLE));
		nb = roce_build_udp(big, sizeof(big), &hb, bigpay, sizeof(bigpay), &a);
		EXPECT_EQ(nb, 4112);
		bad = 0;
		for (byte = 0; nb > 0 && byte < (size_t)nb; byte++) {
			for (bit = 0; bit < 8 && byte != 4; bit++) {
				big[byte] ^= (uint8_t)(1 << bit);
				if (roce_parse_udp(big, (size_t)nb, &a, ROCE_PARSE_SOLVE_ID, &p) !=
				    ROCE_EICRC)
					bad++;
				big[byte] ^= (uint8_t)(1 << bit);
			}
		}
		EXPECT_EQ(bad, 0);
	}
	/* a different source/destination than the one the sender used: ICRC error */
	{
		struct roce_addr w = a;

		w.saddr = ip4("127.77.0.3");
		EXPECT_EQ(parse_udp_copy(b, (size_t)n, &w, 0, &p), ROCE_EICRC);
		w = a;
		w.sport = 4792;
		EXPECT_EQ(parse_udp_copy(b, (size_t)n, &w, 0, &p), ROCE_EICRC);
	}

	/* wrong transport version (ICRC resealed, so the version check is what fails) */
	memcpy(g, b, (size_t)n);
	g[1] |= 0x01;
	reseal(g, (size_t)n, &a);
	EXPECT_EQ(parse_udp_copy(g, (size_t)n, &a, 0, &p), ROCE_ETVER);

	/* unknown / unsupported opcodes: reserved, RD, XRC, IBTA 1.5 FLUSH, vendor */
	{
		static const uint8_t bad_ops[] = {0x15, 0x18, 0x1c, 0x1d, 0x2c, 0x40, 0x4c,
						  0x60, 0x63, 0x66, 0x80, 0x82, 0xa4, 0xff};

		for (size_t k = 0; k < sizeof(bad_ops); k++) {
			memcpy(g, b, (size_t)n);
			g[0] = bad_ops[k];
			reseal(g, (size_t)n, &a);
			EXPECT_EQ(parse_udp_copy(g, (size_t)n, &a, 0, &p), ROCE_EOPCODE);
		}
	}

	/* PadCnt larger than payload + pad: an empty SEND ONLY claiming 3 pad bytes */
	random_hdr(&h, ROCE_OPCODE(RC, SEND_ONLY));
	n = roce_build_udp(g, sizeof(g), &h, payload, 0, &a); /* 12 + 4 */
	EXPECT_EQ(n, 16);
	g[1] = (uint8_t)((g[1] & ~0x30) | 0x30);
	reseal(g, (size_t)n, &a);
	EXPECT_EQ(parse_udp_copy(g, (size_t)n, &a, 0, &p), ROCE_EPAD);
	/* a 2-byte payload with 2 pad bytes may also be read as 1 byte + 3 pad: that is valid */
	n = roce_build_udp(g, sizeof(g), &h, payload, 2, &a);
	g[1] = (uint8_t)((g[1] & ~0x30) | 0x30);
	reseal(g, (size_t)n, &a);
	EXPECT_EQ(parse_udp_copy(g, (size_t)n, &a, 0, &p), 0);
	EXPECT_EQ(p.payload_len, 1);

	/* pad on an opcode without payload */
	random_hdr(&h, ROCE_OPCODE(RC, ACKNOWLEDGE));
	n = roce_build_udp(g, sizeof(g), &h, NULL, 0, &a);
	EXPECT_EQ(n, 20);
	g[1] |= 0x10;
	reseal(g, (size_t)n, &a);
	EXPECT_EQ(parse_udp_copy(g, (size_t)n, &a, 0, &p), ROCE_EPAD);

	/* bytes after the headers of an opcode without payload */
	n = roce_build_udp(g, sizeof(g), &h, NULL, 0, &a);
	memmove(g + 20, g + 16, 4);
	memset(g + 16, 0, 4);
	reseal(g, 24, &a);
	EXPECT_EQ(parse_udp_copy(g, 24, &a, 0, &p), ROCE_ELEN);

	/* an ACK cut inside its AETH (but long enough for BTH + ICRC) */
	n = roce_build_udp(g, sizeof(g), &h, NULL, 0, &a);
	memmove(g + 12, g + 16, 4);
	reseal(g, 16, &a);
	EXPECT_EQ(parse_udp_copy(g, 16, &a, 0, &p), ROCE_ETRUNC);

	/* a transport length that is not a multiple of 4 */
	random_hdr(&h, ROCE_OPCODE(UD, SEND_ONLY));
	n = roce_build_udp(g, sizeof(g), &h, payload, 8, &a);
	g[n] = 0;
	reseal(g, (size_t)n + 1, &a);
	EXPECT_EQ(parse_udp_copy(g, (size_t)n + 1, &a, 0, &p), ROCE_ELEN);

	/* an absurd length */
	EXPECT_EQ(roce_parse_udp(g, 70000, &a, 0, &p), ROCE_ELEN);

	/* IPv4 framing errors (header checksum fixed up so that the intended check fails) */
	m = roce_build_ipv4(f, sizeof(f), &h, payload, 8, &a);
	EXPECT(m > 0);
	memcpy(g, f, (size_t)m);
	g[0] = 0x65;
	EXPECT_EQ(parse_ipv4_copy(g, (size_t)m, 0, &p), ROCE_EIPVER);
	memcpy(g, f, (size_t)m);
	g[0] = 0x46;
	ip_csum_fix(g);
	EXPECT_EQ(parse_ipv4_copy(g, (size_t)m, 0, &p), ROCE_EIPHDR);
	memcpy(g, f, (size_t)m);
	roce_put_be16(g + 2, 20);
	ip_csum_fix(g);
	EXPECT_EQ(parse_ipv4_copy(g, (size_t)m, 0, &p), ROCE_EIPLEN);
	memcpy(g, f, (size_t)m);
	roce_put_be16(g + 2, (uint16_t)(m + 4));
	ip_csum_fix(g);
	EXPECT_EQ(parse_ipv4_copy(g, (size_t)m, 0, &p), ROCE_ETRUNC);
	memcpy(g, f, (size_t)m);
	g[11] ^= 1;
	EXPECT_EQ(parse_ipv4_copy(g, (size_t)m, 0, &p), ROCE_EIPCSUM);
	memcpy(g, f, (size_t)m);
	roce_put_be16(g + 6, 0x2000); /* MF */
	ip_csum_fix(g);
	EXPECT_EQ(parse_ipv4_copy(g, (size_t)m, 0, &p), ROCE_EIPFRAG);
	memcpy(g, f, (size_t)m);
	roce_put_be16(g + 6, 0x4001); /* DF + offset 8 */
	ip_csum_fix(g);
	EXPECT_EQ(parse_ipv4_copy(g, (size_t)m, 0, &p), ROCE_EIPFRAG);
	memcpy(g, f, (size_t)m);
	g[9] = 6;
	ip_csum_fix(g);
	EXPECT_EQ(parse_ipv4_copy(g, (size_t)m, 0, &p), ROCE_EIPPROTO);
	memcpy(g, f, (size_t)m);
	roce_put_be16(g + 24, (uint16_t)(m - 20 - 4));
	EXPECT_EQ(parse_ipv4_copy(g, (size_t)m, 0, &p), ROCE_EUDPLEN);
	memcpy(g, f, (size_t)m);
	roce_put_be16(g + 22, 4792);
	EXPECT_EQ(parse_ipv4_copy(g, (size_t)m, 0, &p), ROCE_EUDPPORT);
	EXPECT_EQ(parse_ipv4_copy(g, (size_t)m, ROCE_PARSE_ANY_PORT, &p), ROCE_EICRC);
	memcpy(g, f, (size_t)m);
	roce_put_be16(g + 26, 0x1234); /* wrong non-zero UDP checksum */
	EXPECT_EQ(parse_ipv4_copy(g, (size_t)m, 0, &p), ROCE_EUDPCSUM);
	/* a correct non-zero UDP checksum is accepted (GSO senders, some NICs) */
	{
		uint32_t sum = 0;

		g[26] = g[27] = 0;
		for (int k = 12; k < 20; k += 2)
			sum += (uint32_t)(g[k] << 8 | g[k + 1]);
		sum += 17 + (uint32_t)(m - 20);
		for (ssize_t k = 20; k < m; k += 2)
			sum += (uint32_t)(g[k] << 8 | (k + 1 < m ? g[k + 1] : 0));
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		roce_put_be16(g + 26, (uint16_t)~sum ? (uint16_t)~sum : 0xffff);
		EXPECT_EQ(parse_ipv4_copy(g, (size_t)m, 0, &p), 0);
	}

	/* random mutations of valid packets: never a crash, never an out-of-bounds result */
	for (int it = 0; it < 200000; it++) {
		const size_t k = rnd() % N_OPS;
		size_t plen = expected_ops[k].payload ? rnd() % 64 : 0;
		unsigned int flags = (unsigned int)(rnd() & 7);

		random_hdr(&h, expected_ops[k].op);
		n = roce_build_ipv4(g, sizeof(g), &h, payload, plen, &a);
		EXPECT(n > 0);
		if (n <= 0)
			continue;
		for (int mut = (int)(rnd() % 4); mut >= 0; mut--) {
			switch (rnd() % 4) {
			case 0:
				if (n)
					g[rnd() % (size_t)n] = (uint8_t)rnd();
				break;
			case 1:
				n = (ssize_t)(rnd() % (size_t)(n + 1));
				break;
			case 2:
				/* a bit of the BTH */
				g[ROCE_IPUDP_LEN + rnd() % ROCE_BTH_LEN] ^=
				    (uint8_t)(1 << (rnd() % 8));
				break;
			default:
				if (n + 4 < (ssize_t)sizeof(g))
					n += (ssize_t)(rnd() % 5);
				break;
			}
		}
		if (rnd() & 1) {
			parse_ipv4_copy(g, (size_t)n, flags, &p);
		} else if (n >= ROCE_IPUDP_LEN) {
			size_t udp_len = (size_t)n - ROCE_IPUDP_LEN;

			if (!(rnd() & 3) && udp_len >= ROCE_BTH_LEN + ROCE_ICRC_LEN)
				reseal(g + ROCE_IPUDP_LEN, udp_len, &a);
			parse_udp_copy(g + ROCE_IPUDP_LEN, udp_len, &a,
				       flags & ~ROCE_PARSE_ANY_PORT, &p);
		}
	}
}

/* ---- loopback through real sockets --------------------------------------------------------------
 */

#define LB_PKTS (N_OPS * 3)

static void pcap_udp(const struct roce_addr *a, const uint8_t *buf, size_t len)
{
	struct iovec v = {(void *)buf, len};

	if (pcap)
		EXPECT_EQ(roce_pcap_write_udp(pcap, a, &v, 1), 0);
}

/* Receive exactly want datagrams (or time out) into rx. */
static unsigned int recv_all(struct roce_udp_port *port, struct roce_udp_rx *rx, unsigned int want)
{
	unsigned int got = 0;

	while (got < want) {
		int r = roce_udp_recv(port, rx + got, want - got);

		if (r < 0) {
			fprintf(stderr, "recv: %s\n", strerror(-r));
			break;
		}
		if (r == 0 && roce_udp_wait(port, 2000) <= 0)
			break;
		got += (unsigned int)r;
	}
	return got;
}

/*
 * Like the model, each port gets its own loopback address and the RoCE port 4791.  The address
 * 127.<net>.<pid bits> is private to this process, so parallel test runs do not collide; if it
 * is taken anyway, fall back to an ephemeral port (the packets then do not dissect as RoCE).
 */
static int lb_open(struct roce_udp_port *p, unsigned int net, const struct roce_udp_port_opts *o)
{
	char addr[32];
	unsigned int pid = (unsigned int)getpid();
	int r;

	snprintf(addr, sizeof(addr), "127.%u.%u.%u", net, (pid >> 8) & 0xff, pid & 0xff);
	r = roce_udp_port_open(p, ip4(addr), ROCE_V2_UDP_PORT, o);
	if (r == -EADDRINUSE)
		r = roce_udp_port_open(p, ip4(addr), 0, o);
	return r;
}

static void test_loopback(void)
{
	static uint8_t payload[4096], txb[LB_PKTS][4200], rxb[LB_PKTS][4200];
	static uint8_t hdrs[LB_PKTS][64], tails[LB_PKTS][8];
	static struct iovec iov[LB_PKTS][2];
	static struct roce_udp_tx tx[LB_PKTS];
	static struct roce_udp_rx rx[LB_PKTS];
	static struct roce_tx_hdr hs[LB_PKTS];
	static size_t txlen[LB_PKTS], txplen[LB_PKTS];
	struct roce_udp_port pa, pb, pg, pr;
	struct roce_udp_port_opts gso = {.gso = true}, gro = {.gro = true};
	struct roce_addr a;
	struct roce_pkt p;
	unsigned int i, got;
	int r;

	r = lb_open(&pa, 78, NULL);
	EXPECT_EQ(r, 0);
	r |= lb_open(&pb, 79, NULL);
	EXPECT_EQ(r, 0);
	if (r) {
		fprintf(stderr, "loopback: cannot open ports: %s\n", strerror(-r));
		return;
	}
	rnd_fill(payload, sizeof(payload));

	/* every opcode, three payload sizes each, half built zero-copy, all sent in one call */
	for (i = 0; i < LB_PKTS; i++) {
		uint8_t op = expected_ops[i % N_OPS].op;
		size_t plen = expected_ops[i % N_OPS].payload ? plens[(i * 7 + 3) % 11] : 0;

		random_hdr(&hs[i], op);
		tx[i] = (struct roce_udp_tx){.daddr = pb.addr,
					     .dport = pb.port,
					     .tos = (uint8_t)(i % 3 == 0 ? 0x02 : 0),
					     .ttl = (uint8_t)(i % 5 == 0 ? 17 : 0)};
		/* what the kernel will write (TTL 0 in a tx means the default, 64) */
		a = (struct roce_addr){.saddr = pa.addr,
				       .daddr = pb.addr,
				       .sport = pa.port,
				       .dport = pb.port,
				       .tos = tx[i].tos,
				       .ttl = tx[i].ttl ? tx[i].ttl : 64};
		txplen[i] = plen;
		rnd_fill(payload, plen);
		if (i & 1) {
			ssize_t n =
			    roce_build_udp(txb[i], sizeof(txb[i]), &hs[i], payload, plen, &a);

			EXPECT(n > 0);
			txlen[i] = (size_t)n;
			iov[i][0] = (struct iovec){txb[i], (size_t)n};
			tx[i].iov = iov[i];
			tx[i].iovcnt = 1;
		} else {
			int hl = roce_write_hdrs(hdrs[i], sizeof(hdrs[i]), &hs[i], plen);
			struct iovec v[2];

			memcpy(txb[i] + hl, payload, plen); /* keep the payload for checking */
			v[0] = (struct iovec){hdrs[i], (size_t)hl};
			v[1] = (struct iovec){txb[i] + hl, plen};
			int tl = roce_write_tail(tails[i], &a, v, 2);

			EXPECT(hl > 0 && tl > 0);
			memcpy(txb[i], hdrs[i], (size_t)hl);
			memcpy(txb[i] + hl + plen, tails[i], (size_t)tl);
			txlen[i] = (size_t)hl + plen + (size_t)tl;
			/* three pieces on the wire: headers, payload, pad + ICRC */
			static struct iovec v3[LB_PKTS][3];

			v3[i][0] = v[0];
			v3[i][1] = v[1];
			v3[i][2] = (struct iovec){tails[i], (size_t)tl};
			tx[i].iov = v3[i];
			tx[i].iovcnt = 3;
		}
		pcap_udp(&a, txb[i], txlen[i]);
	}
	r = roce_udp_send(&pa, tx, LB_PKTS);
	EXPECT_EQ(r, LB_PKTS);

	for (i = 0; i < LB_PKTS; i++)
		rx[i] = (struct roce_udp_rx){.buf = rxb[i], .size = sizeof(rxb[i])};
	got = recv_all(&pb, rx, LB_PKTS);
	EXPECT_EQ(got, LB_PKTS);
	for (i = 0; i < got; i++) {
		/* UDP preserves order on loopback: datagram i is packet i */
		EXPECT_EQ(rx[i].len, txlen[i]);
		EXPECT(!rx[i].truncated);
		EXPECT(rx[i].len == txlen[i] && !memcmp(rxb[i], txb[i], txlen[i]));
		EXPECT_EQ(rx[i].addr.saddr, pa.addr);
		EXPECT_EQ(rx[i].addr.sport, pa.port);
		EXPECT_EQ(rx[i].addr.daddr, pb.addr);
		EXPECT_EQ(rx[i].addr.dport, pb.port);
		EXPECT_EQ(rx[i].addr.tos, i % 3 == 0 ? 0x02 : 0);
		EXPECT_EQ(rx[i].addr.ttl, i % 5 == 0 ? 17 : 64);
		/* the ICRC the sender computed for the kernel's header verifies with ID 0 */
		EXPECT_EQ(roce_parse_udp(rxb[i], rx[i].len, &rx[i].addr, 0, &p), 0);
		check_parsed(&p, &hs[i], txb[i] + roce_opcode_info(hs[i].opcode)->hdr_len,
			     txplen[i]);
		pcap_udp(&rx[i].addr, rxb[i], rx[i].len);
	}
	/* nothing else arrived */
	EXPECT_EQ(roce_udp_recv(&pb, rx, 1), 0);

	/* a datagram larger than the receive buffer is reported truncated (a real packet, so
	 * that a capture of this test stays all-valid RoCE) */
	{
		unsigned int big = 0;

		for (i = 0; i < LB_PKTS; i++)
			if (txlen[i] > txlen[big])
				big = i;
		struct iovec v = {txb[big], txlen[big]};
		struct roce_udp_tx t = {.iov = &v, .iovcnt = 1, .daddr = pb.addr, .dport = pb.port};

		EXPECT_EQ(roce_udp_send(&pa, &t, 1), 1);
		rx[0] = (struct roce_udp_rx){.buf = rxb[0], .size = 100};
		EXPECT_EQ(recv_all(&pb, rx, 1), 1);
		EXPECT(rx[0].truncated);
	}

	/* UDP GSO: 5 RDMA WRITE MIDDLE packets of PMTU 1024 in one send; segment i leaves with
	 * IP ID i, so it is built with ip_id = i, and the receiver (which sees no IDs) recovers it
	 * by solving.  Then the same to a UDP_GRO receiver, which gets one coalesced buffer. */
	r = lb_open(&pg, 80, &gso);
	EXPECT_EQ(r, 0);
	r |= lb_open(&pr, 81, &gro);
	EXPECT_EQ(r, 0);
	for (int dst = 0; !r && dst < 2; dst++) {
		struct roce_udp_port *to = dst ? &pr : &pb;
		static uint8_t super[5 * 1040];
		size_t seg = 0;

		for (i = 0; i < 5; i++) {
			random_hdr(&hs[i], ROCE_OPCODE(RC, RDMA_WRITE_MIDDLE));
			rnd_fill(payload, 1024);
			a = (struct roce_addr){.saddr = pg.addr,
					       .daddr = to->addr,
					       .sport = pg.port,
					       .dport = to->port,
					       .ttl = 64,
					       .ip_id = (uint16_t)i};
			ssize_t n =
			    roce_build_udp(super + i * 1040, 1040, &hs[i], payload, 1024, &a);

			EXPECT_EQ(n, 1040);
			seg = (size_t)n;
			pcap_udp(&a, super + i * 1040, 1040);
		}
		struct iovec v = {super, 5 * seg};
		struct roce_udp_tx t = {.iov = &v,
					.iovcnt = 1,
					.daddr = to->addr,
					.dport = to->port,
					.gso_size = (uint16_t)seg};

		EXPECT_EQ(roce_udp_send(&pg, &t, 1), 1);
		for (i = 0; i < 5; i++)
			rx[i] = (struct roce_udp_rx){.buf = rxb[i], .size = sizeof(rxb[i])};
		if (!dst) {
			EXPECT_EQ(recv_all(to, rx, 5), 5);
		} else {
			/* one coalesced buffer of 5 datagrams, split by seg_size */
			static uint8_t gro_buf[65536];

			rx[0] = (struct roce_udp_rx){.buf = gro_buf, .size = sizeof(gro_buf)};
			EXPECT_EQ(recv_all(to, rx, 1), 1);
			EXPECT_EQ(rx[0].len, 5 * seg);
			EXPECT_EQ(rx[0].seg_size, seg);
			for (i = 1; i < 5; i++) {
				rx[i] = rx[0];
				rx[i].buf = gro_buf + i * seg;
			}
			for (i = 0; i < 5; i++)
				rx[i].len = seg;
		}
		for (i = 0; i < 5; i++) {
			EXPECT_EQ(rx[i].len, seg);
			EXPECT(!memcmp(rx[i].buf, super + i * seg, seg));
			r = roce_parse_udp(rx[i].buf, rx[i].len, &rx[i].addr, 0, &p);
			EXPECT_EQ(r, i ? ROCE_EICRC : 0);
			r = roce_parse_udp(rx[i].buf, rx[i].len, &rx[i].addr, ROCE_PARSE_SOLVE_ID,
					   &p);
			EXPECT_EQ(r, 0);
			EXPECT_EQ(p.addr.ip_id, i);
			EXPECT_EQ(p.ip_id_solved, i != 0);
			r = 0;
		}
	}
	if (pg.fd >= 0)
		roce_udp_port_close(&pg);
	if (pr.fd >= 0)
		roce_udp_port_close(&pr);
	roce_udp_port_close(&pa);
	roce_udp_port_close(&pb);
}

/* ---- the kernel's header, seen through a TUN device ----------------------------------------- */

static int set_if_addr(int s, const char *ifn, unsigned long req, const char *addr)
{
	struct ifreq ifr;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifn);
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = ip4(addr);
	return ioctl(s, req, &ifr);
}

/* Read the next IPv4/UDP frame from the TUN device (skipping IPv6 router chatter). */
static ssize_t tun_read(int t, uint8_t *f, size_t size)
{
	for (;;) {
		struct pollfd pfd = {.fd = t, .events = POLLIN};
		ssize_t n;

		if (poll(&pfd, 1, 2000) <= 0)
			return -1;
		n = read(t, f, size);
		if (n <= 0)
			return -1;
		if (n >= 20 && (f[0] >> 4) == 4 && f[9] == 17)
			return n;
	}
}

/* Runs in a child in its own network namespace; returns the number of failures, 77 = skip. */
static int tun_child(void)
{
	static uint8_t payload[1024], built[1200], frame[70000], super[4 * 1060];
	struct roce_udp_port_opts gso = {.gso = true};
	struct roce_udp_port p, pg;
	struct roce_tx_hdr h;
	struct roce_addr a;
	struct roce_pkt pk;
	struct ifreq ifr;
	int t, s, k;

	if (unshare(CLONE_NEWNET)) {
		printf("tun: skipped (unshare: %s)\n", strerror(errno));
		return 77;
	}
	t = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (t < 0) {
		printf("tun: skipped (/dev/net/tun: %s)\n", strerror(errno));
		return 77;
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "bvtun0");
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (ioctl(t, TUNSETIFF, &ifr) || set_if_addr(s, "bvtun0", SIOCSIFADDR, "10.77.0.1") ||
	    set_if_addr(s, "bvtun0", SIOCSIFDSTADDR, "10.77.0.2")) {
		printf("tun: skipped (cannot configure: %s)\n", strerror(errno));
		return 77;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "bvtun0");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		if (ioctl(s, SIOCSIFFLAGS, &ifr))
			return 77;
	}
	if (roce_udp_port_open(&p, ip4("10.77.0.1"), ROCE_V2_UDP_PORT, NULL) ||
	    roce_udp_port_open(&pg, ip4("10.77.0.1"), 4792, &gso)) {
		printf("tun: cannot open ports\n");
		return 1;
	}

	rnd_fill(payload, sizeof(payload));
	/* Several packets in a row, with and without per-packet TOS/TTL: the kernel's frame must
	 * equal roce_build_ipv4 with IP ID 0 byte for byte (IPv4 checksum included). */
	for (k = 0; k < 6; k++) {
		size_t plen = (size_t)(k * 97) % 1024;
		uint8_t tos = k & 1 ? 0x02 : 0, ttl = k & 2 ? 9 : 0;

		random_hdr(&h, k == 5 ? ROCE_OPCODE(RC, ACKNOWLEDGE) : ROCE_OPCODE(RC, SEND_ONLY));
		if (k == 5)
			plen = 0;
		a = (struct roce_addr){.saddr = p.addr,
				       .daddr = ip4("10.77.0.2"),
				       .sport = p.port,
				       .dport = ROCE_V2_UDP_PORT,
				       .tos = tos,
				       .ttl = ttl ? ttl : 64};
		ssize_t n = roce_build_udp(built, sizeof(built), &h, payload, plen, &a);
		struct iovec v = {built, (size_t)n};
		struct roce_udp_tx tx = {.iov = &v,
					 .iovcnt = 1,
					 .daddr = a.daddr,
					 .dport = a.dport,
					 .tos = tos,
					 .ttl = ttl};

		EXPECT_EQ(roce_udp_send(&p, &tx, 1), 1);
		ssize_t m = tun_read(t, frame, sizeof(frame));
		ssize_t e = roce_build_ipv4(built, sizeof(built), &h, payload, plen, &a);

		EXPECT_EQ(m, e);
		if (m == e && memcmp(frame, built, (size_t)e)) {
			fprintf(stderr, "FAIL: kernel frame differs from ours:\n");
			for (ssize_t j = 0; j < 28; j++)
				fprintf(stderr, "%02x%s", frame[j], j == 27 ? "\n" : " ");
			for (ssize_t j = 0; j < 28; j++)
				fprintf(stderr, "%02x%s", built[j], j == 27 ? "\n" : " ");
			failures++;
		}
		if (m > 0) {
			EXPECT_EQ(roce_parse_ipv4(frame, (size_t)m, 0, &pk), 0);
			EXPECT_EQ(pk.addr.ip_id, 0);
		}
	}

	/* UDP GSO: 4 segments; the kernel numbers them IP ID 0, 1, 2, 3 and fills in UDP
	 * checksums.  Built with ip_id = i, each frame must parse (ICRC with its real header, UDP
	 * checksum verified) and equal ours except for the UDP checksum. */
	for (k = 0; k < 4; k++) {
		random_hdr(&h, ROCE_OPCODE(RC, RDMA_WRITE_MIDDLE));
		a = (struct roce_addr){.saddr = pg.addr,
				       .daddr = ip4("10.77.0.2"),
				       .sport = pg.port,
				       .dport = ROCE_V2_UDP_PORT,
				       .ttl = 64,
				       .ip_id = (uint16_t)k};
		EXPECT_EQ(roce_build_udp(super + k * 1040, 1040, &h, payload, 1024, &a), 1040);
	}
	{
		struct iovec v = {super, 4 * 1040};
		struct roce_udp_tx tx = {.iov = &v,
					 .iovcnt = 1,
					 .daddr = ip4("10.77.0.2"),
					 .dport = ROCE_V2_UDP_PORT,
					 .gso_size = 1040};

		EXPECT_EQ(roce_udp_send(&pg, &tx, 1), 1);
	}
	for (k = 0; k < 4; k++) {
		ssize_t m = tun_read(t, frame, sizeof(frame));

		EXPECT_EQ(m, 1068);
		if (m != 1068)
			break;
		EXPECT_EQ(roce_get_be16(frame + 4), k);
		EXPECT(roce_get_be16(frame + 26) != 0);
		EXPECT_EQ(roce_parse_ipv4(frame, (size_t)m, 0, &pk), 0);
		EXPECT(!memcmp(frame + 28, super + k * 1040, 1040));
	}
	/* a GSO send on a SO_NO_CHECK port is refused by Linux (why opts.gso exists) */
	{
		struct iovec v = {super, 2 * 1040};
		struct roce_udp_tx tx = {.iov = &v,
					 .iovcnt = 1,
					 .daddr = ip4("10.77.0.2"),
					 .dport = ROCE_V2_UDP_PORT,
					 .gso_size = 1040};

		EXPECT_EQ(roce_udp_send(&p, &tx, 1), -EINVAL);
	}
	roce_udp_port_close(&p);
	roce_udp_port_close(&pg);
	close(s);
	close(t);
	return failures;
}

/* The kernel's IPv4/UDP headers through a TUN device: its own test (-t), 77 when it cannot run. */
static int test_tun(void)
{
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(tun_child());
	EXPECT(pid > 0);
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 1;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
		return 77;
	EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		printf("tun: kernel IPv4/UDP headers identical to roce_ipv4_udp_hdr\n");
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	int opt;

	while ((opt = getopt(argc, argv, "p:t")) != -1) {
		if (opt == 't')
			return test_tun();
		if (opt != 'p') {
			fprintf(stderr, "usage: %s [-p capture.pcap] | -t\n", argv[0]);
			return 2;
		}
		pcap = roce_pcap_open(optarg, ROCE_PCAP_LINKTYPE_ETHERNET);
		if (!pcap) {
			perror(optarg);
			return 2;
		}
	}

	test_headers();
	test_opcode_table();
	test_crc();
	test_vectors();
	test_roundtrip();
	test_masking();
	test_hostile();
	test_loopback();

	if (pcap)
		EXPECT_EQ(roce_pcap_close(pcap), 0);
	if (failures) {
		fprintf(stderr, "wire_test: %d failure(s)\n", failures);
		return 1;
	}
	printf("wire_test: all passed\n");
	return 0;
}
