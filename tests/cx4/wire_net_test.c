// SPDX-License-Identifier: MIT
/*
 * Tests of the wire library's other network types (docs/roce-wire.md): RoCE v2 over IPv6 and
 * RoCE v1 (GRH, Ethertype 0x8915), their ICRC masks bit by bit, Ethernet framing, hostile
 * frames, an IPv6 UDP exchange over ::1 and an AF_PACKET exchange of RoCE v1 frames on the
 * loopback device of a private network namespace.
 *
 * Usage: wire_net_test [-p capture.pcap]   (every packet built, for icrc_check.py and tshark)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bv_expect.h"
#include "icrc.h"
#include "packet_port.h"
#include "pcap.h"
#include "roce_eth.h"
#include "roce_hdr.h"
#include "roce_opcode.h"
#include "roce_pkt.h"
#include "udp_port.h"

static struct roce_pcap *pcap;

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static void rnd_fill(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rnd();
}

static void gid(const char *s, uint8_t out[16])
{
	if (inet_pton(AF_INET6, s, out) != 1)
		abort();
}

static const uint8_t mac_a[6] = {0x02, 0x62, 0x76, 0x00, 0x00, 0x01};
static const uint8_t mac_b[6] = {0x02, 0x62, 0x76, 0x00, 0x00, 0x02};

/* The addresses of a packet of network type net from A to B. */
static struct roce_addr addr_of(uint8_t net)
{
	struct roce_addr a = {.net = net, .sport = 0xc123, .dport = 4791, .tos = 0x68,
			      .ttl = 64, .flow_label = 0x12345};
	uint8_t s[16], d[16];

	if (net == ROCE_NET_IPV4) {
		gid("::ffff:10.9.8.7", s);
		gid("::ffff:10.9.8.6", d);
	} else if (net == ROCE_NET_IPV6) {
		gid("2001:db8::1", s);
		gid("2001:db8::2", d);
	} else {
		gid("fe80::62:76ff:fe00:1", s);
		gid("fe80::62:76ff:fe00:2", d);
	}
	roce_addr_set_gids(&a, net, s, d);
	return a;
}

static void random_hdr(struct roce_tx_hdr *h, uint8_t op)
{
	memset(h, 0, sizeof(*h));
	h->opcode = op;
	h->se = rnd() & 1;
	h->ackreq = rnd() & 1;
	h->pkey = 0xffff;
	h->dqpn = (uint32_t)rnd() & 0xffffff;
	h->psn = (uint32_t)rnd() & 0xffffff;
	h->reth.va = rnd();
	h->reth.rkey = (uint32_t)rnd();
	h->reth.len = (uint32_t)rnd() & 0xffff;
	h->atomic.va = rnd() & ~7ull;
	h->atomic.rkey = (uint32_t)rnd();
	h->atomic.swap_add = rnd();
	h->atomic.compare = rnd();
	h->aeth.syndrome = (uint8_t)(rnd() & 0x1f);
	h->aeth.msn = (uint32_t)rnd() & 0xffffff;
	h->atomic_ack_orig = rnd();
	h->imm_raw = (uint32_t)rnd();
	h->deth.qkey = (uint32_t)rnd();
	h->deth.sqpn = (uint32_t)rnd() & 0xffffff;
}

static void expect_addr(const struct roce_addr *got, const struct roce_addr *want)
{
	uint8_t g1[16], g2[16];

	EXPECT_EQ(got->net, want->net);
	roce_addr_sgid(got, g1);
	roce_addr_sgid(want, g2);
	EXPECT(!memcmp(g1, g2, 16));
	roce_addr_dgid(got, g1);
	roce_addr_dgid(want, g2);
	EXPECT(!memcmp(g1, g2, 16));
	EXPECT_EQ(got->tos, want->tos);
	EXPECT_EQ(got->ttl, want->ttl);
	if (want->net != ROCE_NET_IPV4)
		EXPECT_EQ(got->flow_label, want->flow_label);
	if (want->net != ROCE_NET_GRH) {
		EXPECT_EQ(got->sport, want->sport);
		EXPECT_EQ(got->dport, want->dport);
	}
}

