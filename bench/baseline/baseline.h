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
void bl_swdev_floor(void);

#endif /* BV_BASELINE_H */
