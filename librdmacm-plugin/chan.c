// SPDX-License-Identifier: MIT
/*
 * Event channels. A channel's fd is an epoll descriptor over
 *   - one SOCK_SEQPACKET socket per daemon the channel is attached to (the daemon writes one
 *     struct bv_cm_event per message into the other end of the pair), and
 *   - an eventfd that counts the events the library queues itself (a local ADDR_ERROR, the
 *     DEVICE_REMOVALs of a daemon that died, events that followed a migrated id),
 * so it is a real descriptor that poll(), select() and epoll report readable while an event
 * waits, and whose O_NONBLOCK (set with fcntl, as UCX does) rdma_get_cm_event() honours, as
 * the kernel's rdma_cm file does. A daemon that dies closes its end: end of file on its socket
 * means DEVICE_REMOVAL for every id the channel had there.
 *
 * rdma_get_cm_event() then does what librdmacm does with each event (cma.c
 * rdma_get_cm_event()): a CONNECT_REQUEST makes the new id, a CONNECT_RESPONSE moves the QP
 * to RTR and RTS and sends the RTU (the application sees ESTABLISHED), a REJECTED moves it to
 * ERR; and rdma_ack_cm_event() lets rdma_destroy_id() go on.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rcm.h"

static uint32_t chan_names;

RCM_EXPORT struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct rcm_chan *c;
	struct epoll_event ev = { .events = EPOLLIN };
	int err = rcm_init();

	if (err) {
		errno = err;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	for (int i = 0; i < RCM_MAX_DEVS; i++) {
		c->member[i] = -1;
		pthread_mutex_init(&c->attach[i], NULL);
	}
	pthread_mutex_init(&c->lock, NULL);
	/* our name for it in every daemon (bv_cm_attach_req): unique in the process, never 0 */
	do
		c->name = __atomic_add_fetch(&chan_names, 1, __ATOMIC_RELAXED);
	while (!c->name);
	c->ch.fd = epoll_create1(EPOLL_CLOEXEC);
	c->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ev.data.u32 = RCM_MAX_DEVS;	/* the local queue */
	if (c->ch.fd < 0 || c->efd < 0 || epoll_ctl(c->ch.fd, EPOLL_CTL_ADD, c->efd, &ev)) {
		err = errno;
		if (c->ch.fd >= 0)
			close(c->ch.fd);
		if (c->efd >= 0)
			close(c->efd);
		free(c);
		errno = err;
		return NULL;
	}
	return &c->ch;
}

RCM_EXPORT void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct rcm_chan *c = rcm_chan_of(channel);

	if (!c)
		return;
	/*
	 * A thread may still wait in rdma_get_cm_event() on this channel (rping's CM thread
	 * does when main returns). Closing a kernel rdma_cm file does not wake it; neither may
	 * this: every source leaves the epoll set first, so the daemons closing their ends
	 * below wakes nobody.
	 */
	epoll_ctl(c->ch.fd, EPOLL_CTL_DEL, c->efd, NULL);
	for (int i = 0; i < RCM_MAX_DEVS; i++)
		if (c->member[i] >= 0)
			epoll_ctl(c->ch.fd, EPOLL_CTL_DEL, c->member[i], NULL);
	for (int i = 0; i < RCM_MAX_DEVS; i++) {
		struct bv_cm_detach_req req;

		if (c->member[i] < 0)
			continue;
		/* closing a channel ends its ids, as closing an rdma_cm file does */
		req.chan = c->handle[i];
		close(c->member[i]);
		rcm_call(rcm_dev_at(i), BV_OP_CM_DETACH, &req, sizeof(req), NULL, 0, NULL, 0);
	}
	while (c->local_head) {
		struct rcm_event *e = c->local_head;

		c->local_head = e->next;
		free(e);
	}
	close(c->efd);
	close(c->ch.fd);
	for (int i = 0; i < RCM_MAX_DEVS; i++)
		pthread_mutex_destroy(&c->attach[i]);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

