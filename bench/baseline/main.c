// SPDX-License-Identifier: MIT
/*
 * bv_baseline: the baselines and limits of this machine that bridgeverbs' performance figures
 * are ratios of (docs/performance.md explains each one):
 *
 *   memcpy SIZE     single-thread memcpy between two buffers of SIZE, SIZE per call
 *   pvm-bw SIZE     single-thread process_vm_writev into another process, SIZE per call
 *   udp-bw SIZE     best UDP loopback goodput with SIZE-byte datagrams (sendmmsg batches, and
 *                   UDP GSO/GRO), receiver on its own thread
 *   udp-pps         UDP loopback packet rate, 64-byte datagrams, batched both sides
 *   udp-lat         UDP ping-pong between two processes, 64 bytes, both busy-polling
 *   udp-lat-block   the same with blocking receives (a wake-up per hop)
 *   tcp-bw          one TCP loopback stream, 1 MiB writes
 *   shm-pingpong    two processes bouncing one cache line through shared memory: the floor
 *                   of a device whose data path is CPU stores (ntb)
 *   swdev-floor     the actor topology of ib_write_lat on two software devices: two processes
 *                   spinning on shared memory and between them two relay processes that sleep
 *                   on a futex and are woken for each message (each relay the other's peer,
 *                   as two device engines are): the least any design with blocking engines
 *                   can reach here
 *   swdev-floor-rt  the same with the relays at SCHED_FIFO (needs CAP_SYS_NICE): the floor of
 *                   engines at real-time priority (cx4's rt_priority)
 *
 * Latencies print the median half round trip with its minimum, 90th percentile and the share of
 * round trips that waited for a time slice; throughputs print the average and the best eighth
 * of the measurement ("_best"); -t SECONDS (default 2) per measurement.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "baseline.h"

double bl_seconds = 2.0;

double bl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void bl_die(const char *what)
{
	fprintf(stderr, "bv_baseline: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double bl_median(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

void bl_print_lat(const char *name, double *rtt, size_t n)
{
	size_t stalled = 0;

	if (!n) {
		printf("%s=none (no round trip completed)\n", name);
		return;
	}
	for (size_t i = 0; i < n; i++)
		stalled += rtt[i] >= 1e-3;
	bl_median(rtt, n);
	printf("%s=%.3f us\n", name, rtt[n / 2] / 2 * 1e6);
	printf("%s_min=%.3f us\n", name, rtt[0] / 2 * 1e6);
	printf("%s_p90=%.3f us\n", name, rtt[n * 9 / 10] / 2 * 1e6);
	printf("%s_stalled=%.2f %%\n", name, 100.0 * stalled / n);
}

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: bv_baseline [-t SECONDS] memcpy SIZE... | pvm-bw SIZE... | udp-bw SIZE... |\n"
	    "       udp-pps | udp-lat | udp-lat-block | tcp-bw | shm-pingpong | swdev-floor |\n"
	    "       swdev-floor-rt\n");
}

int main(int argc, char **argv)
{
	int opt;

	while ((opt = getopt(argc, argv, "t:h")) != -1) {
		if (opt == 't') {
			bl_seconds = atof(optarg);
		} else {
			usage(opt == 'h' ? stdout : stderr);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	const char *what = argv[optind];
	int nsizes = argc - optind - 1;
	char **sizes = argv + optind + 1;

	if (!strcmp(what, "memcpy") || !strcmp(what, "pvm-bw") || !strcmp(what, "udp-bw")) {
		if (!nsizes) {
			usage(stderr);
			return 2;
		}
		for (int i = 0; i < nsizes; i++) {
			size_t size = strtoul(sizes[i], NULL, 0);

			if (!size) {
				usage(stderr);
				return 2;
			}
			if (what[0] == 'm')
				bl_memcpy_bw(size);
			else if (what[0] == 'p')
				bl_pvm_bw(size);
			else
				bl_udp_bw(size);
			fflush(stdout);
		}
	} else if (!strcmp(what, "udp-pps")) {
		bl_udp_pps();
	} else if (!strcmp(what, "udp-lat")) {
		bl_udp_lat(1);
	} else if (!strcmp(what, "udp-lat-block")) {
		bl_udp_lat(0);
	} else if (!strcmp(what, "tcp-bw")) {
		bl_tcp_bw();
	} else if (!strcmp(what, "shm-pingpong")) {
		bl_shm_pingpong();
	} else if (!strcmp(what, "swdev-floor")) {
		bl_swdev_floor(0);
	} else if (!strcmp(what, "swdev-floor-rt")) {
		bl_swdev_floor(1);
	} else {
		usage(stderr);
		return 2;
	}
	return 0;
}
