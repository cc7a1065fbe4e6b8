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

/* Locally administered unicast MAC derived from an IPv4 address: 02:00:a.b.c.d. */
static void mac_of(uint8_t *mac, uint32_t addr_be)
{
	mac[0] = 0x02;
	mac[1] = 0x00;
	memcpy(mac + 2, &addr_be, 4);
}

/*
 * Write one record: the link header (if Ethernet), then ipudp (28 bytes or NULL when the
 * datagram's own header is in iov), then iov.  Caller holds no lock.
 */
static int write_rec(struct roce_pcap *pc, const uint8_t *ipudp, const struct iovec *iov,
		     int iovcnt)
{
	struct pcap_rec_hdr rh;
	uint8_t eth[ETH_HDR_LEN];
	const uint8_t *ip;
	struct timespec ts;
	size_t len = 0, link = 0;
	uint32_t saddr, daddr;
	int i, ret = 0;

	for (i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	ip = ipudp ? ipudp : (const uint8_t *)iov[0].iov_base;
	if (ipudp)
		len += ROCE_IPUDP_LEN;
	if (len < ROCE_IPV4_HDR_LEN || (!ipudp && iov[0].iov_len < ROCE_IPV4_HDR_LEN))
		return -EINVAL;
	if (pc->linktype == ROCE_PCAP_LINKTYPE_ETHERNET) {
		memcpy(&saddr, ip + 12, 4);
		memcpy(&daddr, ip + 16, 4);
		mac_of(eth, daddr);
		mac_of(eth + 6, saddr);
		eth[12] = 0x08; /* EtherType IPv4 */
		eth[13] = 0x00;
		link = ETH_HDR_LEN;
	}
	if (len + link > PCAP_SNAPLEN)
		return -EMSGSIZE;

	clock_gettime(CLOCK_REALTIME, &ts);
	rh.ts_sec = (uint32_t)ts.tv_sec;
	rh.ts_nsec = (uint32_t)ts.tv_nsec;
	rh.incl_len = rh.orig_len = (uint32_t)(len + link);

	pthread_mutex_lock(&pc->lock);
	if (fwrite(&rh, sizeof(rh), 1, pc->f) != 1 || (link && fwrite(eth, link, 1, pc->f) != 1) ||
	    (ipudp && fwrite(ipudp, ROCE_IPUDP_LEN, 1, pc->f) != 1))
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

	return write_rec(pc, NULL, &iov, 1);
}

int roce_pcap_write_udp(struct roce_pcap *pc, const struct roce_addr *a, const struct iovec *iov,
			int iovcnt)
{
	uint8_t ipudp[ROCE_IPUDP_LEN];
	size_t len = 0;
	int i;

	for (i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	if (len > ROCE_MAX_UDP_PAYLOAD)
		return -EMSGSIZE;
	roce_ipv4_udp_hdr(ipudp, a, len);
	return write_rec(pc, ipudp, iov, iovcnt);
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
