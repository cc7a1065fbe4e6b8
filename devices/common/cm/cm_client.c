// SPDX-License-Identifier: MIT
/*
 * The connection manager's clients: librdmacm-plugin instances that said HELLO with role
 * BV_ROLE_CM (the part of Linux ucma.c that parses commands), the ids they own and the
 * tables that find ids by handle and by the peer's communication id, the daemon-level state,
 * and the cleanup of a client that closed or died: its ids are destroyed the way Linux
 * destroys the ids of a closed rdma_cm file, so connected peers get a DREQ (or a REJ), and
 * its channels go with them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "bv_config.h"
#include "cm.h"

/* ---- id tables ---------------------------------------------------------------------------- */

static unsigned int hash32(uint32_t v)
{
	return (v * 2654435761u) >> 22;	/* CM_HASH = 1024 buckets */
}

static unsigned int hash_remote(uint64_t guid, uint32_t id)
{
	return hash32((uint32_t)(guid ^ (guid >> 32)) ^ id);
}

struct cm_id *cm_id_find(struct cm_dev *cm, uint32_t handle)
{
	for (struct cm_id *id = cm->ids[hash32(handle)]; id; id = id->hnext)
		if (id->handle == handle)
			return id;
	return NULL;
}

struct cm_id *cm_id_by_local_id(struct cm_dev *cm, uint32_t local_id)
{
	struct cm_id *id = cm_id_find(cm, local_id ^ cm->id_xor);

	return id && id->local_id == local_id ? id : NULL;
}

void cm_remote_insert(struct cm_id *id)
{
	unsigned int h = hash_remote(id->remote_ca_guid, id->remote_id);

	if (id->in_remote)
		return;
	id->rnext = id->cm->remote[h];
	id->cm->remote[h] = id;
	id->in_remote = true;
}

void cm_remote_remove(struct cm_id *id)
{
	unsigned int h = hash_remote(id->remote_ca_guid, id->remote_id);

	if (!id->in_remote)
		return;
	for (struct cm_id **p = &id->cm->remote[h]; *p; p = &(*p)->rnext)
		if (*p == id) {
			*p = id->rnext;
			break;
		}
	id->in_remote = false;
}

struct cm_id *cm_remote_find(struct cm_dev *cm, uint64_t ca_guid, uint32_t remote_id)
{
	for (struct cm_id *id = cm->remote[hash_remote(ca_guid, remote_id)]; id; id = id->rnext)
		if (id->remote_ca_guid == ca_guid && id->remote_id == remote_id)
			return id;
	return NULL;
}

struct cm_id *cm_id_alloc(struct cm_dev *cm, struct bvd_client *owner, struct cm_chan *chan,
			  uint64_t uid, uint16_t ps, uint8_t qp_type)
{
	struct cm_id *id = calloc(1, sizeof(*id));
	unsigned int h;

	if (!id)
		return NULL;
	/* a handle not in use (cyclic, like Linux's xa_alloc_cyclic of local ids); 0 never */
	do
		id->handle = ++cm->next_handle;
	while (!id->handle || cm_id_find(cm, id->handle));
	id->cm = cm;
	id->owner = owner;
	id->chan = chan;
	id->uid = uid;
	id->ps = ps;
	id->qp_type = qp_type;
	id->local_id = id->handle ^ cm->id_xor;
	id->seq_num = (uint32_t)random() & 0xffffff;	/* Linux __rdma_create_id() */
	id->max_cm_retries = cm->max_cm_retries;
	bvd_timer_init(&id->msg_timer, cm_msg_timeout);
	bvd_timer_init(&id->tw_timer, cm_timewait_expired);
	h = hash32(id->handle);
	id->hnext = cm->ids[h];
	cm->ids[h] = id;
	cm->nids++;
	return id;
}