/* ---- round trips of every opcode in every form of every network type -------------------- */

static const uint8_t ops[] = {
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d,
    0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26,
    0x27, 0x28, 0x29, 0x2a, 0x2b, 0x64, 0x65,
};
#define N_OPS (sizeof(ops) / sizeof(ops[0]))

static void test_roundtrip(void)
{
	static uint8_t payload[4096], udp[8192], net[8192], eth[8192], hdrs[64], tail[8];
	static const size_t plens[] = {0, 1, 3, 4, 255, 1024, 4096};

	rnd_fill(payload, sizeof(payload));
	for (uint8_t t = ROCE_NET_IPV4; t <= ROCE_NET_GRH; t++) {
		struct roce_addr a = addr_of(t);
		int nl = roce_net_hdr_len(t);

		EXPECT_EQ(nl, t == ROCE_NET_IPV4 ? 28 : t == ROCE_NET_IPV6 ? 48 : 40);
		for (size_t k = 0; k < N_OPS; k++) {
			const struct roce_opcode_info *info = roce_opcode_info(ops[k]);

			for (size_t li = 0; li < sizeof(plens) / sizeof(plens[0]); li++) {
				size_t plen = (info->flags & ROCE_F_PAYLOAD) ? plens[li] : 0;
				struct roce_tx_hdr h;
				struct roce_pkt p;
				uint8_t d[6], s[6];
				ssize_t n, m, e;
				int hl;

				if (!(info->flags & ROCE_F_PAYLOAD) && li)
					break;
				random_hdr(&h, ops[k]);
				n = roce_build_udp(udp, sizeof(udp), &h, payload, plen, &a);
				EXPECT(n > 0);
				m = roce_build_net(net, sizeof(net), &h, payload, plen, &a);
				EXPECT_EQ(m, n + nl);
				EXPECT(m == n + nl && !memcmp(net + nl, udp, (size_t)n));
				e = roce_build_eth(eth, sizeof(eth), mac_b, mac_a, &h, payload, plen,
						   &a);
				EXPECT_EQ(e, m + ROCE_ETH_HDR_LEN);
				EXPECT(e == m + 14 && !memcmp(eth + 14, net, (size_t)m));
				/* the header-only writer makes the same headers */
				hl = roce_eth_hdrs(hdrs, mac_b, mac_a, &a, (size_t)n);
				EXPECT_EQ(hl, 14 + nl);
				if (t == ROCE_NET_IPV6) {
					struct iovec u = {udp, (size_t)n};

					EXPECT_EQ(roce_get_be16(hdrs + 14 + 46), 0);
					roce_udp6_csum(hdrs + 14, &u, 1);
					EXPECT(roce_get_be16(hdrs + 14 + 46) != 0);
				}
				EXPECT(hl == 14 + nl && !memcmp(hdrs, eth, (size_t)hl));

				if (t != ROCE_NET_GRH) {
					EXPECT_EQ(roce_parse_udp(udp, (size_t)n, &a, 0, &p), 0);
					EXPECT_EQ(p.payload_len, plen);
				} else {
					EXPECT_EQ(roce_parse_udp(udp, (size_t)n, &a, 0, &p),
						  ROCE_EINVAL);
				}
				EXPECT_EQ(roce_parse_eth(eth, (size_t)e, 0, &p, d, s), 0);
				EXPECT(!memcmp(d, mac_b, 6) && !memcmp(s, mac_a, 6));
				EXPECT_EQ(p.opcode, h.opcode);
				EXPECT_EQ(p.dqpn, h.dqpn);
				EXPECT_EQ(p.psn, h.psn);
				EXPECT_EQ(p.payload_len, plen);
				EXPECT(!plen || !memcmp(p.payload, payload, plen));
				expect_addr(&p.addr, &a);
				/* Ethernet padding to 60 bytes (and more) is ignored */
				memset(eth + e, 0, 64);
				EXPECT_EQ(roce_parse_eth(eth, (size_t)e + 64, 0, &p, NULL, NULL), 0);
				EXPECT_EQ(p.payload_len, plen);

				/* zero-copy tail over pieces: the same ICRC */
				{
					int h2 = roce_write_hdrs(hdrs, sizeof(hdrs), &h, plen);
					struct iovec iov[3] = {{hdrs, (size_t)h2},
							       {payload, plen / 2},
							       {payload + plen / 2, plen - plen / 2}};
					int tl = roce_write_tail(tail, &a, iov, 3);

					EXPECT_EQ(h2 + (ssize_t)plen + tl, n);
					EXPECT(tl > 0 && !memcmp(tail, udp + h2 + plen, (size_t)tl));
				}
				if (pcap && (li == 1 || !plen)) {
					struct iovec v = {eth, (size_t)e}, u = {udp, (size_t)n};

					EXPECT_EQ(roce_pcap_write_frame(pcap, &v, 1), 0);
					EXPECT_EQ(roce_pcap_write_pkt(pcap, &a, mac_b, mac_a, &u, 1),
						  0);
				}
			}
		}
	}
}

