// SPDX-License-Identifier: MIT
/*
 * SOCK_DGRAM rsockets: datagrams over UD QPs (rs.h).
 *
 * As in rdma-core, a datagram rsocket has a UDP socket of its own: it holds the socket's
 * name (address and port, so two rsockets never share one) and carries the first datagram to
 * a peer we know nothing of yet. Each datagram, whichever way it goes, starts with a header
 * naming its sender: UDP address and port, and the GID, QPN and Q_Key of the UD QP it can be
 * answered on. So once a peer has heard from us (or we from it), datagrams go over UD: an
 * address handle to the peer's GID, its QPN and Q_Key.
 *
 * The UD QPs ("endpoints") are one per device the socket uses, each an rdma_cm id of
 * RDMA_PS_UDP bound to the device's address (rdma_create_qp takes it to RTS with the Q_Key
 * RDMA_UDP_QKEY): the bound address's device, or for a socket bound to the wildcard address
 * every device; an unbound socket binds to the device its first destination is routed by.
 * Datagrams are at most the port's MTU less the header (EMSGSIZE beyond), as UD allows;
 * like UDP, what finds no room on the receiving side is dropped.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <rdma/rsocket.h>

#include "rcm.h"
#include "rs.h"

#define DG_MAGIC	0x52534447u	/* "RSDG" */
#define DG_GRH		40
#define DG_RQ		256
#define DG_SQ		64
#define DG_QUEUE_MAX	1024		/* datagrams read from the UDP socket, not yet taken */

struct dg_hdr {
	uint32_t magic;
	uint8_t version;
	uint8_t family;			/* AF_INET, AF_INET6: of addr */
	uint16_t port;			/* network order */
	uint8_t addr[16];		/* the sender's UDP address (IPv4: the first 4 bytes) */
	uint8_t gid[16];		/* the sender's UD QP ... */
	uint32_t qpn;
	uint32_t qkey;
} __attribute__((packed));

#define DG_HDR	((uint32_t)sizeof(struct dg_hdr))

struct dg_ep {
	struct dg_ep *next;
	struct rcm_dev *dev;
	struct rdma_cm_id *id;
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	unsigned int cq_unacked;
	bool armed;
	struct ibv_mr *mr;
	uint8_t *buf;			/* DG_RQ receive slots, then DG_SQ send slots */
	uint32_t slot;			/* bytes of a slot: GRH + MTU */
	uint32_t max_msg;		/* payload after our header */
	uint32_t sq_avail, sq_next;
	uint8_t gid[16];
	uint8_t sgid_index;
	struct sockaddr_storage addr;	/* the device's address */
};

struct dg_dest {
	struct dg_dest *next;
	struct sockaddr_storage addr;	/* the peer's UDP name */
	struct dg_ep *ep;		/* ours it is reached from */
	struct ibv_ah *ah;
	uint8_t gid[16];
	uint32_t qpn, qkey;
};

struct dg_msg {
	struct dg_msg *next;
	struct sockaddr_storage from;
	struct dg_ep *ep;		/* UD: the slot to post again once read */
	uint32_t slot;
	uint8_t *data;
	uint32_t len;
	uint8_t *owned;			/* UDP: the buffer to free */
};

struct rs_dgram {
	int udp;
	bool bound, wildcard;
	struct sockaddr_storage name;
	struct sockaddr_storage conn;
	bool connected;
	struct dg_ep *eps;
	struct dg_dest *dests;
	struct dg_msg *head, *tail;
	unsigned int queued;
};

static socklen_t addr_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
	       sa->sa_family == AF_INET ? sizeof(struct sockaddr_in) : 0;
}

static bool same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;

		return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;

		return x->sin6_port == y->sin6_port &&
		       !memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr));
	}
	return false;
}

/* An IPv4-mapped IPv6 address as IPv4 (a v6 socket talking to v4 peers keys them alike). */
static void canon(struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	if (ss->ss_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
		struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = s6->sin6_port };

		memcpy(&s4.sin_addr, &s6->sin6_addr.s6_addr[12], 4);
		memset(ss, 0, sizeof(*ss));
		memcpy(ss, &s4, sizeof(s4));
	}
}

/* ---- endpoints ------------------------------------------------------------------------------- */