void cm_id_destroy(struct cm_id *id)
{
	struct cm_dev *cm = id->cm;
	unsigned int h = hash32(id->handle);

	cm_conn_destroy(id);
	bvd_timer_cancel(cm->d, &id->msg_timer);
	bvd_timer_cancel(cm->d, &id->tw_timer);
	cm_remote_remove(id);
	cm_unbind(id);
	/* connections that came to a listener and were not accepted yet outlive it */
	if (id->state == CMA_LISTEN)
		for (unsigned int b = 0; b < CM_HASH; b++)
			for (struct cm_id *c = cm->ids[b]; c; c = c->hnext)
				if (c->listen == id)
					c->listen = NULL;
	if (id->listen)
		id->listen->backlog++;
	for (struct cm_id **p = &cm->ids[h]; *p; p = &(*p)->hnext)
		if (*p == id) {
			*p = id->hnext;
			break;
		}
	cm->nids--;
	free(id);
}

/* Refresh the port from the transport; false when it is not up. */
bool cm_refresh_port(struct cm_dev *cm)
{
	struct bvd_cm_port p;

	if (cm->tp->port(cm->d, &p))
		return false;
	cm->port = p;
	return p.active;
}

/* ---- requests ------------------------------------------------------------------------------ */

static struct cm_id *owned(struct cm_dev *cm, struct bvd_client *c, uint32_t handle)
{
	struct cm_id *id = cm_id_find(cm, handle);

	return id && id->owner == c ? id : NULL;
}

#define NEED(type)							\
	const type *req = in;						\
	if (len != sizeof(*req)) {					\
		r->status = EINVAL;					\
		return;							\
	}

static void reply_route(struct cm_id *id, struct bvd_reply *r)
{
	cm_route_of(id, r->payload);
	r->len = sizeof(struct bv_cm_route);
}

static int set_option(struct cm_id *id, const struct bv_cm_set_option_req *o)
{
	int v;

	if (o->level != RDMA_OPTION_ID)
		return EOPNOTSUPP;	/* RDMA_OPTION_IB_PATH: no SA paths on RoCE ports */
	switch (o->optname) {
	case RDMA_OPTION_ID_TOS:
		if (o->optlen != sizeof(uint8_t))
			return EINVAL;
		id->tos = o->optval[0];
		id->tos_set = true;
		return 0;
	case RDMA_OPTION_ID_REUSEADDR:
		if (o->optlen != sizeof(int))
			return EINVAL;
		memcpy(&v, o->optval, sizeof(v));
		/* Linux rdma_set_reuseaddr() */
		if ((v && id->state != CMA_LISTEN) || id->state == CMA_IDLE) {
			id->reuseaddr = v != 0;
			return 0;
		}
		return EINVAL;
	case RDMA_OPTION_ID_AFONLY:
		if (o->optlen != sizeof(int))
			return EINVAL;
		if (id->state != CMA_IDLE && id->state != CMA_ADDR_BOUND)
			return EINVAL;
		memcpy(&v, o->optval, sizeof(v));
		id->afonly = v != 0;
		id->afonly_set = true;
		return 0;
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		if (o->optlen != sizeof(uint8_t))
			return EINVAL;
		id->timeout = o->optval[0];
		id->timeout_set = true;
		return 0;
	default:
		return ENOSYS;	/* what ucma answers for an option it does not know */
	}
}

static void do_attach(struct cm_dev *cm, struct bvd_client *c, const void *in, size_t len,
		      int *fds, unsigned int nfds, struct bvd_reply *r)
{
	NEED(struct bv_cm_attach_req);
	struct bv_cm_attach_rsp *rsp = r->payload;

	if (nfds != 1 || fds[0] < 0) {
		r->status = EINVAL;
		return;
	}
	/* EINVAL: not a SOCK_SEQPACKET socket or no name; EEXIST: the name is taken */
	r->status = cm_chan_attach(cm, c, fds[0], req->cookie, req->chan);
	if (r->status)
		return;
	fds[0] = -1;			/* ours now */
	rsp->chan = req->chan;
	r->len = sizeof(*rsp);
}

