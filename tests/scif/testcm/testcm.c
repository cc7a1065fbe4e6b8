// SPDX-License-Identifier: MIT
/*
 * A stand-in rdma_cm for testing libscif (docs/scif.md "Testing"): the 17 librdmacm calls
 * libscif makes, as a librdmacm.so.1 with the RDMACM_1.0 version node, selected with
 * LD_LIBRARY_PATH. It is NOT bridgeverbs' librdmacm (librdmacm-plugin/, real IB CM MADs
 * through the daemons) and is never installed: it lets libscif's tests run while that plugin
 * cannot connect yet, and shows that libscif uses nothing but the rdma_cm API.
 *
 * The connection handshake travels over TCP between the two device addresses, on the rdma_cm
 * port: REQ (queue pair number, PSN, GID, private data) -> REP -> RTU, REJ, DREQ; the queue
 * pairs are moved to RTR/RTS with what the other side sent, as ib_cm does with a REQ/REP.
 * One thread per event channel reads the sockets and queues the events; the channel's fd is
 * a pipe with one byte per queued event. A socket that closes is a DISCONNECTED event (a peer
 * process that died). Addresses map to devices through the bridgeverbs configuration.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "bv_config.h"
#include "bv_paths.h"

#define EXPORT __attribute__((visibility("default")))

enum { MSG_REQ = 1, MSG_REP, MSG_RTU, MSG_REJ, MSG_DREQ };

struct msg {
	uint32_t type;
	uint32_t qpn;
	uint32_t psn;
	uint32_t rd_atom;
	uint8_t gid[16];
	uint32_t pdata_len;
	uint8_t pdata[196];
};

enum { ID_IDLE, ID_LISTEN, ID_CONNECTING, ID_ACCEPTING, ID_CONNECTED, ID_DONE };

struct tcm_chan;

struct tcm_id {
	struct rdma_cm_id id;
	struct tcm_chan *ch;
	int sock;
	int state;
	struct sockaddr_in src, dst;
	struct msg peer;		/* the peer's REQ or REP */
	uint32_t psn;
	int gid_index;
	int rd_atom;
	bool destroyed;			/* rdma_destroy_id: no more events (leaked: tests only) */
	struct tcm_id *next;		/* the channel's ids */
};

struct tcm_event {
	struct rdma_cm_event ev;
	uint8_t pdata[196];
	struct tcm_event *next;
};

struct tcm_chan {
	struct rdma_event_channel ch;	/* ch.fd: the pipe's read end */
	int wfd;			/* its write end */
	int epfd;
	pthread_t thread;
	pthread_mutex_t lock;
	struct tcm_event *head, *tail;
	struct tcm_id *ids;
};

/* ----------------------------------------------------------------------------------------- */
/* Devices by address                                                                         */

static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ibv_context *ctxs[BV_MAX_DEVICES];
static char ctx_names[BV_MAX_DEVICES][64];

static struct ibv_context *dev_by_ip(struct in_addr ip)
{
	static struct bv_config cfg;
	char path[BV_PATH_MAX], err[128];
	const char *name = NULL;
	struct ibv_context *ctx = NULL;
	struct ibv_device **list;
	int n;

	if (bv_run_path(path, sizeof(path), "config", "") ||
	    bv_config_load(&cfg, path, err, sizeof(err)))
		return NULL;
	for (int i = 0; i < cfg.ndev; i++)
		if (cfg.dev[i].ip.s_addr == ip.s_addr)
			name = cfg.dev[i].name;
	if (!name)
		return NULL;
	pthread_mutex_lock(&dev_lock);
	for (int i = 0; i < BV_MAX_DEVICES && ctxs[i]; i++)
		if (!strcmp(ctx_names[i], name)) {
			ctx = ctxs[i];
			goto out;
		}
	list = ibv_get_device_list(&n);
	for (int i = 0; list && i < n; i++) {
		if (strcmp(ibv_get_device_name(list[i]), name))
			continue;
		ctx = ibv_open_device(list[i]);
		for (int k = 0; ctx && k < BV_MAX_DEVICES; k++)
			if (!ctxs[k]) {
				ctxs[k] = ctx;
				snprintf(ctx_names[k], sizeof(ctx_names[k]), "%s", name);
				break;
			}
	}
	if (list)
		ibv_free_device_list(list);
out:
	pthread_mutex_unlock(&dev_lock);
	return ctx;
}

