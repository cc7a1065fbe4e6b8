// SPDX-License-Identifier: MIT
/*
 * bv_relay: a lossy wire between two network interfaces, for the kernels that have no netem.
 * It bridges every Ethernet frame between IF_A and IF_B (AF_PACKET sockets, as a learning-free
 * bridge would), and impairs the RoCE v2 ones (IPv4, UDP to port 4791) on the way:
 *
 *   -l PCT   drop a frame with this probability
 *   -u PCT   deliver it twice
 *   -r PCT   reorder: hold it back and deliver it right after the next frame of its direction
 *   -j MS    delay each frame by a uniform 0..MS ms, keeping the order (jitter, not reordering)
 *   -c N     corrupt N frames that carry a middle packet's payload: one byte changed, the ICRC
 *            recomputed and the UDP checksum cleared, so that only an end-to-end data check
 *            can notice (a negative test of such checks)
 *   -s SEED  the random sequence (default 1)
 *
 * Everything else (ARP, TCP, IPv6) passes at once, unimpaired. SIGUSR1 drops every RoCE frame
 * (a cable cut for RoCE alone) until SIGUSR2; SIGTERM or SIGINT print what was done and exit.
 * Usage: bv_relay -a IF_A -b IF_B [options]; the interfaces need their offloads off (a frame
 * with a checksum left to the hardware would be forwarded with it unfinished).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bv_rand.h"
#include "icrc.h"
#include "roce_hdr.h"

#define FRAME_MAX 9216
#define QUEUE_LEN 8192	       /* frames in flight per direction */
#define HOLD_MAX_NS 20000000ll /* a reordered frame waits at most 20 ms for a successor */

struct frame {
	int64_t due; /* CLOCK_MONOTONIC ns */
	uint16_t len;
	uint8_t data[FRAME_MAX];
};

struct dir_stats {
	uint64_t frames, roce, dropped, duplicated, reordered, delayed, corrupted, overflow, cut;
	uint64_t waits; /* sends that found the outgoing queue full (retried) */
};

/* One direction: frames in from one interface, out to the other, in due order. */
struct dir {
	const char *name;
	int in, out;
	struct frame *q;
	unsigned int head, count;
	int64_t last_due;
	struct frame held; /* a frame held back to be reordered */
	bool holding;
	bool blocked; /* the outgoing queue was full: try again shortly */
	struct dir_stats st;
};

static double p_loss, p_dup, p_reorder;
static int64_t jitter_ns;
static unsigned int corrupt_left;
static uint64_t rng = 1;
static volatile sig_atomic_t cut, stop;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* uniform in [0, 1): a reproducible sequence per seed */
static double rnd(void)
{
	return (double)(bv_rand64(&rng) >> 11) / (double)(1ull << 53);
}

static int open_if(const char *name)
{
	struct sockaddr_ll sa = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL)};
	struct packet_mreq mr = {.mr_type = PACKET_MR_PROMISC};
	int s = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_ALL));
	int one = 1, buf = 1 << 20; /* about 1000 frames: a switch port's buffer */

	sa.sll_ifindex = (int)if_nametoindex(name);
	mr.mr_ifindex = sa.sll_ifindex;
	if (s < 0 || !sa.sll_ifindex || bind(s, (struct sockaddr *)&sa, sizeof(sa)) ||
	    setsockopt(s, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)) ||
	    setsockopt(s, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) ||
	    setsockopt(s, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)) ||
	    setsockopt(s, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf))) {
		fprintf(stderr, "bv_relay: %s: %s\n", name, strerror(errno));
		exit(2);
	}
	return s;
}

/* The RoCE v2 packet in an Ethernet frame: its IPv4 header (no options), or NULL. */
static struct iphdr *roce_ipv4(uint8_t *f, size_t len)
{
	struct ether_header *eth = (struct ether_header *)f;
	struct iphdr *ip = (struct iphdr *)(eth + 1);
	struct udphdr *udp = (struct udphdr *)(ip + 1);

	if (len < sizeof(*eth) + sizeof(*ip) + sizeof(*udp) + ROCE_BTH_LEN + 4 ||
	    eth->ether_type != htons(ETHERTYPE_IP) || ip->version != 4 || ip->ihl != 5 ||
	    ip->protocol != IPPROTO_UDP)
		return NULL;
	return ntohs(udp->dest) == ROCE_V2_UDP_PORT ? ip : NULL;
}

