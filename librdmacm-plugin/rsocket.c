// SPDX-License-Identifier: MIT
/*
 * rsockets: the socket table and the socket calls that are about the connection (rs.h).
 *
 * A SOCK_STREAM rsocket is one rdma_cm id on an event channel of its own: rbind/rlisten/
 * rconnect are rdma_bind_addr/rdma_listen/rdma_resolve_addr + rdma_resolve_route +
 * rdma_connect, with struct rs_conn_data in the private data both ways; raccept takes a
 * CONNECT_REQUEST, moves the new id to a channel of its own (rdma_migrate_id) and accepts it.
 * A non-blocking rconnect answers EINPROGRESS and the connection goes on in whatever call
 * comes next (rpoll, rgetsockopt SO_ERROR, rsend...), as rdma-core's does.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include <infiniband/ib.h>
#include <rdma/rsocket.h>

#include "rcm.h"
#include "rs.h"

/* rdma-core's defaults (rsocket.c def_*) */
#define RS_DEF_SQ_SIZE		384
#define RS_DEF_RQ_SIZE		384
#define RS_DEF_INLINE		64
#define RS_DEF_IOMAP_SIZE	0
#define RS_DEF_BUF_SIZE		(1u << 17)
#define RS_MIN_BUF_SIZE		4096u
#define RS_MAX_BUF_SIZE		(1u << 24)
#define RS_MIN_QUEUE		8u
#define RS_MAX_QUEUE		4096u

/* ---- the table: rsocket number -> struct rs ------------------------------------------------ */

bool rs_debug;

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rs **table;
static int table_len;

static int table_set(int index, struct rs *rs)
{
	pthread_mutex_lock(&table_lock);
	if (index >= table_len) {
		int n = table_len ? table_len : 64;
		struct rs **t;

		while (n <= index)
			n *= 2;
		t = realloc(table, (size_t)n * sizeof(*t));
		if (!t) {
			pthread_mutex_unlock(&table_lock);
			return ENOMEM;
		}
		memset(t + table_len, 0, (size_t)(n - table_len) * sizeof(*t));
		table = t;
		table_len = n;
	}
	table[index] = rs;
	pthread_mutex_unlock(&table_lock);
	return 0;
}

static struct rs *table_get(int index)
{
	struct rs *rs = NULL;

	pthread_mutex_lock(&table_lock);
	if (index >= 0 && index < table_len)
		rs = table[index];
	pthread_mutex_unlock(&table_lock);
	return rs;
}

bool rs_is_rsocket(int index)
{
	return table_get(index) != NULL;
}

struct rs *rs_lookup(int index)
{
	struct rs *rs = table_get(index);

	if (!rs) {
		errno = EBADF;
		return NULL;
	}
	pthread_mutex_lock(&rs->lock);
	return rs;
}

void rs_unlock(struct rs *rs)
{
	pthread_mutex_unlock(&rs->lock);
}

int rs_epoll_add(struct rs *rs, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(rs->index, EPOLL_CTL_ADD, fd, &ev) ? errno : 0;
}

void rs_epoll_del(struct rs *rs, int fd)
{
	epoll_ctl(rs->index, EPOLL_CTL_DEL, fd, NULL);
}

void rs_set_error(struct rs *rs, int err)
{
	if (rs_debug)
		fprintf(stderr, "rsocket %d: error %d (%s) in state %d\n", rs->index, err,
			strerror(err), rs->state);
	if (!rs->err)
		rs->err = err;
	rs->state = RS_ERROR;
}

static struct rs *rs_alloc(int domain, int type)
{
	struct rs *rs = calloc(1, sizeof(*rs));

	if (!rs)
		return NULL;
	rs->index = epoll_create1(EPOLL_CLOEXEC);
	if (rs->index < 0) {
		free(rs);
		return NULL;
	}
	pthread_mutex_init(&rs->lock, NULL);
	rs->domain = domain;
	rs->type = type;
	rs->sq_size = RS_DEF_SQ_SIZE;
	rs->rq_size = RS_DEF_RQ_SIZE;
	rs->inline_size = RS_DEF_INLINE;
	rs->iomap_size = RS_DEF_IOMAP_SIZE;
	rs->sbuf_size = rs->rbuf_size = RS_DEF_BUF_SIZE;
	return rs;
}

