// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "bvd.h"
#include "bvd_timer.h"

struct bvd_timers {
	struct bvd_timer **h;
	int n, cap;
	int fd;
	uint64_t armed_for;		/* the deadline the timerfd is set to, 0: none */
};

uint64_t bvd_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void bvd_timer_init(struct bvd_timer *t, void (*fn)(struct bvd *d, struct bvd_timer *t))
{
	t->when = 0;
	t->idx = -1;
	t->fn = fn;
}

static void swap(struct bvd_timers *ts, int a, int b)
{
	struct bvd_timer *x = ts->h[a];

	ts->h[a] = ts->h[b];
	ts->h[b] = x;
	ts->h[a]->idx = a;
	ts->h[b]->idx = b;
}

static void sift_up(struct bvd_timers *ts, int i)
{
	while (i > 0 && ts->h[(i - 1) / 2]->when > ts->h[i]->when) {
		swap(ts, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void sift_down(struct bvd_timers *ts, int i)
{
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;

		if (l < ts->n && ts->h[l]->when < ts->h[m]->when)
			m = l;
		if (r < ts->n && ts->h[r]->when < ts->h[m]->when)
			m = r;
		if (m == i)
			return;
		swap(ts, i, m);
		i = m;
	}
}

/* Point the timerfd at the earliest deadline (or disarm it). */
static void reprogram(struct bvd_timers *ts)
{
	uint64_t when = ts->n ? ts->h[0]->when : 0;
	struct itimerspec its = { 0 };

	if (when == ts->armed_for)
		return;
	ts->armed_for = when;
	if (when) {
		its.it_value.tv_sec = (time_t)(when / 1000000000ull);
		its.it_value.tv_nsec = (long)(when % 1000000000ull);
	}
	timerfd_settime(ts->fd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void timers_readable(struct bvd *d, int fd, uint32_t events, void *arg)
{
	struct bvd_timers *ts = arg;
	uint64_t expirations, now = bvd_now_ns();
	ssize_t r = read(fd, &expirations, sizeof(expirations));

	(void)r;
	ts->armed_for = 0;
	while (ts->n && ts->h[0]->when <= now) {
		struct bvd_timer *t = ts->h[0];

		bvd_timer_cancel(d, t);
		t->fn(d, t);
	}
	reprogram(ts);
}

static struct bvd_timers *timers_of(struct bvd *d)
{
	struct bvd_timers *ts = d->timers;

	if (ts)
		return ts;
	ts = calloc(1, sizeof(*ts));
	if (!ts)
		return NULL;
	ts->fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (ts->fd < 0 || bvd_watch_fd(d, ts->fd, timers_readable, ts)) {
		if (ts->fd >= 0)
			close(ts->fd);
		free(ts);
		return NULL;
	}
	d->timers = ts;
	return ts;
}

int bvd_timer_arm(struct bvd *d, struct bvd_timer *t, uint64_t delay_ms)
{
	struct bvd_timers *ts = timers_of(d);

	if (!ts)
		return -ENOMEM;
	if (t->idx >= 0)
		bvd_timer_cancel(d, t);
	if (ts->n == ts->cap) {
		int cap = ts->cap ? 2 * ts->cap : 64;
		struct bvd_timer **h = realloc(ts->h, (size_t)cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		ts->h = h;
		ts->cap = cap;
	}
	t->when = bvd_now_ns() + delay_ms * 1000000ull;
	t->idx = ts->n;
	ts->h[ts->n++] = t;
	sift_up(ts, t->idx);
	reprogram(ts);
	return 0;
}

void bvd_timer_cancel(struct bvd *d, struct bvd_timer *t)
{
	struct bvd_timers *ts = d->timers;
	int i = t->idx;

	if (i < 0 || !ts)
		return;
	t->idx = -1;
	if (i != --ts->n) {
		struct bvd_timer *moved = ts->h[ts->n];

		ts->h[i] = moved;
		moved->idx = i;
		sift_down(ts, i);
		sift_up(ts, moved->idx);
	}
	/* the timerfd may fire early for a cancelled deadline: the loop re-arms then */
}

void bvd_timers_fini(struct bvd *d)
{
	struct bvd_timers *ts = d->timers;

	if (!ts)
		return;
	for (int i = 0; i < ts->n; i++)
		ts->h[i]->idx = -1;
	bvd_unwatch_fd(d, ts->fd);
	close(ts->fd);
	free(ts->h);
	free(ts);
	d->timers = NULL;
}