static int post_slot(struct dg_ep *ep, uint32_t slot)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(ep->buf + (size_t)slot * ep->slot),
			       .length = ep->slot, .lkey = ep->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(ep->id->qp, &wr, &bad);
}

static void ep_free(struct rs *rs, struct dg_ep *ep)
{
	if (ep->id && ep->id->qp)
		rdma_destroy_qp(ep->id);
	if (ep->cq) {
		if (ep->cq_unacked)
			ibv_ack_cq_events(ep->cq, ep->cq_unacked);
		ibv_destroy_cq(ep->cq);
	}
	if (ep->cc) {
		rs_epoll_del(rs, ep->cc->fd);
		ibv_destroy_comp_channel(ep->cc);
	}
	if (ep->mr)
		ibv_dereg_mr(ep->mr);
	free(ep->buf);
	if (ep->id)
		rdma_destroy_id(ep->id);
	free(ep);
}

/* The index of our RoCE v2 GID for the address (its v1 twin has the same value). */
static int find_sgid(struct ibv_context *ctx, const uint8_t gid[16], uint8_t *index)
{
	struct ibv_port_attr pa;
	int best = -1;

	if (ibv_query_port(ctx, 1, &pa))
		return errno ? errno : EIO;
	for (int i = 0; i < pa.gid_tbl_len && i < 256; i++) {
		struct ibv_gid_entry e;
		union ibv_gid g;

		if (ibv_query_gid(ctx, 1, i, &g) || memcmp(g.raw, gid, 16))
			continue;
		if (!ibv_query_gid_ex(ctx, 1, (uint32_t)i, &e, 0)) {
			if (e.gid_type == IBV_GID_TYPE_ROCE_V2) {
				*index = (uint8_t)i;
				return 0;
			}
			continue;
		}
		best = i;	/* no type to tell: the last match (mlx5 puts v2 after v1) */
	}
	if (best < 0)
		return EADDRNOTAVAIL;
	*index = (uint8_t)best;
	return 0;
}

static int ep_open(struct rs *rs, struct rcm_dev *dev, struct dg_ep **out)
{
	struct dg_ep *ep = calloc(1, sizeof(*ep));
	struct sockaddr_in *sin;
	struct ibv_qp_init_attr a;
	struct ibv_port_attr pa;
	size_t len;
	int err, fl;

	if (!ep)
		return ENOMEM;
	ep->dev = dev;
	sin = (struct sockaddr_in *)&ep->addr;
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = dev->ip;
	memcpy(ep->gid, dev->gid4, 16);
	if (rdma_create_id(NULL, &ep->id, rs, RDMA_PS_UDP) ||
	    rdma_bind_addr(ep->id, (struct sockaddr *)&ep->addr) || !ep->id->verbs) {
		err = errno ? errno : ENODEV;
		goto fail;
	}
	err = find_sgid(ep->id->verbs, ep->gid, &ep->sgid_index);
	if (err)
		goto fail;
	if (ibv_query_port(ep->id->verbs, 1, &pa)) {
		err = errno ? errno : EIO;
		goto fail;
	}
	ep->slot = DG_GRH + (128u << pa.active_mtu);
	ep->max_msg = (128u << pa.active_mtu) - DG_HDR;
	ep->cc = ibv_create_comp_channel(ep->id->verbs);
	if (!ep->cc) {
		err = errno ? errno : ENOMEM;
		goto fail;
	}
	fl = fcntl(ep->cc->fd, F_GETFL);
	if (fl < 0 || fcntl(ep->cc->fd, F_SETFL, fl | O_NONBLOCK) ||
	    (err = rs_epoll_add(rs, ep->cc->fd))) {
		err = err ? err : errno;
		goto fail;
	}
	ep->cq = ibv_create_cq(ep->id->verbs, DG_RQ + DG_SQ, ep, ep->cc, 0);
	len = (size_t)(DG_RQ + DG_SQ) * ep->slot;
	if (!ep->cq || posix_memalign((void **)&ep->buf, 4096, len)) {
		err = ENOMEM;
		goto fail;
	}
	ep->mr = ibv_reg_mr(ep->id->pd, ep->buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!ep->mr) {
		err = errno ? errno : ENOMEM;
		goto fail;
	}
	memset(&a, 0, sizeof(a));
	a.send_cq = a.recv_cq = ep->cq;
	a.qp_type = IBV_QPT_UD;
	a.sq_sig_all = 1;
	a.cap.max_send_wr = DG_SQ;
	a.cap.max_recv_wr = DG_RQ;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	if (rdma_create_qp(ep->id, ep->id->pd, &a)) {
		err = errno ? errno : ENOMEM;
		goto fail;
	}
	ep->sq_avail = DG_SQ;
	for (uint32_t i = 0; i < DG_RQ; i++)
		if ((err = post_slot(ep, i)))
			goto fail;
	ep->next = rs->dg->eps;
	rs->dg->eps = ep;
	*out = ep;
	return 0;
fail:
	ep_free(rs, ep);
	return err;
}