static void rs_free(struct rs *rs)
{
	if (rs_debug)
		fprintf(stderr, "rsocket %d: freed in state %d\n", rs->index, rs->state);
	table_set(rs->index, NULL);
	if (rs->dg)
		rs_dgram_free(rs);
	rs_stream_teardown(rs);
	while (rs->reqs) {
		struct rs_pending_req *r = rs->reqs;

		rs->reqs = r->next;
		rdma_reject(r->id, NULL, 0);
		rdma_destroy_id(r->id);
		free(r);
	}
	if (rs->id)
		rdma_destroy_id(rs->id);
	if (rs->ch)
		rdma_destroy_event_channel(rs->ch);
	close(rs->index);
	pthread_mutex_destroy(&rs->lock);
	free(rs);
}

/* A stream rsocket's own event channel, non-blocking, in its epoll set. */
static int rs_make_channel(struct rs *rs)
{
	int fl;

	rs->ch = rdma_create_event_channel();
	if (!rs->ch)
		return errno ? errno : ENOMEM;
	fl = fcntl(rs->ch->fd, F_GETFL);
	if (fl < 0 || fcntl(rs->ch->fd, F_SETFL, fl | O_NONBLOCK))
		return errno;
	return rs_epoll_add(rs, rs->ch->fd);
}

RCM_EXPORT int rsocket(int domain, int type, int protocol)
{
	struct rs *rs;
	int err;

	if ((domain != AF_INET && domain != AF_INET6 && domain != AF_IB) ||
	    (type != SOCK_STREAM && type != SOCK_DGRAM) ||
	    (type == SOCK_STREAM && protocol && protocol != IPPROTO_TCP) ||
	    (type == SOCK_DGRAM && protocol && protocol != IPPROTO_UDP))
		return rcm_err(ENOTSUP);
	if (type == SOCK_DGRAM && domain == AF_IB)
		return rcm_err(ENOTSUP);
	err = rcm_init();
	if (err)
		return rcm_err(err);
	rs_debug = getenv("BV_RS_DEBUG") != NULL;
	rs = rs_alloc(domain, type);
	if (!rs)
		return -1;
	if (type == SOCK_STREAM) {
		err = rs_make_channel(rs);
		if (!err && rdma_create_id(rs->ch, &rs->id, rs, RDMA_PS_TCP))
			err = errno;
	} else {
		err = rs_dgram_init(rs);
	}
	if (!err)
		err = table_set(rs->index, rs);
	if (err) {
		rs_free(rs);
		return rcm_err(err);
	}
	return rs->index;
}

RCM_EXPORT int rbind(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	struct rs *rs = rs_lookup(socket);
	int ret = 0;

	if (!rs)
		return -1;
	if (rs->type == SOCK_DGRAM) {
		ret = rs_dgram_bind(rs, addr, addrlen);
	} else if (rs->state != RS_INIT) {
		ret = EINVAL;
	} else {
		if (rs->reuseaddr) {
			int on = 1;

			rdma_set_option(rs->id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &on,
					sizeof(on));
		}
		if (rdma_bind_addr(rs->id, (struct sockaddr *)addr))
			ret = errno;
		else
			rs->state = RS_BOUND;
	}
	rs_unlock(rs);
	return ret ? rcm_err(ret) : 0;
}

RCM_EXPORT int rlisten(int socket, int backlog)
{
	struct rs *rs = rs_lookup(socket);
	int ret = 0;

	if (!rs)
		return -1;
	if (rs->type != SOCK_STREAM)
		ret = EOPNOTSUPP;
	else if (rs->state == RS_LISTENING)
		ret = 0;
	else if (rs->state != RS_BOUND)
		ret = EINVAL;
	else if (rdma_listen(rs->id, backlog > 0 ? backlog : 1))
		ret = errno;
	else
		rs->state = RS_LISTENING;
	rs_unlock(rs);
	return ret ? rcm_err(ret) : 0;
}

