// SPDX-License-Identifier: MIT
/*
 * Device timers: a binary min-heap of deadlines (CLOCK_MONOTONIC ns). The engine sleeps on a
 * timerfd set to the earliest one (model.c) and fires the due ones each pass. Used for the
 * firmware boot delay, the health heartbeat, QP retransmission and RNR timers.
 */
#include <errno.h>
#include <stdlib.h>
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
	t->when = 0;
	t->idx = -1;
	t->fn = fn;
}

static void swap_at(struct mtimer_heap *hp, int a, int b)
{
	struct mtimer *t = hp->h[a];

	hp->h[a] = hp->h[b];
	hp->h[b] = t;
	hp->h[a]->idx = a;
	hp->h[b]->idx = b;
}

static void sift_up(struct mtimer_heap *hp, int i)
{
	while (i > 0) {
		int p = (i - 1) / 2;

		if (hp->h[p]->when <= hp->h[i]->when)
			break;
		swap_at(hp, p, i);
		i = p;
	}
}

static void sift_down(struct mtimer_heap *hp, int i)
{
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;

		if (l < hp->n && hp->h[l]->when < hp->h[m]->when)
			m = l;
		if (r < hp->n && hp->h[r]->when < hp->h[m]->when)
			m = r;
		if (m == i)
			return;
		swap_at(hp, i, m);
		i = m;
	}
}

void cx4m_mtimer_cancel(struct mtimer_heap *hp, struct mtimer *t)
{
	int i = t->idx;

	if (i < 0)
		return;
	t->idx = -1;
	hp->n--;
	if (i == hp->n)
		return;
	hp->h[i] = hp->h[hp->n];
	hp->h[i]->idx = i;
	sift_up(hp, i);
	sift_down(hp, hp->h[i]->idx);
}

int cx4m_mtimer_arm(struct mtimer_heap *hp, struct mtimer *t, uint64_t when)
{
	cx4m_mtimer_cancel(hp, t);
	if (hp->n == hp->cap) {
		int cap = hp->cap ? hp->cap * 2 : 64;
		struct mtimer **h = realloc(hp->h, (size_t)cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		hp->h = h;
		hp->cap = cap;
	}
	t->when = when;
	t->idx = hp->n;
	hp->h[hp->n++] = t;
	sift_up(hp, t->idx);
	return 0;
}

uint64_t cx4m_mtimer_next(const struct mtimer_heap *hp)
{
	return hp->n ? hp->h[0]->when : UINT64_MAX;
}

int cx4m_mtimer_run(struct mdev *d, struct mtimer_heap *hp, uint64_t now)
{
	int fired = 0;

	while (hp->n && hp->h[0]->when <= now) {
		struct mtimer *t = hp->h[0];

		cx4m_mtimer_cancel(hp, t);
		t->fn(d, t);
		fired++;
	}
	return fired;
}

void cx4m_mtimer_heap_free(struct mtimer_heap *hp)
{
	for (int i = 0; i < hp->n; i++)
		hp->h[i]->idx = -1;
	free(hp->h);
	hp->h = NULL;
	hp->n = hp->cap = 0;
}