static struct dg_ep *ep_of(struct rs *rs, struct rcm_dev *dev)
{
	for (struct dg_ep *ep = rs->dg->eps; ep; ep = ep->next)
		if (ep->dev == dev)
			return ep;
	return NULL;
}

/* The endpoint datagrams to `to` leave from (made when the socket may use a new device). */
static int ep_for(struct rs *rs, const struct sockaddr *to, struct dg_ep **out)
{
	struct rcm_dev *dev = NULL;
	struct dg_ep *ep;

	if (rs->dg->bound && !rs->dg->wildcard) {
		*out = rs->dg->eps;
		return rs->dg->eps ? 0 : ENODEV;
	}
	switch (rcm_route(to, &dev)) {
	case RCM_ROUTE_OWN:
	case RCM_ROUTE_LOOPBACK:
	case RCM_ROUTE_REMOTE:
		break;
	default:
		return ENETUNREACH;
	}
	ep = ep_of(rs, dev);
	if (ep) {
		*out = ep;
		return 0;
	}
	return ep_open(rs, dev, out);
}

/* ---- the socket ---------------------------------------------------------------------------- */

int rs_dgram_init(struct rs *rs)
{
	int fl;

	rs->dg = calloc(1, sizeof(*rs->dg));
	if (!rs->dg)
		return ENOMEM;
	rs->dg->udp = rcm_sys_socket(rs->domain, SOCK_DGRAM | SOCK_CLOEXEC);
	if (rs->dg->udp < 0)
		return errno;
	fl = fcntl(rs->dg->udp, F_GETFL);
	if (fl < 0 || fcntl(rs->dg->udp, F_SETFL, fl | O_NONBLOCK))
		return errno;
	return rs_epoll_add(rs, rs->dg->udp);
}

void rs_dgram_free(struct rs *rs)
{
	struct rs_dgram *dg = rs->dg;

	if (!dg)
		return;
	while (dg->head) {
		struct dg_msg *m = dg->head;

		dg->head = m->next;
		free(m->owned);
		free(m);
	}
	while (dg->dests) {
		struct dg_dest *d = dg->dests;

		dg->dests = d->next;
		if (d->ah)
			ibv_destroy_ah(d->ah);
		free(d);
	}
	while (dg->eps) {
		struct dg_ep *ep = dg->eps;

		dg->eps = ep->next;
		ep_free(rs, ep);
	}
	if (dg->udp >= 0) {
		rs_epoll_del(rs, dg->udp);
		close(dg->udp);
	}
	free(dg);
	rs->dg = NULL;
}

static int refresh_name(struct rs *rs)
{
	socklen_t len = sizeof(rs->dg->name);

	if (getsockname(rs->dg->udp, (struct sockaddr *)&rs->dg->name, &len))
		return errno;
	rs->dg->bound = true;
	return 0;
}

int rs_dgram_bind(struct rs *rs, const struct sockaddr *addr, socklen_t len)
{
	struct rs_dgram *dg = rs->dg;
	struct rcm_dev *dev = NULL;
	struct dg_ep *ep;
	int err;

	if (dg->bound)
		return EINVAL;
	if (!addr || len < sizeof(sa_family_t))
		return EINVAL;
	switch (rcm_route(addr, &dev)) {
	case RCM_ROUTE_WILDCARD:
		dg->wildcard = true;
		break;
	case RCM_ROUTE_OWN:
	case RCM_ROUTE_LOOPBACK:
		break;
	default:
		return EADDRNOTAVAIL;	/* an address of no RDMA device */
	}
	if (bind(dg->udp, addr, len))
		return errno;
	err = refresh_name(rs);
	if (err)
		return err;
	if (dg->wildcard) {
		/* every device with an address: datagrams may come to any */
		for (int i = 0; i < rcm_ndevs(); i++) {
			struct rcm_dev *d = rcm_dev_at(i);

			if (d->has_ip && !d->gone && !ep_of(rs, d))
				ep_open(rs, d, &ep);
		}
		return rs->dg->eps ? 0 : ENODEV;
	}
	return ep_open(rs, dev, &ep);
}

