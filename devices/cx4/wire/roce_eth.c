// SPDX-License-Identifier: MIT
/* RoCE packets as Ethernet II frames (see roce_eth.h). */
#include <string.h>

#include "roce_eth.h"

uint16_t roce_net_ethertype(uint8_t net)
{
	switch (net) {
	case ROCE_NET_IPV4:
		return ROCE_ETHERTYPE_IPV4;
	case ROCE_NET_IPV6:
		return ROCE_ETHERTYPE_IPV6;
	case ROCE_NET_GRH:
		return ROCE_ETHERTYPE_ROCE;
	default:
		return 0;
	}
}

int roce_eth_hdrs(uint8_t *out, const uint8_t dmac[6], const uint8_t smac[6],
		  const struct roce_addr *a, size_t tlen)
{
	uint16_t type = roce_net_ethertype(a->net);
	int n;

	if (!type)
		return ROCE_EINVAL;
	memcpy(out, dmac, 6);
	memcpy(out + 6, smac, 6);
	roce_put_be16(out + 12, type);
	n = roce_net_hdr(out + ROCE_ETH_HDR_LEN, a, tlen);
	return n < 0 ? n : ROCE_ETH_HDR_LEN + n;
}

ssize_t roce_build_eth(uint8_t *buf, size_t size, const uint8_t dmac[6], const uint8_t smac[6],
		       const struct roce_tx_hdr *h, const void *payload, size_t payload_len,
		       const struct roce_addr *a)
{
	uint16_t type = roce_net_ethertype(a->net);
	ssize_t n;

	if (!type)
		return ROCE_EINVAL;
	if (size < ROCE_ETH_HDR_LEN)
		return ROCE_ENOSPC;
	n = roce_build_net(buf + ROCE_ETH_HDR_LEN, size - ROCE_ETH_HDR_LEN, h, payload,
			   payload_len, a);
	if (n < 0)
		return n;
	memcpy(buf, dmac, 6);
	memcpy(buf + 6, smac, 6);
	roce_put_be16(buf + 12, type);
	return n + ROCE_ETH_HDR_LEN;
}

int roce_parse_eth(const uint8_t *frame, size_t len, unsigned int flags, struct roce_pkt *pkt,
		   uint8_t dmac[6], uint8_t smac[6])
{
	const uint8_t *l3 = frame + ROCE_ETH_HDR_LEN;
	size_t l3len = len - ROCE_ETH_HDR_LEN;

	if (len < ROCE_ETH_HDR_LEN)
		return ROCE_ETRUNC;
	if (dmac)
		memcpy(dmac, frame, 6);
	if (smac)
		memcpy(smac, frame + 6, 6);
	switch (roce_get_be16(frame + 12)) {
	case ROCE_ETHERTYPE_IPV4:
		return roce_parse_ipv4(l3, l3len, flags, pkt);
	case ROCE_ETHERTYPE_IPV6:
		return roce_parse_ipv6(l3, l3len, flags, pkt);
	case ROCE_ETHERTYPE_ROCE:
		return roce_parse_grh(l3, l3len, flags, pkt);
	default:
		return ROCE_EETHTYPE;
	}
}
