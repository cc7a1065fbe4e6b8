/* SPDX-License-Identifier: MIT */
/*
 * Building and parsing RoCE packets of the three network types (enum roce_net):
 *
 *   RoCE v2 / IPv4 (Annex A17): IPv4 (20, DF, proto 17) | UDP (8, dst 4791) | BTH (12) | ETHs |
 *                               payload | pad | ICRC
 *   RoCE v2 / IPv6 (Annex A17): IPv6 (40, next header 17) | UDP (8, dst 4791) | BTH | ... | ICRC
 *   RoCE v1 (Annex A16):        GRH (40, NxtHdr 0x1B) | BTH | ... | ICRC      (Ethertype 0x8915)
 *
 * The forms of a packet:
 *  - the "UDP form": the UDP payload, BTH..ICRC, which is what a UDP socket sends and receives;
 *  - the "network form": the network header (IPv4 + UDP, IPv6 + UDP, or the GRH) and the
 *    transport packet, as seen on a wire or in a pcap (roce_net_hdr writes the header);
 *  - the Ethernet frame (roce_eth.h): 14 bytes of Ethernet II in front of the network form.
 * For IPv4 the network form is also called the "IPv4 form" (roce_build_ipv4, roce_parse_ipv4).
 *
 * The ICRC covers the IPv4 and UDP headers, so a sender in the UDP form must know the exact
 * header the kernel will put in front of its datagram.  A Linux UDP socket produces a
 * deterministic header only when it is unconnected and has IP_MTU_DISCOVER = IP_PMTUDISC_DO:
 * then every datagram leaves with IP ID 0 and DF set (shared/research/cx4.md §4.8, and the
 * kernel's ip_select_ident_segs: DF set and no connected destination -> id = 0).  udp_port.c opens
 * sockets exactly like that, with SO_NO_CHECK (UDP checksum 0, the RoCE convention); TTL and TOS
 * are free because the ICRC masks them.  roce_ipv4_udp_hdr() produces that same header.
 *
 * Receivers in the UDP form learn the addresses and ports from recvmsg (IP_PKTINFO) but not the
 * sender's IP ID; see ROCE_PARSE_SOLVE_ID.
 *
 * All lengths are checked before any byte is read; a hostile packet yields a ROCE_E* code.
 */
#ifndef BV_ROCE_PKT_H
#define BV_ROCE_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "icrc.h"
#include "roce_hdr.h"
#include "roce_opcode.h"

/* Largest UDP payload of one IPv4 datagram (65535 - 20 - 8). */
#define ROCE_MAX_UDP_PAYLOAD 65507

/* Most iovec pieces roce_write_tail accepts (headers + scattered payload). */
#define ROCE_MAX_IOV 64

/* Errors (negative return values).  roce_strerror() names them. */
enum roce_err {
	ROCE_OK = 0,
	ROCE_ETRUNC = -1,    /* buffer ends before a header or the ICRC */
	ROCE_EIPVER = -2,    /* IP version is not 4 */
	ROCE_EIPHDR = -3,    /* IPv4 header length is not 20 (options are not supported) */
	ROCE_EIPLEN = -4,    /* IPv4 total length disagrees with the buffer */
	ROCE_EIPFRAG = -5,   /* IPv4 fragment (MF set or fragment offset != 0) */
	ROCE_EIPPROTO = -6,  /* IPv4 protocol is not UDP */
	ROCE_EIPCSUM = -7,   /* IPv4 header checksum wrong */
	ROCE_EUDPPORT = -8,  /* UDP destination port is not 4791 */
	ROCE_EUDPLEN = -9,   /* UDP length disagrees with the IPv4 length */
	ROCE_EUDPCSUM = -10, /* non-zero UDP checksum wrong */
	ROCE_ETVER = -11,    /* BTH transport header version is not 0 */
	ROCE_EOPCODE = -12,  /* opcode not defined or not supported (see roce_opcode.h) */
	ROCE_ELEN = -13,     /* transport length not a multiple of 4, or bytes after the headers
			      * of an opcode that carries no payload */
	ROCE_EPAD = -14,     /* PadCnt larger than the payload, or non-zero without payload */
	ROCE_EICRC = -15,    /* ICRC mismatch */
	ROCE_ENOSPC = -16,   /* builder: output buffer too small */
	ROCE_EINVAL = -17,   /* builder: argument out of range (payload on a header-only opcode,
			      * packet longer than one datagram, unknown opcode, bad iovec) */
	ROCE_EIP6HDR = -18,  /* IPv6: next header is not UDP (extension headers: not supported) */
	ROCE_EGRH = -19,     /* GRH: IPVer is not 6 or NxtHdr is not 0x1B */
	ROCE_EETHTYPE = -20, /* Ethernet frame of another Ethertype (roce_eth.h) */
};

