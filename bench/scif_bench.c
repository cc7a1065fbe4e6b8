// SPDX-License-Identifier: MIT
/*
 * scif_bench: libscif's performance targets (issue 11), measured by bench/scif_bench.sh in the
 * same run as their baselines:
 *
 *   memcpy SECONDS      single-thread memcpy of 1 MiB between two page-aligned buffers: Gb/s
 *   writeto SECONDS     scif_writeto of 1 MiB, node 1 into node 0's window, a fence every 8:
 *                       Gb/s (every byte of the last one is checked)
 *   rtt COUNT           scif_send/scif_recv ping-pong of 8 bytes (blocking calls), node 1 to
 *                       node 0: median round trip and its half in microseconds
 *
 * Run through bvctl run; BV_SCIF_FABRIC picks the device kind. Each prints one line
 * "name=value unit". The two sides are child processes of node 0 and node 1.
 */
#include <errno.h>
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

static void rtt_server(uint16_t port, int count)
{
	scif_epd_t c = serve(port);
	uint64_t v;

	for (int i = 0; i < count + 1000; i++)
		if (scif_recv(c, &v, 8, SCIF_RECV_BLOCK) != 8 ||
		    scif_send(c, &v, 8, SCIF_SEND_BLOCK) != 8)
			die("echo");
	scif_recv(c, &v, 1, SCIF_RECV_BLOCK);
	exit(0);
}

static void rtt_client(uint16_t port, int count)
{
	scif_epd_t e = dial(port);
	double *rtt = calloc((size_t)count, sizeof(*rtt));
	uint64_t v, w;

	for (int i = 0; i < count + 1000; i++) {
		double t = now();

		v = (uint64_t)i;
		if (scif_send(e, &v, 8, SCIF_SEND_BLOCK) != 8 ||
		    scif_recv(e, &w, 8, SCIF_RECV_BLOCK) != 8 || w != v)
			die("ping");
		if (i >= 1000)	/* warm up first */
			rtt[i - 1000] = (now() - t) * 1e6;
	}
	qsort(rtt, (size_t)count, sizeof(*rtt), cmp_double);
	printf("scif_rtt_8=%.2f us half=%.2f us\n", rtt[count / 2], rtt[count / 2] / 2);
	exit(0);
}

/* The two sides: node 0 listens, node 1 connects; both children of this process. */
static int pair(void (*server)(uint16_t, double), void (*client)(uint16_t, double), double arg)
{
	uint16_t port = (uint16_t)(5000 + getpid() % 2000);
	pid_t s, c;
	int st, bad = 0;

	s = fork();
	if (s == 0) {
		setenv("BV_SCIF_NODE", "0", 1);
		server(port, arg);
	}
	c = fork();
	if (c == 0) {
		setenv("BV_SCIF_NODE", "1", 1);
		client(port, arg);
	}
	bad |= waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st);
	if (bad)
		kill(s, SIGKILL);
	bad |= waitpid(s, &st, 0) != s || !WIFEXITED(st) || WEXITSTATUS(st);
	return bad;
}

static void ws(uint16_t p, double a)
{
	(void)a;
	writeto_server(p);
}

static void wc(uint16_t p, double a)
{
	writeto_client(p, a);
}

static void rs(uint16_t p, double a)
{
	rtt_server(p, (int)a);
}

static void rc(uint16_t p, double a)
{
	rtt_client(p, (int)a);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "memcpy")) {
		bench_memcpy(atof(argv[2]));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "writeto"))
		return pair(ws, wc, atof(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "rtt"))
		return pair(rs, rc, atof(argv[2]));
	fprintf(stderr, "usage: scif_bench memcpy SECONDS | writeto SECONDS | rtt COUNT\n");
	return 2;
}
