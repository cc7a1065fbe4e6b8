// SPDX-License-Identifier: MIT
/*
 * rdma_cm ids on the library's side (librdmacm cma.c's cma_id_private, and the commands the
 * kernel's ucma serves): create, destroy, bind, resolve, listen, options.
 *
 * An id lives in the library until it is bound to a place; then the daemon of that device
 * holds its state (a "daemon id", named by a handle). A wildcard bind or listen (0.0.0.0, ::)
 * has a daemon id on every device, all with one port, so the port is taken everywhere as the
 * kernel's host-wide port spaces take it; a connection request to any of them makes a new id
 * on that device. Events name ids by their uid: a table slot and a generation, so an event
 * that arrives for an id destroyed meanwhile is recognised and dropped.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <infiniband/ib.h>

#include "rcm.h"

/* ---- uids ----------------------------------------------------------------------------------- */

struct slot {
	struct rcm_id *id;
	uint32_t gen;
	int next_free;
};

static pthread_mutex_t ids_lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot *slots;
static int nslots, free_head = -1;

static int uid_alloc(struct rcm_id *id)
{
	int i;

	pthread_mutex_lock(&ids_lock);
	if (free_head < 0) {
		int n = nslots ? 2 * nslots : 64;
		struct slot *s = realloc(slots, (size_t)n * sizeof(*s));

		if (!s) {
			pthread_mutex_unlock(&ids_lock);
			return -1;
		}
		for (i = nslots; i < n; i++) {
			s[i].id = NULL;
			s[i].gen = 0;
			s[i].next_free = i + 1 < n ? i + 1 : -1;
		}
		free_head = nslots;
		slots = s;
		nslots = n;
	}
	i = free_head;
	free_head = slots[i].next_free;
	slots[i].id = id;
	slots[i].gen++;
	id->uid = (uint64_t)slots[i].gen << 32 | (uint32_t)(i + 1);
	pthread_mutex_unlock(&ids_lock);
	return 0;
}

static void uid_free(struct rcm_id *id)
{
	int i = (int)(uint32_t)id->uid - 1;

	pthread_mutex_lock(&ids_lock);
	if (i >= 0 && i < nslots && slots[i].id == id) {
		slots[i].id = NULL;
		slots[i].next_free = free_head;
		free_head = i;
	}
	pthread_mutex_unlock(&ids_lock);
}

struct rcm_id *rcm_id_by_uid(uint64_t uid)
{
	int i = (int)(uint32_t)uid - 1;
	struct rcm_id *id = NULL;

	pthread_mutex_lock(&ids_lock);
	if (i >= 0 && i < nslots && slots[i].gen == (uint32_t)(uid >> 32))
		id = slots[i].id;
	pthread_mutex_unlock(&ids_lock);
	return id;
}

void rcm_ids_device_removed(struct rcm_chan *c, struct rcm_dev *dev)
{
	pthread_mutex_lock(&ids_lock);
	for (int i = 0; i < nslots; i++) {
		struct rcm_id *id = slots[i].id;
		struct rcm_event *e;

		if (!id || id->chan != c || id->dev != dev || id->nsubs)
			continue;	/* a wildcard id just loses that device (cma_cancel_listens) */
		e = calloc(1, sizeof(*e));
		if (!e)
			continue;
		e->id = id;
		e->event.id = &id->id;
		e->event.event = RDMA_CM_EVENT_DEVICE_REMOVAL;
		rcm_chan_post_local(c, e);
	}
	pthread_mutex_unlock(&ids_lock);
}

/* ---- ids ------------------------------------------------------------------------------------- */

struct rcm_id *rcm_id_alloc(struct rcm_chan *chan, void *context, enum rdma_port_space ps,
			    enum ibv_qp_type qp_type)
{
	struct rcm_id *id = calloc(1, sizeof(*id));

