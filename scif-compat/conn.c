// SPDX-License-Identifier: MIT
/*
 * Connections through rdma_cm (docs/scif.md "Connections"). SCIF port p of a node is rdma_cm
 * port p (RDMA_PS_TCP) on each of the node's device addresses; the SCIF identities travel in
 * the private data of the connection request and of its acceptance (struct scif_cm_pdata),
 * so the same code runs over bridgeverbs' userspace rdma_cm and over a kernel's.
 *
 *   connector                                   listener
 *   scif_connect: resolve address, route  ---- REQ (pdata CONNECT) ---->  CONNECT_REQUEST:
 *   (progress thread) QP, rings, connect                                  queue full: reject
 *                                          <--- REP (pdata ACCEPT) ----   else QP, rings, accept
 *   ESTABLISHED: the peer's ring                                          ESTABLISHED: POLLIN
 *                                          <--- GRANT (control msg) ---   scif_accept takes it
 *   scif_connect returns the local port
 *
 * The transport accept is eager and scif_accept sends the GRANT, so that scif_connect blocks
 * until the listener accepts, as in SCIF (up to 30 s, then ECONNREFUSED), and no rdma_cm
 * timer runs while a request waits in the backlog. A listener closed with requests queued
 * sends them REJECT (ECONNREFUSED).
 *
 * Everything the progress thread handles for a connection names its struct scif_conn; the
 * endpoint's state decides whether it still matters (a closed endpoint ignores it). A
 * connection is destroyed only by the progress thread (scif_reap_conn).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include "scif_priv.h"

static void *map_pages(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static struct scif_dev *dev_get(struct ibv_context *verbs, int *err)
{
	struct scif_dev *d;
	struct ibv_port_attr pa;
	const struct bv_dev_conf *conf;

	pthread_mutex_lock(&scif_lib.lock);
	for (d = scif_lib.devs; d; d = d->next)
		if (d->verbs == verbs)
			goto out;
	d = calloc(1, sizeof(*d));
	if (!d) {
		*err = ENOMEM;
		goto out;
	}
	d->verbs = verbs;
	d->pd = ibv_alloc_pd(verbs);
	if (!d->pd || ibv_query_device(verbs, &d->attr) || ibv_query_port(verbs, 1, &pa)) {
		scif_log("device %s: %s", ibv_get_device_name(verbs->device), strerror(errno));
		if (d->pd)
			ibv_dealloc_pd(d->pd);
		free(d);
		d = NULL;
		*err = ENOMEM;
		goto out;
	}
	d->max_msg = pa.max_msg_sz;
	conf = bv_config_find(&scif_lib.cfg, ibv_get_device_name(verbs->device));
	d->is_ntb = conf && !strcmp(conf->kind, "ntb");
	d->next = scif_lib.devs;
	scif_lib.devs = d;
out:
	pthread_mutex_unlock(&scif_lib.lock);
	return d;
}

static void fill_pdata(const struct scif_ep *ep, const struct scif_conn *c, uint8_t kind,
		       struct scif_cm_pdata *p)
{
	memset(p, 0, sizeof(*p));
	p->magic = SCIF_WIRE_MAGIC;
	p->version = SCIF_WIRE_VERSION;
	p->kind = kind;
	p->src_node = ep->node;
	p->src_port = ep->port->port;
	p->dst_node = ep->peer.node;
	p->dst_port = ep->peer.port;
	p->ring_size = SCIF_RING_SIZE;
	p->rkey = c->area_mr->rkey;
	p->ring_addr = (uintptr_t)c->rxring;
	p->ctl_addr = (uintptr_t)c->ctl;
}

static void conn_param(const struct scif_conn *c, struct rdma_conn_param *cp,
		       const struct scif_cm_pdata *pd)
{
	memset(cp, 0, sizeof(*cp));
	cp->private_data = pd;
	cp->private_data_len = sizeof(*pd);
	cp->responder_resources = (uint8_t)c->rd_atom;
	cp->initiator_depth = (uint8_t)c->rd_atom;
	cp->retry_count = 7;
	cp->rnr_retry_count = 7;	/* control receives are reposted: wait for them */
	cp->flow_control = 1;
}

/*
 * Out of memory, descriptors or device resources: SCIF's ENOMEM ("no more system resources";
 * Intel's driver needs no descriptor for a connection, so EMFILE is no errno of its).
 */
static int resource_errno(int err)
{
	return err == ENOMEM || err == EMFILE || err == ENFILE || err == ENOBUFS || err == EAGAIN ?
		       ENOMEM :
		       err;
}