/* The RoCE v2 GID of our address (the last index holding ::ffff:ip). */
static int gid_of(struct ibv_context *ctx, struct in_addr ip, uint8_t gid[16])
{
	uint8_t want[16] = { 0 };
	union ibv_gid g;
	int found = -1;

	want[10] = want[11] = 0xff;
	memcpy(want + 12, &ip, 4);
	for (int i = 0; i < 16; i++)
		if (!ibv_query_gid(ctx, 1, i, &g) && !memcmp(g.raw, want, 16))
			found = i;
	memcpy(gid, want, 16);
	return found;
}

/* ----------------------------------------------------------------------------------------- */
/* Events                                                                                      */

/* Queue an event; the channel lock is held. */
static void push(struct tcm_chan *ch, struct tcm_id *id, struct tcm_id *listen,
		 enum rdma_cm_event_type type, int status, const struct msg *m)
{
	struct tcm_event *e;
	char b = 1;

	if (id->destroyed)
		return;
	e = calloc(1, sizeof(*e));
	if (!e)
		return;
	e->ev.id = &id->id;
	e->ev.listen_id = listen ? &listen->id : NULL;
	e->ev.event = type;
	e->ev.status = status;
	if (m && m->pdata_len) {
		memcpy(e->pdata, m->pdata, m->pdata_len);
		e->ev.param.conn.private_data = e->pdata;
		e->ev.param.conn.private_data_len = (uint8_t)m->pdata_len;
	}
	if (ch->tail)
		ch->tail->next = e;
	else
		ch->head = e;
	ch->tail = e;
	if (write(ch->wfd, &b, 1) != 1) {
		/* the pipe is full of unread events: the reader is far behind anyway */
	}
}

static int send_msg(int sock, const struct msg *m)
{
	return send(sock, m, sizeof(*m), MSG_NOSIGNAL) == (ssize_t)sizeof(*m) ? 0 : -1;
}

static int recv_msg(int sock, struct msg *m)
{
	ssize_t n = recv(sock, m, sizeof(*m), MSG_WAITALL);

	if (n != (ssize_t)sizeof(*m) || m->pdata_len > sizeof(m->pdata))
		return -1;
	return 0;
}

static int qp_init(struct rdma_cm_id *id)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
						    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC };

	return ibv_modify_qp(id->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						 IBV_QP_ACCESS_FLAGS);
}

