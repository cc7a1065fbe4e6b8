// SPDX-License-Identifier: MIT
/*
 * RoCE packet building and parsing, all three network types (see roce_pkt.h).
 *
 * Receive checks, in order (cheap framing first, then the ICRC over the whole packet, then the
 * transport fields, as a NIC counts them: an ICRC error is reported as such even if the
 * corrupted bytes also make the opcode invalid):
 *   IPv4 form: version, IHL, total length, header checksum, fragment, protocol, UDP length,
 *              UDP port, UDP checksum (if non-zero);
 *   IPv6 form: version, payload length, next header UDP, UDP length, port, checksum (if
 *              non-zero);
 *   GRH:       IPVer 6, NxtHdr 0x1B, PayLen;
 *   both:      room for BTH + ICRC, ICRC (Annex A17), TVer (IBTA vol 1 §9.2: packets with an
 *              unsupported TVer are dropped), opcode, room for the opcode's extension headers,
 *              4-byte multiple (pad makes the transport packet a multiple of 4, §9.2 PadCnt),
 *              PadCnt vs payload.
 * Nothing is read outside [buf, buf + len).
 */
#include <string.h>

#include "roce_pkt.h"

static const char *const err_names[] = {
    [0] = "ok",
    [-ROCE_ETRUNC] = "truncated packet",
    [-ROCE_EIPVER] = "IP version is not 4",
    [-ROCE_EIPHDR] = "IPv4 header with options",
    [-ROCE_EIPLEN] = "IPv4 total length disagrees with the frame",
    [-ROCE_EIPFRAG] = "IPv4 fragment",
    [-ROCE_EIPPROTO] = "IPv4 protocol is not UDP",
    [-ROCE_EIPCSUM] = "IPv4 header checksum wrong",
    [-ROCE_EUDPPORT] = "UDP destination port is not 4791",
    [-ROCE_EUDPLEN] = "UDP length disagrees with the IPv4 length",
    [-ROCE_EUDPCSUM] = "UDP checksum wrong",
    [-ROCE_ETVER] = "BTH TVer is not 0",
    [-ROCE_EOPCODE] = "unknown or unsupported opcode",
    [-ROCE_ELEN] = "bad transport length for the opcode",
    [-ROCE_EPAD] = "bad BTH PadCnt",
    [-ROCE_EICRC] = "ICRC mismatch",
    [-ROCE_ENOSPC] = "buffer too small",
    [-ROCE_EINVAL] = "invalid argument",
    [-ROCE_EIP6HDR] = "IPv6 next header is not UDP",
    [-ROCE_EGRH] = "GRH IPVer is not 6 or NxtHdr is not 0x1B",
    [-ROCE_EETHTYPE] = "Ethertype is not IPv4, IPv6 or RoCE",
};

const char *roce_strerror(int err)
{
	if (err > 0 || -err >= (int)(sizeof(err_names) / sizeof(err_names[0])))
		return "unknown error";
	return err_names[-err];
}

/* RFC 1071 one's complement sum, folded, not inverted. */
static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	while (len >= 2) {
		sum += (uint32_t)(p[0] << 8 | p[1]);
		p += 2;
		len -= 2;
	}
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* The RFC 1071 sum of a piece, as if it started at an even offset: 4 bytes per step. */
static uint16_t csum_piece(const uint8_t *p, size_t len)
{
	uint64_t sum = 0;

	for (; len >= 4; p += 4, len -= 4)
		sum += roce_get_be32(p);
	if (len >= 2) {
		sum += (uint32_t)(p[0] << 8 | p[1]) << 16;
		p += 2;
		len -= 2;
		/* the remaining byte, if any, is the high byte of the next 16-bit word */
		if (len)
			sum += (uint32_t)p[0] << 8;
	} else if (len) {
		sum += (uint32_t)p[0] << 24;
	}
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffffffffu) + (sum >> 32);
	return csum_fold((uint32_t)(sum & 0xffff) + (uint32_t)(sum >> 16));
}