/* Free what conn_alloc made; only for a connection no event source knows yet or any more. */
static void conn_free_now(struct scif_conn *c)
{
	if (c->cm && c->qp)
		rdma_destroy_qp(c->cm);
	if (c->scq)
		ibv_destroy_cq(c->scq);
	if (c->rcq)
		ibv_destroy_cq(c->rcq);
	if (c->chan)
		ibv_destroy_comp_channel(c->chan);
	if (c->area_mr)
		ibv_dereg_mr(c->area_mr);
	if (c->lbuf_mr)
		ibv_dereg_mr(c->lbuf_mr);
	if (c->stage_mr)
		ibv_dereg_mr(c->stage_mr);
	if (c->area)
		munmap(c->area, c->area_len);
	if (c->lbuf)
		munmap(c->lbuf, c->lbuf_len);
	if (c->stage)
		munmap(c->stage, c->r_ring_size);
	pthread_mutex_destroy(&c->chan_lock);
	c->qp = NULL;
	c->scq = c->rcq = NULL;
	c->chan = NULL;
}

void scif_conn_destroy(struct scif_conn *c)
{
	struct ibv_cq *cq;
	void *ctx;

	if (c->chan) {
		scif_epoll_del(c->chan->fd);
		/* events for these CQs still in the channel die with it */
		while (!ibv_get_cq_event(c->chan, &cq, &ctx))
			ibv_ack_cq_events(cq, 1);
	}
	if (c->cm) {
		if (c->qp)
			rdma_destroy_qp(c->cm);
		c->qp = NULL;
		rdma_destroy_id(c->cm);
	}
	c->cm = NULL;
	conn_free_now(c);
	scif_ep_put(c->ep);
	free(c);
}

static struct scif_conn *conn_new(struct scif_ep *ep, struct rdma_cm_id *id)
{
	struct scif_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	scif_ep_hold(ep);
	c->ep = ep;
	c->cm = id;
	pthread_mutex_init(&c->chan_lock, NULL);
	id->context = c;
	return c;
}

/* The queue pair, completion queues and ring memory of c, on the device rdma_cm chose. */
static int conn_alloc(struct scif_conn *c)
{
	struct rdma_cm_id *id = c->cm;
	struct ibv_qp_init_attr qa;
	int err = ENOMEM;

	c->dev = dev_get(id->verbs, &err);
	if (!c->dev)
		return -err;
	c->chan = ibv_create_comp_channel(id->verbs);
	if (!c->chan || fcntl(c->chan->fd, F_SETFL, O_NONBLOCK))
		goto fail;
	c->scq = ibv_create_cq(id->verbs, SCIF_SQ_DEPTH, c, c->chan, 0);
	c->rcq = ibv_create_cq(id->verbs, SCIF_NRECV, c, c->chan, 0);
	c->area_len = SCIF_RING_SIZE + SCIF_PAGE_SIZE;
	c->area = map_pages(c->area_len);
	c->lbuf_len = 2 * SCIF_PAGE_SIZE + SCIF_NCTRL_SLOTS * SCIF_WIRE_MSG_LEN;
	c->lbuf = map_pages(c->lbuf_len);
	if (!c->scq || !c->rcq || !c->area || !c->lbuf)
		goto fail;
	c->rxring = c->area;
	c->ctl = (struct scif_ctl *)(c->area + SCIF_RING_SIZE);
	c->pub = (struct scif_pub *)(c->area + SCIF_RING_SIZE + sizeof(struct scif_ctl));
	c->arm_slot = (uint64_t *)(c->lbuf + SCIF_NRECV * SCIF_WIRE_MSG_LEN);
	c->area_mr = ibv_reg_mr(c->dev->pd, c->area, c->area_len,
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					IBV_ACCESS_REMOTE_READ);
	c->lbuf_mr = ibv_reg_mr(c->dev->pd, c->lbuf, c->lbuf_len, IBV_ACCESS_LOCAL_WRITE);
	if (!c->area_mr || !c->lbuf_mr)
		goto fail;
	c->max_sge = c->dev->attr.max_sge < SCIF_MAX_SGE ? c->dev->attr.max_sge : SCIF_MAX_SGE;
	c->rd_atom = c->dev->attr.max_qp_rd_atom < 16 ? c->dev->attr.max_qp_rd_atom : 16;
	if (c->rd_atom < 1)
		c->rd_atom = 1;
	for (int inl = 64;; inl = 0) {
		memset(&qa, 0, sizeof(qa));
		qa.send_cq = c->scq;
		qa.recv_cq = c->rcq;
		qa.qp_type = IBV_QPT_RC;
		qa.cap.max_send_wr = SCIF_SQ_DEPTH;
		qa.cap.max_recv_wr = SCIF_NRECV;
		qa.cap.max_send_sge = (uint32_t)c->max_sge;
		qa.cap.max_recv_sge = 1;
		qa.cap.max_inline_data = (uint32_t)inl;
		if (!rdma_create_qp(id, c->dev->pd, &qa))
			break;
		if (!inl) {
			scif_log("rdma_create_qp: %s", strerror(errno));
			goto fail;
		}
	}
	c->qp = id->qp;
	c->max_inline = qa.cap.max_inline_data;
	if (scif_post_recvs(c, SCIF_NRECV) || ibv_req_notify_cq(c->rcq, 0))
		goto fail;
	return 0;
fail:
	err = errno ? errno : ENOMEM;
	conn_free_now(c);
	return -err;
}