/* rdma_set_option(RDMA_OPTION_ID, name) with v as its optlen bytes: a uint8_t or an int. */
static int set_id_option(struct cm_id *id, uint32_t name, int v, uint32_t optlen)
{
	struct bv_cm_set_option_req q = { .level = RDMA_OPTION_ID, .optname = name,
					  .optlen = optlen };

	if (optlen == sizeof(uint8_t))
		q.optval[0] = (uint8_t)v;
	else
		memcpy(q.optval, &v, sizeof(v));
	return set_option(id, &q);
}

/* Options set before the id was on a device (bv_cm_id_opts), as rdma_set_option sets them. */
static int create_opts(struct cm_id *id, const struct bv_cm_id_opts *o)
{
	int err = 0;

	if (o->set & BV_CM_OPT_TOS)
		err = set_id_option(id, RDMA_OPTION_ID_TOS, o->tos, sizeof(uint8_t));
	if (!err && (o->set & BV_CM_OPT_REUSEADDR))
		err = set_id_option(id, RDMA_OPTION_ID_REUSEADDR, o->reuseaddr, sizeof(int));
	if (!err && (o->set & BV_CM_OPT_AFONLY))
		err = set_id_option(id, RDMA_OPTION_ID_AFONLY, o->afonly, sizeof(int));
	if (!err && (o->set & BV_CM_OPT_ACK_TIMEOUT))
		err = set_id_option(id, RDMA_OPTION_ID_ACK_TIMEOUT, o->timeout, sizeof(uint8_t));
	return err;
}

static void do_create_id(struct cm_dev *cm, struct bvd_client *c, const void *in, size_t len,
			 struct bvd_reply *r)
{
	NEED(struct bv_cm_create_id_req);
	struct bv_cm_create_id_rsp *rsp = r->payload;
	struct cm_chan *ch = cm_chan_find(cm, c, req->chan);
	struct cm_id *id;
	int err;

	if (!ch || (req->qp_type != IBV_QPT_RC && req->qp_type != IBV_QPT_UD) ||
	    (req->ps != RDMA_PS_TCP && req->ps != RDMA_PS_UDP && req->ps != RDMA_PS_IB &&
	     req->ps != RDMA_PS_IPOIB) ||
	    (req->flags & ~(BV_CM_CREATE_BIND | BV_CM_BIND_WILDCARD_SET))) {
		r->status = EINVAL;
		return;
	}
	id = cm_id_alloc(cm, c, ch, req->uid, req->ps, req->qp_type);
	if (!id) {
		r->status = ENOMEM;
		return;
	}
	err = create_opts(id, &req->opts);
	if (!err && (req->flags & BV_CM_CREATE_BIND)) {
		err = cm_bind(id, (const struct sockaddr *)&req->addr,
			      req->flags & BV_CM_BIND_WILDCARD_SET);
		err = err < 0 ? -err : err;
	}
	if (err) {
		cm_id_destroy(id);
		r->status = err;
		return;
	}
	memset(rsp, 0, sizeof(*rsp));
	rsp->handle = id->handle;
	if (req->flags & BV_CM_CREATE_BIND)
		cm_route_of(id, &rsp->route);
	r->len = sizeof(*rsp);
}

/* Closing a channel destroys its ids, as closing an rdma_cm file does (Linux ucma_close). */
static void chan_close(struct cm_dev *cm, struct cm_chan *ch)
{
	for (unsigned int b = 0; b < CM_HASH; b++) {
		struct cm_id *id = cm->ids[b];

		while (id) {
			struct cm_id *next = id->hnext;

			if (id->chan == ch)
				cm_id_destroy(id);
			id = next;
		}
	}
	cm_chan_free(ch);
}