	if (!id)
		return NULL;
	id->id.context = context;
	id->id.ps = ps;
	id->id.qp_type = qp_type;
	pthread_mutex_init(&id->mut, NULL);
	pthread_cond_init(&id->cond, NULL);
	if (!chan) {
		struct rdma_event_channel *ch = rdma_create_event_channel();

		if (!ch)
			goto fail;
		chan = rcm_chan_of(ch);
		id->sync = true;
	}
	id->chan = chan;
	id->id.channel = &chan->ch;
	if (uid_alloc(id))
		goto fail;
	return id;
fail:
	if (id->sync && chan)
		rdma_destroy_event_channel(&chan->ch);
	pthread_cond_destroy(&id->cond);
	pthread_mutex_destroy(&id->mut);
	free(id);
	return NULL;
}

void rcm_id_free(struct rcm_id *id)
{
	uid_free(id);
	free(id->id.route.path_rec);
	free(id->subs);
	free(id->connect);
	free(id->qp_init_attr);
	if (id->sync)
		rdma_destroy_event_channel(&id->chan->ch);
	pthread_cond_destroy(&id->cond);
	pthread_mutex_destroy(&id->mut);
	free(id);
}

int rcm_id_attach(struct rcm_id *id, struct rcm_dev *dev, uint32_t handle)
{
	int err = rcm_dev_open(dev);

	if (err)
		return err;
	id->dev = dev;
	id->handle = handle;
	id->id.verbs = dev->verbs;
	id->id.pd = dev->pd;
	id->id.port_num = 1;
	return 0;
}

static void destroy_on(struct rcm_dev *dev, uint32_t handle)
{
	struct bv_cm_id_req req = { .handle = handle };

	rcm_call(dev, BV_OP_CM_DESTROY_ID, &req, sizeof(req), NULL, 0, NULL, 0);
}

/* The daemon ids of a wildcard id, all at once (one batch), but the one on keep. */
static void destroy_subs(struct rcm_sub *subs, int n, const struct rcm_dev *keep)
{
	struct bv_cm_id_req req[RCM_MAX_DEVS];
	struct rcm_req rq[RCM_MAX_DEVS], *p[RCM_MAX_DEVS];
	int k = 0;

	for (int i = 0; i < n; i++) {
		if (subs[i].dev == keep)
			continue;
		req[k] = (struct bv_cm_id_req){ .handle = subs[i].handle };
		rq[k] = (struct rcm_req){ .dev = subs[i].dev, .op = BV_OP_CM_DESTROY_ID,
					  .req = &req[k], .len = sizeof(req[k]) };
		p[k] = &rq[k];
		k++;
	}
	rcm_call_batch(p, k);
}

/*
 * Putting an id on a device: the channel's ATTACH there when it is not yet, and CREATE_ID with
 * the options the id took meanwhile and (addr) its bind, in one batch: one round trip, of
 * which a wildcard bind makes one batch for every device.
 */
struct placing {
	struct rcm_dev *dev;
	struct rcm_attach attach;
	struct bv_cm_create_id_req req;
	struct bv_cm_create_id_rsp rsp;
	struct rcm_req rq;
};

static int place_begin(struct rcm_id *id, struct rcm_dev *dev, const struct sockaddr *addr,
		       uint32_t flags, struct placing *pl, struct rcm_req **rq, int *n)
{
	struct bv_cm_id_opts *o = &pl->req.opts;
	int err = rcm_chan_attach_begin(id->chan, dev, &pl->attach);

	if (err)
		return err;
	pl->dev = dev;
	memset(&pl->req, 0, sizeof(pl->req));
	pl->req.uid = id->uid;
	pl->req.chan = id->chan->name;
	pl->req.ps = (uint16_t)id->id.ps;
	pl->req.qp_type = (uint8_t)id->id.qp_type;
	o->set = (id->tos_set ? BV_CM_OPT_TOS : 0) | (id->reuseaddr_set ? BV_CM_OPT_REUSEADDR : 0) |
		 (id->afonly_set ? BV_CM_OPT_AFONLY : 0) |
		 (id->timeout_set ? BV_CM_OPT_ACK_TIMEOUT : 0);
	o->tos = id->tos;
	o->timeout = id->timeout;
	o->reuseaddr = id->reuseaddr != 0;
	o->afonly = id->afonly != 0;
	if (addr) {
		pl->req.flags = BV_CM_CREATE_BIND | flags;
		memcpy(&pl->req.addr, addr, bv_cm_addrlen(addr));
	}
	pl->rq = (struct rcm_req){ .dev = dev, .op = BV_OP_CM_CREATE_ID, .req = &pl->req,
				   .len = sizeof(pl->req), .rsp = &pl->rsp,
				   .rsp_max = sizeof(pl->rsp) };
	if (pl->attach.needed)
		rq[(*n)++] = &pl->attach.rq;
	rq[(*n)++] = &pl->rq;
	return 0;
}

