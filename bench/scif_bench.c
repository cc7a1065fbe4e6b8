// SPDX-License-Identifier: MIT
/*
 * scif_bench: libscif's performance targets (issue 11), measured by bench/scif_bench.sh in the
 * same run as their baselines:
 *
 *   memcpy SECONDS      single-thread memcpy of 1 MiB between two page-aligned buffers: Gb/s
 *   writeto SECONDS     scif_writeto of 1 MiB, node 1 into node 0's window, a fence every 8:
 *                       Gb/s (every byte of the last one is checked)
 *   rtt COUNT [ROUNDS]  scif_send/scif_recv ping-pong of 8 bytes (blocking calls), node 1 to
 *                       node 0, ROUNDS rounds (default 1) of COUNT round trips after 1000 to
 *                       warm up: the median of the rounds' medians, the best (least) of
 *                       them, the least and the 90th percentile of all, in microseconds
 *
 * Run through bvctl run; BV_SCIF_FABRIC picks the device kind. Each prints one line
 * "name=value unit". The two sides are child processes of node 0 and node 1.
 * SCIF_BENCH_CPUS=A,B pins node 0's side to CPU A and node 1's to CPU B (A,A: both on one CPU,
 * what a loaded scheduler often does; A,B: each on its own), to see what placement does.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scif.h"

#define MIB (1u << 20)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *pages(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	memset(p, 1, len);
	return p;
}

/* Byte i of the checked transfer: no two positions 256 or 64 KiB apart alike. */
static uint8_t pattern(uint32_t i, uint32_t seed)
{
	return (uint8_t)(i + seed + (i >> 8) * 7 + (i >> 16) * 13);
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void bench_memcpy(double secs)
{
	uint8_t *a = pages(MIB), *b = pages(MIB);
	double t0 = now(), t;
	unsigned long n = 0;

	do {
		memcpy(b, a, MIB);
		a[n % MIB]++;	/* keep the compiler honest */
		n++;
		t = now();
	} while (t - t0 < secs);
	printf("memcpy_1m=%.2f Gb/s\n", (double)n * MIB * 8 / (t - t0) / 1e9);
}

static scif_epd_t serve(uint16_t port)
{
	scif_epd_t l = scif_open(), c;
	struct scif_portID peer;

	if (l < 0 || scif_bind(l, port) != port || scif_listen(l, 1) ||
	    scif_accept(l, &peer, &c, SCIF_ACCEPT_SYNC))
		die("listen/accept");
	return c;
}

static scif_epd_t dial(uint16_t port)
{
	struct scif_portID dst = { 0, port };
	scif_epd_t e = scif_open();

	for (int i = 0; i < 100; i++) {
		if (scif_connect(e, &dst) >= 0)
			return e;
		if (errno != ECONNREFUSED)
			break;
		usleep(100000);
	}
	die("connect");
	return -1;
}

static void writeto_server(uint16_t port)
{
	scif_epd_t c = serve(port);
	uint8_t *w = pages(MIB);
	off_t off = scif_register(c, w, MIB, 0, SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	uint32_t seed;

	if (off == SCIF_REGISTER_FAILED || scif_send(c, &off, 8, SCIF_SEND_BLOCK) != 8)
		die("register");
	if (scif_recv(c, &seed, 4, SCIF_RECV_BLOCK) != 4)
		die("recv");
	/* the last writeto's bytes */
	for (uint32_t i = 0; i < MIB; i++)
		if (w[i] != pattern(i, seed)) {
			fprintf(stderr, "writeto: byte %u differs\n", i);
			exit(1);
		}
	scif_send(c, &seed, 4, SCIF_SEND_BLOCK);
	scif_recv(c, &seed, 1, SCIF_RECV_BLOCK);
	exit(0);
}

static void writeto_client(uint16_t port, double secs)
{
	scif_epd_t e = dial(port);
	uint8_t *l = pages(MIB);
	off_t roff, loff = scif_register(e, l, MIB, 0, SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	unsigned long n = 0;
	double t0, t;
	uint32_t seed = 7;
	int mark;

	if (loff == SCIF_REGISTER_FAILED || scif_recv(e, &roff, 8, SCIF_RECV_BLOCK) != 8)
		die("register");
	/* warm up: the first RMA maps what it needs */
	scif_writeto(e, loff, MIB, roff, SCIF_RMA_SYNC);
	t0 = now();
	do {
		if (scif_writeto(e, loff, MIB, roff, 0))
			die("scif_writeto");
		if (++n % 8 == 0 &&
		    (scif_fence_mark(e, SCIF_FENCE_INIT_SELF, &mark) || scif_fence_wait(e, mark)))
			die("fence");
		t = now();
	} while (t - t0 < secs || n % 8);
	printf("scif_writeto_1m=%.2f Gb/s\n", (double)n * MIB * 8 / (t - t0) / 1e9);
	for (uint32_t i = 0; i < MIB; i++)
		l[i] = pattern(i, seed);
	if (scif_writeto(e, loff, MIB, roff, SCIF_RMA_SYNC) ||
	    scif_send(e, &seed, 4, SCIF_SEND_BLOCK) != 4 ||
	    scif_recv(e, &seed, 4, SCIF_RECV_BLOCK) != 4)
		die("check");
	exit(0);
}

#define RTT_WARM 1000

static void rtt_server(uint16_t port, long total)
{
	scif_epd_t c = serve(port);
	uint64_t v;

	for (long i = 0; i < total + RTT_WARM; i++)
		if (scif_recv(c, &v, 8, SCIF_RECV_BLOCK) != 8 ||
		    scif_send(c, &v, 8, SCIF_SEND_BLOCK) != 8)
			die("echo");
	scif_recv(c, &v, 1, SCIF_RECV_BLOCK);
	exit(0);
}

/*
 * Rounds: on a shared machine the scheduler, not the library, decides most round trips (the
 * peer process is not running when the message lands). A round's median is what the library
 * gave over that stretch; the best round is the least disturbed stretch, the median of the
 * rounds what the run's load left. ib_send_lat is reported with the same statistics
 * (bench/scif_bench.sh), so a ratio compares like with like.
 */
static void rtt_client(uint16_t port, int count, int rounds)
{
	scif_epd_t e = dial(port);
	long total = (long)count * rounds;
	double *rtt = calloc((size_t)total, sizeof(*rtt));
	double *med = calloc((size_t)rounds, sizeof(*med));
	uint64_t v, w;

	if (!rtt || !med)
		die("calloc");
	for (long i = 0; i < total + RTT_WARM; i++) {
		double t = now();

		v = (uint64_t)i;
		if (scif_send(e, &v, 8, SCIF_SEND_BLOCK) != 8 ||
		    scif_recv(e, &w, 8, SCIF_RECV_BLOCK) != 8 || w != v)
			die("ping");
		if (i >= RTT_WARM)
			rtt[i - RTT_WARM] = (now() - t) * 1e6;
	}
	for (int r = 0; r < rounds; r++) {
		double *a = rtt + (long)r * count;

		qsort(a, (size_t)count, sizeof(*a), cmp_double);
		med[r] = a[count / 2];
	}
	qsort(med, (size_t)rounds, sizeof(*med), cmp_double);
	qsort(rtt, (size_t)total, sizeof(*rtt), cmp_double);
	printf("scif_rtt_8=%.2f us best=%.2f us min=%.2f us p90=%.2f us rounds=%d\n",
	       med[rounds / 2], med[0], rtt[0], rtt[total * 9 / 10], rounds);
	exit(0);
}

/* SCIF_BENCH_CPUS: the CPU of side (0: node 0, 1: node 1), if it names one. */
static void pin(int side)
{
	const char *v = getenv("SCIF_BENCH_CPUS");
	int cpu[2];
	cpu_set_t set;

	if (!v || sscanf(v, "%d,%d", &cpu[0], &cpu[1]) != 2)
		return;
	if (cpu[side] < 0 || cpu[side] >= CPU_SETSIZE) {
		fprintf(stderr, "SCIF_BENCH_CPUS: no CPU %d\n", cpu[side]);
		exit(1);
	}
	CPU_ZERO(&set);
	CPU_SET(cpu[side], &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

/* The two sides: node 0 listens, node 1 connects; both children of this process. */
static int pair(void (*server)(uint16_t, double, int), void (*client)(uint16_t, double, int),
		double arg, int rounds)
{
	uint16_t port = (uint16_t)(5000 + getpid() % 2000);
	pid_t s, c;
	int st, bad = 0;

	s = fork();
	if (s == 0) {
		setenv("BV_SCIF_NODE", "0", 1);
		pin(0);
		server(port, arg, rounds);
	}
	c = fork();
	if (c == 0) {
		setenv("BV_SCIF_NODE", "1", 1);
		pin(1);
		client(port, arg, rounds);
	}
	bad |= waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st);
	if (bad)
		kill(s, SIGKILL);
	bad |= waitpid(s, &st, 0) != s || !WIFEXITED(st) || WEXITSTATUS(st);
	return bad;
}

static void ws(uint16_t p, double a, int r)
{
	(void)a;
	(void)r;
	writeto_server(p);
}

static void wc(uint16_t p, double a, int r)
{
	(void)r;
	writeto_client(p, a);
}

static void rs(uint16_t p, double a, int r)
{
	rtt_server(p, (long)a * r);
}

static void rc(uint16_t p, double a, int r)
{
	rtt_client(p, (int)a, r);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "memcpy")) {
		bench_memcpy(atof(argv[2]));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "writeto"))
		return pair(ws, wc, atof(argv[2]), 1);
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "rtt")) {
		int count = atoi(argv[2]), rounds = argc == 4 ? atoi(argv[3]) : 1;

		if (count < 1 || rounds < 1 || (long)count * rounds > 100000000l) {
			fprintf(stderr, "scif_bench rtt: COUNT and ROUNDS >= 1\n");
			return 2;
		}
		return pair(rs, rc, count, rounds);
	}
	fprintf(stderr,
		"usage: scif_bench memcpy SECONDS | writeto SECONDS | rtt COUNT [ROUNDS]\n");
	return 2;
}