/* RTR and RTS with what the peer sent. */
static int qp_connect(struct tcm_id *t)
{
	struct ibv_port_attr pa;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	int rd = t->rd_atom < (int)t->peer.rd_atom ? t->rd_atom : (int)t->peer.rd_atom;

	if (!t->id.qp || ibv_query_port(t->id.verbs, 1, &pa))
		return -1;
	a.path_mtu = pa.active_mtu;
	a.dest_qp_num = t->peer.qpn;
	a.rq_psn = t->peer.psn;
	a.max_dest_rd_atomic = (uint8_t)(rd ? rd : 1);
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	memcpy(a.ah_attr.grh.dgid.raw, t->peer.gid, 16);
	a.ah_attr.grh.sgid_index = (uint8_t)(t->gid_index < 0 ? 0 : t->gid_index);
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(t->id.qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = t->psn;
	a.max_rd_atomic = (uint8_t)(rd ? rd : 1);
	return ibv_modify_qp(t->id.qp, &a,
			     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static void qp_error(struct tcm_id *t)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	if (t->id.qp)
		ibv_modify_qp(t->id.qp, &a, IBV_QP_STATE);
}

static void watch(struct tcm_chan *ch, struct tcm_id *t)
{
	struct epoll_event e = { .events = EPOLLIN | EPOLLRDHUP, .data.ptr = t };

	epoll_ctl(ch->epfd, EPOLL_CTL_ADD, t->sock, &e);
}

static struct tcm_id *new_id(struct tcm_chan *ch, void *context)
{
	struct tcm_id *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->id.channel = &ch->ch;
	t->id.context = context;
	t->id.ps = RDMA_PS_TCP;
	t->id.qp_type = IBV_QPT_RC;
	t->sock = -1;
	t->ch = ch;
	t->psn = (uint32_t)rand() & 0xffffff;
	t->next = ch->ids;	/* the channel lock is held */
	ch->ids = t;
	return t;
}

/* Something arrived on an id's socket (channel thread). */
static void on_sock(struct tcm_chan *ch, struct tcm_id *t)
{
	struct msg m;

	if (t->state == ID_LISTEN) {
		struct sockaddr_in peer;
		socklen_t pl = sizeof(peer);
		int s = accept4(t->sock, (struct sockaddr *)&peer, &pl, SOCK_CLOEXEC);
		struct tcm_id *n;

		if (s < 0)
			return;
		if (recv_msg(s, &m) || m.type != MSG_REQ || !(n = new_id(ch, t->id.context))) {
			close(s);
			return;
		}
		n->sock = s;
		n->state = ID_ACCEPTING;
		n->peer = m;
		n->id.verbs = t->id.verbs;
		n->id.port_num = 1;
		n->src = t->src;
		n->dst = peer;
		n->gid_index = t->gid_index;
		push(ch, n, t, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &m);
		return;
	}
	if (recv_msg(t->sock, &m)) {
		/* the peer went away: its socket closed without a word */
		if (getenv("TESTCM_DEBUG"))
			fprintf(stderr, "testcm[%d]: id %p state %d: socket closed (%s)\n",
				(int)getpid(), (void *)t, t->state, strerror(errno));
		epoll_ctl(ch->epfd, EPOLL_CTL_DEL, t->sock, NULL);
		if (t->state == ID_CONNECTED) {
			qp_error(t);
			push(ch, t, NULL, RDMA_CM_EVENT_DISCONNECTED, 0, NULL);
		} else if (t->state == ID_CONNECTING || t->state == ID_ACCEPTING) {
			push(ch, t, NULL, t->state == ID_CONNECTING ? RDMA_CM_EVENT_REJECTED :
								     RDMA_CM_EVENT_CONNECT_ERROR,
			     0, NULL);
		}
		t->state = ID_DONE;
		return;
	}
	if (getenv("TESTCM_DEBUG"))
		fprintf(stderr, "testcm[%d]: id %p sock %d state %d: message %u\n", (int)getpid(),
			(void *)t, t->sock, t->state, m.type);
	switch (m.type) {
	case MSG_REP:
		if (t->state != ID_CONNECTING)
			break;
		t->peer = m;
		if (qp_connect(t)) {
			push(ch, t, NULL, RDMA_CM_EVENT_CONNECT_ERROR, -EINVAL, NULL);
			t->state = ID_DONE;
			break;
		}
		m.type = MSG_RTU;
		m.pdata_len = 0;
		send_msg(t->sock, &m);
		t->state = ID_CONNECTED;
		push(ch, t, NULL, RDMA_CM_EVENT_ESTABLISHED, 0, &t->peer);
		break;
	case MSG_RTU:
		if (t->state != ID_ACCEPTING)
			break;
		t->state = ID_CONNECTED;
		push(ch, t, NULL, RDMA_CM_EVENT_ESTABLISHED, 0, NULL);
		break;
	case MSG_REJ:
		if (t->state == ID_CONNECTING)
			push(ch, t, NULL, RDMA_CM_EVENT_REJECTED, 28, &m);	/* consumer */
		t->state = ID_DONE;
		break;
	case MSG_DREQ:
		if (t->state == ID_CONNECTED) {
			qp_error(t);
			push(ch, t, NULL, RDMA_CM_EVENT_DISCONNECTED, 0, NULL);
		}
		t->state = ID_DONE;
		break;
	}
}

static void *chan_thread(void *arg)
{
	struct tcm_chan *ch = arg;

	for (;;) {
		struct epoll_event evs[16];
		int n = epoll_wait(ch->epfd, evs, 16, -1);

		if (n < 0 && errno != EINTR)
			return NULL;
		for (int i = 0; i < n; i++) {
			struct tcm_id *t = evs[i].data.ptr;

			pthread_mutex_lock(&ch->lock);
			if (!t->destroyed)
				on_sock(ch, t);
			pthread_mutex_unlock(&ch->lock);
		}
	}
}

/* ----------------------------------------------------------------------------------------- */
/* The API                                                                                     */

EXPORT struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct tcm_chan *ch = calloc(1, sizeof(*ch));
	int p[2];

	if (!ch || pipe2(p, O_CLOEXEC)) {
		free(ch);
		return NULL;
	}
	ch->ch.fd = p[0];
	ch->wfd = p[1];
	ch->epfd = epoll_create1(EPOLL_CLOEXEC);
	pthread_mutex_init(&ch->lock, NULL);
	if (ch->epfd < 0 || pthread_create(&ch->thread, NULL, chan_thread, ch)) {
		close(p[0]);
		close(p[1]);
		free(ch);
		return NULL;
	}
	pthread_detach(ch->thread);
	return &ch->ch;
}

EXPORT void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	/* the thread may be in the middle of an event: the channel lives on (tests only) */
	(void)channel;
}