const char *roce_strerror(int err);

/*
 * Network-layer fields of one packet. net says which header they describe (a zeroed struct
 * is IPv4, as before there were other types). IPv4 addresses in network byte order (struct
 * in_addr.s_addr) in saddr/daddr; IPv6 addresses and GRH GIDs in sgid/dgid; ports in host order.
 * tos = DSCP << 2 | ECN (the IPv6 traffic class, the GRH TClass); ttl = TTL or hop limit;
 * ip_id is the IPv4 Identification; flow_label the IPv6 / GRH flow label (20 bits).
 */
struct roce_addr {
	uint32_t saddr;
	uint32_t daddr;
	uint16_t sport;
	uint16_t dport;
	uint8_t tos;
	uint8_t ttl;
	uint16_t ip_id;
	uint8_t net; /* enum roce_net */
	uint32_t flow_label;
	uint8_t sgid[16], dgid[16];
};

/* The source / destination as a GID, whatever the type (IPv4 as ::ffff:a.b.c.d). */
void roce_addr_sgid(const struct roce_addr *a, uint8_t gid[16]);
void roce_addr_dgid(const struct roce_addr *a, uint8_t gid[16]);
/* Set both ends from GIDs for network type net (IPv4: the GIDs are IPv4-mapped). */
void roce_addr_set_gids(struct roce_addr *a, uint8_t net, const uint8_t sgid[16],
			const uint8_t dgid[16]);
/* True for ::ffff:a.b.c.d. */
bool roce_gid_is_v4mapped(const uint8_t gid[16]);

/* Bytes of network header of type net (28, 48, 40), or ROCE_EINVAL. */
int roce_net_hdr_len(uint8_t net);

/*
 * The network header of a packet whose transport part (BTH..ICRC) is tlen bytes: IPv4 + UDP
 * (roce_ipv4_udp_hdr below), IPv6 + UDP (version 6, a->tos, a->flow_label, payload length,
 * next header 17, a->ttl, addresses; UDP checksum 0, RFC 6935 as for tunnels: the ICRC covers
 * the payload) or the GRH (IPVer 6, TClass, FlowLabel, PayLen = tlen, NxtHdr 0x1B, HopLmt,
 * GIDs). Returns its length, or ROCE_EINVAL for an unknown type.
 */
int roce_net_hdr(uint8_t *out, const struct roce_addr *a, size_t tlen);

/*
 * Fill in the UDP checksum of an IPv6 + UDP header (roce_net_hdr) over the transport packet
 * iov (BTH..ICRC, in any pieces): what a kernel socket sends, and what tshark expects of an
 * IPv6 frame (a zero one is legal only for tunnels, RFC 6936).
 */
void roce_udp6_csum(uint8_t *ip6udp, const struct iovec *iov, int iovcnt);

/*
 * The 28-byte IPv4 + UDP header of a datagram carrying udp_payload_len bytes: version 4, IHL 5,
 * a->tos, total length, a->ip_id, DF, a->ttl, protocol 17, correct header checksum, addresses,
 * ports, UDP length, UDP checksum 0.  With a->ip_id = 0 this is byte-for-byte what Linux writes
 * for a socket opened by roce_udp_port_open (tests/cx4/wire_test.c checks it through a TUN
 * device when it may create one).
 */
void roce_ipv4_udp_hdr(uint8_t *out, const struct roce_addr *a, size_t udp_payload_len);

/* What to put in a packet's BTH and extension headers; only the headers the opcode carries are
 * written (roce_opcode_table[opcode].hdrs). */
struct roce_tx_hdr {
	uint8_t opcode;
	bool se, mig, fecn, becn, ackreq;
	uint16_t pkey;
	uint32_t dqpn; /* 24 bit */
	uint32_t psn;  /* 24 bit */
	struct {
		uint64_t va;
		uint32_t rkey, len;
	} reth;
	struct {
		uint64_t va;
		uint32_t rkey;
		uint64_t swap_add, compare;
	} atomic;
	struct {
		uint8_t syndrome;
		uint32_t msn;
	} aeth;
	uint64_t atomic_ack_orig;
	uint32_t imm_raw; /* ImmDt, network byte order (as ibv_send_wr.imm_data) */
	uint32_t ieth_rkey;
	struct {
		uint32_t qkey, sqpn;
	} deth;
};

/* BTH + extension header bytes of an opcode, ROCE_EOPCODE if unknown. */
int roce_hdr_len(uint8_t opcode);

/* Bytes of the UDP form (BTH..ICRC) for an opcode and payload length, or a ROCE_E* code. */
ssize_t roce_udp_len(uint8_t opcode, size_t payload_len);

/*
 * Zero-copy build, step 1: write BTH + extension headers into hdr (PadCnt from payload_len).
 * Returns the header length.  The payload can then be sent from anywhere (iovecs).
 */