int rcm_chan_attach_begin(struct rcm_chan *c, struct rcm_dev *dev, struct rcm_attach *a)
{
	/* the daemon's answer is awaited under the device's attach lock only: the channel's
	   events flow meanwhile */
	pthread_mutex_lock(&c->attach[dev->index]);
	a->needed = __atomic_load_n(&c->member[dev->index], __ATOMIC_ACQUIRE) < 0;
	if (!a->needed)
		return 0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, a->sv)) {
		int err = errno;

		pthread_mutex_unlock(&c->attach[dev->index]);
		return err;
	}
	a->req.cookie = (uint32_t)dev->index;
	a->req.chan = c->name;
	a->rq = (struct rcm_req){ .dev = dev, .op = BV_OP_CM_ATTACH, .req = &a->req,
				  .len = sizeof(a->req), .rsp = &a->rsp, .rsp_max = sizeof(a->rsp),
				  .fds = &a->sv[1], .nfds = 1 };
	return 0;
}

int rcm_chan_attach_end(struct rcm_chan *c, struct rcm_dev *dev, struct rcm_attach *a)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)dev->index };
	int err = 0;

	if (a->needed) {
		err = a->rq.err;
		close(a->sv[1]);	/* the daemon holds its end: when it dies, ours reads EOF */
		if (!err && epoll_ctl(c->ch.fd, EPOLL_CTL_ADD, a->sv[0], &ev))
			err = errno;
		if (err) {
			close(a->sv[0]);
		} else {
			pthread_mutex_lock(&c->lock);
			c->handle[dev->index] = c->name;
			__atomic_store_n(&c->member[dev->index], a->sv[0], __ATOMIC_RELEASE);
			pthread_mutex_unlock(&c->lock);
		}
	}
	pthread_mutex_unlock(&c->attach[dev->index]);
	return err;
}

int rcm_chan_attach(struct rcm_chan *c, struct rcm_dev *dev, uint32_t *handle)
{
	struct rcm_attach a;
	int err = rcm_chan_attach_begin(c, dev, &a);

	if (err)
		return err;
	if (a.needed) {
		struct rcm_req *rq = &a.rq;

		rcm_call_batch(&rq, 1);
	}
	*handle = c->name;
	return rcm_chan_attach_end(c, dev, &a);
}

int rcm_chan_post_local(struct rcm_chan *c, struct rcm_event *evt)
{
	uint64_t one = 1;

	evt->next = NULL;
	pthread_mutex_lock(&c->lock);
	if (c->local_tail)
		c->local_tail->next = evt;
	else
		c->local_head = evt;
	c->local_tail = evt;
	pthread_mutex_unlock(&c->lock);
	return write(c->efd, &one, sizeof(one)) == sizeof(one) ? 0 : errno;
}

static struct rcm_event *pop_local(struct rcm_chan *c)
{
	struct rcm_event *e;
	uint64_t v;

	pthread_mutex_lock(&c->lock);
	e = c->local_head;
	if (e) {
		c->local_head = e->next;
		if (!c->local_head)
			c->local_tail = NULL;
		if (!c->local_head && read(c->efd, &v, sizeof(v)) < 0)
			v = 0;	/* the counter only says "not empty" */
	}
	pthread_mutex_unlock(&c->lock);
	return e;
}

/* The daemon behind member dev died: every id of ours there is removed (DEVICE_REMOVAL). */
static void member_gone(struct rcm_chan *c, int dev_index)
{
	struct rcm_dev *dev = rcm_dev_at(dev_index);

	pthread_mutex_lock(&c->lock);
	if (c->member[dev_index] >= 0) {
		epoll_ctl(c->ch.fd, EPOLL_CTL_DEL, c->member[dev_index], NULL);
		close(c->member[dev_index]);
		c->member[dev_index] = -1;
	}
	pthread_mutex_unlock(&c->lock);
	if (dev)
		dev->gone = true;
	rcm_ids_device_removed(c, dev);
}