/*
 * Change one payload byte of a middle packet (SEND, WRITE or READ response middle: BTH then
 * payload, nothing else) and make the packet valid again: a new ICRC, no UDP checksum (RoCE v2
 * allows 0). The receiver's device accepts it; only the data is wrong.
 */
static bool corrupt(uint8_t *f, size_t len)
{
	struct iphdr *ip = roce_ipv4(f, len);
	struct udphdr *udp = (struct udphdr *)(ip + 1);
	uint8_t *bth = (uint8_t *)(udp + 1), op = bth[0];
	size_t tlen = len - (size_t)(bth - f) - 4, pad = (bth[1] >> 4) & 3, at;

	/* BTH opcodes (IBTA table 9.2): RC SEND middle, RDMA WRITE middle, READ response middle */
	if ((op != 0x01 && op != 0x07 && op != 0x0e) || tlen <= ROCE_BTH_LEN + pad)
		return false;
	at = ROCE_BTH_LEN + (size_t)(rnd() * (double)(tlen - ROCE_BTH_LEN - pad));
	bth[at] ^= 0x5a;
	udp->check = 0;
	roce_icrc_put(bth + tlen, roce_icrc_ipv4_buf((const uint8_t *)ip, bth, tlen));
	return true;
}

static void enqueue(struct dir *d, const uint8_t *data, size_t len, int64_t due)
{
	struct frame *f;

	if (d->count == QUEUE_LEN) {
		d->st.overflow++;
		return;
	}
	if (due < d->last_due)
		due = d->last_due; /* jitter keeps the order */
	d->last_due = due;
	f = &d->q[(d->head + d->count++) % QUEUE_LEN];
	f->due = due;
	f->len = (uint16_t)len;
	memcpy(f->data, data, len);
}

static void impair(struct dir *d, uint8_t *data, size_t len)
{
	int64_t now = now_ns(), due = now;

	d->st.roce++;
	if (cut) {
		d->st.cut++;
		return;
	}
	if (rnd() < p_loss) {
		d->st.dropped++;
		return;
	}
	if (corrupt_left && corrupt(data, len)) {
		corrupt_left--;
		d->st.corrupted++;
	}
	if (jitter_ns) {
		due += (int64_t)(rnd() * (double)jitter_ns);
		d->st.delayed += due > now;
	}
	if (!d->holding && rnd() < p_reorder) {
		d->held.len = (uint16_t)len;
		d->held.due = now + HOLD_MAX_NS;
		memcpy(d->held.data, data, len);
		d->holding = true;
		d->st.reordered++;
		return;
	}
	enqueue(d, data, len, due);
	if (d->holding) {
		enqueue(d, d->held.data, d->held.len, due);
		d->holding = false;
	}
	if (rnd() < p_dup) {
		enqueue(d, data, len, due);
		d->st.duplicated++;
	}
}

static void receive(struct dir *d)
{
	/* 2 bytes in: the IPv4 header after the 14-byte Ethernet header is 4-byte aligned */
	static uint8_t space[2 + FRAME_MAX] __attribute__((aligned(8)));
	uint8_t *buf = space + 2;

	for (int i = 0; i < 256; i++) {
		ssize_t n = recv(d->in, buf, FRAME_MAX, MSG_DONTWAIT | MSG_TRUNC);

		if (n < 0)
			return;
		if (n > FRAME_MAX) {
			fprintf(stderr, "bv_relay: %s: a %zd-byte frame (offloads on?)\n", d->name,
				n);
			continue;
		}
		d->st.frames++;
		if (roce_ipv4(buf, (size_t)n))
			impair(d, buf, (size_t)n);
		else
			enqueue(d, buf, (size_t)n, now_ns());
	}
}

static void transmit(struct dir *d)
{
	int64_t now = now_ns();

	if (d->holding && d->held.due <= now) {
		/* nothing came behind it: it goes alone, late */
		enqueue(d, d->held.data, d->held.len, now);
		d->holding = false;
	}
	d->blocked = false;
	while (d->count && d->q[d->head].due <= now) {
		struct frame *f = &d->q[d->head];

		if (send(d->out, f->data, f->len, MSG_DONTWAIT) < 0) {
			if (errno == EAGAIN || errno == ENOBUFS) {
				/* the interface's queue is full: wait, as a switch buffers */
				d->st.waits++;
				d->blocked = true;
				return;
			}
			fprintf(stderr, "bv_relay: %s: send: %s\n", d->name, strerror(errno));
		}
		d->head = (d->head + 1) % QUEUE_LEN;
		d->count--;
	}
}