/* ---- the ICRC masks: exactly the variant fields leave it unchanged ------------------------ */

static void test_masking(void)
{
	static uint8_t payload[64], f[256], g[256];

	rnd_fill(payload, sizeof(payload));
	for (uint8_t t = ROCE_NET_IPV6; t <= ROCE_NET_GRH; t++) {
		struct roce_addr a = addr_of(t);
		int nl = roce_net_hdr_len(t);
		struct roce_tx_hdr h;
		uint32_t base;
		ssize_t n;

		random_hdr(&h, ROCE_OPCODE(RC, RDMA_WRITE_ONLY_IMM));
		n = roce_build_net(f, sizeof(f), &h, payload, 37, &a);
		EXPECT(n > 0);
		base = roce_icrc_net_buf(t, f, f + nl, (size_t)(n - nl - 4));
		EXPECT_EQ(base, roce_icrc_get(f + n - 4));
		for (ssize_t byte = 0; byte < n - 4; byte++) {
			for (int bit = 0; bit < 8; bit++) {
				/* traffic class (bits 27..20), flow label (19..0), hop limit (7),
				 * the IPv6 UDP checksum, BTH byte 4 */
				bool masked = (byte == 0 && bit < 4) || byte == 1 || byte == 2 ||
					      byte == 3 || byte == 7 ||
					      (t == ROCE_NET_IPV6 && (byte == 46 || byte == 47)) ||
					      byte == nl + 4;
				uint32_t c;

				memcpy(g, f, (size_t)n);
				g[byte] ^= (uint8_t)(1 << bit);
				c = roce_icrc_net_buf(t, g, g + nl, (size_t)(n - nl - 4));
				if (masked != (c == base))
					fprintf(stderr, "  net %u: masking wrong at byte %zd bit %d\n",
						t, byte, bit);
				EXPECT_EQ(masked, c == base);
			}
		}
	}
	/* the IPv4 ICRC is the one the IPv4-only entry point computes */
	{
		struct roce_addr a = addr_of(ROCE_NET_IPV4);
		struct roce_tx_hdr h;
		ssize_t n;

		random_hdr(&h, ROCE_OPCODE(RC, SEND_ONLY));
		n = roce_build_net(f, sizeof(f), &h, payload, 9, &a);
		EXPECT(n > 0);
		EXPECT_EQ(roce_icrc_ipv4_buf(f, f + 28, (size_t)n - 32), roce_icrc_get(f + n - 4));
	}
}

/* ---- hostile frames: every check of the new parsers --------------------------------------- */

