// SPDX-License-Identifier: MIT
/*
 * The progress thread (docs/scif.md "Progress"). SCIF has duties nobody calls in for: a
 * listener's connection requests, the peer's window registrations and fence requests, wake-ups
 * for a reader that sleeps or polls, a peer that goes away. One thread per process sleeps in
 * epoll on the rdma_cm event channel, each connection's completion channel, each endpoint's
 * descriptor B (the application closing its descriptor without
 * scif_close) and an eventfd the other threads kick; it wakes for timers only while a connect
 * or a POLLIN arming is pending. It never spins.
 *
 * It is also the only thread that destroys what those sources name (connections, descriptors
 * B, listen ids): after the batch of events it is handling, so no event it has yet to handle
 * can name something freed.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "scif_priv.h"

void scif_progress_kick(void)
{
	uint64_t one = 1;

	if (scif_lib.wakefd >= 0 && write(scif_lib.wakefd, &one, sizeof(one)) < 0) {
		/* the counter is saturated: the thread is being woken anyway */
	}
}

void scif_reap_conn(struct scif_conn *c)
{
	pthread_mutex_lock(&scif_lib.lock);
	c->reap_next = scif_lib.reap_conns;
	scif_lib.reap_conns = c;
	pthread_mutex_unlock(&scif_lib.lock);
	scif_progress_kick();
}

void scif_reap_ep(struct scif_ep *ep)
{
	scif_ep_hold(ep);
	pthread_mutex_lock(&scif_lib.lock);
	ep->reap_next = scif_lib.reap_eps;
	scif_lib.reap_eps = ep;
	pthread_mutex_unlock(&scif_lib.lock);
	scif_progress_kick();
}

static void reap(void)
{
	struct scif_conn *c;
	struct scif_ep *ep;

	pthread_mutex_lock(&scif_lib.lock);
	c = scif_lib.reap_conns;
	ep = scif_lib.reap_eps;
	scif_lib.reap_conns = NULL;
	scif_lib.reap_eps = NULL;
	pthread_mutex_unlock(&scif_lib.lock);
	while (c) {
		struct scif_conn *n = c->reap_next;

		scif_conn_destroy(c);
		c = n;
	}
	while (ep) {
		struct scif_ep *n = ep->reap_next;

		if (ep->lfd >= 0) {
			scif_epoll_del(ep->lfd);
			close(ep->lfd);
			ep->lfd = -1;
		}
		for (int i = 0; i < ep->nlids; i++)
			rdma_destroy_id(ep->lids[i]);
		ep->nlids = 0;
		scif_ep_put(ep);
		ep = n;
	}
}

/* The application closed an endpoint's descriptor without scif_close: close it for it. */
static void *close_thread(void *arg)
{
	struct scif_ep *ep = arg;

	scif_conn_close(ep);
	scif_ep_table_del(ep);
	scif_reap_ep(ep);
	scif_ep_put(ep);
	return NULL;
}

static void ep_hangup(struct scif_ep *ep)
{
	pthread_attr_t a;
	pthread_t t;

	pthread_mutex_lock(&ep->lock);
	if (ep->hup || ep->fd < 0 || ep->state == SCIF_CLOSING) {
		/*
		 * We shut B down ourselves (the connection is gone: POLLHUP), which B reports
		 * for ever; or scif_close is under way. Either way B has nothing more to say.
		 */
		pthread_mutex_unlock(&ep->lock);
		scif_epoll_del(ep->lfd);
		return;
	}
	ep->fd = -1;	/* the number may be someone else's by now */
	pthread_mutex_unlock(&ep->lock);
	scif_epoll_del(ep->lfd);
	scif_ep_hold(ep);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &a, close_thread, ep))
		close_thread(ep);	/* close waits for RMAs: rare enough to do here */
	pthread_attr_destroy(&a);
}

static void cm_events(struct rdma_event_channel *ch)
{
	struct rdma_cm_event *ev;

	while (!rdma_get_cm_event(ch, &ev)) {
		struct scif_cm_ev e = { .type = ev->event, .status = ev->status, .id = ev->id,
					.listen_id = ev->listen_id };
		const struct rdma_conn_param *cp = &ev->param.conn;

		if (cp->private_data && cp->private_data_len &&
		    (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST ||
		     ev->event == RDMA_CM_EVENT_ESTABLISHED)) {
			e.pdata_len = cp->private_data_len;
			memcpy(e.pdata, cp->private_data, cp->private_data_len);
		}
		rdma_ack_cm_event(ev);
		scif_conn_cm_event(&e);
	}
}

static void *progress(void *arg)
{
	sigset_t all;

	/* signals are the application's threads' business */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		struct epoll_event evs[32];
		uint64_t now = scif_now_ns(), next = now + 3600ull * 1000000000ull;
		int n, tmo;

		scif_conn_timers(now, &next);
		scif_msg_timers(now, &next);
		tmo = (int)((next - now + 999999) / 1000000);
		atomic_store(&scif_lib.wake_at, next);
		n = epoll_wait(scif_lib.epfd, evs, 32, tmo);
		for (int i = 0; i < n; i++) {
			uint64_t u = evs[i].data.u64;
			void *p = SCIF_SRC_PTR(u);

			switch (SCIF_SRC_KIND(u)) {
			case SCIF_SRC_WAKE: {
				uint64_t v;

				if (read(scif_lib.wakefd, &v, sizeof(v)) < 0) {
					/* EAGAIN: another kick got there first */
				}
				break;
			}
			case SCIF_SRC_CM:
				cm_events(p);
				break;
			case SCIF_SRC_CHAN:
				scif_chan_event(p);
				break;
			case SCIF_SRC_EP:
				ep_hangup(p);
				break;
			}
		}
		reap();
	}
	return NULL;
}

int scif_progress_start(void)
{
	pthread_attr_t a;
	pthread_t t;
	int ret;

	if (scif_lib.thread_running)
		return 0;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	ret = pthread_create(&t, &a, progress, NULL);
	pthread_attr_destroy(&a);
	if (ret)
		return -ret;
	scif_lib.thread_running = true;
	return 0;
}
