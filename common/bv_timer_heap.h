/* SPDX-License-Identifier: MIT */
/*
 * A binary min-heap of deadlines: what both timer sets of the project keep, bvd's (the daemons'
 * timers, fired from the main loop through a timerfd: bvd_timer.c) and the cx4 model's (fired
 * by its engine: devices/cx4/model/timer.c). A node is embedded in the timer that owns it; the
 * heap holds pointers to nodes, and each node knows its slot, so that taking a timer out is
 * O(log n) too.
 */
#ifndef BV_TIMER_HEAP_H
#define BV_TIMER_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bv_theap_node {
	uint64_t when;	/* the deadline, in the owner's clock (CLOCK_MONOTONIC ns here) */
	int idx;	/* slot in the heap, -1 when not in it */
};

struct bv_theap {
	struct bv_theap_node **h;
	int n, cap;
};

static inline void bv_theap_node_init(struct bv_theap_node *t)
{
	t->when = 0;
	t->idx = -1;
}

static inline bool bv_theap_has(const struct bv_theap_node *t)
{
	return t->idx >= 0;
}

/* The node with the earliest deadline, NULL when the heap is empty. */
static inline struct bv_theap_node *bv_theap_first(const struct bv_theap *hp)
{
	return hp->n ? hp->h[0] : NULL;
}

/* Put t in with deadline when (taken out first if it is in): 0, or -ENOMEM. */
int bv_theap_add(struct bv_theap *hp, struct bv_theap_node *t, uint64_t when);
/* Take t out; nothing when it is not in. */
void bv_theap_del(struct bv_theap *hp, struct bv_theap_node *t);
/* Every node out (not freed: their owners hold them), the heap's own memory freed. */
void bv_theap_fini(struct bv_theap *hp);

#endif /* BV_TIMER_HEAP_H */
