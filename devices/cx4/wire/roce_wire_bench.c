// SPDX-License-Identifier: MIT
/*
 * roce_wire_bench: how fast can the RoCE v2 wire layer go on this machine?
 *
 *   1. CRC-32 throughput (PCLMUL and slice-by-8) on 4 KiB buffers;
 *   2. build (payload copy + ICRC) and parse (ICRC check + payload copy) cost per packet;
 *   3. the loopback ceiling: one sender thread, one receiver thread, two UDP ports on their own
 *      127.x addresses, for ACK-sized (20 B) and 4 KiB-payload (4112 B) datagrams, one datagram
 *      per system call vs. sendmmsg/recvmmsg batches vs. UDP GSO + GRO, with and without the
 *      RoCE work (build/parse with ICRC and payload copies, as the model will do it).
 *
 * Not part of the library target; build by hand:
 *   gcc -O2 -D_GNU_SOURCE -Idevices/cx4/wire devices/cx4/wire/roce_wire_bench.c \
 *       devices/cx4/wire/{icrc,roce_opcode,roce_pkt,udp_port}.c -lpthread -o roce_wire_bench
 *   ./roce_wire_bench [-t seconds-per-case]
 * Results on the development machine are in docs/roce-wire.md.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "icrc.h"
#include "roce_pkt.h"
#include "udp_port.h"

#define PAYLOAD 4096
#define GSO_SEGS 15 /* 15 * 4112 = 61680 B, under the 64 KiB datagram limit */
#define MAXBATCH 64
#define WINDOW 256 /* datagrams in flight in the windowed runs (~1 MiB at 4 KiB) */