static bool conn_data_ok(const void *pd, uint8_t len)
{
	const struct rs_conn_data *cd = pd;

	return pd && len >= sizeof(*cd) && cd->version == RS_VERSION && cd->credits >= 2 &&
	       cd->rbuf_size >= RS_MIN_BUF_SIZE && cd->rbuf_rkey;
}

/* ---- the connection manager's events ------------------------------------------------------- */

static int status_errno(const struct rdma_cm_event *ev)
{
	switch (ev->event) {
	case RDMA_CM_EVENT_REJECTED:
		return ECONNREFUSED;
	case RDMA_CM_EVENT_UNREACHABLE:
		return ev->status == -ETIMEDOUT ? ETIMEDOUT : EHOSTUNREACH;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		return ev->status < 0 ? -ev->status : EHOSTUNREACH;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return ENODEV;
	default:
		return ECONNRESET;
	}
}

/* A listener keeps its connection requests until raccept takes them. */
static void listener_event(struct rs *rs, struct rdma_cm_event *ev)
{
	struct rs_pending_req *r;

	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
			rs_set_error(rs, ENODEV);
		rdma_ack_cm_event(ev);
		return;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		rdma_reject(ev->id, NULL, 0);
		rdma_ack_cm_event(ev);
		return;
	}
	r->id = ev->id;
	r->ok = conn_data_ok(ev->param.conn.private_data, ev->param.conn.private_data_len);
	if (r->ok)
		memcpy(&r->peer, ev->param.conn.private_data, sizeof(r->peer));
	rdma_ack_cm_event(ev);
	if (rs->reqs_tail)
		rs->reqs_tail->next = r;
	else
		rs->reqs = r;
	rs->reqs_tail = r;
}

static void start_connect(struct rs *rs)
{
	struct rdma_conn_param p = { .responder_resources = 0, .initiator_depth = 0,
				     .retry_count = 7, .rnr_retry_count = 7 };
	struct rs_conn_data cd;
	int err = rs_stream_setup(rs);

	if (err) {
		rs_set_error(rs, err);
		return;
	}
	rs_conn_data_of(rs, &cd);
	p.private_data = &cd;
	p.private_data_len = sizeof(cd);
	if (rdma_connect(rs->id, &p)) {
		rs_set_error(rs, errno);
		return;
	}
	rs->state = RS_CONNECTING;
}

void rs_cm_progress(struct rs *rs)
{
	struct rdma_cm_event *ev;

	if (!rs->ch)
		return;
	while (!rdma_get_cm_event(rs->ch, &ev)) {
		if (rs_debug)
			fprintf(stderr, "rsocket %d: %s (%d) in state %d\n", rs->index,
				rdma_event_str(ev->event), ev->status, rs->state);
		if (rs->state == RS_LISTENING) {
			listener_event(rs, ev);
			continue;
		}
		switch (ev->event) {
		case RDMA_CM_EVENT_ADDR_RESOLVED:
			if (rs->state == RS_RESOLVING_ADDR) {
				if (rdma_resolve_route(rs->id, 2000))
					rs_set_error(rs, errno);
				else
					rs->state = RS_RESOLVING_ROUTE;
			}
			break;
		case RDMA_CM_EVENT_ROUTE_RESOLVED:
			if (rs->state == RS_RESOLVING_ROUTE)
				start_connect(rs);
			break;
		case RDMA_CM_EVENT_ESTABLISHED:
			if (rs->state != RS_CONNECTING)
				break;	/* the accepting side: connected since rdma_accept */
			if (!conn_data_ok(ev->param.conn.private_data,
					  ev->param.conn.private_data_len)) {
				rs_set_error(rs, ECONNREFUSED);
				break;
			}
			rs_stream_connected(rs, ev->param.conn.private_data);
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
			/*
			 * The DREQ is not ordered with the data: a peer that closed sent its
			 * FIN after its last data, and both may still be on their way in (the
			 * CM's path can be the quicker one). Take them before answering the
			 * DREP, which puts our QP in ERR (bounded: a peer that died sent none).
			 */
			for (int i = 0; i < 100 && !rs->peer_fin && rs->cq; i++) {
				if (!rs_poll_cq(rs) && !rs->peer_fin)
					usleep(1000);
			}
			rs->disconnected = true;
			rdma_disconnect(rs->id);	/* the DREP */
			if (rs->state == RS_CONNECTING)
				rs_set_error(rs, ECONNRESET);
			break;
		case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		case RDMA_CM_EVENT_CONNECT_RESPONSE:
			break;
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
			rs->disconnected = true;
			rs_set_error(rs, ENODEV);
			break;
		default:
			/* ADDR/ROUTE_ERROR, UNREACHABLE, REJECTED, CONNECT_ERROR */
			if (rs->state != RS_CONNECTED)
				rs_set_error(rs, status_errno(ev));
			break;
		}
		rdma_ack_cm_event(ev);
	}
}