/* The peer's ring, from its private data: our staging mirror of it, the ring positions. */
static int conn_peer(struct scif_ep *ep, struct scif_conn *c, const struct scif_cm_pdata *p)
{
	c->stage = map_pages(p->ring_size);
	if (!c->stage)
		return -ENOMEM;
	c->r_ring_size = p->ring_size;
	c->stage_mr = ibv_reg_mr(c->dev->pd, c->stage, p->ring_size, IBV_ACCESS_LOCAL_WRITE);
	if (!c->stage_mr)
		return -ENOMEM;
	c->r_ring = p->ring_addr;
	c->r_ctl = p->ctl_addr;
	c->r_rkey = p->rkey;
	c->has_peer = true;
	return 0;
}

/* Tell rdma_cm the connection is over (once). */
static void conn_disconnect(struct scif_conn *c)
{
	if (c && !c->disconnected && c->cm) {
		c->disconnected = true;
		rdma_disconnect(c->cm);
	}
}

/* ----------------------------------------------------------------------------------------- */
/* Listen                                                                                      */

int scif_conn_listen(struct scif_ep *ep, int backlog)
{
	struct rdma_event_channel *ch;
	int err = 0, n = 0;

	ch = scif_cm_channel(&err);
	if (!ch)
		return -err;
	for (int i = 0; i < scif_lib.nodes.nlocal; i++) {
		const struct bv_dev_conf *d = &scif_lib.cfg.dev[scif_lib.nodes.local[i]];
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr = d->ip,
					  .sin_port = htons(ep->port->port) };
		struct rdma_cm_id *id;

		if (rdma_create_id(ch, &id, (void *)((uintptr_t)ep | SCIF_LISTEN_TAG), RDMA_PS_TCP)) {
			err = errno;
			continue;
		}
		if (rdma_bind_addr(id, (struct sockaddr *)&sa) || rdma_listen(id, SCIF_MAX_BACKLOG)) {
			err = errno;
			scif_log("listen on %s:%u (%s): %s", inet_ntoa(d->ip), ep->port->port, d->name,
				 strerror(err));
			rdma_destroy_id(id);
			continue;
		}
		ep->lids[n++] = id;
	}
	if (!n) {
		/* the port is taken by another rdma_cm user, or no device answers */
		err = resource_errno(err);
		/* rdma_cm's EADDRNOTAVAIL: a wildcard listener holds the port (cma_check_port) */
		if (err == EADDRNOTAVAIL)
			err = EADDRINUSE;
		return err == EADDRINUSE || err == ENOMEM ? -err : -ENODEV;
	}
	ep->nlids = n;
	ep->backlog = backlog;
	ep->state = SCIF_LISTENING;
	return 0;
}

