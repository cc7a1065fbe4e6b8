// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "bvd.h"
#include "bvd_timer.h"

struct bvd_timers {
	struct bv_theap heap;
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
	bv_theap_node_init(&t->node);
	t->fn = fn;
}

/* Point the timerfd at the earliest deadline (or disarm it). */
static void reprogram(struct bvd_timers *ts)
{
	struct bv_theap_node *first = bv_theap_first(&ts->heap);
	uint64_t when = first ? first->when : 0;
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
	struct bv_theap_node *first;

	while ((first = bv_theap_first(&ts->heap)) && first->when <= now) {
		struct bvd_timer *t = (struct bvd_timer *)((char *)first -
							   offsetof(struct bvd_timer, node));

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
	int err;

	if (!ts)
		return -ENOMEM;
	err = bv_theap_add(&ts->heap, &t->node, bvd_now_ns() + delay_ms * 1000000ull);
	if (err)
		return err;
	reprogram(ts);
	return 0;
}

void bvd_timer_cancel(struct bvd *d, struct bvd_timer *t)
{
	struct bvd_timers *ts = d->timers;

	if (ts)
		bv_theap_del(&ts->heap, &t->node);
	/* the timerfd may fire early for a cancelled deadline: the loop re-arms then */
}

void bvd_timers_fini(struct bvd *d)
{
	struct bvd_timers *ts = d->timers;

	if (!ts)
		return;
	bv_theap_fini(&ts->heap);
	bvd_unwatch_fd(d, ts->fd);
	close(ts->fd);
	free(ts);
	d->timers = NULL;
}
