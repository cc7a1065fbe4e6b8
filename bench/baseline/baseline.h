/* SPDX-License-Identifier: MIT */
/*
 * bv_baseline: what this machine can do without bridgeverbs, measured in the same run as the
 * devices so that every device figure is a ratio of neighbouring measurements (this VM's speed
 * drifts by 2x within minutes). Each measurement prints lines "name=value unit".
 */
#ifndef BV_BASELINE_H
#define BV_BASELINE_H

#include <stddef.h>

extern double bl_seconds;	/* how long each measurement runs (-t) */

double bl_now(void);
void bl_die(const char *what) __attribute__((noreturn));
/* Median of N samples (sorts them). */
double bl_median(double *v, size_t n);
/*
 * Prints the half round trips of N round-trip samples (seconds) as NAME=median, NAME_min=,
 * NAME_p90= (us) and NAME_stalled= (% of round trips of 1 ms or more: a hand-over that
 * waited for a scheduler time slice, not for a wake-up). The report uses the last two to tell
 * a baseline disturbed by load from one it can judge a target against. Sorts the samples.
 */
void bl_print_lat(const char *name, double *rtt, size_t n);

/*
 * The best rate over slices of an eighth of the measurement: the least-disturbed stretch of
 * a throughput baseline (the report judges "met" against it as well as against the average).
 */
struct bl_slices {
	double t;    /* start of the current slice */
	double best; /* best units per second of a finished slice */
	double n;    /* units counted at the start of the slice */
};

static inline void bl_slice(struct bl_slices *s, double n, double now)
{
	if (now - s->t < bl_seconds / 8)
		return;
	if ((n - s->n) / (now - s->t) > s->best)
		s->best = (n - s->n) / (now - s->t);
	s->t = now;
	s->n = n;
}

/* mem.c */
void bl_memcpy_bw(size_t size);
void bl_pvm_bw(size_t size);
/* net.c */
void bl_udp_bw(size_t size);
void bl_udp_pps(void);
void bl_udp_lat(int busy);
void bl_tcp_bw(void);
/* shm.c */
void bl_shm_pingpong(void);
void bl_swdev_floor(int rt);

#endif /* BV_BASELINE_H */
