/* SPDX-License-Identifier: MIT */
/*
 * RoCE packets as Ethernet II frames: what a cable, an AF_PACKET socket and a pcap carry.
 *
 *   destination MAC 6 | source MAC 6 | Ethertype 2 | network form (roce_pkt.h)
 *   Ethertype 0x0800 RoCE v2 / IPv4, 0x86dd RoCE v2 / IPv6, 0x8915 RoCE v1 (GRH)
 *
 * No VLAN tag (not modelled) and no FCS (the NIC's MAC adds and strips it). A frame shorter
 * than 60 bytes would be padded on a real link; the parsers ignore bytes after the network
 * header's own length, so padding does no harm.
 */
#ifndef BV_ROCE_ETH_H
#define BV_ROCE_ETH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "roce_pkt.h"

/* The Ethertype of network type net, 0 for an unknown one. */
uint16_t roce_net_ethertype(uint8_t net);

/*
 * The Ethernet and network headers of a frame whose transport part (BTH..ICRC) is tlen bytes,
 * for a->net: ROCE_ETH_HDR_LEN + roce_net_hdr_len(a->net) bytes (at most 62) into out.
 * Returns their length or ROCE_EINVAL.
 */
int roce_eth_hdrs(uint8_t *out, const uint8_t dmac[6], const uint8_t smac[6],
		  const struct roce_addr *a, size_t tlen);

/* A whole frame into buf (roce_build_net behind the Ethernet header); length or ROCE_E*. */
ssize_t roce_build_eth(uint8_t *buf, size_t size, const uint8_t dmac[6], const uint8_t smac[6],
		       const struct roce_tx_hdr *h, const void *payload, size_t payload_len,
		       const struct roce_addr *a);

/*
 * Parse a frame: the Ethertype selects roce_parse_ipv4 / _ipv6 / _grh (ROCE_EETHTYPE for any
 * other). dmac/smac (may be NULL) receive the frame's addresses. flags as roce_parse_*.
 */
int roce_parse_eth(const uint8_t *frame, size_t len, unsigned int flags, struct roce_pkt *pkt,
		   uint8_t dmac[6], uint8_t smac[6]);

#endif /* BV_ROCE_ETH_H */
