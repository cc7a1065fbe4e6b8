// SPDX-License-Identifier: MIT
/* Network baselines on loopback: the best UDP throughput and packet rate, UDP ping-pong
 * latency (busy-polling and blocking), one TCP stream. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "baseline.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

#define BATCH 64

static atomic_int stop_flag;

static int udp_socket(struct sockaddr_in *sa, int bufsz)
{
	socklen_t len = sizeof(*sa);
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	if (s < 0)
		bl_die("socket");
	setsockopt(s, SOL_SOCKET, SO_RCVBUF, &bufsz, sizeof(bufsz));
	setsockopt(s, SOL_SOCKET, SO_SNDBUF, &bufsz, sizeof(bufsz));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa->sin_port = 0;
	if (bind(s, (struct sockaddr *)sa, sizeof(*sa)) || getsockname(s, (struct sockaddr *)sa, &len))
		bl_die("bind");
	return s;
}

struct rx_arg {
	int fd;
	size_t bufsz;
	_Atomic uint64_t bytes, pkts; /* read by the sender's clock loop */
	bool gro;
};

static void *udp_rx(void *p)
{
	struct rx_arg *a = p;
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	char *buf = malloc(a->bufsz * BATCH);
	struct timeval tv = { 0, 100000 };

	setsockopt(a->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	memset(msgs, 0, sizeof(msgs));
	for (int i = 0; i < BATCH; i++) {
		iov[i].iov_base = buf + i * a->bufsz;
		iov[i].iov_len = a->bufsz;
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	while (!atomic_load(&stop_flag)) {
		int n = recvmmsg(a->fd, msgs, BATCH, MSG_WAITFORONE, NULL);
		uint64_t bytes = 0;

		for (int i = 0; i < n; i++)
			bytes += msgs[i].msg_len;
		if (n > 0) {
			atomic_fetch_add_explicit(&a->bytes, bytes, memory_order_relaxed);
			atomic_fetch_add_explicit(&a->pkts, (uint64_t)n, memory_order_relaxed);
		}
	}
	free(buf);
	return NULL;
}

/*
 * Goodput in Gb/s and packet rate of SIZE-byte datagrams, and the best eighth of the
 * measurement of each (best[0] Gb/s, best[1] Mpps); gso: up to 64 KiB per send.
 */
static void udp_blast(size_t size, bool gso, double *gbps, double *mpps, double best[2])
{
	struct sockaddr_in rsa, ssa;
	int r = udp_socket(&rsa, 64 << 20), s = udp_socket(&ssa, 64 << 20), one = 1;
	size_t seg = gso ? (65000 / size ? 65000 / size : 1) : 1, chunk = size * seg; /* 64 KiB max */
	struct rx_arg a = { .fd = r, .bufsz = gso ? 65536 : size, .gro = gso };
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	char *buf = calloc(1, chunk);
	pthread_t th;
	double t0, t1 = 0;
	uint64_t b0;
	struct bl_slices sb = {0}, sp = {0};

	if (gso) {
		int sz = size;

		if (setsockopt(s, IPPROTO_UDP, UDP_SEGMENT, &sz, sizeof(sz)) ||
		    setsockopt(r, IPPROTO_UDP, UDP_GRO, &one, sizeof(one))) {
			*gbps = *mpps = best[0] = best[1] = 0;
			close(r);
			close(s);
			free(buf);
			return;
		}
	}
	if (connect(s, (struct sockaddr *)&rsa, sizeof(rsa)))
		bl_die("connect");
	memset(msgs, 0, sizeof(msgs));
	for (int i = 0; i < BATCH; i++) {
		iov[i].iov_base = buf;
		iov[i].iov_len = chunk;
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	atomic_store(&stop_flag, 0);
	pthread_create(&th, NULL, udp_rx, &a);
	/* warm up, then measure what the receiver got */
	t0 = bl_now() + 0.2;
	b0 = 0;
	while (bl_now() < t0)
		sendmmsg(s, msgs, gso ? 4 : BATCH, 0);
	b0 = atomic_load(&a.bytes);
	uint64_t p0 = atomic_load(&a.pkts);
	t0 = bl_now();
	sb = (struct bl_slices){.t = t0, .n = (double)b0};
	sp = (struct bl_slices){.t = t0, .n = (double)p0};
	do {
		sendmmsg(s, msgs, gso ? 4 : BATCH, 0);
		t1 = bl_now();
		bl_slice(&sb, (double)atomic_load_explicit(&a.bytes, memory_order_relaxed), t1);
		bl_slice(&sp, (double)atomic_load_explicit(&a.pkts, memory_order_relaxed), t1);
	} while (t1 - t0 < bl_seconds);
	uint64_t b1 = atomic_load(&a.bytes), p1 = atomic_load(&a.pkts);

	atomic_store(&stop_flag, 1);
	pthread_join(th, NULL);
	*gbps = (b1 - b0) * 8 / (t1 - t0) / 1e9;
	*mpps = (gso ? (b1 - b0) / size : p1 - p0) / (t1 - t0) / 1e6;
	best[0] = sb.best * 8 / 1e9;
	best[1] = (gso ? sb.best / size : sp.best) / 1e6;
	close(r);
	close(s);
	free(buf);
}

void bl_udp_bw(size_t size)
{
	double g1, p1, g2, p2, b1[2], b2[2];

	udp_blast(size, false, &g1, &p1, b1);
	udp_blast(size, true, &g2, &p2, b2);
	printf("udp_bw_%zu_sendmmsg=%.2f Gb/s\n", size, g1);
	printf("udp_bw_%zu_gso=%.2f Gb/s\n", size, g2);
	printf("udp_bw_%zu=%.2f Gb/s\n", size, g1 > g2 ? g1 : g2);
	printf("udp_bw_%zu_best=%.2f Gb/s\n", size, b1[0] > b2[0] ? b1[0] : b2[0]);
}

void bl_udp_pps(void)
{
	double g, p, best[2];

	udp_blast(64, false, &g, &p, best);
	printf("udp_pps_64=%.3f Mpps\n", p);
	printf("udp_pps_64_best=%.3f Mpps\n", best[1]);
}

void bl_tcp_bw(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int l = socket(AF_INET, SOCK_STREAM, 0), c, s;
	size_t chunk = 1 << 20;
	char *buf = calloc(1, chunk);
	uint64_t bytes = 0;
	pid_t pid;
	double t0, t1 = 0;

	if (bind(l, (struct sockaddr *)&sa, sizeof(sa)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&sa, &len))
		bl_die("tcp listen");
	pid = fork();
	if (pid == 0) {
		c = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(c, (struct sockaddr *)&sa, sizeof(sa)))
			_exit(1);
		while (write(c, buf, chunk) > 0)
			;
		_exit(0);
	}
	s = accept(l, NULL, NULL);
	t0 = bl_now();
	do {
		ssize_t n = read(s, buf, chunk);

		if (n <= 0)
			break;
		bytes += n;
	} while ((t1 = bl_now()) - t0 < bl_seconds);
	t1 = bl_now();
	close(s);
	close(l);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	printf("tcp_bw=%.2f Gb/s\n", bytes * 8 / (t1 - t0) / 1e9);
	free(buf);
}


/*
 * UDP ping-pong between two processes, 64 bytes: the median half round trip. busy: both sides
 * poll with MSG_DONTWAIT (no wake-ups: the best a socket can do); otherwise both block in
 * recv (a scheduler wake-up per hop, what an idle-friendly design pays).
 */
void bl_udp_lat(int busy)
{
	struct sockaddr_in asa, bsa;
	int a = udp_socket(&asa, 1 << 20), b = udp_socket(&bsa, 1 << 20);
	int flags = busy ? MSG_DONTWAIT : 0;
	enum { N = 100000 };
	double *rtt = malloc(sizeof(double) * N), end;
	char buf[64] = { 0 };
	size_t n = 0;
	pid_t pid;

	if (!rtt)
		bl_die("malloc");
	pid = fork();
	if (pid < 0)
		bl_die("fork");
	if (pid == 0) {
		/* the echo side; the parent kills it */
		for (;;) {
			ssize_t r = recv(b, buf, sizeof(buf), flags);

			if (r > 0)
				sendto(b, buf, r, 0, (struct sockaddr *)&asa, sizeof(asa));
		}
	}
	end = bl_now() + bl_seconds;
	while (n < N && bl_now() < end) {
		double t0 = bl_now();

		sendto(a, buf, sizeof(buf), 0, (struct sockaddr *)&bsa, sizeof(bsa));
		if (busy) {
			while (recv(a, buf, sizeof(buf), MSG_DONTWAIT) < 0)
				;
		} else if (recv(a, buf, sizeof(buf), 0) < 0) {
			bl_die("recv");
		}
		rtt[n++] = bl_now() - t0;
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	bl_print_lat(busy ? "udp_half_rtt_64" : "udp_half_rtt_64_block", rtt, n);
	free(rtt);
	close(a);
	close(b);
}