/* A connection request: accept it at the transport and queue it, or refuse it. */
static void on_request(const struct scif_cm_ev *e)
{
	struct scif_ep *lep = (struct scif_ep *)((uintptr_t)e->listen_id->context & ~SCIF_LISTEN_TAG);
	struct scif_cm_pdata req, rep;
	struct rdma_conn_param cp;
	struct scif_ep *nep = NULL;
	struct scif_conn *c = NULL;
	int ret;

	if (scif_pdata_parse(e->pdata, e->pdata_len, SCIF_PDATA_CONNECT, &req)) {
		scif_log("rejected a connection request with malformed private data (%lu so far)",
			 (unsigned long)scif_wire_stats[SCIF_REJ_VERSION] +
				 scif_wire_stats[SCIF_REJ_ARGS] + scif_wire_stats[SCIF_REJ_LENGTH]);
		goto refuse;
	}
	pthread_mutex_lock(&lep->lock);
	if (lep->state != SCIF_LISTENING || lep->nqueued >= lep->backlog ||
	    req.dst_port != lep->port->port || req.dst_node != lep->node) {
		pthread_mutex_unlock(&lep->lock);
		goto refuse;
	}
	nep = scif_ep_alloc();
	if (!nep)
		goto unlock_refuse;
	nep->state = SCIF_CONNECTING;
	nep->node = lep->node;
	nep->port = lep->port;
	scif_port_get(nep->port);
	nep->peer.node = req.src_node;
	nep->peer.port = req.src_port;
	c = conn_new(nep, e->id);
	if (!c)
		goto unlock_refuse;
	ret = conn_alloc(c);
	if (!ret)
		ret = conn_peer(nep, c, &req);
	if (ret) {
		scif_log("cannot accept a connection from node %u port %u: %s", req.src_node,
			 req.src_port, strerror(-ret));
		goto unlock_refuse;
	}
	nep->conn = c;
	fill_pdata(nep, c, SCIF_PDATA_ACCEPT, &rep);
	conn_param(c, &cp, &rep);
	if (rdma_accept(e->id, &cp)) {
		scif_log("rdma_accept: %s", strerror(errno));
		nep->conn = NULL;
		goto unlock_refuse;
	}
	if (scif_epoll_add(c->chan->fd, EPOLLIN, SCIF_SRC(SCIF_SRC_CHAN, c))) {
		/* unreachable in practice; the peer sees the connection drop */
		pthread_mutex_unlock(&lep->lock);
		nep->conn = NULL;
		conn_disconnect(c);
		scif_reap_conn(c);
		goto drop;
	}
	scif_ep_hold(lep);
	nep->listener = lep;
	/* append: scif_accept takes the oldest */
	{
		struct scif_ep **pp = &lep->queue;

		while (*pp)
			pp = &(*pp)->qnext;
		*pp = nep;
	}
	lep->nqueued++;
	pthread_mutex_unlock(&lep->lock);
	return;
unlock_refuse:
	pthread_mutex_unlock(&lep->lock);
refuse:
	rdma_reject(e->id, NULL, 0);
	if (c) {
		conn_free_now(c);	/* the QP too, before its id */
		scif_ep_put(c->ep);
		free(c);
	}
	rdma_destroy_id(e->id);
drop:
	if (nep) {
		scif_port_put(nep->port);
		nep->port = NULL;
		scif_ep_put(nep);
	}
}

/* Take the queued endpoint qep off its listener's queue (under lep->lock). */
static void dequeue(struct scif_ep *lep, struct scif_ep *qep)
{
	for (struct scif_ep **pp = &lep->queue; *pp; pp = &(*pp)->qnext) {
		if (*pp == qep) {
			*pp = qep->qnext;
			qep->qnext = NULL;
			lep->nqueued--;
			return;
		}
	}
}

static bool any_ready(const struct scif_ep *lep)
{
	for (const struct scif_ep *q = lep->queue; q; q = q->qnext)
		if (q->conn && q->conn->established)
			return true;
	return false;
}

/*
 * An event for qep, queued at lep (held by the caller). Queue membership and qep->listener
 * change under lep->lock and qep->lock both (in that order).
 */
static void queued_event(struct scif_ep *lep, struct scif_ep *qep, struct scif_conn *c,
			 const struct scif_cm_ev *e)
{
	bool lost = e->type == RDMA_CM_EVENT_DISCONNECTED ||
		    e->type == RDMA_CM_EVENT_DEVICE_REMOVAL ||
		    e->type == RDMA_CM_EVENT_CONNECT_ERROR || e->type == RDMA_CM_EVENT_UNREACHABLE;

	if (e->type == RDMA_CM_EVENT_DISCONNECTED)
		c->disconnected = true;
	pthread_mutex_lock(&lep->lock);
	if (qep->listener != lep || qep->conn != c) {
		pthread_mutex_unlock(&lep->lock);	/* taken by scif_accept or the close */
		return;
	}
	if (e->type == RDMA_CM_EVENT_ESTABLISHED) {
		c->established = true;
		scif_epfd_set_in(lep);
	} else if (lost) {
		/* the requester went away before scif_accept took it */
		dequeue(lep, qep);
		pthread_mutex_lock(&qep->lock);
		qep->listener = NULL;
		qep->conn = NULL;
		qep->state = SCIF_CLOSING;
		pthread_mutex_unlock(&qep->lock);
		if (!any_ready(lep))
			scif_epfd_clear_in(lep);
		pthread_mutex_unlock(&lep->lock);
		conn_disconnect(c);
		scif_reap_conn(c);
		scif_port_put(qep->port);
		qep->port = NULL;
		scif_ep_put(lep);	/* qep's reference to its listener */
		scif_ep_put(qep);	/* the queue's */
		return;
	}
	pthread_mutex_unlock(&lep->lock);
}

/* ----------------------------------------------------------------------------------------- */
/* Accept                                                                                      */