static uint16_t csum(const uint8_t *p, size_t len, uint32_t sum)
{
	for (; len > 1; p += 2, len -= 2)
		sum += (uint32_t)(p[0] << 8 | p[1]);
	if (len)
		sum += (uint32_t)p[0] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static void test_hostile(void)
{
	static uint8_t payload[100], f6[512], f[512], g[512];
	struct roce_addr a6 = addr_of(ROCE_NET_IPV6), a1 = addr_of(ROCE_NET_GRH);
	struct roce_tx_hdr h;
	struct roce_pkt p;
	ssize_t n6, n1;
	uint8_t *c;

	rnd_fill(payload, sizeof(payload));
	random_hdr(&h, ROCE_OPCODE(RC, SEND_ONLY));
	n6 = roce_build_eth(f, sizeof(f), mac_b, mac_a, &h, payload, 50, &a6);
	EXPECT(n6 > 0);
	/* every truncation of the IPv6 frame is refused, none crashes */
	for (ssize_t l = 0; l < n6; l++) {
		uint8_t *copy = malloc((size_t)l + 1);

		memcpy(copy, f, (size_t)l);
		EXPECT(roce_parse_eth(copy, (size_t)l, 0, &p, NULL, NULL) < 0);
		free(copy);
	}
	memcpy(g, f, (size_t)n6);
	g[12] = 0x88, g[13] = 0xcc; /* LLDP */
	EXPECT_EQ(roce_parse_eth(g, (size_t)n6, 0, &p, NULL, NULL), ROCE_EETHTYPE);
	memcpy(g, f, (size_t)n6);
	g[14] = 0x45;
	EXPECT_EQ(roce_parse_eth(g, (size_t)n6, 0, &p, NULL, NULL), ROCE_EIPVER);
	memcpy(g, f, (size_t)n6);
	g[14 + 6] = 0; /* hop-by-hop options */
	EXPECT_EQ(roce_parse_eth(g, (size_t)n6, 0, &p, NULL, NULL), ROCE_EIP6HDR);
	EXPECT(roce_get_be16(f + 14 + 46) != 0); /* the builder computed the UDP checksum */
	memcpy(g, f, (size_t)n6);
	g[14 + 40 + 3] = 0x12; /* UDP destination port (checked before the checksum) */
	EXPECT_EQ(roce_parse_eth(g, (size_t)n6, 0, &p, NULL, NULL), ROCE_EUDPPORT);
	EXPECT_EQ(roce_parse_eth(g, (size_t)n6, ROCE_PARSE_ANY_PORT, &p, NULL, NULL),
		  ROCE_EUDPCSUM);
	g[14 + 46] = g[14 + 47] = 0; /* a zero checksum is accepted (RFC 6936) */
	EXPECT(roce_parse_eth(g, (size_t)n6, ROCE_PARSE_ANY_PORT, &p, NULL, NULL) != ROCE_EUDPCSUM);
	memcpy(g, f, (size_t)n6);
	g[14 + 45] += 4; /* UDP length */
	EXPECT_EQ(roce_parse_eth(g, (size_t)n6, 0, &p, NULL, NULL), ROCE_EUDPLEN);
	memcpy(g, f, (size_t)n6);
	g[14 + 5] += 4; /* payload length past the frame */
	EXPECT_EQ(roce_parse_eth(g, (size_t)n6, 0, &p, NULL, NULL), ROCE_ETRUNC);
	/* the UDP checksum as an independent byte-wise sum computes it (RFC 8200 pseudo-header) */
	memcpy(g, f, (size_t)n6);
	c = g + 14 + 40 + 6;
	{
		uint16_t ulen = roce_get_be16(g + 14 + 44), want = roce_get_be16(c);
		uint32_t ps = csum(g + 14 + 8, 32, 0) + ulen + 17;

		roce_put_be16(c, 0);
		EXPECT_EQ((uint16_t)~csum(g + 14 + 40, ulen, ps), want);
		roce_put_be16(c, want);
	}
	EXPECT_EQ(roce_parse_eth(g, (size_t)n6, 0, &p, NULL, NULL), 0);
	c[0] ^= 1;
	EXPECT_EQ(roce_parse_eth(g, (size_t)n6, 0, &p, NULL, NULL), ROCE_EUDPCSUM);
	/* odd-length pieces at odd offsets sum as the whole (roce_udp6_csum's byte swap rule) */
	{
		struct roce_tx_hdr h2;
		uint8_t fr[600], hd[64];
		ssize_t m;

		random_hdr(&h2, ROCE_OPCODE(RC, SEND_ONLY));
		for (size_t plen = 1; plen < 200; plen += 7) {
			m = roce_build_net(fr, sizeof(fr), &h2, payload, plen % 100, &a6);
			EXPECT(m > 0);
			memcpy(hd, fr, 48);
			for (size_t cut = 1; cut < (size_t)m - 48; cut += 13) {
				struct iovec v[3] = {{fr + 48, cut / 2},
						     {fr + 48 + cut / 2, cut - cut / 2},
						     {fr + 48 + cut, (size_t)m - 48 - cut}};

				roce_udp6_csum(hd, v, 3);
				EXPECT_EQ(roce_get_be16(hd + 46), roce_get_be16(fr + 46));
			}
		}
	}
	memcpy(g, f, (size_t)n6);
	g[n6 - 1] ^= 0x80;
	EXPECT_EQ(roce_parse_eth(g, (size_t)n6, 0, &p, NULL, NULL), ROCE_EUDPCSUM);
	g[14 + 46] = g[14 + 47] = 0; /* without the checksum the ICRC finds it */
	EXPECT_EQ(roce_parse_eth(g, (size_t)n6, 0, &p, NULL, NULL), ROCE_EICRC);

	memcpy(f6, f, (size_t)n6);
	n1 = roce_build_eth(f, sizeof(f), mac_b, mac_a, &h, payload, 50, &a1);
	EXPECT(n1 > 0);
	for (ssize_t l = 0; l < n1; l++) {
		uint8_t *copy = malloc((size_t)l + 1);

		memcpy(copy, f, (size_t)l);
		EXPECT(roce_parse_eth(copy, (size_t)l, 0, &p, NULL, NULL) < 0);
		free(copy);
	}
	memcpy(g, f, (size_t)n1);
	g[14] = 0x46;
	EXPECT_EQ(roce_parse_eth(g, (size_t)n1, 0, &p, NULL, NULL), ROCE_EGRH);
	memcpy(g, f, (size_t)n1);
	g[14 + 6] = 17; /* NxtHdr UDP: not a RoCE v1 packet */
	EXPECT_EQ(roce_parse_eth(g, (size_t)n1, 0, &p, NULL, NULL), ROCE_EGRH);
	memcpy(g, f, (size_t)n1);
	g[14 + 5] += 4;
	EXPECT_EQ(roce_parse_eth(g, (size_t)n1, 0, &p, NULL, NULL), ROCE_ETRUNC);
	memcpy(g, f, (size_t)n1);
	g[14 + 8] ^= 1; /* the source GID is covered by the ICRC */
	EXPECT_EQ(roce_parse_eth(g, (size_t)n1, 0, &p, NULL, NULL), ROCE_EICRC);
	/* random mutations and truncations never read outside the frame (ASan) */
	for (int i = 0; i < 20000; i++) {
		const uint8_t *src = i & 1 ? f : f6;
		size_t len = (size_t)(i & 1 ? n1 : n6);
		uint8_t *copy = malloc(len);

		memcpy(copy, src, len);
		for (int k = 0; k < 1 + (int)(rnd() % 4); k++)
			copy[rnd() % len] ^= (uint8_t)(1 + rnd() % 255);
		(void)roce_parse_eth(copy, rnd() % (len + 1), 0, &p, NULL, NULL);
		free(copy);
	}
	EXPECT_EQ(roce_net_hdr_len(7), ROCE_EINVAL);
	a1.net = 7;
	EXPECT_EQ(roce_build_eth(g, sizeof(g), mac_b, mac_a, &h, payload, 4, &a1), ROCE_EINVAL);
}

/* ---- RoCE v2 over IPv6 through the kernel: ::1 ------------------------------------------- */

static void test_udp6(void)
{
	static uint8_t payload[2048], buf[4][4200];
	static const uint8_t lo6[16] = {[15] = 1};
	struct roce_udp_port pa, pb;
	struct roce_udp_rx rx[4];
	struct roce_udp_tx tx[3];
	struct iovec iov[3];
	struct roce_addr a;
	struct roce_tx_hdr h;
	ssize_t len[3];
	int r, got = 0;

	/* in the private namespace of net_child: the RoCE port is ours */
	r = roce_udp_port_open6(&pa, lo6, 0, 0, NULL);
	if (r == -EADDRNOTAVAIL || r == -EAFNOSUPPORT) {
		printf("udp6: skipped (no IPv6 loopback: %s)\n", strerror(-r));
		return;
	}
	EXPECT_EQ(r, 0);
	EXPECT_EQ(roce_udp_port_open6(&pb, lo6, 0, ROCE_V2_UDP_PORT,
				      &(struct roce_udp_port_opts){.gro = true}),
		  0);
	rnd_fill(payload, sizeof(payload));
	a = (struct roce_addr){.net = ROCE_NET_IPV6, .sport = pa.port, .dport = pb.port};
	memcpy(a.sgid, lo6, 16);
	memcpy(a.dgid, lo6, 16);
	for (int i = 0; i < 3; i++) {
		random_hdr(&h, i == 2 ? ROCE_OPCODE(UD, SEND_ONLY) : ROCE_OPCODE(RC, SEND_ONLY));
		a.tos = (uint8_t)(i * 0x20 + 1);
		a.ttl = (uint8_t)(10 + i);
		len[i] = roce_build_udp(buf[i], sizeof(buf[i]), &h, payload, 700 * (size_t)(i + 1),
					&a);
		EXPECT(len[i] > 0);
		iov[i] = (struct iovec){buf[i], (size_t)len[i]};
		tx[i] = (struct roce_udp_tx){.iov = &iov[i], .iovcnt = 1, .daddr6 = lo6,
					     .dport = pb.port, .tos = a.tos, .ttl = a.ttl};
	}
	EXPECT_EQ(roce_udp_send(&pa, tx, 3), 3);
	for (int tries = 0; got < 3 && tries < 100; tries++) {
		for (int i = got; i < 4; i++)
			rx[i] = (struct roce_udp_rx){.buf = buf[3], .size = sizeof(buf[3])};
		r = roce_udp_recv(&pb, &rx[got], 1);
		if (r <= 0) {
			usleep(10000);
			continue;
		}
		{
			struct roce_pkt p;

			EXPECT_EQ(rx[got].addr.net, ROCE_NET_IPV6);
			EXPECT(!memcmp(rx[got].addr.sgid, lo6, 16));
			EXPECT(!memcmp(rx[got].addr.dgid, lo6, 16));
			EXPECT_EQ(rx[got].addr.sport, pa.port);
			EXPECT_EQ(rx[got].addr.tos, got * 0x20 + 1);
			EXPECT_EQ(rx[got].addr.ttl, 10 + got);
			EXPECT_EQ(rx[got].len, (size_t)len[got]);
			EXPECT_EQ(roce_parse_udp(buf[3], rx[got].len, &rx[got].addr, 0, &p), 0);
			EXPECT_EQ(p.payload_len, 700u * (unsigned int)(got + 1));
			EXPECT(!memcmp(p.payload, payload, p.payload_len));
			if (pcap) {
				struct iovec v = {buf[3], rx[got].len};

				EXPECT_EQ(roce_pcap_write_udp(pcap, &rx[got].addr, &v, 1), 0);
			}
		}
		got++;
	}
	EXPECT_EQ(got, 3);
	/* an IPv6 port refuses a destination without an IPv6 address */
	tx[0].daddr6 = NULL;
	EXPECT_EQ(roce_udp_send(&pa, tx, 1), -EINVAL);
	roce_udp_port_close(&pa);
	roce_udp_port_close(&pb);
	printf("udp6: 3 RoCE v2 / IPv6 datagrams over ::1, addresses, TC and hop limit seen\n");
}

/* ---- RoCE v1 frames through AF_PACKET (in net_child's private network namespace) ------------ */

static int test_packet(void)
{
	static uint8_t payload[1500], frame[2][2048], rb[4][2048];
	struct roce_packet_port pa, pb;
	struct roce_packet_rx rx[4];
	struct roce_packet_tx tx[2];
	struct iovec iov[2][2];
	struct roce_addr a = addr_of(ROCE_NET_GRH);
	struct ifreq ifr = {0};
	struct roce_tx_hdr h;
	int r, got = 0;
	ssize_t n[2];

	(void)ifr;
	r = roce_packet_port_open(&pa, "lo", ROCE_ETHERTYPE_ROCE);
	if (r == -EPERM) {
		printf("packet: skipped (no CAP_NET_RAW)\n");
		return 0;
	}
	EXPECT_EQ(r, 0);
	EXPECT_EQ(roce_packet_port_open(&pb, "lo", ROCE_ETHERTYPE_ROCE), 0);
	EXPECT_EQ(roce_packet_port_open(&pa, "nonexistent0", ROCE_ETHERTYPE_ROCE) == -ENODEV, 1);
	EXPECT_EQ(roce_packet_port_open(&pa, "lo", ROCE_ETHERTYPE_ROCE), 0);
	rnd_fill(payload, sizeof(payload));
	for (int i = 0; i < 2; i++) {
		random_hdr(&h, ROCE_OPCODE(RC, RDMA_WRITE_ONLY));
		n[i] = roce_build_eth(frame[i], sizeof(frame[i]), mac_b, mac_a, &h, payload,
				      (size_t)(100 + 900 * i), &a);
		EXPECT(n[i] > 0);
		/* headers and the rest as separate pieces, as the model sends them */
		iov[i][0] = (struct iovec){frame[i], 54};
		iov[i][1] = (struct iovec){frame[i] + 54, (size_t)n[i] - 54};
		tx[i] = (struct roce_packet_tx){.iov = iov[i], .iovcnt = 2};
	}
	EXPECT_EQ(roce_packet_send(&pa, tx, 2), 2);
	/* pb hears both; pa (PACKET_IGNORE_OUTGOING) hears the copies lo delivers as incoming */
	for (int tries = 0; got < 2 && tries < 200; tries++) {
		for (int i = 0; i < 4; i++)
			rx[i] = (struct roce_packet_rx){.buf = rb[i], .size = sizeof(rb[i])};
		r = roce_packet_recv(&pb, rx, 4);
		EXPECT(r >= 0);
		for (int i = 0; i < r && got < 2; i++) {
			struct roce_pkt p;
			uint8_t d[6];

			EXPECT_EQ(rx[i].len, (size_t)n[got]);
			EXPECT(!memcmp(rx[i].buf, frame[got], (size_t)n[got]));
			EXPECT_EQ(roce_parse_eth(rx[i].buf, rx[i].len, 0, &p, d, NULL), 0);
			EXPECT(!memcmp(d, mac_b, 6));
			EXPECT_EQ(p.addr.net, ROCE_NET_GRH);
			got++;
		}
		if (got < 2)
			usleep(5000);
	}
	EXPECT_EQ(got, 2);
	roce_packet_port_close(&pa);
	roce_packet_port_close(&pb);
	if (got == 2)
		printf("packet: 2 RoCE v1 frames through AF_PACKET, byte for byte\n");
	return 0;
}

/* A child in its own network namespace with lo up: the sockets tests. 77 = skipped. */
static int net_child(void)
{
	struct ifreq ifr = {0};
	int s;

	if (unshare(CLONE_NEWNET)) {
		printf("udp6, packet: skipped (unshare: %s)\n", strerror(errno));
		return 77;
	}
	s = socket(AF_INET, SOCK_DGRAM, 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr))
		return 1;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr))
		return 1;
	close(s);
	usleep(100000); /* ::1 appears on lo a moment after it is up */
	test_udp6();
	test_packet();
	if (pcap)
		roce_pcap_flush(pcap);
	fflush(NULL);
	return failures;
}

static void test_net(void)
{
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(net_child());
	if (pid < 0 || waitpid(pid, &st, 0) != pid) {
		failures++;
		return;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
		return;
	EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(int argc, char **argv)
{
	int opt;

	while ((opt = getopt(argc, argv, "p:")) != -1) {
		if (opt != 'p') {
			fprintf(stderr, "usage: %s [-p capture.pcap]\n", argv[0]);
			return 2;
		}
		pcap = roce_pcap_open(optarg, ROCE_PCAP_LINKTYPE_ETHERNET);
		if (!pcap) {
			perror(optarg);
			return 2;
		}
	}
	test_roundtrip();
	test_masking();
	test_hostile();
	test_net();
	if (pcap)
		EXPECT_EQ(roce_pcap_close(pcap), 0);
	if (failures) {
		fprintf(stderr, "wire_net_test: %d failure(s)\n", failures);
		return 1;
	}
	printf("wire_net_test: all passed\n");
	return 0;
}
