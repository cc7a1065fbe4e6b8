// SPDX-License-Identifier: MIT
/*
 * RoCE v2 packet building and parsing (see roce_pkt.h).
 *
 * Receive checks, in order (cheap framing first, then the ICRC over the whole packet, then the
 * transport fields, as a NIC counts them: an ICRC error is reported as such even if the
 * corrupted bytes also make the opcode invalid):
 *   IPv4 form: version, IHL, total length, header checksum, fragment, protocol, UDP length,
 *              UDP port, UDP checksum (if non-zero);
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

/* The header without its checksum (0): what the ICRC covers, which masks that field. */
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

void roce_ipv4_udp_hdr(uint8_t *out, const struct roce_addr *a, size_t udp_payload_len)
{
	ipudp_fill(out, a, udp_payload_len);
	roce_put_be16(out + 10, (uint16_t)~csum_fold(csum_add(0, out, ROCE_IPV4_HDR_LEN)));
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
	if (h->dqpn > ROCE_QPN_MASK || h->psn > ROCE_PSN_MASK ||
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
	uint8_t ipudp[ROCE_IPUDP_LEN];
	struct iovec v[ROCE_MAX_IOV + 1];
	const struct roce_opcode_info *info;
	size_t len = 0;
	uint32_t pad;
	int k;

	if (iovcnt < 1 || iovcnt > ROCE_MAX_IOV || iov[0].iov_len < ROCE_BTH_LEN)
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
	ipudp_fill(ipudp, a, len); /* per packet: no header checksum, the ICRC masks it */
	roce_icrc_put(tail + pad, roce_icrc_ipv4(ipudp, v, iovcnt + 1));
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

ssize_t roce_build_ipv4(uint8_t *buf, size_t size, const struct roce_tx_hdr *h, const void *payload,
			size_t payload_len, const struct roce_addr *a)
{
	ssize_t n;

	if (size < ROCE_IPUDP_LEN)
		return ROCE_ENOSPC;
	n = roce_build_udp(buf + ROCE_IPUDP_LEN, size - ROCE_IPUDP_LEN, h, payload, payload_len, a);
	if (n < 0)
		return n;
	roce_ipv4_udp_hdr(buf, a, (size_t)n);
	return n + ROCE_IPUDP_LEN;
}

/*
 * Transport checks shared by both forms.  ipudp: the 28-byte header the ICRC covers (as on the
 * wire, or synthesized for the UDP form).
 */
static int parse_transport(const uint8_t *buf, size_t len, uint8_t *ipudp, unsigned int flags,
			   struct roce_pkt *pkt)
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
		icrc = roce_icrc_ipv4_buf(ipudp, buf, len - ROCE_ICRC_LEN);
		if (icrc != pkt->icrc) {
			uint16_t id;

			if (!(flags & ROCE_PARSE_SOLVE_ID) ||
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
	uint8_t ipudp[ROCE_IPUDP_LEN];

	pkt->addr = *a;
	if (len <= ROCE_MAX_UDP_PAYLOAD)
		ipudp_fill(ipudp, a, len); /* for the ICRC, which masks the header checksum */
	return parse_transport(buf, len, ipudp, flags & ~ROCE_PARSE_ANY_PORT, pkt);
}

int roce_parse_ipv4(const uint8_t *frame, size_t len, unsigned int flags, struct roce_pkt *pkt)
{
	const uint8_t *ip = frame, *udp = frame + ROCE_IPV4_HDR_LEN;
	uint8_t ipudp[ROCE_IPUDP_LEN];
	uint16_t tot, frag, ulen, ucsum;
	uint32_t sum;

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
	if (!(flags & ROCE_PARSE_ANY_PORT) && roce_get_be16(udp + 2) != ROCE_V2_UDP_PORT)
		return ROCE_EUDPPORT;
	ucsum = roce_get_be16(udp + 6);
	if (ucsum) {
		/* RFC 768 pseudo-header: addresses, protocol, UDP length; then UDP header + data.
		 */
		sum = csum_add(0, ip + 12, 8) + 17 + ulen;
		sum = csum_add(sum, udp, ulen);
		if (csum_fold(sum) != 0xffff)
			return ROCE_EUDPCSUM;
	}

	memcpy(&pkt->addr.saddr, ip + 12, 4);
	memcpy(&pkt->addr.daddr, ip + 16, 4);
	pkt->addr.sport = roce_get_be16(udp);
	pkt->addr.dport = roce_get_be16(udp + 2);
	pkt->addr.tos = ip[1];
	pkt->addr.ttl = ip[8];
	pkt->addr.ip_id = roce_get_be16(ip + 4);
	memcpy(ipudp, frame, ROCE_IPUDP_LEN);
	return parse_transport(udp + ROCE_UDP_HDR_LEN, ulen - ROCE_UDP_HDR_LEN, ipudp,
			       flags & ~ROCE_PARSE_SOLVE_ID, pkt);
}