int scif_conn_accept(struct scif_ep *lep, struct scif_portID *peer, int *newfd, int flags)
{
	struct scif_ep *nep = NULL;
	int ret, sv[2];

	/*
	 * The new endpoint's descriptor first, as Intel's libscif opens it before it asks the
	 * driver for a request: out of descriptors is EMFILE and the request stays queued.
	 */
	ret = scif_epfd_pair(sv);
	if (ret)
		return ret;
	pthread_mutex_lock(&lep->lock);
	for (;;) {
		if (lep->state != SCIF_LISTENING) {
			ret = nep || lep->state == SCIF_CLOSING ? -EINTR : -EINVAL;
			goto unlock;
		}
		for (struct scif_ep *q = lep->queue; q; q = q->qnext)
			if (q->conn && q->conn->established) {
				nep = q;
				break;
			}
		if (nep)
			break;
		if (!(flags & SCIF_ACCEPT_SYNC)) {
			ret = -EAGAIN;
			goto unlock;
		}
		scif_epfd_clear_in(lep);
		pthread_mutex_unlock(&lep->lock);
		ret = scif_epfd_wait(lep, POLLIN, 1000);
		pthread_mutex_lock(&lep->lock);
		if (ret == -EINTR)
			goto unlock;
		nep = NULL;
		if (lep->state == SCIF_CLOSING) {
			ret = -EINTR;	/* closed by another thread: SCIF's flush */
			goto unlock;
		}
	}
	dequeue(lep, nep);
	pthread_mutex_lock(&nep->lock);
	nep->listener = NULL;
	pthread_mutex_unlock(&nep->lock);
	if (!any_ready(lep))
		scif_epfd_clear_in(lep);
	pthread_mutex_unlock(&lep->lock);
	scif_ep_put(lep);	/* the queued endpoint's reference */

	scif_epfd_attach(nep, sv);
	ret = scif_ep_table_add(nep);
	if (!ret)
		ret = scif_epoll_add(nep->lfd, EPOLLRDHUP, SCIF_SRC(SCIF_SRC_EP, nep));
	if (ret) {
		/* the requester sees the connection drop (not refused: it was accepted) */
		struct scif_conn *c;

		scif_ep_table_del(nep);
		pthread_mutex_lock(&nep->lock);
		c = nep->conn;
		nep->conn = NULL;
		nep->state = SCIF_CLOSING;
		pthread_mutex_unlock(&nep->lock);
		conn_disconnect(c);
		if (c)
			scif_reap_conn(c);
		if (nep->fd >= 0)
			close(nep->fd);
		if (nep->lfd >= 0)
			close(nep->lfd);
		nep->fd = nep->lfd = -1;
		scif_port_put(nep->port);
		nep->port = NULL;
		scif_ep_put(nep);
		return ret;
	}
	pthread_mutex_lock(&nep->lock);
	if (nep->state == SCIF_CONNECTING) {
		nep->state = SCIF_CONNECTED;
		scif_msg_init(nep);
		scif_epfd_unblock_out(nep);
		nep->keepalive = scif_now_ns() + SCIF_KEEPALIVE_NS;
	} else {
		scif_epfd_hangup(nep);	/* it went away just now */
	}
	*peer = nep->peer;
	*newfd = nep->fd;
	pthread_mutex_unlock(&nep->lock);
	if (scif_send_ctrl(nep, SCIF_OP_GRANT, 0, 0, 0, 0, 0, 0))
		scif_debug("accept: GRANT to node %u port %u failed", nep->peer.node, nep->peer.port);
	scif_ep_put(nep);	/* the queue's; the table holds it now */
	return 0;
unlock:
	pthread_mutex_unlock(&lep->lock);
	close(sv[0]);
	close(sv[1]);
	return ret;
}

/* ----------------------------------------------------------------------------------------- */
/* Connect                                                                                     */

/* The connect of ep ended (under ep->lock). err 0: connected. */
static void connect_done(struct scif_ep *ep, int err)
{
	struct scif_conn *c = ep->conn;

	if (ep->state != SCIF_CONNECTING)
		return;
	if (!err) {
		ep->state = SCIF_CONNECTED;
		scif_msg_init(ep);
		ep->keepalive = scif_now_ns() + SCIF_KEEPALIVE_NS;
	} else {
		ep->state = SCIF_BOUND;
		ep->conn_err = err;
		ep->conn = NULL;
		conn_disconnect(c);
		if (c)
			scif_reap_conn(c);
	}
	scif_epfd_unblock_out(ep);	/* POLLOUT: the connect finished */
	if (err && !ep->connect_async)
		scif_epfd_block_out(ep);
	pthread_cond_broadcast(&ep->cond);
}

void scif_conn_granted(struct scif_ep *ep, bool granted)
{
	struct scif_conn *c = ep->conn;

	if (ep->state != SCIF_CONNECTING || !c || ep->listener)
		return;
	if (!granted) {
		connect_done(ep, ECONNREFUSED);
		return;
	}
	c->granted = true;
	if (c->established && c->has_peer)
		connect_done(ep, 0);
}