/* After the batch: 0 and the daemon's id in pl->rsp, or an errno (nothing left there). */
static int place_end(struct rcm_id *id, struct placing *pl)
{
	int aerr = rcm_chan_attach_end(id->chan, pl->dev, &pl->attach);

	if (aerr && !pl->rq.err)
		destroy_on(pl->dev, pl->rsp.handle);	/* cannot be: no channel, no id */
	return aerr ? aerr : pl->rq.err;
}

int rcm_id_create_on(struct rcm_id *id, struct rcm_dev *dev, uint32_t *handle)
{
	struct placing pl;
	struct rcm_req *rq[2];
	int n = 0, err = place_begin(id, dev, NULL, 0, &pl, rq, &n);

	if (err)
		return err;
	rcm_call_batch(rq, n);
	err = place_end(id, &pl);
	if (!err)
		*handle = pl.rsp.handle;
	return err;
}

int rcm_id_call(struct rcm_id *id, uint16_t op, void *req, size_t len, void *rsp,
		size_t rsp_max)
{
	if (!id->dev)
		return EINVAL;
	*(uint32_t *)req = id->handle;	/* every request starts with the handle */
	return rcm_call(id->dev, op, req, len, rsp, rsp_max, NULL, 0);
}

void rcm_id_set_route(struct rcm_id *id, const struct bv_cm_route *r)
{
	struct rdma_route *rt = &id->id.route;

	memcpy(&rt->addr.src_storage, &r->src, sizeof(r->src));
	memcpy(&rt->addr.dst_storage, &r->dst, sizeof(r->dst));
	memcpy(rt->addr.addr.ibaddr.sgid.raw, r->sgid, 16);
	memcpy(rt->addr.addr.ibaddr.dgid.raw, r->dgid, 16);
	rt->addr.addr.ibaddr.pkey = htons(r->pkey);
	if (r->port_num)
		id->id.port_num = r->port_num;
	if (r->num_paths) {
		struct ibv_sa_path_rec *p = rt->path_rec;

		if (!p) {
			p = calloc(1, sizeof(*p));
			if (!p)
				return;
			rt->path_rec = p;
		}
		memset(p, 0, sizeof(*p));
		memcpy(p->dgid.raw, r->path.dgid, 16);
		memcpy(p->sgid.raw, r->path.sgid, 16);
		p->dlid = htons(r->path.dlid);
		p->slid = htons(r->path.slid);
		p->flow_label = htonl(r->path.flow_label);
		p->hop_limit = r->path.hop_limit;
		p->traffic_class = r->path.traffic_class;
		p->reversible = htonl(r->path.reversible);
		p->numb_path = r->path.numb_path;
		p->pkey = htons(r->path.pkey);
		p->sl = r->path.sl;
		p->mtu_selector = 2;	/* exactly */
		p->mtu = r->path.mtu;
		p->rate_selector = 2;
		p->rate = r->path.rate;
		p->packet_life_time_selector = 2;
		p->packet_life_time = r->path.packet_life_time;
		p->preference = r->path.preference;
		rt->num_paths = 1;
	}
}

/* librdmacm's ucma_complete() */
int rcm_complete(struct rcm_id *id)
{
	struct rdma_cm_event *ev;

	if (!id->sync)
		return 0;
	if (id->id.event) {
		rdma_ack_cm_event(id->id.event);
		id->id.event = NULL;
	}
	if (rdma_get_cm_event(&id->chan->ch, &id->id.event))
		return -1;
	ev = id->id.event;
	if (ev->status) {
		if (ev->event == RDMA_CM_EVENT_REJECTED)
			return rcm_err(ECONNREFUSED);
		return rcm_err(ev->status < 0 ? -ev->status : ev->status);
	}
	return 0;
}