/* An unbound socket that sends: bound to the address of the device the peer is reached by. */
static int implicit_bind(struct rs *rs, const struct sockaddr *to)
{
	struct rs_dgram *dg = rs->dg;
	struct sockaddr_storage a;
	struct dg_ep *ep;
	int err;

	if (dg->bound)
		return 0;
	err = ep_for(rs, to, &ep);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	if (rs->domain == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&a;

		s6->sin6_family = AF_INET6;
		s6->sin6_addr.s6_addr[10] = s6->sin6_addr.s6_addr[11] = 0xff;
		memcpy(&s6->sin6_addr.s6_addr[12], &ep->dev->ip, 4);
	} else {
		memcpy(&a, &ep->addr, sizeof(struct sockaddr_in));
	}
	if (bind(dg->udp, (struct sockaddr *)&a, addr_len((struct sockaddr *)&a)))
		return errno;
	return refresh_name(rs);
}

int rs_dgram_connect(struct rs *rs, const struct sockaddr *addr, socklen_t len)
{
	struct rs_dgram *dg = rs->dg;
	int err;

	if (!addr || len < sizeof(sa_family_t) || len > sizeof(dg->conn))
		return EINVAL;
	err = implicit_bind(rs, addr);
	if (err)
		return err;
	if (connect(dg->udp, addr, len))
		return errno;
	memset(&dg->conn, 0, sizeof(dg->conn));
	memcpy(&dg->conn, addr, len);
	canon(&dg->conn);
	dg->connected = true;
	return 0;
}

int rs_dgram_name(struct rs *rs, struct sockaddr *addr, socklen_t *len, bool peer)
{
	struct rs_dgram *dg = rs->dg;
	socklen_t n;

	if (!addr || !len)
		return EFAULT;
	if (peer) {
		if (!dg->connected)
			return ENOTCONN;
		return getpeername(dg->udp, addr, len) ? errno : 0;
	}
	n = *len;
	if (getsockname(dg->udp, addr, &n))
		return errno;
	*len = n;
	return 0;
}

int rs_dgram_setsockopt(struct rs *rs, int level, int name, const void *val, socklen_t len)
{
	if (level == SOL_RDMA)
		return 0;	/* queue sizes: ours are fixed */
	/* buffer sizes, reuse, IPV6_V6ONLY...: the UDP socket takes them as they are */
	return setsockopt(rs->dg->udp, level, name, val, len) ? errno : 0;
}

/* ---- peers ----------------------------------------------------------------------------------- */

static struct dg_dest *dest_find(struct rs *rs, const struct sockaddr_storage *a)
{
	for (struct dg_dest *d = rs->dg->dests; d; d = d->next)
		if (same_addr(&d->addr, a))
			return d;
	return NULL;
}

/* What a header says about its sender: the way back over UD. */
static void learn(struct rs *rs, const struct sockaddr_storage *from, const struct dg_hdr *h,
		  struct dg_ep *ep)
{
	struct dg_dest *d = dest_find(rs, from);
	struct ibv_ah_attr ah = { .is_global = 1, .port_num = 1 };

	if (d && d->qpn == h->qpn && !memcmp(d->gid, h->gid, 16))
		return;
	if (!ep && ep_for(rs, (const struct sockaddr *)from, &ep))
		return;
	if (!d) {
		d = calloc(1, sizeof(*d));
		if (!d)
			return;
		d->addr = *from;
		d->next = rs->dg->dests;
		rs->dg->dests = d;
	} else if (d->ah) {
		ibv_destroy_ah(d->ah);
		d->ah = NULL;
	}
	memcpy(d->gid, h->gid, 16);
	d->qpn = h->qpn & 0xffffff;
	d->qkey = h->qkey;
	d->ep = ep;
	memcpy(ah.grh.dgid.raw, h->gid, 16);
	ah.grh.sgid_index = ep->sgid_index;
	ah.grh.hop_limit = 64;
	d->ah = ibv_create_ah(ep->id->pd, &ah);
}