void bvd_cm_request(struct bvd *d, struct bvd_client *c, uint16_t op, const void *in,
		    size_t len, int *fds, unsigned int nfds, struct bvd_reply *r)
{
	struct cm_dev *cm = cm_of(d);
	struct cm_id *id = NULL;
	int ret = 0;

	if (!cm) {
		r->status = EOPNOTSUPP;
		return;
	}
	switch (op) {
	case BV_OP_CM_ATTACH:
		do_attach(cm, c, in, len, fds, nfds, r);
		return;
	case BV_OP_CM_DETACH: {
		NEED(struct bv_cm_detach_req);
		struct cm_chan *ch = cm_chan_find(cm, c, req->chan);

		if (!ch)
			r->status = EINVAL;
		else
			chan_close(cm, ch);
		return;
	}
	case BV_OP_CM_CREATE_ID:
		do_create_id(cm, c, in, len, r);
		return;
	case BV_OP_CM_DESTROY_ID:
	case BV_OP_CM_DISCONNECT:
	case BV_OP_CM_RESOLVE_ROUTE:
	case BV_OP_CM_QUERY: {
		NEED(struct bv_cm_id_req);

		id = owned(cm, c, req->handle);
		if (!id) {
			r->status = EINVAL;
			return;
		}
		if (op == BV_OP_CM_DESTROY_ID)
			cm_id_destroy(id);
		else if (op == BV_OP_CM_DISCONNECT)
			ret = cm_disconnect(id);
		else if (op == BV_OP_CM_RESOLVE_ROUTE)
			ret = cm_resolve_route(id);
		else
			reply_route(id, r);
		break;
	}
	case BV_OP_CM_BIND: {
		NEED(struct bv_cm_bind_req);

		id = owned(cm, c, req->handle);
		if (!id) {
			r->status = EINVAL;
			return;
		}
		ret = cm_bind(id, (const struct sockaddr *)&req->addr,
			      req->flags & BV_CM_BIND_WILDCARD_SET);
		if (!ret)
			reply_route(id, r);
		break;
	}
	case BV_OP_CM_RESOLVE_ADDR: {
		NEED(struct bv_cm_resolve_addr_req);

		id = owned(cm, c, req->handle);
		if (!id) {
			r->status = EINVAL;
			return;
		}
		ret = cm_resolve_addr(id,
				      (req->flags & BV_CM_RESOLVE_SRC) ?
					      (const struct sockaddr *)&req->src : NULL,
				      (const struct sockaddr *)&req->dst,
				      req->flags & BV_CM_RESOLVE_LOOPBACK);
		break;
	}
	case BV_OP_CM_LISTEN: {
		NEED(struct bv_cm_listen_req);

		id = owned(cm, c, req->handle);
		if (!id) {
			r->status = EINVAL;
			return;
		}
		ret = cm_listen(id, req->backlog);
		if (!ret) {
			reply_route(id, r);
			cm_req_wait_listen(cm);
		}
		break;
	}
	case BV_OP_CM_CONNECT: {
		NEED(struct bv_cm_connect_req);

		id = owned(cm, c, req->handle);
		if (!id) {
			r->status = EINVAL;
			return;
		}
		ret = id->qp_type == IBV_QPT_UD ? cm_sidr_connect(id, &req->conn) :
						  cm_connect(id, &req->conn, &req->ece);
		break;
	}
	case BV_OP_CM_ACCEPT: {
		NEED(struct bv_cm_accept_req);

		id = owned(cm, c, req->handle);
		if (!id) {
			r->status = EINVAL;
			return;
		}
		if (req->uid)
			id->uid = req->uid;	/* Linux ucma_accept(): events flow from now */
		if (!req->has_conn)
			ret = cm_establish_rtu(id);
		else if (id->qp_type == IBV_QPT_UD)
			ret = cm_sidr_accept(id, &req->conn, &req->ece);
		else
			ret = cm_accept(id, &req->conn, &req->ece);
		break;
	}
	case BV_OP_CM_REJECT: {
		NEED(struct bv_cm_reject_req);

		id = owned(cm, c, req->handle);
		if (!id) {
			r->status = EINVAL;
			return;
		}
		ret = id->qp_type == IBV_QPT_UD ?
			      cm_sidr_reject(id, req->private_data, req->private_data_len) :
			      cm_reject(id, req->reason ? req->reason : IB_CM_REJ_CONSUMER_DEFINED,
					req->private_data, req->private_data_len);
		break;
	}
	case BV_OP_CM_INIT_QP_ATTR: {
		NEED(struct bv_cm_init_qp_attr_req);

		id = owned(cm, c, req->handle);
		if (!id) {
			r->status = EINVAL;
			return;
		}
		memset(r->payload, 0, sizeof(struct bv_cm_qp_attr));
		ret = cm_init_qp_attr(id, req->qp_state, r->payload);
		if (!ret)
			r->len = sizeof(struct bv_cm_qp_attr);
		break;
	}
	case BV_OP_CM_NOTIFY: {
		NEED(struct bv_cm_notify_req);

		id = owned(cm, c, req->handle);
		if (!id) {
			r->status = EINVAL;
			return;
		}
		ret = cm_notify(id, req->event);
		break;
	}
	case BV_OP_CM_SET_OPTION: {
		NEED(struct bv_cm_set_option_req);

		id = owned(cm, c, req->handle);
		if (!id || req->optlen > BV_CM_OPTION_MAX) {
			r->status = EINVAL;
			return;
		}
		r->status = set_option(id, req);
		return;
	}
	case BV_OP_CM_MIGRATE: {
		NEED(struct bv_cm_migrate_req);
		struct cm_chan *ch = cm_chan_find(cm, c, req->chan);

		id = owned(cm, c, req->handle);
		if (!id || !ch) {
			r->status = EINVAL;
			return;
		}
		/* the uid stays: a new connection not accepted yet keeps its events dropped */
		id->chan = ch;
		return;
	}
	default:
		r->status = EOPNOTSUPP;
		return;
	}
	/* the CM's errors are negative errnos, the protocol's positive */
	r->status = ret < 0 ? -ret : ret;
}

