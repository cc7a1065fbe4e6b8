/* SPDX-License-Identifier: MIT */
/*
 * pcap writer for the modelled RoCE wire.
 *
 * Every packet is written whole, so that tshark/Wireshark dissect it: RoCE v2 over IPv4 or
 * IPv6 ("infiniband" dissector, UDP port 4791, shown as "RRoCE") and RoCE v1 (Ethertype 0x8915,
 * shown as "RoCE"); tests/cx4/icrc_check.py re-verifies every ICRC in such a file.  Format:
 * classic libpcap file with nanosecond timestamps (magic 0xa1b23c4d, version 2.4;
 * pcap-savefile(5) / "PCAP Capture File Format" draft-ietf-opsawg-pcap) and either
 *   LINKTYPE_ETHERNET (1): Ethernet II frames: as they were (roce_pcap_write_frame), or with the
 *                          MACs given, or synthesized 02:00:<last 4 bytes of the address>; or
 *   LINKTYPE_IPV4 (228):   the IPv4 datagram alone (RoCE v2 over IPv4 only).
 * Packets sent or received through a UDP socket have no IP/UDP header in user space; for those
 * the writer synthesizes it with roce_net_hdr() from the addresses the socket used or
 * reported, i.e. exactly the header the ICRC was computed (or verified) over.
 *
 * One writer may be shared by threads (records are written under a mutex).
 */
#ifndef BV_ROCE_PCAP_H
#define BV_ROCE_PCAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "roce_pkt.h"

#define ROCE_PCAP_LINKTYPE_ETHERNET 1
#define ROCE_PCAP_LINKTYPE_IPV4 228

struct roce_pcap;

/* Create/truncate path and write the file header.  NULL with errno set on failure. */
struct roce_pcap *roce_pcap_open(const char *path, int linktype);

/* Append one IPv4 datagram (starting at the IPv4 header).  0 or -errno. */
int roce_pcap_write_ipv4(struct roce_pcap *pc, const uint8_t *frame, size_t len);

/* Append the packet whose transport part (BTH..ICRC, the UDP payload of RoCE v2) is the
 * concatenation of iov, behind the network header roce_net_hdr(a, length) and, for an
 * Ethernet file, an Ethernet header with dmac/smac (NULL: synthesized).  0 or -errno. */
int roce_pcap_write_pkt(struct roce_pcap *pc, const struct roce_addr *a, const uint8_t *dmac,
			const uint8_t *smac, const struct iovec *iov, int iovcnt);
/* The same with synthesized MACs. */
int roce_pcap_write_udp(struct roce_pcap *pc, const struct roce_addr *a, const struct iovec *iov,
			int iovcnt);
/* Append an Ethernet frame as it is (the concatenation of iov; Ethernet files only). */
int roce_pcap_write_frame(struct roce_pcap *pc, const struct iovec *iov, int iovcnt);

/* Push buffered records to the file.  0 or -errno. */
int roce_pcap_flush(struct roce_pcap *pc);

/* Flush, close and free (NULL is ignored).  0 or -errno of the first failure. */
int roce_pcap_close(struct roce_pcap *pc);

#endif /* BV_ROCE_PCAP_H */