RCM_EXPORT int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id,
			      void *context, enum rdma_port_space ps)
{
	enum ibv_qp_type qp_type = ps == RDMA_PS_IPOIB || ps == RDMA_PS_UDP ? IBV_QPT_UD :
									    IBV_QPT_RC;
	struct rcm_id *r;
	int err = rcm_init();

	if (err)
		return rcm_err(err);
	if (!id)
		return rcm_err(EINVAL);
	if (ps != RDMA_PS_TCP && ps != RDMA_PS_UDP && ps != RDMA_PS_IB && ps != RDMA_PS_IPOIB)
		return rcm_err(EINVAL);
	r = rcm_id_alloc(channel ? rcm_chan_of(channel) : NULL, context, ps, qp_type);
	if (!r)
		return -1;
	*id = &r->id;
	return 0;
}

RCM_EXPORT int rdma_destroy_id(struct rdma_cm_id *cm_id)
{
	struct rcm_id *id = rcm_id_of(cm_id);

	if (!cm_id)
		return rcm_err(EINVAL);
	if (id->dev)
		destroy_on(id->dev, id->handle);
	destroy_subs(id->subs, id->nsubs, NULL);
	if (cm_id->event) {
		rdma_ack_cm_event(cm_id->event);
		cm_id->event = NULL;
	}
	/* every event the application was given must have been acked (librdmacm) */
	pthread_mutex_lock(&id->mut);
	while (id->events_completed < id->events_reported)
		pthread_cond_wait(&id->cond, &id->mut);
	pthread_mutex_unlock(&id->mut);
	rcm_id_free(id);
	return 0;
}

/* ---- binding ----------------------------------------------------------------------------------- */

static int bind_on(struct rcm_id *id, struct rcm_dev *dev, const struct sockaddr *addr,
		   uint32_t *handle, struct bv_cm_route *route)
{
	struct placing pl;
	struct rcm_req *rq[2];
	int n = 0, err = place_begin(id, dev, addr, 0, &pl, rq, &n);

	if (err)
		return err;
	rcm_call_batch(rq, n);
	err = place_end(id, &pl);
	if (err)
		return err;
	*handle = pl.rsp.handle;
	*route = pl.rsp.route;
	return 0;
}

static void port_range(int *low, int *high)
{
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "re");

	*low = 32768;
	*high = 60999;
	if (f) {
		if (fscanf(f, "%d %d", low, high) != 2 || *low < 1 || *high > 65535 || *low >= *high) {
			*low = 32768;
			*high = 60999;
		}
		fclose(f);
	}
}

static void set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
	else if (ss->ss_family == AF_IB) {
		struct sockaddr_ib *ib = (struct sockaddr_ib *)ss;

		ib->sib_sid = htobe64((be64toh(ib->sib_sid) & ~0xffffull) | port);
		ib->sib_sid_mask = htobe64(be64toh(ib->sib_sid_mask) | 0xffff);
	}
}

static uint16_t get_port(const struct sockaddr *sa)
{
	switch (sa->sa_family) {
	case AF_INET:
		return ntohs(((const struct sockaddr_in *)sa)->sin_port);
	case AF_INET6:
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	case AF_IB:
		return (uint16_t)(be64toh(((const struct sockaddr_ib *)sa)->sib_sid) &
				  be64toh(((const struct sockaddr_ib *)sa)->sib_sid_mask));
	default:
		return 0;
	}
}

/*
 * A wildcard bind: one port, free on every device (the kernel's one port space per host).
 * Every device's CREATE_ID+bind goes out in one batch: perftest's client connects right after
 * its handshake while the server binds and listens anew on every device, and a REQ that meets
 * no listener yet is rejected (reason 8), so the bind and the listen must take a round trip
 * each, as the kernel's take a system call each, not one per device or more.
 */