EXPORT int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id,
			  void *context, enum rdma_port_space ps)
{
	struct tcm_chan *ch = (struct tcm_chan *)channel;
	struct tcm_id *t;

	pthread_mutex_lock(&ch->lock);
	t = new_id(ch, context);
	pthread_mutex_unlock(&ch->lock);
	if (!t) {
		errno = ENOMEM;
		return -1;
	}
	t->id.ps = ps;
	*id = &t->id;
	return 0;
}

EXPORT int rdma_destroy_id(struct rdma_cm_id *id)
{
	struct tcm_id *t = (struct tcm_id *)id;
	struct tcm_chan *ch = t->ch;

	pthread_mutex_lock(&ch->lock);
	if (getenv("TESTCM_DEBUG"))
		fprintf(stderr, "testcm[%d]: destroy id %p state %d\n", (int)getpid(), (void *)t,
			t->state);
	t->destroyed = true;
	/* events nobody retrieved die with it, as in librdmacm */
	for (struct tcm_event **pp = &ch->head; *pp;) {
		struct tcm_event *e = *pp;

		if (e->ev.id == id) {
			*pp = e->next;
			free(e);
		} else {
			pp = &e->next;
		}
	}
	ch->tail = NULL;
	for (struct tcm_event *e = ch->head; e; e = e->next)
		ch->tail = e;
	if (t->sock >= 0) {
		epoll_ctl(ch->epfd, EPOLL_CTL_DEL, t->sock, NULL);
		close(t->sock);
		t->sock = -1;
	}
	pthread_mutex_unlock(&ch->lock);
	/* the channel thread may have this id in hand: leak it rather than race (tests only) */
	return 0;
}