void roce_udp6_csum(uint8_t *ip6udp, const struct iovec *iov, int iovcnt)
{
	uint8_t *udp = ip6udp + ROCE_IPV6_HDR_LEN;
	uint16_t ulen = roce_get_be16(udp + 4);
	uint32_t sum;
	size_t off = 0;
	uint16_t c;

	/* RFC 8200 §8.1: source, destination, upper-layer length, next header; then UDP */
	roce_put_be16(udp + 6, 0);
	sum = csum_add(0, ip6udp + 8, 32) + ulen + 17;
	sum += csum_piece(udp, ROCE_UDP_HDR_LEN);
	for (int i = 0; i < iovcnt; i++) {
		c = csum_piece(iov[i].iov_base, iov[i].iov_len);
		/* a piece at an odd offset of the stream adds its sum byte-swapped (RFC 1071) */
		sum += (off & 1) ? (uint16_t)(c << 8 | c >> 8) : c;
		off += iov[i].iov_len;
	}
	c = (uint16_t)~csum_fold(sum);
	roce_put_be16(udp + 6, c ? c : 0xffff); /* 0 means "none" (RFC 768) */
}

static const uint8_t v4mapped_pfx[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

bool roce_gid_is_v4mapped(const uint8_t gid[16])
{
	return !memcmp(gid, v4mapped_pfx, sizeof(v4mapped_pfx));
}

static void gid_of_v4(uint32_t addr, uint8_t gid[16])
{
	memcpy(gid, v4mapped_pfx, sizeof(v4mapped_pfx));
	memcpy(gid + 12, &addr, 4);
}

void roce_addr_sgid(const struct roce_addr *a, uint8_t gid[16])
{
	if (a->net == ROCE_NET_IPV4)
		gid_of_v4(a->saddr, gid);
	else
		memcpy(gid, a->sgid, 16);
}

void roce_addr_dgid(const struct roce_addr *a, uint8_t gid[16])
{
	if (a->net == ROCE_NET_IPV4)
		gid_of_v4(a->daddr, gid);
	else
		memcpy(gid, a->dgid, 16);
}

void roce_addr_set_gids(struct roce_addr *a, uint8_t net, const uint8_t sgid[16],
			const uint8_t dgid[16])
{
	a->net = net;
	if (net == ROCE_NET_IPV4) {
		memcpy(&a->saddr, sgid + 12, 4);
		memcpy(&a->daddr, dgid + 12, 4);
	} else {
		memcpy(a->sgid, sgid, 16);
		memcpy(a->dgid, dgid, 16);
	}
}

int roce_net_hdr_len(uint8_t net)
{
	int n = roce_icrc_net_len(net);

	return n < 0 ? ROCE_EINVAL : n;
}

/* IPv4 + UDP without the header checksum (0): what the ICRC covers, which masks that field. */
static void ipudp_fill(uint8_t *out, const struct roce_addr *a, size_t udp_payload_len)
{
	uint8_t *ip = out, *udp = out + ROCE_IPV4_HDR_LEN;

	ip[0] = 0x45; /* version 4, IHL 5 */
	ip[1] = a->tos;
	roce_put_be16(ip + 2, (uint16_t)(ROCE_IPUDP_LEN + udp_payload_len));
	roce_put_be16(ip + 4, a->ip_id);
	roce_put_be16(ip + 6, 0x4000); /* DF, offset 0 */
	ip[8] = a->ttl;
	ip[9] = 17; /* UDP */
	ip[10] = ip[11] = 0;
	memcpy(ip + 12, &a->saddr, 4);
	memcpy(ip + 16, &a->daddr, 4);

	roce_put_be16(udp, a->sport);
	roce_put_be16(udp + 2, a->dport);
	roce_put_be16(udp + 4, (uint16_t)(ROCE_UDP_HDR_LEN + udp_payload_len));
	roce_put_be16(udp + 6, 0); /* no checksum (SO_NO_CHECK) */
}

/* The IPv6 header and the GRH share a layout (IBTA §8.3); next: 17 (UDP) or 0x1B (BTH). */
static void ip6_fill(uint8_t *out, const struct roce_addr *a, uint16_t paylen, uint8_t next)
{
	roce_put_be32(out, 6u << 28 | (uint32_t)a->tos << 20 | (a->flow_label & 0xfffff));
	roce_put_be16(out + 4, paylen);
	out[6] = next;
	out[7] = a->ttl;
	memcpy(out + 8, a->sgid, 16);
	memcpy(out + 24, a->dgid, 16);
}

/* The network header as the ICRC sees it (the IPv4 header checksum left 0: it is masked). */
static int net_fill(uint8_t *out, const struct roce_addr *a, size_t tlen)
{
	switch (a->net) {
	case ROCE_NET_IPV4:
		ipudp_fill(out, a, tlen);
		return ROCE_IPUDP_LEN;
	case ROCE_NET_IPV6: {
		uint8_t *udp = out + ROCE_IPV6_HDR_LEN;

		ip6_fill(out, a, (uint16_t)(ROCE_UDP_HDR_LEN + tlen), 17);
		roce_put_be16(udp, a->sport);
		roce_put_be16(udp + 2, a->dport);
		roce_put_be16(udp + 4, (uint16_t)(ROCE_UDP_HDR_LEN + tlen));
		roce_put_be16(udp + 6, 0);
		return ROCE_IP6UDP_LEN;
	}
	case ROCE_NET_GRH:
		ip6_fill(out, a, (uint16_t)tlen, ROCE_GRH_NXTHDR_BTH);
		return ROCE_GRH_LEN;
	default:
		return ROCE_EINVAL;
	}
}

void roce_ipv4_udp_hdr(uint8_t *out, const struct roce_addr *a, size_t udp_payload_len)
{
	ipudp_fill(out, a, udp_payload_len);
	roce_put_be16(out + 10, (uint16_t)~csum_fold(csum_add(0, out, ROCE_IPV4_HDR_LEN)));
}

int roce_net_hdr(uint8_t *out, const struct roce_addr *a, size_t tlen)
{
	int n = net_fill(out, a, tlen);

	if (n > 0 && a->net == ROCE_NET_IPV4)
		roce_put_be16(out + 10, (uint16_t)~csum_fold(csum_add(0, out, ROCE_IPV4_HDR_LEN)));
	return n;
}

int roce_hdr_len(uint8_t opcode)
{
	const struct roce_opcode_info *i = roce_opcode_info(opcode);

	return i ? i->hdr_len : ROCE_EOPCODE;
}

static inline uint32_t pad_of(size_t payload_len)
{
	return (uint32_t)(-payload_len & 3);
}

ssize_t roce_udp_len(uint8_t opcode, size_t payload_len)
{
	const struct roce_opcode_info *i = roce_opcode_info(opcode);
	size_t n;

	if (!i)
		return ROCE_EOPCODE;
	if (payload_len && !(i->flags & ROCE_F_PAYLOAD))
		return ROCE_EINVAL;
	if (payload_len > ROCE_MAX_UDP_PAYLOAD)
		return ROCE_EINVAL;
	n = i->hdr_len + payload_len + pad_of(payload_len) + ROCE_ICRC_LEN;
	return n > ROCE_MAX_UDP_PAYLOAD ? ROCE_EINVAL : (ssize_t)n;
}

int roce_write_hdrs(uint8_t *hdr, size_t size, const struct roce_tx_hdr *h, size_t payload_len)
{
	const struct roce_opcode_info *i = roce_opcode_info(h->opcode);
	ssize_t total = roce_udp_len(h->opcode, payload_len);

	if (total < 0)
		return (int)total;
	if (size < i->hdr_len)
		return ROCE_ENOSPC;
	/* 24-bit fields: refuse rather than silently truncate, before writing anything */
	if (h->dqpn > ROCE_QPN_MASK || h->psn > IB_PSN_MASK ||
	    ((i->hdrs & ROCE_HM(DETH)) && h->deth.sqpn > ROCE_QPN_MASK) ||
	    ((i->hdrs & ROCE_HM(AETH)) && h->aeth.msn > 0xffffff))
		return ROCE_EINVAL;

	roce_bth_put(hdr, h->opcode, h->se, h->mig, (uint8_t)pad_of(payload_len), h->pkey, h->fecn,
		     h->becn, h->dqpn, h->ackreq, h->psn);
	if (i->hdrs & ROCE_HM(DETH))
		roce_deth_put(hdr + i->off[ROCE_HDR_DETH], h->deth.qkey, h->deth.sqpn);
	if (i->hdrs & ROCE_HM(RETH))
		roce_reth_put(hdr + i->off[ROCE_HDR_RETH], h->reth.va, h->reth.rkey, h->reth.len);
	if (i->hdrs & ROCE_HM(ATMETH))
		roce_atmeth_put(hdr + i->off[ROCE_HDR_ATMETH], h->atomic.va, h->atomic.rkey,
				h->atomic.swap_add, h->atomic.compare);
	if (i->hdrs & ROCE_HM(AETH))
		roce_aeth_put(hdr + i->off[ROCE_HDR_AETH], h->aeth.syndrome, h->aeth.msn);
	if (i->hdrs & ROCE_HM(ATMACK))
		roce_atmack_put(hdr + i->off[ROCE_HDR_ATMACK], h->atomic_ack_orig);
	if (i->hdrs & ROCE_HM(IMMDT))
		roce_immdt_put_raw(hdr + i->off[ROCE_HDR_IMMDT], h->imm_raw);
	if (i->hdrs & ROCE_HM(IETH))
		roce_ieth_put(hdr + i->off[ROCE_HDR_IETH], h->ieth_rkey);
	if (i->hdrs & ROCE_HM(CNP))
		memset(hdr + i->off[ROCE_HDR_CNP], 0, ROCE_CNP_LEN);
	return i->hdr_len;
}

int roce_write_tail(uint8_t *tail, const struct roce_addr *a, const struct iovec *iov, int iovcnt)
{
	uint8_t nh[ROCE_IP6UDP_LEN];
	struct iovec v[ROCE_MAX_IOV + 1];
	const struct roce_opcode_info *info;
	size_t len = 0;
	uint32_t pad;
	int k;

	if (a->net > ROCE_NET_GRH || iovcnt < 1 || iovcnt > ROCE_MAX_IOV || iov[0].iov_len < ROCE_BTH_LEN)
		return ROCE_EINVAL;
	info = roce_opcode_info(roce_bth_opcode(iov[0].iov_base));
	if (!info || iov[0].iov_len < info->hdr_len)
		return ROCE_EINVAL;
	for (k = 0; k < iovcnt; k++) {
		len += iov[k].iov_len;
		v[k] = iov[k];
	}
	pad = roce_bth_padcnt(iov[0].iov_base);
	/* PadCnt must be what roce_write_hdrs derived from this payload length. */
	if (pad != pad_of(len - info->hdr_len))
		return ROCE_EINVAL;
	len += pad + ROCE_ICRC_LEN;
	if (len > ROCE_MAX_UDP_PAYLOAD)
		return ROCE_EINVAL;

	memset(tail, 0, pad);
	v[iovcnt].iov_base = tail;
	v[iovcnt].iov_len = pad;
	net_fill(nh, a, len); /* per packet: no IPv4 header checksum, the ICRC masks it */
	roce_icrc_put(tail + pad, roce_icrc_net(a->net, nh, v, iovcnt + 1));
	return (int)(pad + ROCE_ICRC_LEN);
}

ssize_t roce_build_udp(uint8_t *buf, size_t size, const struct roce_tx_hdr *h, const void *payload,
		       size_t payload_len, const struct roce_addr *a)
{
	ssize_t total = roce_udp_len(h->opcode, payload_len);
	struct iovec iov;
	int hl, tl;

	if (total < 0)
		return total;
	if (size < (size_t)total)
		return ROCE_ENOSPC;
	/* Place the payload first: it may overlap the header area if the caller put it at buf. */
	hl = roce_hdr_len(h->opcode);
	if (payload_len && payload != buf + hl)
		memmove(buf + hl, payload, payload_len);
	hl = roce_write_hdrs(buf, size, h, payload_len);
	if (hl < 0)
		return hl;
	iov.iov_base = buf;
	iov.iov_len = hl + payload_len;
	tl = roce_write_tail(buf + hl + payload_len, a, &iov, 1);
	if (tl < 0)
		return tl;
	return hl + (ssize_t)payload_len + tl;
}

ssize_t roce_build_net(uint8_t *buf, size_t size, const struct roce_tx_hdr *h, const void *payload,
		       size_t payload_len, const struct roce_addr *a)
{
	int hl = roce_net_hdr_len(a->net);
	ssize_t n;

	if (hl < 0)
		return hl;
	if (size < (size_t)hl)
		return ROCE_ENOSPC;
	n = roce_build_udp(buf + hl, size - (size_t)hl, h, payload, payload_len, a);
	if (n < 0)
		return n;
	roce_net_hdr(buf, a, (size_t)n);
	if (a->net == ROCE_NET_IPV6) {
		struct iovec t = {.iov_base = buf + hl, .iov_len = (size_t)n};

		roce_udp6_csum(buf, &t, 1);
	}
	return n + hl;
}

ssize_t roce_build_ipv4(uint8_t *buf, size_t size, const struct roce_tx_hdr *h, const void *payload,
			size_t payload_len, const struct roce_addr *a)
{
	if (a->net != ROCE_NET_IPV4)
		return ROCE_EINVAL;
	return roce_build_net(buf, size, h, payload, payload_len, a);
}

/*
 * Transport checks shared by every form.  nethdr: the network header the ICRC covers (as on
 * the wire, or synthesized for the UDP form), of type pkt->addr.net.
 */
static int parse_transport(const uint8_t *buf, size_t len, const uint8_t *nethdr,
			   unsigned int flags, struct roce_pkt *pkt)
{
	const struct roce_opcode_info *info;
	size_t body;
	uint32_t icrc;

	if (len < ROCE_BTH_LEN + ROCE_ICRC_LEN)
		return ROCE_ETRUNC;
	if (len > ROCE_MAX_UDP_PAYLOAD)
		return ROCE_ELEN;

	pkt->ip_id_solved = false;
	pkt->icrc = roce_icrc_get(buf + len - ROCE_ICRC_LEN);
	if (!(flags & ROCE_PARSE_NO_ICRC)) {
		icrc = roce_icrc_net_buf(pkt->addr.net, nethdr, buf, len - ROCE_ICRC_LEN);
		if (icrc != pkt->icrc) {
			uint16_t id;

			/* only IPv4 has an ID the receiver may not know */
			if (!(flags & ROCE_PARSE_SOLVE_ID) || pkt->addr.net != ROCE_NET_IPV4 ||
			    roce_icrc_solve_ipv4_id(icrc, pkt->icrc, pkt->addr.ip_id,
						    len - ROCE_ICRC_LEN, &id))
				return ROCE_EICRC;
			pkt->addr.ip_id = id;
			pkt->ip_id_solved = true;
		}
	}

	if (roce_bth_tver(buf) != ROCE_BTH_TVER)
		return ROCE_ETVER;
	info = roce_opcode_info(roce_bth_opcode(buf));
	if (!info)
		return ROCE_EOPCODE;
	if (len < (size_t)info->hdr_len + ROCE_ICRC_LEN)
		return ROCE_ETRUNC;
	if (len & 3)
		return ROCE_ELEN;

	body = len - info->hdr_len - ROCE_ICRC_LEN; /* payload + pad */
	pkt->padcnt = roce_bth_padcnt(buf);
	if (!(info->flags & ROCE_F_PAYLOAD)) {
		if (body)
			return ROCE_ELEN;
		if (pkt->padcnt)
			return ROCE_EPAD;
	} else if (pkt->padcnt > body) {
		return ROCE_EPAD;
	}

	pkt->info = info;
	pkt->bth = buf;
	pkt->opcode = roce_bth_opcode(buf);
	pkt->se = roce_bth_se(buf);
	pkt->mig = roce_bth_mig(buf);
	pkt->pkey = roce_bth_pkey(buf);
	pkt->fecn = roce_bth_fecn(buf);
	pkt->becn = roce_bth_becn(buf);
	pkt->dqpn = roce_bth_dqpn(buf);
	pkt->ackreq = roce_bth_ackreq(buf);
	pkt->psn = roce_bth_psn(buf);
	pkt->payload = buf + info->hdr_len;
	pkt->payload_len = (uint32_t)(body - pkt->padcnt);
	pkt->tlen = (uint32_t)len;
	return 0;
}

int roce_parse_udp(const uint8_t *buf, size_t len, const struct roce_addr *a, unsigned int flags,
		   struct roce_pkt *pkt)
{
	uint8_t nh[ROCE_IP6UDP_LEN];

	if (a->net != ROCE_NET_IPV4 && a->net != ROCE_NET_IPV6)
		return ROCE_EINVAL;
	pkt->addr = *a;
	if (len <= ROCE_MAX_UDP_PAYLOAD)
		net_fill(nh, a, len); /* for the ICRC, which masks the IPv4 header checksum */
	return parse_transport(buf, len, nh, flags & ~ROCE_PARSE_ANY_PORT, pkt);
}

/* UDP header of a datagram carrying ulen UDP bytes; sum: the pseudo-header's sum so far. */
static int parse_udp_hdr(const uint8_t *udp, uint16_t ulen, uint32_t sum, unsigned int flags)
{
	if (!(flags & ROCE_PARSE_ANY_PORT) && roce_get_be16(udp + 2) != ROCE_V2_UDP_PORT)
		return ROCE_EUDPPORT;
	if (roce_get_be16(udp + 6)) {
		/* RFC 768 / RFC 8200 §8.1 pseudo-header, then UDP header + data */
		sum = csum_add(sum, udp, ulen);
		if (csum_fold(sum) != 0xffff)
			return ROCE_EUDPCSUM;
	}
	return 0;
}

int roce_parse_ipv4(const uint8_t *frame, size_t len, unsigned int flags, struct roce_pkt *pkt)
{
	const uint8_t *ip = frame, *udp = frame + ROCE_IPV4_HDR_LEN;
	uint16_t tot, frag, ulen;
	int err;

	if (len < ROCE_IPV4_HDR_LEN)
		return ROCE_ETRUNC;
	if ((ip[0] >> 4) != 4)
		return ROCE_EIPVER;
	if ((ip[0] & 0xf) != 5)
		return ROCE_EIPHDR;
	tot = roce_get_be16(ip + 2);
	if (tot > len || tot < ROCE_IPUDP_LEN)
		return tot > len ? ROCE_ETRUNC : ROCE_EIPLEN;
	if (csum_fold(csum_add(0, ip, ROCE_IPV4_HDR_LEN)) != 0xffff)
		return ROCE_EIPCSUM;
	frag = roce_get_be16(ip + 6);
	if (frag & 0x3fff) /* MF or fragment offset */
		return ROCE_EIPFRAG;
	if (ip[9] != 17)
		return ROCE_EIPPROTO;

	ulen = roce_get_be16(udp + 4);
	if (ulen != tot - ROCE_IPV4_HDR_LEN)
		return ROCE_EUDPLEN;
	err = parse_udp_hdr(udp, ulen, csum_add(0, ip + 12, 8) + 17 + ulen, flags);
	if (err)
		return err;

	memset(&pkt->addr, 0, sizeof(pkt->addr));
	pkt->addr.net = ROCE_NET_IPV4;
	memcpy(&pkt->addr.saddr, ip + 12, 4);
	memcpy(&pkt->addr.daddr, ip + 16, 4);
	pkt->addr.sport = roce_get_be16(udp);
	pkt->addr.dport = roce_get_be16(udp + 2);
	pkt->addr.tos = ip[1];
	pkt->addr.ttl = ip[8];
	pkt->addr.ip_id = roce_get_be16(ip + 4);
	return parse_transport(udp + ROCE_UDP_HDR_LEN, ulen - ROCE_UDP_HDR_LEN, frame,
			       flags & ~ROCE_PARSE_SOLVE_ID, pkt);
}

/* The fields the IPv6 header and the GRH share, into pkt->addr. */
static void ip6_fields(const uint8_t *h, uint8_t net, struct roce_pkt *pkt)
{
	uint32_t w = roce_get_be32(h);

	memset(&pkt->addr, 0, sizeof(pkt->addr));
	pkt->addr.net = net;
	pkt->addr.tos = (uint8_t)(w >> 20);
	pkt->addr.flow_label = w & 0xfffff;
	pkt->addr.ttl = h[7];
	memcpy(pkt->addr.sgid, h + 8, 16);
	memcpy(pkt->addr.dgid, h + 24, 16);
}

int roce_parse_ipv6(const uint8_t *frame, size_t len, unsigned int flags, struct roce_pkt *pkt)
{
	const uint8_t *udp = frame + ROCE_IPV6_HDR_LEN;
	uint16_t plen, ulen;
	uint32_t sum;
	int err;

	if (len < ROCE_IPV6_HDR_LEN)
		return ROCE_ETRUNC;
	if ((frame[0] >> 4) != 6)
		return ROCE_EIPVER;
	plen = roce_get_be16(frame + 4);
	if ((size_t)plen + ROCE_IPV6_HDR_LEN > len)
		return ROCE_ETRUNC;
	if (frame[6] != 17)
		return ROCE_EIP6HDR;
	if (plen < ROCE_UDP_HDR_LEN)
		return ROCE_EIPLEN;
	ulen = roce_get_be16(udp + 4);
	if (ulen != plen)
		return ROCE_EUDPLEN;
	/* pseudo-header: addresses, upper-layer length, next header (RFC 8200 §8.1) */
	sum = csum_add(0, frame + 8, 32) + ulen + 17;
	err = parse_udp_hdr(udp, ulen, sum, flags);
	if (err)
		return err;
	ip6_fields(frame, ROCE_NET_IPV6, pkt);
	pkt->addr.sport = roce_get_be16(udp);
	pkt->addr.dport = roce_get_be16(udp + 2);
	return parse_transport(udp + ROCE_UDP_HDR_LEN, ulen - ROCE_UDP_HDR_LEN, frame,
			       flags & ~ROCE_PARSE_SOLVE_ID, pkt);
}

int roce_parse_grh(const uint8_t *frame, size_t len, unsigned int flags, struct roce_pkt *pkt)
{
	uint16_t plen;

	if (len < ROCE_GRH_LEN)
		return ROCE_ETRUNC;
	if ((frame[0] >> 4) != ROCE_GRH_IPVER || frame[6] != ROCE_GRH_NXTHDR_BTH)
		return ROCE_EGRH;
	plen = roce_get_be16(frame + 4);
	if ((size_t)plen + ROCE_GRH_LEN > len)
		return ROCE_ETRUNC;
	ip6_fields(frame, ROCE_NET_GRH, pkt);
	return parse_transport(frame + ROCE_GRH_LEN, plen, frame,
			       flags & ~(ROCE_PARSE_SOLVE_ID | ROCE_PARSE_ANY_PORT), pkt);
}