static double secs_per_case = 2.0;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void pin(int cpu)
{
	cpu_set_t set;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* ---- 1 and 2: CPU cost ------------------------------------------------------------------------
 */

static void bench_crc(void)
{
	static uint8_t buf[PAYLOAD];
	volatile uint32_t sink = 0;
	double t0, t;
	long n;

	memset(buf, 0x5a, sizeof(buf));
	for (int impl = 0; impl < 2; impl++) {
		t0 = now();
		for (n = 0; (t = now()) - t0 < secs_per_case / 2; n++)
			for (int k = 0; k < 64; k++)
				sink += impl ? roce_crc32_portable(sink, buf, sizeof(buf))
					     : roce_crc32(sink, buf, sizeof(buf));
		printf("crc32 %-10s  4 KiB buffers: %6.2f GB/s\n",
		       impl ? "slice-by-8" : roce_crc32_impl(),
		       (double)n * 64 * sizeof(buf) / (t - t0) / 1e9);
	}
}

static void bench_build_parse(void)
{
	static uint8_t src[PAYLOAD], dst[PAYLOAD], pkt[PAYLOAD + 64];
	struct roce_addr a = {.saddr = inet_addr("127.0.0.1"),
			      .daddr = inet_addr("127.0.0.2"),
			      .sport = 4791,
			      .dport = 4791,
			      .ttl = 64};
	struct roce_tx_hdr h = {
	    .opcode = ROCE_OPCODE(RC, RDMA_WRITE_MIDDLE), .pkey = 0xffff, .dqpn = 0x11};
	struct roce_pkt p;
	double t0, t;
	long n = 0;
	ssize_t len = 0;

	memset(src, 0xa5, sizeof(src));
	t0 = now();
	while ((t = now()) - t0 < secs_per_case / 2) {
		for (int k = 0; k < 256; k++, n++) {
			h.psn = (uint32_t)n & 0xffffff;
			len = roce_build_udp(pkt, sizeof(pkt), &h, src, PAYLOAD, &a);
		}
	}
	printf("build 4 KiB WRITE_MIDDLE (copy + ICRC): %6.0f ns/pkt  %5.2f Mpps  %6.2f GB/s\n",
	       (t - t0) / (double)n * 1e9, (double)n / (t - t0) / 1e6,
	       (double)n * PAYLOAD / (t - t0) / 1e9);
	n = 0;
	t0 = now();
	while ((t = now()) - t0 < secs_per_case / 2) {
		for (int k = 0; k < 256; k++, n++) {
			if (roce_parse_udp(pkt, (size_t)len, &a, 0, &p))
				abort();
			memcpy(dst, p.payload, p.payload_len);
		}
	}
	printf("parse 4 KiB WRITE_MIDDLE (ICRC + copy): %6.0f ns/pkt  %5.2f Mpps  %6.2f GB/s\n",
	       (t - t0) / (double)n * 1e9, (double)n / (t - t0) / 1e6,
	       (double)n * PAYLOAD / (t - t0) / 1e9);
}

/* ---- 3: loopback ------------------------------------------------------------------------------
 */

struct lb_case {
	const char *name;
	size_t payload;	     /* RoCE payload bytes (0: ACK) */
	unsigned int batch;  /* datagrams per send/recv call */
	bool gso;	     /* GSO sends of GSO_SEGS datagrams + GRO receive */
	bool roce;	     /* build/parse with ICRC and payload copies */
	unsigned int window; /* 0: flat out; else most datagrams in flight (as RC flow control
			      * will run it: loss-free goodput) */
};

struct lb_run {
	const struct lb_case *c;
	struct roce_udp_port tx, rx;
	size_t dgram; /* UDP payload per RoCE packet */
	atomic_bool stop;
	atomic_bool sender_done;
	long sent, bad;
	atomic_long received;
	double t_send, t_recv;
};

static void *sender(void *arg)
{
	struct lb_run *r = arg;
	const struct lb_case *c = r->c;
	static uint8_t src[PAYLOAD];
	uint8_t *ring = malloc((size_t)MAXBATCH * GSO_SEGS * (PAYLOAD + 64));
	struct iovec iov[MAXBATCH];
	struct roce_udp_tx tx[MAXBATCH];
	struct roce_addr a = {.saddr = r->tx.addr,
			      .daddr = r->rx.addr,
			      .sport = r->tx.port,
			      .dport = r->rx.port,
			      .ttl = 64};
	struct roce_tx_hdr h = {.pkey = 0xffff, .dqpn = 0x11};
	unsigned int per = c->gso ? GSO_SEGS : 1, k;
	uint32_t psn = 0;
	double t0;

	pin(0);
	memset(src, 0x3c, sizeof(src));
	h.opcode = c->payload ? ROCE_OPCODE(RC, RDMA_WRITE_MIDDLE) : ROCE_OPCODE(RC, ACKNOWLEDGE);
	/* without RoCE work: pre-built packets, sent again and again */
	for (k = 0; k < c->batch * per; k++)
		roce_build_udp(ring + k * r->dgram, r->dgram, &h, src, c->payload, &a);
	for (k = 0; k < c->batch; k++) {
		iov[k] = (struct iovec){ring + k * per * r->dgram, per * r->dgram};
		tx[k] = (struct roce_udp_tx){.iov = &iov[k],
					     .iovcnt = 1,
					     .daddr = r->rx.addr,
					     .dport = r->rx.port,
					     .gso_size = c->gso ? (uint16_t)r->dgram : 0};
	}
	t0 = now();
	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		if (c->roce) {
			for (k = 0; k < c->batch * per; k++) {
				h.psn = psn++ & 0xffffff;
				a.ip_id = (uint16_t)(k % per); /* GSO: segment i has ID i */
				roce_build_udp(ring + k * r->dgram, r->dgram, &h, src, c->payload,
					       &a);
			}
		}
		if (c->window) {
			/* spin briefly, then sleep: never a long busy wait */
			for (int spin = 0;
			     r->sent - atomic_load_explicit(&r->received, memory_order_relaxed) >
			     (long)c->window;
			     spin++) {
				if (atomic_load_explicit(&r->stop, memory_order_relaxed))
					break;
				if (spin > 200)
					nanosleep(&(struct timespec){0, 2000}, NULL);
			}
		}
		int n = roce_udp_send(&r->tx, tx, c->batch);

		if (n < 0) {
			fprintf(stderr, "send: %s\n", strerror(-n));
			break;
		}
		r->sent += (long)n * per;
		if ((unsigned int)n < c->batch) {
			/* socket buffer full: wait for room instead of spinning */
			struct pollfd pfd = {.fd = r->tx.fd, .events = POLLOUT};

			poll(&pfd, 1, 1);
		}
	}
	r->t_send = now() - t0;
	atomic_store(&r->sender_done, true);
	free(ring);
	return NULL;
}

static void *receiver(void *arg)
{
	struct lb_run *r = arg;
	const struct lb_case *c = r->c;
	size_t slot = c->gso ? 65536 : r->dgram + 64;
	uint8_t *bufs = malloc((size_t)MAXBATCH * slot);
	static uint8_t dst[PAYLOAD];
	struct roce_udp_rx rx[MAXBATCH];
	double t0 = 0, tlast = 0;
	unsigned int k;

	pin(1);
	for (;;) {
		for (k = 0; k < c->batch; k++)
			rx[k] = (struct roce_udp_rx){.buf = bufs + k * slot, .size = slot};
		int n = roce_udp_recv(&r->rx, rx, c->batch);

		if (n < 0) {
			fprintf(stderr, "recv: %s\n", strerror(-n));
			break;
		}
		if (n == 0) {
			if (atomic_load(&r->sender_done) && roce_udp_wait(&r->rx, 50) == 0)
				break;
			roce_udp_wait(&r->rx, 50);
			continue;
		}
		if (!t0)
			t0 = now();
		for (k = 0; k < (unsigned int)n; k++) {
			size_t seg = rx[k].seg_size ? rx[k].seg_size : rx[k].len;

			for (size_t off = 0; off < rx[k].len; off += seg) {
				size_t len = rx[k].len - off < seg ? rx[k].len - off : seg;

				atomic_fetch_add_explicit(&r->received, 1, memory_order_relaxed);
				if (c->roce) {
					struct roce_pkt p;

					if (roce_parse_udp(rx[k].buf + off, len, &rx[k].addr,
							   ROCE_PARSE_SOLVE_ID, &p)) {
						r->bad++;
						continue;
					}
					memcpy(dst, p.payload, p.payload_len);
				}
			}
		}
		tlast = now();
	}
	r->t_recv = tlast - t0;
	free(bufs);
	return NULL;
}