static int connect_start(struct scif_ep *ep, const struct scif_portID *dst,
			 const struct scif_route *r)
{
	struct sockaddr_in src = { .sin_family = AF_INET };
	struct sockaddr_in to = { .sin_family = AF_INET };
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct scif_conn *c;
	int err = 0;

	ch = scif_cm_channel(&err);
	if (!ch)
		return -resource_errno(err);
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
		return -ENOMEM;
	c = conn_new(ep, id);
	if (!c) {
		rdma_destroy_id(id);
		return -ENOMEM;
	}
	src.sin_addr = r->src;
	to.sin_addr = r->dst;
	to.sin_port = htons(dst->port);
	ep->peer = *dst;
	ep->conn = c;
	ep->conn_err = 0;
	ep->state = SCIF_CONNECTING;
	ep->route = r;
	if (rdma_resolve_addr(id, (struct sockaddr *)&src, (struct sockaddr *)&to,
			      SCIF_CM_TIMEOUT_MS)) {
		err = resource_errno(errno);
		scif_log("connect to node %u: resolving %s: %s", dst->node, inet_ntoa(r->dst),
			 strerror(err));
		ep->conn = NULL;
		ep->state = SCIF_BOUND;
		rdma_destroy_id(id);
		c->cm = NULL;
		scif_ep_put(ep);
		pthread_mutex_destroy(&c->chan_lock);
		free(c);
		return err == ENOMEM ? -ENOMEM : -ENODEV;
	}
	scif_progress_kick();	/* the timeout */
	return 0;
}

static bool not_connecting(struct scif_ep *ep, void *arg)
{
	return ep->state != SCIF_CONNECTING;
}

int scif_conn_connect(struct scif_ep *ep, const struct scif_portID *dst)
{
	int ret, err;
	bool nonblock = fcntl(ep->fd, F_GETFL) & O_NONBLOCK;

	pthread_mutex_lock(&ep->lock);
	switch (ep->state) {
	case SCIF_CLOSING:
		ret = -EINVAL;
		goto unlock;
	case SCIF_LISTENING:
		ret = -EOPNOTSUPP;
		goto unlock;
	case SCIF_CONNECTING:
		ret = ep->connect_async ? -EINPROGRESS : -EISCONN;
		goto unlock;
	case SCIF_CONNECTED:
	case SCIF_DISCONNECTED:
		if (ep->connect_async) {
			/* the result of a non-blocking connect: it connected */
			ep->connect_async = false;
			ret = ep->port->port;
		} else {
			ret = ep->state == SCIF_CONNECTED ? -EISCONN : -EINVAL;
		}
		goto unlock;
	case SCIF_UNBOUND:
		ep->port = scif_port_reserve(ep->node, 0, &err);
		if (!ep->port) {
			ret = -err;
			goto unlock;
		}
		ep->state = SCIF_BOUND;
		break;
	case SCIF_BOUND:
		if (ep->connect_async) {
			/* the result of a non-blocking connect: it failed */
			ep->connect_async = false;
			scif_epfd_block_out(ep);
			ret = -ep->conn_err;
			goto unlock;
		}
		break;
	}
	ep->deadline = scif_now_ns() + SCIF_CONNECT_TIMEOUT_MS * 1000000ull;
	ret = -ENODEV;	/* no route (scif_connect checked there is one) */
	for (const struct scif_route *r = scif_nodes_route(&scif_lib.nodes, dst->node); r;
	     r = scif_nodes_next_route(&scif_lib.nodes, r)) {
		ret = connect_start(ep, dst, r);
		if (ret != -ENODEV)
			break;	/* under way, or out of memory */
	}
	if (ret)
		goto unlock;
	if (nonblock) {
		ep->connect_async = true;
		ret = -EINPROGRESS;
		goto unlock;
	}
	pthread_mutex_unlock(&ep->lock);
	scif_wait(ep, not_connecting, NULL, 0);
	pthread_mutex_lock(&ep->lock);
	if (ep->state == SCIF_CONNECTED || ep->state == SCIF_DISCONNECTED)
		ret = ep->port->port;
	else
		ret = ep->state == SCIF_CLOSING ? -EINTR : -ep->conn_err;
unlock:
	pthread_mutex_unlock(&ep->lock);
	return ret;
}

/* ----------------------------------------------------------------------------------------- */
/* Events                                                                                      */

/*
 * The transport refused or could not reach the node by the route being tried (under ep->lock):
 * the next route to the node, in preference order, if there is one; the connect fails only
 * when none is left. So a node reached by several devices is reached by whichever works (a
 * connection to one's own node skips an NTB end, which has no path to itself; an ntb link
 * that is down falls to cx4), and a refusal by every route is ECONNREFUSED as before.
 */