/* ---- connecting ---------------------------------------------------------------------------- */

/* Until the state leaves the connecting ones (blocking), or EINPROGRESS. */
static int connect_wait(struct rs *rs)
{
	for (;;) {
		rs_cm_progress(rs);
		if (rs->state == RS_CONNECTED)
			return 0;
		if (rs->state == RS_ERROR)
			return rs->err;
		if (rs->flags & O_NONBLOCK)
			return EINPROGRESS;
		rs_wait(rs, -1);
	}
}

RCM_EXPORT int rconnect(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	struct rs *rs = rs_lookup(socket);
	int ret;

	if (!rs)
		return -1;
	if (rs->type == SOCK_DGRAM) {
		ret = rs_dgram_connect(rs, addr, addrlen);
		rs_unlock(rs);
		return ret ? rcm_err(ret) : 0;
	}
	switch (rs->state) {
	case RS_INIT:
	case RS_BOUND:
		break;
	case RS_CONNECTED:
		rs_unlock(rs);
		return rcm_err(EISCONN);
	case RS_RESOLVING_ADDR:
	case RS_RESOLVING_ROUTE:
	case RS_CONNECTING:
		ret = connect_wait(rs);
		rs_unlock(rs);
		return ret ? rcm_err(ret == EINPROGRESS ? EALREADY : ret) : 0;
	default:
		rs_unlock(rs);
		return rcm_err(rs->state == RS_ERROR ? rs->err : EINVAL);
	}
	if (!addr || addrlen < sizeof(sa_family_t)) {
		rs_unlock(rs);
		return rcm_err(EINVAL);
	}
	if (rdma_resolve_addr(rs->id, NULL, (struct sockaddr *)addr, 2000)) {
		ret = errno;
		rs_unlock(rs);
		return rcm_err(ret);
	}
	rs->state = RS_RESOLVING_ADDR;
	ret = connect_wait(rs);
	rs_unlock(rs);
	return ret ? rcm_err(ret) : 0;
}

/* ---- accepting ------------------------------------------------------------------------------ */

static int accept_one(struct rs *l, struct rs_pending_req *r, struct rs **out)
{
	struct rdma_conn_param p = { .retry_count = 7, .rnr_retry_count = 7 };
	struct rs *rs = rs_alloc(l->domain, SOCK_STREAM);
	struct rs_conn_data cd;
	int err;

	if (!rs)
		return ENOMEM;
	/* the listener's options are the new socket's (as accept(2) inherits them) */
	rs->sq_size = l->sq_size;
	rs->rq_size = l->rq_size;
	rs->inline_size = l->inline_size;
	rs->iomap_size = l->iomap_size;
	rs->sbuf_size = l->sbuf_size;
	rs->rbuf_size = l->rbuf_size;
	rs->keepalive = l->keepalive;
	rs->nodelay = l->nodelay;
	err = rs_make_channel(rs);
	if (!err && rdma_migrate_id(r->id, rs->ch))
		err = errno;
	if (err) {
		rdma_reject(r->id, NULL, 0);
		rdma_destroy_id(r->id);
		rs_free(rs);
		return err;
	}
	rs->id = r->id;
	rs->id->context = rs;
	err = rs_stream_setup(rs);
	if (!err) {
		rs_stream_connected(rs, &r->peer);
		rs_conn_data_of(rs, &cd);
		p.private_data = &cd;
		p.private_data_len = sizeof(cd);
		if (rdma_accept(rs->id, &p))
			err = errno;
	}
	if (!err)
		err = table_set(rs->index, rs);
	if (err) {
		rdma_reject(rs->id, NULL, 0);
		rs_free(rs);
		return err;
	}
	*out = rs;
	return 0;
}