static void fill_hdr(struct rs *rs, struct dg_ep *ep, struct dg_hdr *h)
{
	const struct sockaddr_storage *n = &rs->dg->name;

	memset(h, 0, sizeof(*h));
	h->magic = DG_MAGIC;
	h->version = RS_VERSION;
	if (n->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)n;

		h->family = AF_INET6;
		h->port = s6->sin6_port;
		memcpy(h->addr, &s6->sin6_addr, 16);
	} else {
		const struct sockaddr_in *s4 = (const void *)n;

		h->family = AF_INET;
		h->port = s4->sin_port;
		memcpy(h->addr, &s4->sin_addr, 4);
	}
	/* a wildcard name: the address of the device it leaves from */
	if (h->family == AF_INET && !memcmp(h->addr, "\0\0\0\0", 4))
		memcpy(h->addr, &ep->dev->ip, 4);
	memcpy(h->gid, ep->gid, 16);
	h->qpn = ep->id->qp->qp_num;
	h->qkey = RDMA_UDP_QKEY;
}

static bool hdr_ok(const struct dg_hdr *h)
{
	return h->magic == DG_MAGIC && h->version == RS_VERSION &&
	       (h->family == AF_INET || h->family == AF_INET6);
}

static void hdr_from(const struct dg_hdr *h, struct sockaddr_storage *from)
{
	memset(from, 0, sizeof(*from));
	if (h->family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)from;

		s4->sin_family = AF_INET;
		s4->sin_port = h->port;
		memcpy(&s4->sin_addr, h->addr, 4);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)from;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = h->port;
		memcpy(&s6->sin6_addr, h->addr, 16);
		canon(from);
	}
}

/* ---- progress -------------------------------------------------------------------------------- */

static void enqueue(struct rs *rs, struct dg_msg *m)
{
	struct rs_dgram *dg = rs->dg;

	if (dg->tail)
		dg->tail->next = m;
	else
		dg->head = m;
	dg->tail = m;
	dg->queued++;
}

static void ep_poll(struct rs *rs, struct dg_ep *ep)
{
	struct ibv_wc wc[16];
	int n;

	while ((n = ibv_poll_cq(ep->cq, 16, wc)) > 0) {
		for (int i = 0; i < n; i++) {
			uint32_t slot = (uint32_t)wc[i].wr_id;
			struct dg_hdr h;
			struct dg_msg *m;
			uint8_t *p;

			if (rs_debug)
				fprintf(stderr, "rsocket %d: UD %s completion status %d len %u\n",
					rs->index, slot >= DG_RQ ? "send" : "recv", wc[i].status,
					wc[i].byte_len);
			if (slot >= DG_RQ) {
				ep->sq_avail++;	/* a send; a failed one is a lost datagram */
				continue;
			}
			if (wc[i].status != IBV_WC_SUCCESS)
				continue;	/* flushed: the endpoint is going */
			p = ep->buf + (size_t)slot * ep->slot;
			if (wc[i].byte_len < DG_GRH + DG_HDR) {
				post_slot(ep, slot);
				continue;
			}
			memcpy(&h, p + DG_GRH, sizeof(h));
			m = hdr_ok(&h) ? calloc(1, sizeof(*m)) : NULL;
			if (!m) {
				post_slot(ep, slot);	/* not ours, or no memory: dropped */
				continue;
			}
			hdr_from(&h, &m->from);
			learn(rs, &m->from, &h, ep);
			m->ep = ep;
			m->slot = slot;
			m->data = p + DG_GRH + DG_HDR;
			m->len = wc[i].byte_len - DG_GRH - DG_HDR;
			enqueue(rs, m);
		}
	}
}

