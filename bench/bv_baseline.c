// SPDX-License-Identifier: MIT
/*
 * bv_baseline: the physical baselines bridgeverbs' performance targets are ratios of, measured
 * on this machine in the same run as the device numbers (the bench scripts):
 *
 *   udp-bw SIZE     best UDP loopback goodput with SIZE-byte datagrams (sendmmsg/recvmmsg
 *                   batches of 64, and UDP GSO/GRO), receiver on its own thread
 *   udp-pps         UDP loopback packet rate, 64-byte datagrams, batched both sides
 *   udp-lat         busy-polling UDP ping-pong, 64 bytes: median half round trip
 *   tcp-bw          one TCP loopback stream, 1 MiB writes
 *   pvm-bw SIZE     single-thread process_vm_writev into another process, SIZE per call
 *
 * Each prints one line "name=value unit" so scripts can parse it. -t SECONDS (default 2).
 */
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

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

#define BATCH 64

static double seconds = 2.0;
static atomic_int stop_flag;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
	fprintf(stderr, "bv_baseline: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int udp_socket(struct sockaddr_in *sa, int bufsz)
{
	socklen_t len = sizeof(*sa);
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	if (s < 0)
		die("socket");
	setsockopt(s, SOL_SOCKET, SO_RCVBUF, &bufsz, sizeof(bufsz));
	setsockopt(s, SOL_SOCKET, SO_SNDBUF, &bufsz, sizeof(bufsz));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa->sin_port = 0;
	if (bind(s, (struct sockaddr *)sa, sizeof(*sa)) || getsockname(s, (struct sockaddr *)sa, &len))
		die("bind");
	return s;
}

struct rx_arg {
	int fd;
	size_t bufsz;
	uint64_t bytes, pkts;
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

		for (int i = 0; i < n; i++) {
			a->bytes += msgs[i].msg_len;
			a->pkts++;
		}
	}
	free(buf);
	return NULL;
}

/* Goodput in Gb/s and packet rate of SIZE-byte datagrams; gso: up to 64 KiB per send. */
static void udp_blast(size_t size, bool gso, double *gbps, double *mpps)
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

	if (gso) {
		int sz = size;

		if (setsockopt(s, IPPROTO_UDP, UDP_SEGMENT, &sz, sizeof(sz)) ||
		    setsockopt(r, IPPROTO_UDP, UDP_GRO, &one, sizeof(one))) {
			*gbps = *mpps = 0;
			close(r);
			close(s);
			free(buf);
			return;
		}
	}
	if (connect(s, (struct sockaddr *)&rsa, sizeof(rsa)))
		die("connect");
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
	t0 = now() + 0.2;
	b0 = 0;
	while (now() < t0)
		sendmmsg(s, msgs, gso ? 4 : BATCH, 0);
	b0 = a.bytes;
	uint64_t p0 = a.pkts;
	t0 = now();
	do
		sendmmsg(s, msgs, gso ? 4 : BATCH, 0);
	while ((t1 = now()) - t0 < seconds);
	uint64_t b1 = a.bytes, p1 = a.pkts;

	atomic_store(&stop_flag, 1);
	pthread_join(th, NULL);
	*gbps = (b1 - b0) * 8 / (t1 - t0) / 1e9;
	*mpps = (gso ? (b1 - b0) / size : p1 - p0) / (t1 - t0) / 1e6;
	close(r);
	close(s);
	free(buf);
}

static void udp_bw(size_t size)
{
	double g1, p1, g2, p2;

	udp_blast(size, false, &g1, &p1);
	udp_blast(size, true, &g2, &p2);
	printf("udp_bw_%zu_sendmmsg=%.2f Gb/s\n", size, g1);
	printf("udp_bw_%zu_gso=%.2f Gb/s\n", size, g2);
	printf("udp_bw_%zu=%.2f Gb/s\n", size, g1 > g2 ? g1 : g2);
}

static void udp_pps(void)
{
	double g, p;

	udp_blast(64, false, &g, &p);
	printf("udp_pps_64=%.3f Mpps\n", p);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The echo side of udp-lat: busy-polls with MSG_DONTWAIT. */
static void *udp_echo(void *p)
{
	int fd = *(int *)p;
	char buf[64];
	struct sockaddr_in from;
	socklen_t fl;

	while (!atomic_load(&stop_flag)) {
		fl = sizeof(from);
		ssize_t n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);

		if (n > 0)
			sendto(fd, buf, n, 0, (struct sockaddr *)&from, fl);
	}
	return NULL;
}