static int64_t next_due(const struct dir *d)
{
	int64_t t = INT64_MAX;

	if (d->blocked)
		return now_ns() + 100000; /* 0.1 ms */
	if (d->count)
		t = d->q[d->head].due;
	if (d->holding && d->held.due < t)
		t = d->held.due;
	return t;
}

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		cut = 1;
	else if (sig == SIGUSR2)
		cut = 0;
	else
		stop = 1;
}

static void report(const struct dir *d)
{
	struct tpacket_stats ks = {0};
	socklen_t kl = sizeof(ks);

	/* frames the kernel dropped before we read them: loss we did not choose */
	getsockopt(d->in, SOL_PACKET, PACKET_STATISTICS, &ks, &kl);
	printf("bv_relay: %s: %u frames dropped by the kernel before the relay read them\n",
	       d->name, ks.tp_drops);
	printf("bv_relay: %s: %llu frames, %llu RoCE: %llu dropped, %llu duplicated, %llu "
	       "reordered, %llu delayed, %llu corrupted, %llu cut, %llu overflowed; %llu sends "
	       "waited for the interface\n",
	       d->name, (unsigned long long)d->st.frames, (unsigned long long)d->st.roce,
	       (unsigned long long)d->st.dropped, (unsigned long long)d->st.duplicated,
	       (unsigned long long)d->st.reordered, (unsigned long long)d->st.delayed,
	       (unsigned long long)d->st.corrupted, (unsigned long long)d->st.cut,
	       (unsigned long long)d->st.overflow, (unsigned long long)d->st.waits);
}

int main(int argc, char **argv)
{
	const char *ifa = NULL, *ifb = NULL;
	struct dir d[2] = {{.name = "a->b"}, {.name = "b->a"}};
	struct sigaction sa = {.sa_handler = on_signal};
	int opt;

	while ((opt = getopt(argc, argv, "a:b:l:u:r:j:c:s:")) != -1) {
		switch (opt) {
		case 'a':
			ifa = optarg;
			break;
		case 'b':
			ifb = optarg;
			break;
		case 'l':
			p_loss = atof(optarg) / 100;
			break;
		case 'u':
			p_dup = atof(optarg) / 100;
			break;
		case 'r':
			p_reorder = atof(optarg) / 100;
			break;
		case 'j':
			jitter_ns = (int64_t)(atof(optarg) * 1e6);
			break;
		case 'c':
			corrupt_left = (unsigned int)atoi(optarg);
			break;
		case 's':
			rng = strtoull(optarg, NULL, 0) | 1;
			break;
		default:
			fprintf(stderr,
				"usage: bv_relay -a IF_A -b IF_B [-l PCT] [-u PCT] [-r PCT] "
				"[-j MS] [-c N] [-s SEED]\n");
			return 2;
		}
	}
	if (!ifa || !ifb)
		return fprintf(stderr, "bv_relay: -a and -b are needed\n"), 2;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	d[0].in = d[1].out = open_if(ifa);
	d[1].in = d[0].out = open_if(ifb);
	for (int i = 0; i < 2; i++) {
		d[i].q = calloc(QUEUE_LEN, sizeof(struct frame));
		if (!d[i].q)
			return fprintf(stderr, "bv_relay: out of memory\n"), 2;
	}
	printf("bv_relay: %s <-> %s: loss %.2f%%, duplication %.2f%%, reordering %.2f%%, jitter "
	       "%.1f ms, %u to corrupt\n",
	       ifa, ifb, p_loss * 100, p_dup * 100, p_reorder * 100, (double)jitter_ns / 1e6,
	       corrupt_left);
	fflush(stdout);
	while (!stop) {
		struct pollfd p[2] = {{.fd = d[0].in, .events = POLLIN},
				      {.fd = d[1].in, .events = POLLIN}};
		int64_t due = next_due(&d[0]) < next_due(&d[1]) ? next_due(&d[0]) : next_due(&d[1]);
		struct timespec ts = {1, 0};

		if (due != INT64_MAX) {
			int64_t w = due - now_ns();

			w = w < 0 ? 0 : w;
			ts = (struct timespec){w / 1000000000, w % 1000000000};
		}
		if (ppoll(p, 2, &ts, NULL) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++) {
			if (p[i].revents & POLLIN)
				receive(&d[i]);
			transmit(&d[i]);
		}
	}
	report(&d[0]);
	report(&d[1]);
	return 0;
}