RCM_EXPORT int raccept(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	struct rs *l = rs_lookup(socket), *rs = NULL;
	int err = 0;

	if (!l)
		return -1;
	if (l->type != SOCK_STREAM || l->state != RS_LISTENING) {
		rs_unlock(l);
		return rcm_err(EINVAL);
	}
	for (;;) {
		struct rs_pending_req *r;

		rs_cm_progress(l);
		r = l->reqs;
		if (r) {
			l->reqs = r->next;
			if (!l->reqs)
				l->reqs_tail = NULL;
			if (!r->ok) {
				/* not an rsocket on the other side */
				rdma_reject(r->id, NULL, 0);
				rdma_destroy_id(r->id);
				free(r);
				continue;
			}
			err = accept_one(l, r, &rs);
			free(r);
			if (err == ENOMEM || !err)
				break;
			continue;	/* that one failed: the next */
		}
		if (l->state == RS_ERROR) {
			err = l->err;
			break;
		}
		if (l->flags & O_NONBLOCK) {
			err = EAGAIN;
			break;
		}
		rs_wait(l, -1);
	}
	rs_unlock(l);
	if (err)
		return rcm_err(err);
	if (addr && addrlen) {
		struct sockaddr *peer = rdma_get_peer_addr(rs->id);
		socklen_t len = peer->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
			       peer->sa_family == AF_IB ? sizeof(struct sockaddr_ib) :
							   sizeof(struct sockaddr_in);

		memcpy(addr, peer, *addrlen < len ? *addrlen : len);
		*addrlen = len;
	}
	return rs->index;
}

/* ---- shutdown, close -------------------------------------------------------------------------- */

RCM_EXPORT int rshutdown(int socket, int how)
{
	struct rs *rs = rs_lookup(socket);
	int ret = 0;

	if (!rs)
		return -1;
	if (rs->type == SOCK_DGRAM) {
		rs_unlock(rs);
		return 0;
	}
	if (rs->state != RS_CONNECTED) {
		ret = rs->state == RS_ERROR ? 0 : ENOTCONN;
	} else {
		if (how == SHUT_RD || how == SHUT_RDWR)
			rs->rd_shut = true;
		if (how == SHUT_WR || how == SHUT_RDWR)
			ret = rs_shutdown_wr(rs);
	}
	rs_unlock(rs);
	return ret ? rcm_err(ret) : 0;
}

RCM_EXPORT int rclose(int socket)
{
	struct rs *rs = rs_lookup(socket);

	if (!rs)
		return -1;
	table_set(rs->index, NULL);	/* no new call finds it */
	if (rs->type == SOCK_STREAM && rs->state == RS_CONNECTED)
		rs_stream_drain(rs);
	rs_unlock(rs);
	rs_free(rs);
	return 0;
}

/* ---- names ---------------------------------------------------------------------------------- */

static int copy_addr(const struct sockaddr *sa, struct sockaddr *addr, socklen_t *len)
{
	socklen_t n = bv_cm_addrlen(sa);

	if (!addr || !len)
		return EFAULT;
	if (!n) {
		/* not bound: the socket's family, any address */
		memset(addr, 0, *len);
		if (*len >= sizeof(sa_family_t))
			addr->sa_family = AF_INET;
		*len = sizeof(struct sockaddr_in);
		return 0;
	}
	memcpy(addr, sa, *len < n ? *len : n);
	*len = n;
	return 0;
}

RCM_EXPORT int rgetpeername(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	struct rs *rs = rs_lookup(socket);
	int ret;

	if (!rs)
		return -1;
	if (rs->type == SOCK_DGRAM)
		ret = rs_dgram_name(rs, addr, addrlen, true);
	else if (rs->state != RS_CONNECTED && !(rs->state == RS_ERROR && rs->disconnected))
		ret = ENOTCONN;
	else
		ret = copy_addr(rdma_get_peer_addr(rs->id), addr, addrlen);
	rs_unlock(rs);
	return ret ? rcm_err(ret) : 0;
}