static int bind_wildcard(struct rcm_id *id, const struct sockaddr *addr)
{
	int n = rcm_ndevs(), low, high, tries;
	struct sockaddr_storage a;
	struct bv_cm_route route;
	bool any_port = !get_port(addr);
	int err = EADDRNOTAVAIL, np, nrq;
	struct placing *pl;
	struct rcm_req *rq[RCM_BATCH_MAX];

	id->subs = calloc((size_t)n, sizeof(*id->subs));
	pl = calloc((size_t)n, sizeof(*pl));
	if (!id->subs || !pl) {
		free(id->subs);
		id->subs = NULL;
		free(pl);
		return ENOMEM;
	}
	port_range(&low, &high);
	tries = any_port ? 64 : 1;
	memset(&a, 0, sizeof(a));
	memcpy(&a, addr, bv_cm_addrlen(addr));
	while (tries--) {
		if (any_port)
			set_port(&a, (uint16_t)(low + random() % (high - low + 1)));
		id->nsubs = 0;
		err = 0;
		np = 0;
		nrq = 0;
		for (int i = 0; i < n && !err; i++)
			if (!rcm_dev_at(i)->gone) {
				err = place_begin(id, rcm_dev_at(i), (struct sockaddr *)&a,
						  BV_CM_BIND_WILDCARD_SET, &pl[np], rq, &nrq);
				np += !err;
			}
		rcm_call_batch(rq, err ? 0 : nrq);
		for (int i = 0; i < np; i++) {
			int e;

			if (err)
				pl[i].rq.err = pl[i].attach.rq.err = ECANCELED;	/* never sent */
			e = place_end(id, &pl[i]);
			if (!e) {
				id->subs[id->nsubs].dev = pl[i].dev;
				id->subs[id->nsubs++].handle = pl[i].rsp.handle;
				route = pl[i].rsp.route;
			} else if (e != EOPNOTSUPP && e != ENODEV && e != ECANCELED && !err) {
				err = e;	/* ENODEV, EOPNOTSUPP: no connection manager */
			}
		}
		if (!err && id->nsubs)
			break;
		destroy_subs(id->subs, id->nsubs, NULL);
		id->nsubs = 0;
		if (!err)
			err = ENODEV;
		if (err != EADDRINUSE && err != EADDRNOTAVAIL)
			break;
	}
	free(pl);
	if (err || !id->nsubs) {
		free(id->subs);
		id->subs = NULL;
		id->nsubs = 0;
		return err ? err : ENODEV;
	}
	/* where the id is: its address; no device yet (id->verbs stays NULL, as the kernel's) */
	memcpy(&id->id.route.addr.src_storage, &route.src, sizeof(route.src));
	return 0;
}

/* The errno of a bind to an address no device has: a host address without RDMA: ENODEV. */
static int not_ours(const struct sockaddr *addr)
{
	int s = rcm_sys_socket(addr->sa_family, SOCK_DGRAM | SOCK_CLOEXEC), err = EADDRNOTAVAIL;
	struct sockaddr_storage a;

	if (s < 0)
		return EADDRNOTAVAIL;
	memset(&a, 0, sizeof(a));
	memcpy(&a, addr, bv_cm_addrlen(addr));
	set_port(&a, 0);
	if (!rcm_sys_bind(s, (struct sockaddr *)&a, bv_cm_addrlen(addr)))
		err = ENODEV;
	rcm_sys_close(s);
	return err;
}

/* rdma_bind_addr() for an id not on a device yet */
static int bind_addr(struct rcm_id *id, const struct sockaddr *addr)
{
	struct rcm_dev *dev;
	struct bv_cm_route route;
	uint32_t handle;
	int err;

	switch (rcm_route(addr, &dev)) {
	case RCM_ROUTE_WILDCARD:
		return bind_wildcard(id, addr);
	case RCM_ROUTE_OWN:
	case RCM_ROUTE_LOOPBACK:
		break;
	case RCM_ROUTE_REMOTE:
		return EADDRNOTAVAIL;
	default:
		return addr->sa_family == AF_IB ? EADDRNOTAVAIL : not_ours(addr);
	}
	err = bind_on(id, dev, addr, &handle, &route);
	if (err)
		return err;
	err = rcm_id_attach(id, dev, handle);
	if (err) {
		destroy_on(dev, handle);
		return err;
	}
	rcm_id_set_route(id, &route);
	return 0;
}