void bvd_cm_client_gone(struct bvd *d, struct bvd_client *c)
{
	struct cm_dev *cm = cm_of(d);
	unsigned int n = 0;

	if (!cm)
		return;
	for (unsigned int b = 0; b < CM_HASH; b++) {
		struct cm_id *id = cm->ids[b];

		while (id) {
			struct cm_id *next = id->hnext;

			if (id->owner == c) {
				cm_id_destroy(id);
				n++;
			}
			id = next;
		}
	}
	for (struct cm_chan *ch = cm->chans, *next; ch; ch = next) {
		next = ch->next;
		if (ch->owner == c)
			cm_chan_free(ch);
	}
	if (n)
		bvd_log(d, "cm: client %u (pid %d, %s) gone, %u ids destroyed", c->id, (int)c->pid,
			c->comm, n);
}

/* ---- the daemon's CM ------------------------------------------------------------------------ */

int bvd_cm_init(struct bvd *d)
{
	struct cm_dev *cm = calloc(1, sizeof(*cm));
	uint32_t rnd[2] = { 0 };
	long lw;

	if (!cm)
		return ENOMEM;
	cm->ids = calloc(CM_HASH, sizeof(*cm->ids));
	cm->remote = calloc(CM_HASH, sizeof(*cm->remote));
	if (!cm->ids || !cm->remote) {
		free(cm->ids);
		free(cm->remote);
		free(cm);
		return ENOMEM;
	}
	cm->d = d;
	cm->tp = d->ops->cm;
	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd)) {
		rnd[0] = (uint32_t)getpid() * 2654435761u;
		rnd[1] = (uint32_t)time(NULL);
	}
	cm->id_xor = rnd[0];
	cm->tid_hi = rnd[1];
	srandom(rnd[0] ^ rnd[1]);
	cm->response_timeout = (uint8_t)bv_conf_get_long(d->conf, "cm_response_timeout",
							 CMA_CM_RESPONSE_TIMEOUT);
	cm->max_cm_retries = (uint8_t)bv_conf_get_long(d->conf, "cm_max_retries",
						       CMA_MAX_CM_RETRIES);
	cm->packet_life_time = (uint8_t)bv_conf_get_long(d->conf, "cm_packet_life_time",
							 CMA_IBOE_PACKET_LIFETIME);
	lw = bv_conf_get_long(d->conf, "cm_listen_wait_ms", CM_LISTEN_WAIT_MS);
	cm->listen_wait_ms = lw >= 0 && lw <= 10000 ? (uint32_t)lw : UINT32_MAX;
	if (cm->response_timeout > 31 || cm->max_cm_retries > 15 || cm->packet_life_time > 30 ||
	    cm->listen_wait_ms == UINT32_MAX) {
		bvd_log(d, "cm: cm_response_timeout <= 31, cm_max_retries <= 15, "
			   "cm_packet_life_time <= 30 and cm_listen_wait_ms <= 10000, please");
		free(cm->ids);
		free(cm->remote);
		free(cm);
		return EINVAL;
	}
	d->cm = cm;
	cm_refresh_port(cm);
	bvd_log(d, "cm: connection manager on %s", cm->tp->name);
	return 0;
}

