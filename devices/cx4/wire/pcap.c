// SPDX-License-Identifier: MIT
/*
 * pcap writer (see pcap.h).  File layout (pcap-savefile(5)):
 *   file header, 24 bytes, host byte order: magic, version 2.4, thiszone 0, sigfigs 0,
 *   snaplen, linktype;
 *   per record, 16 bytes: ts_sec, ts_nsec (nanosecond magic), incl_len, orig_len; then data.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pcap.h"
#include "roce_eth.h"

#define PCAP_MAGIC_NSEC 0xa1b23c4du
#define PCAP_SNAPLEN 262144u
#define ETH_HDR_LEN 14

struct roce_pcap {
	FILE *f;
	int linktype;
	int err; /* first write error, reported by flush/close */
	pthread_mutex_t lock;
};

struct pcap_file_hdr {
	uint32_t magic;
	uint16_t version_major;
	uint16_t version_minor;
	int32_t thiszone;
	uint32_t sigfigs;
	uint32_t snaplen;
	uint32_t linktype;
};

struct pcap_rec_hdr {
	uint32_t ts_sec;
	uint32_t ts_nsec;
	uint32_t incl_len;
	uint32_t orig_len;
};

_Static_assert(sizeof(struct pcap_file_hdr) == 24, "pcap file header is 24 bytes");
_Static_assert(sizeof(struct pcap_rec_hdr) == 16, "pcap record header is 16 bytes");

struct roce_pcap *roce_pcap_open(const char *path, int linktype)
{
	struct pcap_file_hdr fh = {
	    .magic = PCAP_MAGIC_NSEC,
	    .version_major = 2,
	    .version_minor = 4,
	    .snaplen = PCAP_SNAPLEN,
	    .linktype = (uint32_t)linktype,
	};
	struct roce_pcap *pc;

	if (linktype != ROCE_PCAP_LINKTYPE_ETHERNET && linktype != ROCE_PCAP_LINKTYPE_IPV4) {
		errno = EINVAL;
		return NULL;
	}
	pc = calloc(1, sizeof(*pc));
	if (!pc)
		return NULL;
	pc->f = fopen(path, "wbe");
	if (!pc->f) {
		free(pc);
		return NULL;
	}
	setvbuf(pc->f, NULL, _IOFBF, 1 << 20);
	pc->linktype = linktype;
	pthread_mutex_init(&pc->lock, NULL);
	if (fwrite(&fh, sizeof(fh), 1, pc->f) != 1) {
		int e = errno ? errno : EIO;

		fclose(pc->f);
		pthread_mutex_destroy(&pc->lock);
		free(pc);
		errno = e;
		return NULL;
	}
	return pc;
}

/*
 * A MAC for a packet whose Ethernet header never existed (it went through a UDP socket):
 * 02:00 and the last four bytes of the address, locally administered.
 */
static void mac_of(uint8_t *mac, const uint8_t gid[16])
{
	mac[0] = 0x02;
	mac[1] = 0x00;
	memcpy(mac + 2, gid + 12, 4);
}