EXPORT int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct tcm_id *t = (struct tcm_id *)id;
	int one = 1;

	if (addr->sa_family != AF_INET) {
		errno = EAFNOSUPPORT;
		return -1;
	}
	memcpy(&t->src, addr, sizeof(t->src));
	id->verbs = dev_by_ip(t->src.sin_addr);
	if (!id->verbs) {
		errno = EADDRNOTAVAIL;
		return -1;
	}
	id->port_num = 1;
	t->sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (t->sock < 0)
		return -1;
	setsockopt(t->sock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(t->sock, (struct sockaddr *)&t->src, sizeof(t->src))) {
		int e = errno;

		close(t->sock);
		t->sock = -1;
		errno = e;
		return -1;
	}
	return 0;
}

EXPORT int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct tcm_id *t = (struct tcm_id *)id;
	uint8_t gid[16];

	if (t->sock < 0 || listen(t->sock, backlog)) {
		errno = errno ? errno : EINVAL;
		return -1;
	}
	t->gid_index = gid_of(id->verbs, t->src.sin_addr, gid);
	t->state = ID_LISTEN;
	watch(t->ch, t);
	return 0;
}

EXPORT int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src, struct sockaddr *dst,
			     int timeout_ms)
{
	struct tcm_id *t = (struct tcm_id *)id;

	(void)timeout_ms;
	if (!src || !dst || src->sa_family != AF_INET || dst->sa_family != AF_INET) {
		errno = EAFNOSUPPORT;
		return -1;
	}
	memcpy(&t->src, src, sizeof(t->src));
	memcpy(&t->dst, dst, sizeof(t->dst));
	id->verbs = dev_by_ip(t->src.sin_addr);
	id->port_num = 1;
	pthread_mutex_lock(&t->ch->lock);
	push(t->ch, t, NULL, id->verbs ? RDMA_CM_EVENT_ADDR_RESOLVED : RDMA_CM_EVENT_ADDR_ERROR,
	     id->verbs ? 0 : -EADDRNOTAVAIL, NULL);
	pthread_mutex_unlock(&t->ch->lock);
	return 0;
}

EXPORT int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct tcm_id *t = (struct tcm_id *)id;

	(void)timeout_ms;
	pthread_mutex_lock(&t->ch->lock);
	push(t->ch, t, NULL, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL);
	pthread_mutex_unlock(&t->ch->lock);
	return 0;
}

EXPORT int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,
			  struct ibv_qp_init_attr *attr)
{
	id->qp = ibv_create_qp(pd, attr);
	if (!id->qp)
		return -1;
	if (qp_init(id)) {
		ibv_destroy_qp(id->qp);
		id->qp = NULL;
		errno = EINVAL;
		return -1;
	}
	id->pd = pd;
	return 0;
}

EXPORT void rdma_destroy_qp(struct rdma_cm_id *id)
{
	if (id->qp)
		ibv_destroy_qp(id->qp);
	id->qp = NULL;
}

static void fill(struct tcm_id *t, struct msg *m, int type, const struct rdma_conn_param *p)
{
	memset(m, 0, sizeof(*m));
	m->type = (uint32_t)type;
	m->qpn = t->id.qp ? t->id.qp->qp_num : 0;
	m->psn = t->psn;
	if (p) {
		t->rd_atom = p->initiator_depth;
		m->rd_atom = p->responder_resources;
		if (p->private_data && p->private_data_len) {
			m->pdata_len = p->private_data_len;
			memcpy(m->pdata, p->private_data, p->private_data_len);
		}
	}
	t->gid_index = gid_of(t->id.verbs, t->src.sin_addr, m->gid);
}