void bvd_cm_fini(struct bvd *d)
{
	struct cm_dev *cm = cm_of(d);

	if (!cm)
		return;
	cm_req_wait_fini(cm);
	for (unsigned int b = 0; b < CM_HASH; b++)
		while (cm->ids[b])
			cm_id_destroy(cm->ids[b]);
	while (cm->chans)
		cm_chan_free(cm->chans);
	free(cm->ids);
	free(cm->remote);
	free(cm);
	d->cm = NULL;
}

void bvd_cm_port_change(struct bvd *d, bool active)
{
	struct cm_dev *cm = cm_of(d);

	if (!cm)
		return;
	cm_refresh_port(cm);
	if (active)
		return;
	for (unsigned int b = 0; b < CM_HASH; b++) {
		struct cm_id *id = cm->ids[b];

		while (id) {
			struct cm_id *next = id->hnext;

			cm_conn_port_down(id);
			id = next;
		}
	}
}

void bvd_cm_status(struct bvd *d, char *buf, size_t len)
{
	static const char *const names[CM_NATTR] = { "REQ", "MRA", "REJ", "REP", "RTU", "DREQ",
						     "DREP", "SIDR_REQ", "SIDR_REP", "LAP", "APR" };
	struct cm_dev *cm = cm_of(d);
	unsigned int listens = 0, conns = 0;
	size_t n;

	if (!cm)
		return;
	for (unsigned int b = 0; b < CM_HASH; b++)
		for (struct cm_id *id = cm->ids[b]; id; id = id->hnext) {
			listens += id->state == CMA_LISTEN;
			conns += id->ib == IBCM_ESTABLISHED;
		}
	n = (size_t)snprintf(buf, len, "  cm: %u ids, %u listening, %u connected; rx/tx", cm->nids,
			     listens, conns);
	for (unsigned int i = 0; i < CM_NATTR && n < len; i++)
		if (cm->st.rx[i] || cm->st.tx[i])
			n += (size_t)snprintf(buf + n, len - n, " %s %llu/%llu", names[i],
					      (unsigned long long)cm->st.rx[i],
					      (unsigned long long)cm->st.tx[i]);
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n,
				      "; retries %llu, dropped: malformed %llu, unmatched %llu, "
				      "duplicates %llu, events %llu; listen waits %llu\n",
				      (unsigned long long)cm->st.tx_retries,
				      (unsigned long long)cm->st.rx_malformed,
				      (unsigned long long)cm->st.rx_unmatched,
				      (unsigned long long)cm->st.rx_duplicates,
				      (unsigned long long)cm->st.events_dropped,
				      (unsigned long long)cm->st.req_waits);
	/* the listening ports, for tests and operators ("bvctl status") */
	for (unsigned int b = 0; b < CM_HASH && n < len; b++)
		for (struct cm_id *id = cm->ids[b]; id && n < len; id = id->hnext)
			if (id->state == CMA_LISTEN)
				n += (size_t)snprintf(buf + n, len - n,
						      "  cm listen: ps 0x%04x port %u\n", id->ps,
						      cm_addr_port((struct sockaddr *)&id->src));
}