/* Wait for (or, nonblocking, look for) the next raw event of the channel. */
static int next_raw(struct rcm_chan *c, struct rcm_event **local, struct bv_cm_event *raw)
{
	for (;;) {
		struct epoll_event evs[RCM_MAX_DEVS + 1];
		int fl = fcntl(c->ch.fd, F_GETFL), n;

		*local = pop_local(c);
		if (*local)
			return 0;
		n = epoll_wait(c->ch.fd, evs, RCM_MAX_DEVS + 1, (fl >= 0 && (fl & O_NONBLOCK)) ? 0 : -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return rcm_err(EAGAIN);
		for (int i = 0; i < n; i++) {
			uint32_t m = evs[i].data.u32;
			ssize_t r;
			int fd;

			if (m >= RCM_MAX_DEVS) {
				/* local: popped at the top; a count left over from an event taken
				 * meanwhile is cleared, or the channel would stay readable */
				uint64_t v;

				pthread_mutex_lock(&c->lock);
				if (!c->local_head && read(c->efd, &v, sizeof(v)) < 0)
					v = 0;
				pthread_mutex_unlock(&c->lock);
				continue;
			}
			pthread_mutex_lock(&c->lock);
			fd = c->member[m];
			pthread_mutex_unlock(&c->lock);
			if (fd < 0)
				continue;
			r = recv(fd, raw, sizeof(*raw), MSG_DONTWAIT);
			if (r == (ssize_t)sizeof(*raw))
				return 0;
			if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
				member_gone(c, (int)m);
			/* short (a foreign writer) or taken by another thread: next */
		}
	}
}

/* ---- what librdmacm does with each event ------------------------------------------------------ */

static void copy_conn(struct rcm_event *e, const struct bv_cm_event *raw)
{
	struct rdma_conn_param *dst = &e->event.param.conn;
	unsigned int len = raw->conn.private_data_len;

	if (len > sizeof(e->private_data))
		len = sizeof(e->private_data);
	dst->private_data_len = (uint8_t)(len > 255 ? 255 : len);
	if (len) {
		memcpy(e->private_data, raw->conn.private_data, len);
		dst->private_data = e->private_data;
	}
	dst->responder_resources = raw->conn.responder_resources;
	dst->initiator_depth = raw->conn.initiator_depth;
	dst->flow_control = raw->conn.flow_control;
	dst->retry_count = raw->conn.retry_count;
	dst->rnr_retry_count = raw->conn.rnr_retry_count;
	dst->srq = raw->conn.srq;
	dst->qp_num = raw->conn.qp_num;
}

static void copy_ud(struct rcm_event *e, const struct bv_cm_event *raw)
{
	struct rdma_ud_param *dst = &e->event.param.ud;
	unsigned int len = raw->conn.private_data_len;

	if (len > sizeof(e->private_data))
		len = sizeof(e->private_data);
	dst->private_data_len = (uint8_t)(len > 255 ? 255 : len);
	if (len) {
		memcpy(e->private_data, raw->conn.private_data, len);
		dst->private_data = e->private_data;
	}
	memcpy(dst->ah_attr.grh.dgid.raw, raw->ah.dgid, 16);
	dst->ah_attr.grh.flow_label = raw->ah.flow_label;
	dst->ah_attr.grh.sgid_index = raw->ah.sgid_index;
	dst->ah_attr.grh.hop_limit = raw->ah.hop_limit;
	dst->ah_attr.grh.traffic_class = raw->ah.traffic_class;
	dst->ah_attr.dlid = raw->ah.dlid;
	dst->ah_attr.sl = raw->ah.sl;
	dst->ah_attr.src_path_bits = raw->ah.src_path_bits;
	dst->ah_attr.static_rate = raw->ah.static_rate;
	dst->ah_attr.is_global = raw->ah.is_global;
	dst->ah_attr.port_num = raw->ah.port_num;
	dst->qp_num = raw->conn.qp_num;
	dst->qkey = raw->conn.qkey;
}

/* librdmacm's ucma_process_conn_req(): the new id of a connection request. */
static int conn_req(struct rcm_event *e, struct rcm_id *listen, const struct bv_cm_event *raw)
{
	struct rcm_dev *dev = rcm_dev_at((int)raw->cookie);
	struct rcm_id *id;
	int err;

	if (!dev)
		return -1;
	id = rcm_id_alloc(listen->chan, listen->id.context, listen->id.ps, listen->id.qp_type);
	if (!id) {
		struct bv_cm_id_req req = { .handle = raw->handle };

		rcm_call(dev, BV_OP_CM_DESTROY_ID, &req, sizeof(req), NULL, 0, NULL, 0);
		return -1;
	}
	err = rcm_id_attach(id, dev, raw->handle);
	if (err) {
		rcm_id_free(id);
		return -1;
	}
	rcm_id_set_route(id, &raw->route);
	id->initiator_depth = raw->conn.initiator_depth;
	id->responder_resources = raw->conn.responder_resources;
	id->remote_ece.vendor_id = raw->ece.vendor_id;
	id->remote_ece.options = raw->ece.options;
	e->event.listen_id = &listen->id;
	e->event.id = &id->id;
	if (listen->sync && rdma_migrate_id(&id->id, NULL)) {
		rdma_destroy_id(&id->id);
		return -1;
	}
	return 0;
}

/*
 * Turn a raw event into what the application gets; false: nothing for it (a stale event, or
 * one librdmacm swallows), try the next.
 */
static bool process(struct rcm_event *e, const struct bv_cm_event *raw)
{
	struct rcm_id *id = rcm_id_by_uid(raw->uid);

	if (!id) {
		/* an id destroyed meanwhile; a connection request for it dies with it */
		if (raw->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			struct rcm_dev *dev = rcm_dev_at((int)raw->cookie);
			struct bv_cm_id_req req = { .handle = raw->handle };

			if (dev)
				rcm_call(dev, BV_OP_CM_DESTROY_ID, &req, sizeof(req), NULL, 0, NULL,
					 0);
		}
		return false;
	}
	e->id = id;
	e->event.id = &id->id;
	e->event.event = raw->event;
	e->event.status = raw->status;
	if (raw->flags & BV_CM_EVENT_ROUTE && raw->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		rcm_id_set_route(id, &raw->route);

	switch (raw->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		if (id->id.qp_type == IBV_QPT_UD)
			copy_ud(e, raw);
		else
			copy_conn(e, raw);
		if (conn_req(e, id, raw)) {
			e->id = NULL;
			return false;
		}
		/* the ack completes the listener's event */
		e->id = id;
		return true;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		copy_conn(e, raw);
		if (!id->id.qp) {
			id->remote_ece.vendor_id = raw->ece.vendor_id;
			id->remote_ece.options = raw->ece.options;
			return true;
		}
		e->event.status = rcm_process_conn_resp(id, &raw->ece);
		if (!e->event.status) {
			e->event.event = RDMA_CM_EVENT_ESTABLISHED;
		} else {
			e->event.event = RDMA_CM_EVENT_CONNECT_ERROR;
			id->connect_error = true;
		}
		return true;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (id->id.qp_type == IBV_QPT_UD) {
			copy_ud(e, raw);
			id->qkey = raw->conn.qkey;
		} else {
			copy_conn(e, raw);
		}
		return true;
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_DISCONNECTED:
		/* after a CONNECT_ERROR the application has been told already */
		if (id->connect_error)
			return false;
		copy_conn(e, raw);
		if (raw->event == RDMA_CM_EVENT_REJECTED)
			rcm_modify_qp_err(id);
		return true;
	default:
		if (id->id.qp_type == IBV_QPT_UD)
			copy_ud(e, raw);
		else
			copy_conn(e, raw);
		return true;
	}
}

RCM_EXPORT int rdma_get_cm_event(struct rdma_event_channel *channel,
				 struct rdma_cm_event **event)
{
	struct rcm_chan *c = rcm_chan_of(channel);

	if (!channel || !event)
		return rcm_err(EINVAL);
	for (;;) {
		struct rcm_event *local, *e;
		struct bv_cm_event *raw;

		e = calloc(1, sizeof(*e));
		if (!e)
			return rcm_err(ENOMEM);
		if (next_raw(c, &local, &e->raw)) {
			free(e);
			return -1;
		}
		if (local) {
			/* a local event is already what the application gets, or came from a
			 * daemon (a migrated id's): then it is processed like one */
			free(e);
			e = local;
			if (!e->event.id) {
				memset(&e->event, 0, sizeof(e->event));
				if (!process(e, &e->raw)) {
					free(e);
					continue;
				}
			}
		} else {
			raw = &e->raw;
			if (!process(e, raw)) {
				free(e);
				continue;
			}
		}
		/* an id migrated to another channel while its event was on the way here */
		if (e->id && e->id->chan != c && e->event.event != RDMA_CM_EVENT_CONNECT_REQUEST) {
			rcm_chan_post_local(e->id->chan, e);
			continue;
		}
		pthread_mutex_lock(&e->id->mut);
		e->id->events_reported++;
		pthread_mutex_unlock(&e->id->mut);
		if (rcm_debug())
			fprintf(stderr, "librdmacm-plugin: %s, status %d (id %p)\n",
				rdma_event_str(e->event.event), e->event.status, (void *)e->event.id);
		*event = &e->event;
		return 0;
	}
}

RCM_EXPORT int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct rcm_event *e = (struct rcm_event *)event;
	struct rcm_id *id;

	if (!event)
		return rcm_err(EINVAL);
	id = e->id;
	if (id) {
		pthread_mutex_lock(&id->mut);
		id->events_completed++;
		pthread_cond_broadcast(&id->cond);
		pthread_mutex_unlock(&id->mut);
	}
	free(e);
	return 0;
}