RCM_EXPORT int rgetsockname(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	struct rs *rs = rs_lookup(socket);
	int ret;

	if (!rs)
		return -1;
	if (rs->type == SOCK_DGRAM)
		ret = rs_dgram_name(rs, addr, addrlen, false);
	else
		ret = copy_addr(rdma_get_local_addr(rs->id), addr, addrlen);
	rs_unlock(rs);
	return ret ? rcm_err(ret) : 0;
}

/* ---- options -------------------------------------------------------------------------------- */

static int opt_int(const void *val, socklen_t len, int *out)
{
	if (!val || len < sizeof(int))
		return EINVAL;
	memcpy(out, val, sizeof(int));
	return 0;
}

static uint32_t clamp(uint32_t v, uint32_t lo, uint32_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

RCM_EXPORT int rsetsockopt(int socket, int level, int optname, const void *optval,
			   socklen_t optlen)
{
	struct rs *rs = rs_lookup(socket);
	bool before = true;
	int v = 0, ret;

	if (!rs)
		return -1;
	if (rs->type == SOCK_DGRAM) {
		ret = rs_dgram_setsockopt(rs, level, optname, optval, optlen);
		rs_unlock(rs);
		return ret ? rcm_err(ret) : 0;
	}
	before = rs->state == RS_INIT || rs->state == RS_BOUND || rs->state == RS_LISTENING;
	ret = level == SOL_SOCKET && optname == SO_LINGER ? 0 : opt_int(optval, optlen, &v);
	if (ret)
		goto out;
	switch (level) {
	case SOL_SOCKET:
		switch (optname) {
		case SO_REUSEADDR:
			rs->reuseaddr = v;
			if (rs->state == RS_INIT &&
			    rdma_set_option(rs->id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &v,
					    sizeof(v)))
				ret = errno;
			break;
		case SO_RCVBUF:
			/* as Linux doubles what it is given (rdma-core does the same) */
			if (before)
				rs->rbuf_size = clamp((uint32_t)v << 1, RS_MIN_BUF_SIZE,
						      RS_MAX_BUF_SIZE);
			break;
		case SO_SNDBUF:
			if (before)
				rs->sbuf_size = clamp((uint32_t)v << 1, RS_MIN_BUF_SIZE,
						      RS_MAX_BUF_SIZE);
			break;
		case SO_KEEPALIVE:
			rs->keepalive = v;
			break;
		case SO_OOBINLINE:
			rs->oobinline = v;
			break;
		case SO_LINGER:
			if (!optval || optlen < sizeof(struct linger))
				ret = EINVAL;
			else
				memcpy(&rs->linger, optval, sizeof(rs->linger));
			break;
		default:
			ret = ENOPROTOOPT;
		}
		break;
	case IPPROTO_TCP:
		switch (optname) {
		case TCP_NODELAY:
			rs->nodelay = v;	/* every rsend goes out at once anyway */
			break;
		case TCP_KEEPIDLE:
			if (v <= 0)
				ret = EINVAL;
			else
				rs->keepidle = v;
			break;
		case TCP_MAXSEG:
			break;
		default:
			ret = ENOPROTOOPT;
		}
		break;
	case IPPROTO_IPV6:
		if (optname != IPV6_V6ONLY) {
			ret = ENOPROTOOPT;
			break;
		}
		rs->afonly = v;
		if (rdma_set_option(rs->id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &v, sizeof(v)))
			ret = errno;
		break;
	case SOL_RDMA:
		if (!before && optname != RDMA_ROUTE) {
			ret = EINVAL;
			break;
		}
		switch (optname) {
		case RDMA_SQSIZE:
			rs->sq_size = clamp((uint32_t)v, RS_MIN_QUEUE, RS_MAX_QUEUE);
			break;
		case RDMA_RQSIZE:
			rs->rq_size = clamp((uint32_t)v, RS_MIN_QUEUE, RS_MAX_QUEUE);
			break;
		case RDMA_INLINE:
			rs->inline_size = clamp((uint32_t)v, 0, 1024);
			break;
		case RDMA_IOMAPSIZE:
			rs->iomap_size = clamp((uint32_t)v, 0, 1024);
			break;
		case RDMA_ROUTE:
			ret = ENOSYS;	/* routes from ibacm: none here (rdma_getaddrinfo) */
			break;
		default:
			ret = ENOPROTOOPT;
		}
		break;
	default:
		ret = ENOPROTOOPT;
	}
out:
	rs_unlock(rs);
	return ret ? rcm_err(ret) : 0;
}

RCM_EXPORT int rgetsockopt(int socket, int level, int optname, void *optval, socklen_t *optlen)
{
	struct rs *rs = rs_lookup(socket);
	int v = 0, ret = 0;

	if (!rs)
		return -1;
	if (!optval || !optlen) {
		rs_unlock(rs);
		return rcm_err(EINVAL);
	}
	if (rs->type == SOCK_STREAM)
		rs_cm_progress(rs);	/* SO_ERROR of a non-blocking rconnect */
	switch (level) {
	case SOL_SOCKET:
		switch (optname) {
		case SO_ERROR:
			if (rs->type == SOCK_STREAM &&
			    (rs->state == RS_RESOLVING_ADDR || rs->state == RS_RESOLVING_ROUTE ||
			     rs->state == RS_CONNECTING))
				v = 0;	/* still in progress */
			else
				v = rs->err;
			if (rs->state != RS_ERROR)
				rs->err = 0;
			break;
		case SO_REUSEADDR: v = rs->reuseaddr; break;
		case SO_RCVBUF: v = (int)rs->rbuf_size; break;
		case SO_SNDBUF: v = (int)rs->sbuf_size; break;
		case SO_KEEPALIVE: v = rs->keepalive; break;
		case SO_OOBINLINE: v = rs->oobinline; break;
		case SO_TYPE: v = rs->type; break;
		case SO_LINGER:
			if (*optlen < sizeof(struct linger)) {
				ret = EINVAL;
			} else {
				memcpy(optval, &rs->linger, sizeof(rs->linger));
				*optlen = sizeof(rs->linger);
			}
			rs_unlock(rs);
			return ret ? rcm_err(ret) : 0;
		default: ret = ENOPROTOOPT;
		}
		break;
	case IPPROTO_TCP:
		switch (optname) {
		case TCP_NODELAY: v = rs->nodelay; break;
		case TCP_KEEPIDLE: v = rs->keepidle ? rs->keepidle : 7200; break;
		case TCP_MAXSEG: v = (int)RS_MAX_MSG; break;
		default: ret = ENOPROTOOPT;
		}
		break;
	case IPPROTO_IPV6:
		if (optname == IPV6_V6ONLY)
			v = rs->afonly;
		else
			ret = ENOPROTOOPT;
		break;
	case SOL_RDMA:
		switch (optname) {
		case RDMA_SQSIZE: v = (int)rs->sq_size; break;
		case RDMA_RQSIZE: v = (int)rs->rq_size; break;
		case RDMA_INLINE: v = (int)rs->inline_size; break;
		case RDMA_IOMAPSIZE: v = (int)rs->iomap_size; break;
		default: ret = ENOPROTOOPT;
		}
		break;
	default:
		ret = ENOPROTOOPT;
	}
	if (!ret) {
		socklen_t n = *optlen < sizeof(int) ? *optlen : sizeof(int);

		memcpy(optval, &v, n);
		*optlen = n;
	}
	rs_unlock(rs);
	return ret ? rcm_err(ret) : 0;
}

RCM_EXPORT int rfcntl(int socket, int cmd, ...)
{
	struct rs *rs = rs_lookup(socket);
	va_list ap;
	int ret = 0;

	if (!rs)
		return -1;
	va_start(ap, cmd);
	switch (cmd) {
	case F_GETFL:
		ret = rs->flags;
		break;
	case F_SETFL:
		rs->flags = va_arg(ap, int);
		break;
	case F_GETFD:
		ret = FD_CLOEXEC;
		break;
	case F_SETFD:
		break;
	default:
		ret = -1;
		errno = ENOTSUP;
	}
	va_end(ap);
	rs_unlock(rs);
	return ret;
}
