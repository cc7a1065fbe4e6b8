// SPDX-License-Identifier: MIT
/*
 * Device timers: deadlines (CLOCK_MONOTONIC ns) in a binary min-heap (common/bv_timer_heap.h,
 * the one bvd's timers use too). The engine sleeps on a timerfd set to the earliest one
 * (model.c) and fires the due ones each pass. Used for the firmware boot delay, the health
 * heartbeat, QP retransmission and RNR timers.
 */
#include <stddef.h>
#include <time.h>

#include "model.h"

uint64_t cx4m_mdev_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void cx4m_mtimer_init(struct mtimer *t, void (*fn)(struct mdev *, struct mtimer *))
{
	bv_theap_node_init(&t->node);
	t->fn = fn;
}

void cx4m_mtimer_cancel(struct mtimer_heap *hp, struct mtimer *t)
{
	bv_theap_del(&hp->heap, &t->node);
}

int cx4m_mtimer_arm(struct mtimer_heap *hp, struct mtimer *t, uint64_t when)
{
	return bv_theap_add(&hp->heap, &t->node, when);
}

uint64_t cx4m_mtimer_next(const struct mtimer_heap *hp)
{
	const struct bv_theap_node *first = bv_theap_first(&hp->heap);

	return first ? first->when : UINT64_MAX;
}

int cx4m_mtimer_run(struct mdev *d, struct mtimer_heap *hp, uint64_t now)
{
	struct bv_theap_node *first;
	int fired = 0;

	while ((first = bv_theap_first(&hp->heap)) && first->when <= now) {
		struct mtimer *t = (struct mtimer *)((char *)first - offsetof(struct mtimer, node));

		cx4m_mtimer_cancel(hp, t);
		t->fn(d, t);
		fired++;
	}
	return fired;
}

void cx4m_mtimer_heap_free(struct mtimer_heap *hp)
{
	bv_theap_fini(&hp->heap);
}