static void udp_poll(struct rs *rs)
{
	struct rs_dgram *dg = rs->dg;

	while (dg->queued < DG_QUEUE_MAX) {
		uint8_t *buf = malloc(65536);
		struct sockaddr_storage from;
		socklen_t flen = sizeof(from);
		struct dg_hdr h;
		struct dg_msg *m;
		ssize_t n;

		if (!buf)
			return;
		n = recvfrom(dg->udp, buf, 65536, 0, (struct sockaddr *)&from, &flen);
		if (n < 0) {
			free(buf);
			return;
		}
		memcpy(&h, buf, n >= (ssize_t)DG_HDR ? sizeof(h) : 0);
		if (n < (ssize_t)DG_HDR || !hdr_ok(&h) || !(m = calloc(1, sizeof(*m)))) {
			free(buf);	/* not from an rsocket */
			continue;
		}
		canon(&from);
		m->from = from;
		learn(rs, &from, &h, NULL);
		m->owned = buf;
		m->data = buf + DG_HDR;
		m->len = (uint32_t)n - DG_HDR;
		enqueue(rs, m);
	}
}

static void dgram_progress(struct rs *rs)
{
	for (struct dg_ep *ep = rs->dg->eps; ep; ep = ep->next)
		ep_poll(rs, ep);
	udp_poll(rs);
}

static void dgram_arm(struct rs *rs)
{
	for (struct dg_ep *ep = rs->dg->eps; ep; ep = ep->next) {
		struct ibv_cq *cq;
		void *ctx;

		while (!ibv_get_cq_event(ep->cc, &cq, &ctx)) {
			ep->armed = false;
			if (++ep->cq_unacked >= 64) {
				ibv_ack_cq_events(ep->cq, ep->cq_unacked);
				ep->cq_unacked = 0;
			}
		}
		if (!ep->armed && !ibv_req_notify_cq(ep->cq, 0))
			ep->armed = true;
	}
}

/* Sleep, unlocked, on the socket's descriptors (armed CQs and the UDP socket). */
static int dgram_wait(struct rs *rs)
{
	struct pollfd p = { .fd = rs->index, .events = POLLIN };
	int n;

	dgram_arm(rs);
	dgram_progress(rs);
	if (rs->dg->head)
		return 0;
	pthread_mutex_unlock(&rs->lock);
	n = poll(&p, 1, -1);
	pthread_mutex_lock(&rs->lock);
	return n < 0 ? errno : 0;
}

static bool can_send(struct rs *rs)
{
	for (struct dg_ep *ep = rs->dg->eps; ep; ep = ep->next)
		if (!ep->sq_avail)
			return false;
	return true;
}

short rs_dgram_revents(struct rs *rs, short events)
{
	short r = 0;

	dgram_arm(rs);
	dgram_progress(rs);
	if (rs->dg->head)
		r |= POLLIN;
	if (can_send(rs))
		r |= POLLOUT;
	return r & (events | POLLERR | POLLHUP);
}

/* ---- send and receive ------------------------------------------------------------------------ */

static void gather(const struct iovec *iov, int iovcnt, uint8_t *dst)
{
	for (int i = 0; i < iovcnt; i++) {
		memcpy(dst, iov[i].iov_base, iov[i].iov_len);
		dst += iov[i].iov_len;
	}
}