static void udp_lat(void)
{
	struct sockaddr_in asa, bsa;
	int a = udp_socket(&asa, 1 << 20), b = udp_socket(&bsa, 1 << 20);
	enum { N = 20000 };
	double *rtt = malloc(sizeof(double) * N);
	char buf[64] = { 0 };
	pthread_t th;
	int n = 0;
	double end;

	atomic_store(&stop_flag, 0);
	pthread_create(&th, NULL, udp_echo, &b);
	end = now() + seconds;
	while (n < N && now() < end) {
		double t0 = now();

		sendto(a, buf, sizeof(buf), 0, (struct sockaddr *)&bsa, sizeof(bsa));
		while (recv(a, buf, sizeof(buf), MSG_DONTWAIT) < 0 && now() < end)
			;
		rtt[n++] = now() - t0;
	}
	atomic_store(&stop_flag, 1);
	pthread_join(th, NULL);
	qsort(rtt, n, sizeof(double), cmp_double);
	printf("udp_half_rtt_64=%.2f us\n", n ? rtt[n / 2] / 2 * 1e6 : 0.0);
	free(rtt);
	close(a);
	close(b);
}

static void tcp_bw(void)
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
		die("tcp listen");
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
	t0 = now();
	do {
		ssize_t n = read(s, buf, chunk);

		if (n <= 0)
			break;
		bytes += n;
	} while ((t1 = now()) - t0 < seconds);
	t1 = now();
	close(s);
	close(l);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	printf("tcp_bw=%.2f Gb/s\n", bytes * 8 / (t1 - t0) / 1e9);
	free(buf);
}

static void pvm_bw(size_t size)
{
	char *dst = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char *src = malloc(size);
	int p[2];
	pid_t pid;
	uint64_t bytes = 0;
	double t0, t1 = 0;

	memset(src, 0x5a, size);
	memset(dst, 0, size);
	if (pipe(p))
		die("pipe");
	pid = fork();
	if (pid == 0) {
		/* a private copy in the child: the target of the writes */
		char *mine = malloc(size);
		uint64_t addr = (uintptr_t)mine;

		memset(mine, 0, size);
		if (write(p[1], &addr, sizeof(addr)) != sizeof(addr))
			_exit(1);
		pause();
		_exit(0);
	}
	uint64_t addr;

	if (read(p[0], &addr, sizeof(addr)) != sizeof(addr))
		die("pipe read");
	struct iovec l = { src, size }, r = { (void *)(uintptr_t)addr, size };

	t0 = now();
	do {
		if (process_vm_writev(pid, &l, 1, &r, 1, 0) != (ssize_t)size)
			die("process_vm_writev");
		bytes += size;
	} while ((t1 = now()) - t0 < seconds);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	printf("pvm_bw_%zu=%.2f Gb/s\n", size, bytes * 8 / (t1 - t0) / 1e9);
	munmap(dst, size);
	free(src);
}

int main(int argc, char **argv)
{
	int opt;

	while ((opt = getopt(argc, argv, "t:h")) != -1) {
		if (opt == 't')
			seconds = atof(optarg);
		else {
			fprintf(stderr, "usage: bv_baseline [-t SECONDS] udp-bw SIZE | udp-pps | "
					"udp-lat | tcp-bw | pvm-bw SIZE\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	if (optind >= argc)
		return 2;
	if (!strcmp(argv[optind], "udp-bw") && optind + 1 < argc)
		udp_bw(strtoul(argv[optind + 1], NULL, 0));
	else if (!strcmp(argv[optind], "udp-pps"))
		udp_pps();
	else if (!strcmp(argv[optind], "udp-lat"))
		udp_lat();
	else if (!strcmp(argv[optind], "tcp-bw"))
		tcp_bw();
	else if (!strcmp(argv[optind], "pvm-bw") && optind + 1 < argc)
		pvm_bw(strtoul(argv[optind + 1], NULL, 0));
	else
		return 2;
	return 0;
}