static void connect_route_failed(struct scif_ep *ep, int err)
{
	const struct scif_route *next = scif_nodes_next_route(&scif_lib.nodes, ep->route);
	struct scif_conn *c = ep->conn;

	if (next && ep->state == SCIF_CONNECTING && c && !c->granted) {
		scif_debug("connect to node %u: %s by device %s, trying %s", ep->peer.node,
			   strerror(err), scif_lib.cfg.dev[ep->route->dev].name,
			   scif_lib.cfg.dev[next->dev].name);
		ep->conn = NULL;
		conn_disconnect(c);
		scif_reap_conn(c);
		if (!connect_start(ep, &ep->peer, next))
			return;
		/* connect_start left the endpoint bound: report the route's own failure */
		ep->state = SCIF_CONNECTING;
	}
	connect_done(ep, err);
}

static void connector_event(struct scif_ep *ep, struct scif_conn *c, const struct scif_cm_ev *e)
{
	struct scif_cm_pdata rep, req;
	struct rdma_conn_param cp;
	int ret;

	switch (e->type) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_resolve_route(c->cm, SCIF_CM_TIMEOUT_MS))
			connect_route_failed(ep, ENODEV);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = conn_alloc(c);
		if (!ret)
			ret = scif_epoll_add(c->chan->fd, EPOLLIN, SCIF_SRC(SCIF_SRC_CHAN, c));
		if (ret) {
			scif_log("connect to node %u: %s", ep->peer.node, strerror(-ret));
			ret = resource_errno(-ret);
			connect_done(ep, ret == ENOMEM ? ENOMEM : ENODEV);
			break;
		}
		fill_pdata(ep, c, SCIF_PDATA_CONNECT, &req);
		conn_param(c, &cp, &req);
		if (rdma_connect(c->cm, &cp)) {
			scif_log("rdma_connect: %s", strerror(errno));
			connect_route_failed(ep, ENODEV);
		}
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (scif_pdata_parse(e->pdata, e->pdata_len, SCIF_PDATA_ACCEPT, &rep) ||
		    rep.src_node != ep->peer.node || rep.src_port != ep->peer.port) {
			scif_reject_log(ep, SCIF_REJ_STATE, "an acceptance");
			connect_done(ep, ECONNREFUSED);
			break;
		}
		if (conn_peer(ep, c, &rep)) {
			connect_done(ep, ENOMEM);
			break;
		}
		c->established = true;
		if (c->granted)
			connect_done(ep, 0);
		break;
	case RDMA_CM_EVENT_REJECTED:
		connect_route_failed(ep, ECONNREFUSED);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		c->disconnected = true;
		connect_done(ep, ECONNREFUSED);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		scif_debug("connect to node %u: %s (%d)", ep->peer.node, rdma_event_str(e->type),
			   e->status);
		connect_route_failed(ep, ENODEV);
		break;
	default:
		break;
	}
}

void scif_conn_cm_event(const struct scif_cm_ev *e)
{
	struct scif_conn *c;
	struct scif_ep *ep;

	if (e->type == RDMA_CM_EVENT_CONNECT_REQUEST) {
		on_request(e);
		return;
	}
	if ((uintptr_t)e->id->context & SCIF_LISTEN_TAG)
		return;		/* a listener's own id: device removal; its requests stop */
	c = e->id->context;
	if (!c)
		return;
	ep = c->ep;
	pthread_mutex_lock(&ep->lock);
	if (ep->conn != c) {
		/* a connection the endpoint gave up (closed, timed out): only its end matters */
		if (e->type == RDMA_CM_EVENT_DISCONNECTED)
			c->disconnected = true;
	} else if (ep->listener) {
		/* queued at a listener */
		struct scif_ep *lep = ep->listener;

		scif_ep_hold(lep);
		pthread_mutex_unlock(&ep->lock);
		queued_event(lep, ep, c, e);
		scif_ep_put(lep);
		return;
	} else if (ep->state == SCIF_CONNECTING) {
		connector_event(ep, c, e);
	} else if (e->type == RDMA_CM_EVENT_ESTABLISHED && ep->state == SCIF_CONNECTED) {
		c->established = true;	/* accepted before the CM said so: nothing to do */
	} else if (e->type == RDMA_CM_EVENT_DISCONNECTED) {
		scif_debug("rdma_cm: DISCONNECTED from node %u port %u", ep->peer.node,
			   ep->peer.port);
		c->disconnected = true;
		scif_conn_lost(ep, ECONNRESET);
	} else if (e->type == RDMA_CM_EVENT_DEVICE_REMOVAL) {
		scif_conn_lost(ep, ENODEV);
	}
	pthread_mutex_unlock(&ep->lock);
}