int roce_write_hdrs(uint8_t *hdr, size_t size, const struct roce_tx_hdr *h, size_t payload_len);

/*
 * Zero-copy build, step 2: iov[0] starts with the headers written by roce_write_hdrs, the rest
 * of iov is the payload.  Writes the pad bytes (zero) and the ICRC for the network header
 * roce_net_hdr(a, ...) into tail (at most 3 + 4 bytes) and returns the tail length; the
 * datagram is iov followed by tail.
 */
int roce_write_tail(uint8_t *tail, const struct roce_addr *a, const struct iovec *iov, int iovcnt);

/*
 * One-shot builds into a contiguous buffer; payload may already sit at its place in buf (then
 * it is not copied).  Return the number of bytes written or a ROCE_E* code.
 *   roce_build_udp:  the UDP form, BTH..ICRC, for a kernel UDP socket.
 *   roce_build_net:  the network form of type a->net: roce_net_hdr() + the transport packet
 *                    (IPv6: with its UDP checksum, roce_udp6_csum).
 *   roce_build_ipv4: the same for IPv4 (a->net must be ROCE_NET_IPV4).
 */
ssize_t roce_build_udp(uint8_t *buf, size_t size, const struct roce_tx_hdr *h, const void *payload,
		       size_t payload_len, const struct roce_addr *a);
ssize_t roce_build_net(uint8_t *buf, size_t size, const struct roce_tx_hdr *h, const void *payload,
		       size_t payload_len, const struct roce_addr *a);
ssize_t roce_build_ipv4(uint8_t *buf, size_t size, const struct roce_tx_hdr *h, const void *payload,
			size_t payload_len, const struct roce_addr *a);

/* A parsed, validated packet.  Pointers refer into the caller's buffer. */
struct roce_pkt {
	const struct roce_opcode_info *info;
	const uint8_t *bth;
	uint8_t opcode;
	uint8_t padcnt;
	bool se, mig, fecn, becn, ackreq;
	uint16_t pkey;
	uint32_t dqpn;
	uint32_t psn;
	const uint8_t *payload;
	uint32_t payload_len; /* without pad */
	uint32_t tlen;	      /* BTH..ICRC inclusive */
	uint32_t icrc;
	struct roce_addr addr; /* from the IPv4/UDP header, or as given for the UDP form */
	bool ip_id_solved;     /* ICRC matched with a solved IP ID (now in addr.ip_id) */
};

/* Pointer to extension header h of a parsed packet, NULL if the opcode does not carry it. */
static inline const uint8_t *roce_pkt_hdr(const struct roce_pkt *p, enum roce_hdr_idx h)
{
	return (p->info->hdrs & (1u << h)) ? p->bth + p->info->off[h] : NULL;
}

enum {
	/* Do not verify the ICRC (everything else still is). */
	ROCE_PARSE_NO_ICRC = 1u << 0,
	/* UDP form: if the ICRC does not match with addr->ip_id, accept the packet when some other
	 * IPv4 ID makes it match (peers that are not kernel-socket senders: rxe, real NICs). */
	ROCE_PARSE_SOLVE_ID = 1u << 1,
	/* IPv4 form: accept any UDP destination port (non-standard RoCE port). */
	ROCE_PARSE_ANY_PORT = 1u << 2,
};

/*
 * Parse the UDP form (buf = UDP payload as received).  a: the datagram's addresses and ports as
 * reported by recvmsg (source from msg_name, destination from IP_PKTINFO ipi_addr or
 * IPV6_PKTINFO, dport = the bound port), a->net IPv4 or IPv6, ip_id = the ID to assume (0 for
 * senders using this library); tos, ttl and the flow label are unused by the check (masked).
 * Returns 0 and fills pkt, or a ROCE_E* code.
 */
int roce_parse_udp(const uint8_t *buf, size_t len, const struct roce_addr *a, unsigned int flags,
		   struct roce_pkt *pkt);

/* Parse the IPv4 form (frame starts at the IPv4 header; bytes after the IPv4 total length,
 * e.g. Ethernet padding, are ignored).  Returns 0 and fills pkt, or a ROCE_E* code. */
int roce_parse_ipv4(const uint8_t *frame, size_t len, unsigned int flags, struct roce_pkt *pkt);

/* The same for an IPv6 datagram (no extension headers; UDP checksum 0 accepted, RFC 6936) and
 * for a RoCE v1 packet starting at its GRH (IPVer 6, NxtHdr 0x1B, PayLen within the frame). */
int roce_parse_ipv6(const uint8_t *frame, size_t len, unsigned int flags, struct roce_pkt *pkt);
int roce_parse_grh(const uint8_t *frame, size_t len, unsigned int flags, struct roce_pkt *pkt);

#endif /* BV_ROCE_PKT_H */