static int lb_port(struct roce_udp_port *p, unsigned int net, bool gso, bool gro)
{
	struct roce_udp_port_opts o = {.gso = gso, .gro = gro};
	unsigned int pid = (unsigned int)getpid();
	char addr[32];

	snprintf(addr, sizeof(addr), "127.%u.%u.%u", net, (pid >> 8) & 0xff, pid & 0xff);
	return roce_udp_port_open(p, inet_addr(addr), ROCE_V2_UDP_PORT, &o);
}

static void bench_loopback(const struct lb_case *c)
{
	struct lb_run r = {.c = c};
	pthread_t ts, tr;
	int e;

	r.dgram = (size_t)roce_udp_len(c->payload ? ROCE_OPCODE(RC, RDMA_WRITE_MIDDLE)
						  : ROCE_OPCODE(RC, ACKNOWLEDGE),
				       c->payload);
	e = lb_port(&r.tx, 90, c->gso, false);
	if (!e)
		e = lb_port(&r.rx, 91, false, c->gso);
	if (e) {
		fprintf(stderr, "%s: cannot open ports: %s\n", c->name, strerror(-e));
		return;
	}
	pthread_create(&tr, NULL, receiver, &r);
	pthread_create(&ts, NULL, sender, &r);
	usleep((useconds_t)(secs_per_case * 1e6));
	atomic_store(&r.stop, true);
	pthread_join(ts, NULL);
	pthread_join(tr, NULL);
	roce_udp_port_close(&r.tx);
	roce_udp_port_close(&r.rx);

	long received = atomic_load(&r.received);
	double rx_pps = r.t_recv > 0 ? (double)received / r.t_recv : 0;

	printf("%-38s %s %5zu B  tx %6.3f Mpps  rx %6.3f Mpps %6.2f Gb/s  loss %5.1f%%%s\n",
	       c->name, c->window ? "win" : "max", r.dgram, (double)r.sent / r.t_send / 1e6,
	       rx_pps / 1e6, rx_pps * (double)r.dgram * 8 / 1e9,
	       r.sent ? 100.0 * (double)(r.sent - received) / (double)r.sent : 0.0,
	       r.bad ? "  PARSE ERRORS" : "");
}

int main(int argc, char **argv)
{
	static const struct lb_case cases[] = {
	    {"ACK, 1 per syscall", 0, 1, false, false, 0},
	    {"ACK, sendmmsg/recvmmsg x32", 0, 32, false, false, 0},
	    {"ACK, x32, build+parse", 0, 32, false, true, 0},
	    {"4 KiB, 1 per syscall", PAYLOAD, 1, false, false, 0},
	    {"4 KiB, sendmmsg/recvmmsg x32", PAYLOAD, 32, false, false, 0},
	    {"4 KiB, x32, build+parse", PAYLOAD, 32, false, true, 0},
	    {"4 KiB, GSO x15 + GRO", PAYLOAD, 1, true, false, 0},
	    {"4 KiB, GSO x15 + GRO, build+parse", PAYLOAD, 1, true, true, 0},
	    {"4 KiB, GSO x15 x4 + GRO, build+parse", PAYLOAD, 4, true, true, 0},
	};
	int opt;

	while ((opt = getopt(argc, argv, "t:")) != -1) {
		if (opt != 't') {
			fprintf(stderr, "usage: %s [-t seconds-per-case]\n", argv[0]);
			return 2;
		}
		secs_per_case = atof(optarg);
	}
	printf("CPUs online: %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
	bench_crc();
	bench_build_parse();
	printf("loopback, one sender and one receiver thread.  max: sender flat out, the receive\n"
	       "rate is the ceiling and loss counts socket-buffer drops.  win: at most %u\n"
	       "datagrams in flight (loss-free goodput, as RC flow control will run it)\n",
	       (unsigned int)WINDOW);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lb_case w = cases[i];

		bench_loopback(&cases[i]);
		w.window = WINDOW;
		bench_loopback(&w);
	}
	return 0;
}
