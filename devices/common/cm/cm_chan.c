// SPDX-License-Identifier: MIT
/*
 * Event channels: the daemon's end of the socket pair a library event channel reads
 * (bv_cm_proto.h). An event is one message; the kernel's ucma queue has no bound, so what the
 * socket cannot take now waits here, in order, and goes out when the socket has room again
 * (EPOLLOUT): the daemon never blocks on a slow application, and never reorders its events.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cm.h"

struct cm_evq {
	struct cm_evq *next;
	struct bv_cm_event ev;
};

/* The send buffer we ask for: some hundred events in flight before we queue (root only). */
#define CHAN_SNDBUF	(1 << 20)

static void chan_kill(struct cm_chan *ch)
{
	ch->dead = true;
	while (ch->head) {
		struct cm_evq *q = ch->head;

		ch->head = q->next;
		free(q);
		ch->cm->st.events_dropped++;
	}
	ch->tail = NULL;
	ch->queued = 0;
	if (ch->want_out) {
		bvd_unwatch_fd(ch->cm->d, ch->fd);
		ch->want_out = false;
	}
}

/* Send what waits; false when the socket is full again. */
static bool chan_flush(struct cm_chan *ch)
{
	while (ch->head) {
		struct cm_evq *q = ch->head;
		ssize_t n = send(ch->fd, &q->ev, sizeof(q->ev), MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS))
			return false;
		if (n != (ssize_t)sizeof(q->ev)) {
			chan_kill(ch);	/* the library's end is gone */
			return true;
		}
		ch->head = q->next;
		if (!ch->head)
			ch->tail = NULL;
		ch->queued--;
		free(q);
	}
	return true;
}

static void chan_writable(struct bvd *d, int fd, uint32_t events, void *arg)
{
	struct cm_chan *ch = arg;

	if (chan_flush(ch) && ch->want_out) {
		bvd_unwatch_fd(d, ch->fd);
		ch->want_out = false;
	}
}

static void chan_send(struct cm_chan *ch, const struct bv_cm_event *ev)
{
	struct cm_evq *q;

	if (ch->dead) {
		ch->cm->st.events_dropped++;
		return;
	}
	ch->cm->st.events++;
	if (!ch->head) {
		ssize_t n = send(ch->fd, ev, sizeof(*ev), MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n == (ssize_t)sizeof(*ev))
			return;
		if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS)) {
			chan_kill(ch);
			ch->cm->st.events_dropped++;
			return;
		}
	}
	q = malloc(sizeof(*q));
	if (!q) {
		/* out of memory: like a kernel that cannot allocate the event, lose it */
		ch->cm->st.events_dropped++;
		return;
	}
	q->next = NULL;
	q->ev = *ev;
	if (ch->tail)
		ch->tail->next = q;
	else
		ch->head = q;
	ch->tail = q;
	ch->queued++;
	if (!ch->want_out &&
	    !bvd_watch_fd_events(ch->cm->d, ch->fd, EPOLLOUT, chan_writable, ch))
		ch->want_out = true;
}

void cm_event_init(struct bv_cm_event *ev, uint32_t event, int32_t status)
{
	memset(ev, 0, sizeof(*ev));
	ev->event = event;
	ev->status = status;
}

void cm_event(struct cm_id *id, struct bv_cm_event *ev)
{
	/* Linux ucma_event_handler(): no uid yet (not accepted): nobody to tell */
	if (!id->uid || !id->chan) {
		id->cm->st.events_dropped++;
		return;
	}
	ev->uid = id->uid;
	ev->handle = id->handle;
	ev->cookie = id->chan->cookie;
	chan_send(id->chan, ev);
}

void cm_event_conn_req(struct cm_id *listen, struct cm_id *conn, struct bv_cm_event *ev)
{
	ev->uid = listen->uid;
	ev->handle = conn->handle;
	ev->cookie = listen->chan->cookie;
	chan_send(listen->chan, ev);
}

int cm_chan_attach(struct cm_dev *cm, struct bvd_client *owner, int fd, uint32_t cookie,
		   uint32_t handle)
{
	struct cm_chan *ch;
	int type = 0, size = CHAN_SNDBUF;
	socklen_t tl = sizeof(type);

	if (!handle || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) || type != SOCK_SEQPACKET)
		return EINVAL;
	if (cm_chan_find(cm, owner, handle))
		return EEXIST;
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return ENOMEM;
	/* root may go past net.core.wmem_max; anyone else keeps the default */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	ch->cm = cm;
	ch->owner = owner;
	ch->fd = fd;
	ch->cookie = cookie;
	ch->handle = handle;
	ch->next = cm->chans;
	cm->chans = ch;
	return 0;
}

struct cm_chan *cm_chan_find(struct cm_dev *cm, struct bvd_client *owner, uint32_t handle)
{
	for (struct cm_chan *ch = cm->chans; ch; ch = ch->next)
		if (ch->handle == handle && ch->owner == owner)
			return ch;
	return NULL;
}

void cm_chan_free(struct cm_chan *ch)
{
	struct cm_dev *cm = ch->cm;

	chan_kill(ch);
	close(ch->fd);
	for (struct cm_chan **p = &cm->chans; *p; p = &(*p)->next)
		if (*p == ch) {
			*p = ch->next;
			break;
		}
	free(ch);
}