void scif_conn_lost(struct scif_ep *ep, int err)
{
	if (ep->state == SCIF_CONNECTING && !ep->listener) {
		connect_done(ep, err == ECONNRESET ? ECONNREFUSED : err);
		return;
	}
	if (ep->state != SCIF_CONNECTED)
		return;
	scif_debug("connection to node %u port %u lost: %s", ep->peer.node, ep->peer.port,
		   strerror(err));
	ep->state = SCIF_DISCONNECTED;
	ep->conn_err = err;
	scif_rma_peer_gone(ep);
	scif_epfd_hangup(ep);
	pthread_cond_broadcast(&ep->cond);
}

/* Connect timeouts and keepalive probes; *next: when to look again. */
void scif_conn_timers(uint64_t now, uint64_t *next)
{
	struct scif_ep *list[256];
	int n = 0;

	pthread_mutex_lock(&scif_lib.lock);
	for (struct scif_ep *ep = scif_lib.eps; ep && n < 256; ep = ep->next) {
		scif_ep_hold(ep);
		list[n++] = ep;
	}
	pthread_mutex_unlock(&scif_lib.lock);
	for (int i = 0; i < n; i++) {
		struct scif_ep *ep = list[i];

		pthread_mutex_lock(&ep->lock);
		if (ep->state == SCIF_CONNECTING && !ep->listener) {
			if (now >= ep->deadline)
				connect_done(ep, ECONNREFUSED);
			else if (ep->deadline < *next)
				*next = ep->deadline;
		}
		pthread_mutex_unlock(&ep->lock);
		scif_ep_put(ep);
	}
}

/* ----------------------------------------------------------------------------------------- */
/* Close                                                                                       */

static bool sq_idle(struct scif_ep *ep, void *arg)
{
	return ep->sq_done == ep->sq_posted || ep->sq_err;
}

void scif_conn_close(struct scif_ep *ep)
{
	struct scif_ep *queue;
	struct scif_conn *c;
	enum scif_state old;

	pthread_mutex_lock(&ep->lock);
	old = ep->state;
	if (old == SCIF_CONNECTED) {
		/*
		 * The peer hears we are gone after everything we posted; its completion (it is
		 * signaled, and RC completes in order) says our RMAs in flight finished.
		 */
		pthread_mutex_unlock(&ep->lock);
		if (!scif_send_ctrl(ep, SCIF_OP_DISCONNECT, 0, 0, 0, 0, 0, 0))
			scif_wait(ep, sq_idle, NULL, SCIF_CLOSE_TIMEOUT_NS);
		pthread_mutex_lock(&ep->lock);
	}
	old = ep->state;
	ep->state = SCIF_CLOSING;
	scif_epfd_hangup(ep);	/* wakes a scif_accept, send or recv waiting in another thread */
	pthread_cond_broadcast(&ep->cond);
	pthread_mutex_unlock(&ep->lock);
	/* and lets them leave: they hold these for their whole call (SCIF does the same) */
	pthread_mutex_lock(&ep->send_mutex);
	pthread_mutex_unlock(&ep->send_mutex);
	pthread_mutex_lock(&ep->recv_mutex);
	pthread_mutex_unlock(&ep->recv_mutex);
	pthread_mutex_lock(&ep->lock);
	pthread_mutex_lock(&ep->sq_lock);
	c = ep->conn;
	ep->conn = NULL;
	pthread_mutex_unlock(&ep->sq_lock);
	queue = ep->queue;
	ep->queue = NULL;
	ep->nqueued = 0;
	for (struct scif_ep *q = queue; q; q = q->qnext) {
		pthread_mutex_lock(&q->lock);
		q->listener = NULL;
		q->state = SCIF_CLOSING;
		pthread_mutex_unlock(&q->lock);
	}
	pthread_mutex_unlock(&ep->lock);
	if (c) {
		conn_disconnect(c);
		scif_reap_conn(c);
	}
	/* requests waiting in the backlog are refused */
	while (queue) {
		struct scif_ep *q = queue;
		struct scif_conn *qc;

		queue = q->qnext;
		q->qnext = NULL;
		if (q->conn && q->conn->established)
			scif_send_ctrl(q, SCIF_OP_REJECT, 0, 0, 0, 0, 0, 0);
		pthread_mutex_lock(&q->lock);
		qc = q->conn;
		q->conn = NULL;
		pthread_mutex_unlock(&q->lock);
		conn_disconnect(qc);
		if (qc)
			scif_reap_conn(qc);
		scif_port_put(q->port);
		q->port = NULL;
		scif_ep_put(ep);	/* q's reference to its listener */
		scif_ep_put(q);
	}
	(void)old;
	scif_port_put(ep->port);
	ep->port = NULL;
}
