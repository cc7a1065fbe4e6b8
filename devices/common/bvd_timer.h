/* SPDX-License-Identifier: MIT */
/*
 * Timers of a bvd daemon: deadlines on CLOCK_MONOTONIC kept in a binary heap, fired from the
 * main loop through one timerfd (the daemon is single-threaded, so a timer callback runs like
 * any other event handler). Timers are embedded in the objects they belong to; a callback may
 * arm or cancel any timer, its own included.
 */
#ifndef BVD_TIMER_H
#define BVD_TIMER_H

#include <stdbool.h>
#include <stdint.h>

#include "bv_timer_heap.h"

struct bvd;

struct bvd_timer {
	struct bv_theap_node node;	/* when: CLOCK_MONOTONIC ns */
	void (*fn)(struct bvd *d, struct bvd_timer *t);
};

uint64_t bvd_now_ns(void);
void bvd_timer_init(struct bvd_timer *t, void (*fn)(struct bvd *d, struct bvd_timer *t));
/* (Re)arm to fire delay_ms from now; 0 or a negative errno. */
int bvd_timer_arm(struct bvd *d, struct bvd_timer *t, uint64_t delay_ms);
void bvd_timer_cancel(struct bvd *d, struct bvd_timer *t);

static inline bool bvd_timer_armed(const struct bvd_timer *t)
{
	return bv_theap_has(&t->node);
}

/* bvd.c: release the heap and its timerfd. */
void bvd_timers_fini(struct bvd *d);

#endif /* BVD_TIMER_H */