RCM_EXPORT int rdma_bind_addr(struct rdma_cm_id *cm_id, struct sockaddr *addr)
{
	struct rcm_id *id = rcm_id_of(cm_id);
	int err;

	if (!cm_id || !bv_cm_addrlen(addr))
		return rcm_err(EINVAL);
	if (id->dev || id->nsubs)
		return rcm_err(EINVAL);	/* already bound: the kernel's state check */
	err = bind_addr(id, addr);
	return err ? rcm_err(err) : 0;
}

/* ---- resolution ------------------------------------------------------------------------------ */

/* A wildcard-bound id that now knows its device keeps only that device's daemon id. */
static int keep_sub(struct rcm_id *id, struct rcm_dev *dev)
{
	uint32_t handle = 0;
	bool found = false;
	int err;

	for (int i = 0; i < id->nsubs; i++) {
		if (id->subs[i].dev == dev) {
			handle = id->subs[i].handle;
			found = true;
		}
	}
	destroy_subs(id->subs, id->nsubs, dev);
	free(id->subs);
	id->subs = NULL;
	id->nsubs = 0;
	if (!found)
		return ENODEV;
	err = rcm_id_attach(id, dev, handle);
	if (err)
		destroy_on(dev, handle);
	return err;
}

static int post_addr_error(struct rcm_id *id, int status)
{
	struct rcm_event *e = calloc(1, sizeof(*e));

	if (!e)
		return ENOMEM;
	e->id = id;
	e->event.id = &id->id;
	e->event.event = RDMA_CM_EVENT_ADDR_ERROR;
	e->event.status = status;
	return rcm_chan_post_local(id->chan, e);
}

RCM_EXPORT int rdma_resolve_addr(struct rdma_cm_id *cm_id, struct sockaddr *src_addr,
				 struct sockaddr *dst_addr, int timeout_ms)
{
	struct rcm_id *id = rcm_id_of(cm_id);
	struct bv_cm_resolve_addr_req req = { .timeout_ms = timeout_ms };
	enum rcm_route_kind dk, sk = RCM_ROUTE_NONE;
	struct rcm_dev *ddev, *sdev = NULL, *dev;
	socklen_t dlen = bv_cm_addrlen(dst_addr), slen = bv_cm_addrlen(src_addr);
	int err;

	if (!cm_id || !dlen || (src_addr && !slen))
		return rcm_err(EINVAL);
	dk = rcm_route(dst_addr, &ddev);
	if (src_addr && src_addr->sa_family) {
		sk = rcm_route(src_addr, &sdev);
		if (sk == RCM_ROUTE_REMOTE || sk == RCM_ROUTE_NONE)
			return rcm_err(sk == RCM_ROUTE_NONE ? not_ours(src_addr) : EADDRNOTAVAIL);
	}
	/* the device: the bound one, the source's, else the destination's route */
	dev = id->dev ? id->dev : sdev ? sdev : ddev;
	if (!dev && (dk == RCM_ROUTE_WILDCARD || (id->nsubs && dk != RCM_ROUTE_NONE)))
		dev = rcm_first_dev();
	if (!dev) {
		/* no device reaches it: the kernel reports ADDR_ERROR (addr_handler) */
		memcpy(&cm_id->route.addr.dst_storage, dst_addr, dlen);
		err = post_addr_error(id, -EHOSTUNREACH);
		return err ? rcm_err(err) : rcm_complete(id);
	}
	if (id->nsubs && (err = keep_sub(id, dev)))
		return rcm_err(err);
	if (!id->dev) {
		uint32_t handle;

		err = rcm_id_create_on(id, dev, &handle);
		if (!err && (err = rcm_id_attach(id, dev, handle)))
			destroy_on(dev, handle);
		if (err)
			return rcm_err(err);
	}
	if (src_addr && src_addr->sa_family) {
		memcpy(&req.src, src_addr, slen);
		req.flags |= BV_CM_RESOLVE_SRC;
	}
	memcpy(&req.dst, dst_addr, dlen);
	/* this very port: a loopback or wildcard destination, or the port's own address */
	if (dk == RCM_ROUTE_WILDCARD || dk == RCM_ROUTE_LOOPBACK ||
	    (dk == RCM_ROUTE_OWN && ddev == dev))
		req.flags |= BV_CM_RESOLVE_LOOPBACK;
	err = rcm_id_call(id, BV_OP_CM_RESOLVE_ADDR, &req, sizeof(req), NULL, 0);
	if (err)
		return rcm_err(err);
	memcpy(&cm_id->route.addr.dst_storage, dst_addr, dlen);
	return rcm_complete(id);
}