ssize_t rs_dgram_send(struct rs *rs, const struct iovec *iov, int iovcnt, int flags,
		      const struct sockaddr *to, socklen_t tolen)
{
	struct rs_dgram *dg = rs->dg;
	size_t len = rs_iov_len(iov, iovcnt);
	struct sockaddr_storage dst;
	struct dg_dest *d;
	struct dg_ep *ep;
	struct dg_hdr h;
	int err;

	if (to) {
		if (tolen < sizeof(sa_family_t) || tolen > sizeof(dst))
			return rcm_err(EINVAL);
		memset(&dst, 0, sizeof(dst));
		memcpy(&dst, to, tolen);
		canon(&dst);
	} else if (dg->connected) {
		dst = dg->conn;
	} else {
		return rcm_err(EDESTADDRREQ);
	}
	err = implicit_bind(rs, (struct sockaddr *)&dst);
	if (!err)
		err = ep_for(rs, (struct sockaddr *)&dst, &ep);
	if (err)
		return rcm_err(err);
	if (len > ep->max_msg)
		return rcm_err(EMSGSIZE);
	dgram_progress(rs);
	d = dest_find(rs, &dst);
	fill_hdr(rs, d && d->ah ? d->ep : ep, &h);
	if (d && d->ah) {
		struct ibv_send_wr wr = { .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
					  .num_sge = 1 }, *bad;
		struct ibv_sge sge;
		uint8_t *p;

		ep = d->ep;
		while (!ep->sq_avail) {
			if ((rs->flags & O_NONBLOCK) || (flags & MSG_DONTWAIT))
				return rcm_err(EAGAIN);
			dgram_wait(rs);
			dgram_progress(rs);
		}
		p = ep->buf + (size_t)(DG_RQ + ep->sq_next++ % DG_SQ) * ep->slot;
		memcpy(p, &h, sizeof(h));
		gather(iov, iovcnt, p + DG_HDR);
		sge = (struct ibv_sge){ .addr = (uintptr_t)p, .length = DG_HDR + (uint32_t)len,
					.lkey = ep->mr->lkey };
		wr.wr_id = DG_RQ;	/* a send */
		wr.sg_list = &sge;
		wr.wr.ud.ah = d->ah;
		wr.wr.ud.remote_qpn = d->qpn;
		wr.wr.ud.remote_qkey = d->qkey;
		err = ibv_post_send(ep->id->qp, &wr, &bad);
		if (rs_debug)
			fprintf(stderr, "rsocket %d: UD send %zu bytes to qpn 0x%x: %d\n", rs->index,
				len, d->qpn, err);
		if (err)
			return rcm_err(err);
		ep->sq_avail--;
		return (ssize_t)len;
	}
	/* a peer we have not heard from: this one over UDP, with the way back in it */
	{
		struct iovec v[17];
		struct msghdr msg = { .msg_iov = v, .msg_iovlen = 1 };
		ssize_t n;

		if (iovcnt > 16)
			return rcm_err(EMSGSIZE);
		v[0].iov_base = &h;
		v[0].iov_len = sizeof(h);
		memcpy(&v[1], iov, (size_t)iovcnt * sizeof(*iov));
		msg.msg_iovlen = (size_t)iovcnt + 1;
		if (!dg->connected || to) {
			msg.msg_name = &dst;
			msg.msg_namelen = addr_len((struct sockaddr *)&dst);
		}
		n = sendmsg(dg->udp, &msg, flags & MSG_DONTWAIT);
		if (n < 0)
			return -1;
		return n >= (ssize_t)DG_HDR ? n - (ssize_t)DG_HDR : 0;
	}
}

ssize_t rs_dgram_recv(struct rs *rs, const struct iovec *iov, int iovcnt, int flags,
		      struct sockaddr *from, socklen_t *fromlen)
{
	struct rs_dgram *dg = rs->dg;
	struct dg_msg *m;
	size_t done = 0;

	for (;;) {
		dgram_progress(rs);
		if (dg->head)
			break;
		if ((rs->flags & O_NONBLOCK) || (flags & MSG_DONTWAIT))
			return rcm_err(EAGAIN);
		if (!dg->bound)
			return rcm_err(EAGAIN);	/* nothing can come to an unbound socket */
		dgram_wait(rs);
	}
	m = dg->head;
	for (int i = 0; i < iovcnt && done < m->len; i++) {
		size_t n = iov[i].iov_len < m->len - done ? iov[i].iov_len : m->len - done;

		memcpy(iov[i].iov_base, m->data + done, n);
		done += n;
	}
	if (from && fromlen) {
		socklen_t n = addr_len((struct sockaddr *)&m->from);

		if (rs->domain == AF_INET6 && m->from.ss_family == AF_INET) {
			/* a v6 socket sees v4 peers as mapped addresses */
			struct sockaddr_in6 s6 = { .sin6_family = AF_INET6 };
			const struct sockaddr_in *s4 = (const void *)&m->from;

			s6.sin6_port = s4->sin_port;
			s6.sin6_addr.s6_addr[10] = s6.sin6_addr.s6_addr[11] = 0xff;
			memcpy(&s6.sin6_addr.s6_addr[12], &s4->sin_addr, 4);
			memcpy(from, &s6, *fromlen < sizeof(s6) ? *fromlen : sizeof(s6));
			*fromlen = sizeof(s6);
		} else {
			memcpy(from, &m->from, *fromlen < n ? *fromlen : n);
			*fromlen = n;
		}
	}
	if (!(flags & MSG_PEEK)) {
		dg->head = m->next;
		if (!dg->head)
			dg->tail = NULL;
		dg->queued--;
		if (m->ep)
			post_slot(m->ep, m->slot);
		free(m->owned);
		free(m);
	}
	return (ssize_t)done;
}