/* Write one record: hdr (hlen bytes: link and network headers, as on the wire), then iov. */
static int write_rec(struct roce_pcap *pc, const uint8_t *hdr, size_t hlen,
		     const struct iovec *iov, int iovcnt)
{
	struct pcap_rec_hdr rh;
	struct timespec ts;
	size_t len = hlen;
	int i, ret = 0;

	for (i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	if (len > PCAP_SNAPLEN)
		return -EMSGSIZE;

	clock_gettime(CLOCK_REALTIME, &ts);
	rh.ts_sec = (uint32_t)ts.tv_sec;
	rh.ts_nsec = (uint32_t)ts.tv_nsec;
	rh.incl_len = rh.orig_len = (uint32_t)len;

	pthread_mutex_lock(&pc->lock);
	if (fwrite(&rh, sizeof(rh), 1, pc->f) != 1 || (hlen && fwrite(hdr, hlen, 1, pc->f) != 1))
		ret = -(errno ? errno : EIO);
	for (i = 0; !ret && i < iovcnt; i++)
		if (iov[i].iov_len && fwrite(iov[i].iov_base, iov[i].iov_len, 1, pc->f) != 1)
			ret = -(errno ? errno : EIO);
	if (ret && !pc->err)
		pc->err = ret;
	pthread_mutex_unlock(&pc->lock);
	return ret;
}

int roce_pcap_write_ipv4(struct roce_pcap *pc, const uint8_t *frame, size_t len)
{
	struct iovec iov = {.iov_base = (void *)frame, .iov_len = len};
	uint8_t eth[ETH_HDR_LEN], g[16] = {0};

	if (len < ROCE_IPV4_HDR_LEN)
		return -EINVAL;
	if (pc->linktype != ROCE_PCAP_LINKTYPE_ETHERNET)
		return write_rec(pc, NULL, 0, &iov, 1);
	memcpy(g + 12, frame + 16, 4);
	mac_of(eth, g);
	memcpy(g + 12, frame + 12, 4);
	mac_of(eth + 6, g);
	roce_put_be16(eth + 12, ROCE_ETHERTYPE_IPV4);
	return write_rec(pc, eth, sizeof(eth), &iov, 1);
}

int roce_pcap_write_frame(struct roce_pcap *pc, const struct iovec *iov, int iovcnt)
{
	if (pc->linktype != ROCE_PCAP_LINKTYPE_ETHERNET || iovcnt < 1 ||
	    iov[0].iov_len < ETH_HDR_LEN)
		return -EINVAL;
	return write_rec(pc, NULL, 0, iov, iovcnt);
}

int roce_pcap_write_pkt(struct roce_pcap *pc, const struct roce_addr *a, const uint8_t *dmac,
			const uint8_t *smac, const struct iovec *iov, int iovcnt)
{
	uint8_t hdr[ETH_HDR_LEN + ROCE_IP6UDP_LEN], g[16], d[6], sm[6];
	size_t len = 0, link = pc->linktype == ROCE_PCAP_LINKTYPE_ETHERNET ? ETH_HDR_LEN : 0;
	int i, n;

	for (i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	if (len > ROCE_MAX_UDP_PAYLOAD)
		return -EMSGSIZE;
	if (!link && a->net != ROCE_NET_IPV4)
		return -EINVAL; /* LINKTYPE_IPV4 holds IPv4 datagrams only */
	n = roce_net_hdr(hdr + link, a, len);
	if (n < 0)
		return -EINVAL;
	if (a->net == ROCE_NET_IPV6)
		roce_udp6_csum(hdr + link, iov, iovcnt); /* as the kernel's socket sent it */
	if (link) {
		if (!dmac) {
			roce_addr_dgid(a, g);
			mac_of(d, g);
			dmac = d;
		}
		if (!smac) {
			roce_addr_sgid(a, g);
			mac_of(sm, g);
			smac = sm;
		}
		memcpy(hdr, dmac, 6);
		memcpy(hdr + 6, smac, 6);
		roce_put_be16(hdr + 12, roce_net_ethertype(a->net));
	}
	return write_rec(pc, hdr, link + (size_t)n, iov, iovcnt);
}

int roce_pcap_write_udp(struct roce_pcap *pc, const struct roce_addr *a, const struct iovec *iov,
			int iovcnt)
{
	return roce_pcap_write_pkt(pc, a, NULL, NULL, iov, iovcnt);
}

int roce_pcap_flush(struct roce_pcap *pc)
{
	int ret;

	pthread_mutex_lock(&pc->lock);
	if (fflush(pc->f) && !pc->err)
		pc->err = -(errno ? errno : EIO);
	ret = pc->err;
	pthread_mutex_unlock(&pc->lock);
	return ret;
}

int roce_pcap_close(struct roce_pcap *pc)
{
	int ret;

	if (!pc)
		return 0;
	ret = roce_pcap_flush(pc);
	if (fclose(pc->f) && !ret)
		ret = -(errno ? errno : EIO);
	pthread_mutex_destroy(&pc->lock);
	free(pc);
	return ret;
}