RCM_EXPORT int rdma_resolve_route(struct rdma_cm_id *cm_id, int timeout_ms)
{
	struct rcm_id *id = rcm_id_of(cm_id);
	struct bv_cm_id_req req = { .timeout_ms = timeout_ms };
	int err;

	if (!cm_id)
		return rcm_err(EINVAL);
	err = rcm_id_call(id, BV_OP_CM_RESOLVE_ROUTE, &req, sizeof(req), NULL, 0);
	return err ? rcm_err(err) : rcm_complete(id);
}

/* ---- listening --------------------------------------------------------------------------------- */

RCM_EXPORT int rdma_listen(struct rdma_cm_id *cm_id, int backlog)
{
	struct rcm_id *id = rcm_id_of(cm_id);
	struct bv_cm_listen_req req = { .backlog = backlog }, lreq[RCM_MAX_DEVS];
	struct bv_cm_route route, lrsp[RCM_MAX_DEVS];
	struct rcm_req rq[RCM_MAX_DEVS], *p[RCM_MAX_DEVS];
	int err = 0;

	if (!cm_id)
		return rcm_err(EINVAL);
	if (!id->dev && !id->nsubs) {
		/* Linux rdma_listen(): an unbound id listens on 0.0.0.0 */
		struct sockaddr_in any = { .sin_family = AF_INET };

		err = bind_addr(id, (struct sockaddr *)&any);
		if (err)
			return rcm_err(err);
	}
	if (id->dev) {
		err = rcm_id_call(id, BV_OP_CM_LISTEN, &req, sizeof(req), &route, sizeof(route));
		if (!err)
			rcm_id_set_route(id, &route);
		return err ? rcm_err(err) : 0;
	}
	/* every device's LISTEN in one batch: one round trip, as bind_wildcard() says why */
	for (int i = 0; i < id->nsubs; i++) {
		lreq[i] = req;
		lreq[i].handle = id->subs[i].handle;
		rq[i] = (struct rcm_req){ .dev = id->subs[i].dev, .op = BV_OP_CM_LISTEN,
					  .req = &lreq[i], .len = sizeof(lreq[i]), .rsp = &lrsp[i],
					  .rsp_max = sizeof(lrsp[i]) };
		p[i] = &rq[i];
	}
	rcm_call_batch(p, id->nsubs);
	for (int i = 0; i < id->nsubs && !err; i++)
		err = rq[i].err;
	return err ? rcm_err(err) : 0;
}

/* ---- options ------------------------------------------------------------------------------------ */