EXPORT int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	struct tcm_id *t = (struct tcm_id *)id;
	struct sockaddr_in src = t->src;
	struct msg m;

	if (param && param->private_data_len > 56) {
		errno = EINVAL;
		return -1;
	}
	t->sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	src.sin_port = 0;
	if (t->sock < 0 || bind(t->sock, (struct sockaddr *)&src, sizeof(src)))
		return -1;
	fill(t, &m, MSG_REQ, param);
	if (connect(t->sock, (struct sockaddr *)&t->dst, sizeof(t->dst)) || send_msg(t->sock, &m)) {
		bool refused = errno == ECONNREFUSED;

		/* nobody listens on that port: what a CM says with a REJ */
		pthread_mutex_lock(&t->ch->lock);
		push(t->ch, t, NULL, refused ? RDMA_CM_EVENT_REJECTED : RDMA_CM_EVENT_UNREACHABLE,
		     refused ? 8 : -ETIMEDOUT, NULL);
		pthread_mutex_unlock(&t->ch->lock);
		close(t->sock);
		t->sock = -1;
		return 0;
	}
	pthread_mutex_lock(&t->ch->lock);
	t->state = ID_CONNECTING;
	watch(t->ch, t);
	pthread_mutex_unlock(&t->ch->lock);
	return 0;
}

EXPORT int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	struct tcm_id *t = (struct tcm_id *)id;
	struct msg m;

	if (param && param->private_data_len > 196) {
		errno = EINVAL;
		return -1;
	}
	fill(t, &m, MSG_REP, param);
	if (qp_connect(t) || send_msg(t->sock, &m)) {
		errno = ECONNRESET;
		return -1;
	}
	pthread_mutex_lock(&t->ch->lock);
	watch(t->ch, t);
	pthread_mutex_unlock(&t->ch->lock);
	return 0;
}

EXPORT int rdma_reject(struct rdma_cm_id *id, const void *private_data, uint8_t len)
{
	struct tcm_id *t = (struct tcm_id *)id;
	struct msg m = { .type = MSG_REJ, .pdata_len = len };

	if (len)
		memcpy(m.pdata, private_data, len < sizeof(m.pdata) ? len : sizeof(m.pdata));
	if (t->sock >= 0)
		send_msg(t->sock, &m);
	t->state = ID_DONE;
	return 0;
}

EXPORT int rdma_disconnect(struct rdma_cm_id *id)
{
	struct tcm_id *t = (struct tcm_id *)id;
	struct msg m = { .type = MSG_DREQ };

	if (getenv("TESTCM_DEBUG"))
		fprintf(stderr, "testcm[%d]: disconnect id %p state %d\n", (int)getpid(), (void *)t,
			t->state);
	pthread_mutex_lock(&t->ch->lock);
	if (t->sock >= 0 && (t->state == ID_CONNECTED || t->state == ID_ACCEPTING))
		send_msg(t->sock, &m);
	qp_error(t);
	if (t->state == ID_CONNECTED)
		push(t->ch, t, NULL, RDMA_CM_EVENT_DISCONNECTED, 0, NULL);
	t->state = ID_DONE;
	pthread_mutex_unlock(&t->ch->lock);
	return 0;
}

EXPORT int rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	struct tcm_chan *ch = (struct tcm_chan *)channel;
	struct tcm_event *e;
	char b;

	if (read(ch->ch.fd, &b, 1) != 1)
		return -1;	/* EAGAIN on a non-blocking channel */
	pthread_mutex_lock(&ch->lock);
	e = ch->head;
	if (e) {
		ch->head = e->next;
		if (!ch->head)
			ch->tail = NULL;
	}
	pthread_mutex_unlock(&ch->lock);
	if (!e) {
		errno = EAGAIN;
		return -1;
	}
	*event = &e->ev;
	return 0;
}

EXPORT int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	free(event);	/* struct tcm_event starts with it */
	return 0;
}

EXPORT const char *rdma_event_str(enum rdma_cm_event_type event)
{
	static const char *const names[] = { "ADDR_RESOLVED", "ADDR_ERROR", "ROUTE_RESOLVED",
					     "ROUTE_ERROR", "CONNECT_REQUEST", "CONNECT_RESPONSE",
					     "CONNECT_ERROR", "UNREACHABLE", "REJECTED", "ESTABLISHED",
					     "DISCONNECTED", "DEVICE_REMOVAL" };

	return (unsigned int)event < sizeof(names) / sizeof(names[0]) ? names[event] : "UNKNOWN";
}