RCM_EXPORT int rdma_set_option(struct rdma_cm_id *cm_id, int level, int optname, void *optval,
			       size_t optlen)
{
	struct rcm_id *id = rcm_id_of(cm_id);
	struct bv_cm_set_option_req req = { .level = (uint32_t)level, .optname = (uint32_t)optname,
					    .optlen = (uint32_t)optlen };
	int err = 0;

	if (!cm_id || !optval)
		return rcm_err(EINVAL);
	if (level != RDMA_OPTION_ID)
		return rcm_err(ENOSYS);	/* RDMA_OPTION_IB_PATH: SA paths do not exist here */
	switch (optname) {
	case RDMA_OPTION_ID_TOS:
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		if (optlen != sizeof(uint8_t))
			return rcm_err(EINVAL);
		break;
	case RDMA_OPTION_ID_REUSEADDR:
	case RDMA_OPTION_ID_AFONLY:
		if (optlen != sizeof(int))
			return rcm_err(EINVAL);
		break;
	default:
		return rcm_err(ENOSYS);
	}
	memcpy(req.optval, optval, optlen);
	if (id->dev) {
		req.handle = id->handle;
		err = rcm_call(id->dev, BV_OP_CM_SET_OPTION, &req, sizeof(req), NULL, 0, NULL, 0);
	}
	for (int i = 0; i < id->nsubs && !err; i++) {
		req.handle = id->subs[i].handle;
		err = rcm_call(id->subs[i].dev, BV_OP_CM_SET_OPTION, &req, sizeof(req), NULL, 0,
			       NULL, 0);
	}
	if (err)
		return rcm_err(err);
	switch (optname) {
	case RDMA_OPTION_ID_TOS:
		id->tos = *(uint8_t *)optval;
		id->tos_set = true;
		break;
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		id->timeout = *(uint8_t *)optval;
		id->timeout_set = true;
		break;
	case RDMA_OPTION_ID_REUSEADDR:
		memcpy(&id->reuseaddr, optval, sizeof(int));
		id->reuseaddr_set = true;
		break;
	case RDMA_OPTION_ID_AFONLY:
		memcpy(&id->afonly, optval, sizeof(int));
		id->afonly_set = true;
		break;
	}
	return 0;
}

/* ---- ports ------------------------------------------------------------------------------------- */

RCM_EXPORT __be16 rdma_get_src_port(struct rdma_cm_id *id)
{
	return htons(get_port(&id->route.addr.src_addr));
}

RCM_EXPORT __be16 rdma_get_dst_port(struct rdma_cm_id *id)
{
	return htons(get_port(&id->route.addr.dst_addr));
}

/* ---- migration ---------------------------------------------------------------------------------- */

static int migrate_on(struct rcm_id *id, struct rcm_dev *dev, uint32_t handle,
		      struct rcm_chan *to)
{
	struct bv_cm_migrate_req req = { .handle = handle };
	int err = rcm_chan_attach(to, dev, &req.chan);

	return err ? err :
		     rcm_call(dev, BV_OP_CM_MIGRATE, &req, sizeof(req), NULL, 0, NULL, 0);
}

/* librdmacm's rdma_migrate_id(): NULL makes the id synchronous on a private channel. */
RCM_EXPORT int rdma_migrate_id(struct rdma_cm_id *cm_id, struct rdma_event_channel *channel)
{
	struct rcm_id *id = rcm_id_of(cm_id);
	struct rcm_chan *old, *to;
	bool sync = !channel;
	int err = 0;

	if (!cm_id)
		return rcm_err(EINVAL);
	if (id->sync && !channel)
		return rcm_err(EINVAL);
	if (sync) {
		channel = rdma_create_event_channel();
		if (!channel)
			return -1;
	}
	to = rcm_chan_of(channel);
	if (id->dev)
		err = migrate_on(id, id->dev, id->handle, to);
	for (int i = 0; i < id->nsubs && !err; i++)
		err = migrate_on(id, id->subs[i].dev, id->subs[i].handle, to);
	if (err) {
		if (sync)
			rdma_destroy_event_channel(channel);
		return rcm_err(err);
	}
	old = id->chan;
	if (id->sync) {
		if (cm_id->event) {
			rdma_ack_cm_event(cm_id->event);
			cm_id->event = NULL;
		}
	}
	pthread_mutex_lock(&id->mut);
	id->chan = to;
	cm_id->channel = channel;
	while (id->events_completed < id->events_reported)
		pthread_cond_wait(&id->cond, &id->mut);
	pthread_mutex_unlock(&id->mut);
	if (id->sync)
		rdma_destroy_event_channel(&old->ch);
	id->sync = sync;
	return 0;
}
