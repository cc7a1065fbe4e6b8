// SPDX-License-Identifier: MIT
/*
 * The connection manager's transport on ntb (link_cm.h): MADs to the peer go into the ring
 * in its control region and ring its doorbell; MADs from it are taken from ours when our
 * doorbell rings; MADs to one of our own GIDs (rdma_cm loopback on this end) go round through
 * a local queue, so the CM never runs inside itself. A MAD that finds no slot waits in a
 * queue here until the peer made room; the link going down drops what waits (the CM's
 * retries and bvd_cm_port_change() take it from there).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "bvd_attr.h"
#include "bvd_cm.h"
#include "link_cm.h"
#include "ntbd.h"

struct cm_mad {
	struct cm_mad *next;
	struct ntbd_cm_slot s;
};

struct ntbd_cm {
	bool up;
	uint32_t prod;			/* slots we filled in the peer's ring */
	uint32_t cons;			/* slots we emptied in ours */
	struct cm_mad *out, *out_tail;	/* waiting for slots in the peer's ring */
	struct cm_mad *loop, *loop_tail;	/* to ourselves */
	int loop_fd;
	uint64_t tx, rx, queued, dropped;
};

static struct ntbd_cm_ring *our_ring(struct ntbd *n)
{
	return (struct ntbd_cm_ring *)((uint8_t *)n->link.ctl + NTBD_CM_RING_OFF);
}

static struct ntbd_cm_ring *peer_ring(struct ntbd *n)
{
	return (struct ntbd_cm_ring *)((uint8_t *)n->link.peer_ctl + NTBD_CM_RING_OFF);
}

static void free_list(struct cm_mad **head, struct cm_mad **tail)
{
	while (*head) {
		struct cm_mad *m = *head;

		*head = m->next;
		free(m);
	}
	*tail = NULL;
}

/* Fill the peer's ring from what waits; ring its doorbell if anything went. */
static void flush(struct ntbd *n)
{
	struct ntbd_cm *c = n->cm;
	struct ntbd_cm_ring *mine = our_ring(n), *pr = peer_ring(n);
	bool sent = false;

	for (;;) {
		while (c->out && c->prod - atomic_load_explicit(&mine->cons, memory_order_acquire) <
					 NTBD_CM_SLOTS) {
			struct cm_mad *m = c->out;

			memcpy(&pr->slot[c->prod % NTBD_CM_SLOTS], &m->s, sizeof(m->s));
			c->prod++;
			c->out = m->next;
			if (!c->out)
				c->out_tail = NULL;
			free(m);
			sent = true;
			c->tx++;
		}
		if (!c->out) {
			atomic_store_explicit(&pr->want_room, 0, memory_order_relaxed);
			break;
		}
		/* say we wait, then look again: the peer may have made room meanwhile */
		atomic_store_explicit(&pr->want_room, 1, memory_order_seq_cst);
		if (c->prod - atomic_load_explicit(&mine->cons, memory_order_seq_cst) >=
		    NTBD_CM_SLOTS)
			break;
	}
	if (sent) {
		ntb_pio_wmb();	/* the slots before the count that publishes them */
		atomic_store_explicit(&pr->prod, c->prod, memory_order_release);
		ntb_pio_wmb();
		ntb_peer_db_set(n->ntb, NTBD_DB_CTL);
	}
}

/* Take what the peer wrote; say so, and wake it if it waits for room. */
static void drain(struct ntbd *n)
{
	struct ntbd_cm *c = n->cm;
	struct ntbd_cm_ring *mine = our_ring(n), *pr = peer_ring(n);
	struct ntbd_cm_slot got[NTBD_CM_SLOTS];
	uint32_t prod, k = 0;

	if (atomic_load_explicit(&mine->epoch, memory_order_acquire) != n->link.peer_epoch)
		return;	/* the peer has not started this session's ring yet */
	prod = atomic_load_explicit(&mine->prod, memory_order_acquire);
	/* a count that runs ahead of the ring is not the peer's: take what can be true */
	if (prod - c->cons > NTBD_CM_SLOTS)
		c->cons = prod - NTBD_CM_SLOTS;
	while (c->cons != prod) {
		memcpy(&got[k++], &mine->slot[c->cons % NTBD_CM_SLOTS], sizeof(got[0]));
		c->cons++;
	}
	if (!k)
		return;
	atomic_store_explicit(&pr->cons, c->cons, memory_order_release);
	if (atomic_load_explicit(&mine->want_room, memory_order_seq_cst)) {
		ntb_pio_wmb();
		ntb_peer_db_set(n->ntb, NTBD_DB_CTL);
	}
	for (uint32_t i = 0; i < k; i++) {
		struct bvd_cm_rx rx = {
			.src_qpn = 1, .pkey = 0xffff, .hop_limit = 64, .mad = got[i].mad,
			.len = got[i].len < NTBD_CM_MAD ? got[i].len : NTBD_CM_MAD,
		};

		memcpy(rx.sgid, got[i].sgid, 16);
		memcpy(rx.dgid, got[i].dgid, 16);
		c->rx++;
		bvd_cm_recv(n->d, &rx);
		if (!n->cm->up)
			break;	/* the link went down under a handler */
	}
}

void ntbd_cm_doorbell(struct ntbd *n)
{
	if (!n->cm || !n->cm->up)
		return;
	drain(n);
	if (n->cm->up && n->cm->out)
		flush(n);
}

static void loop_readable(struct bvd *d, int fd, uint32_t events, void *arg)
{
	struct ntbd *n = arg;
	struct ntbd_cm *c = n->cm;
	struct cm_mad *m;
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0)
		v = 0;
	/* one MAD per pass of the loop: what it sends back waits for the next */
	while ((m = c->loop)) {
		struct bvd_cm_rx rx = { .src_qpn = 1, .pkey = 0xffff, .hop_limit = 64,
					.mad = m->s.mad, .len = m->s.len };

		c->loop = m->next;
		if (!c->loop)
			c->loop_tail = NULL;
		memcpy(rx.sgid, m->s.sgid, 16);
		memcpy(rx.dgid, m->s.dgid, 16);
		c->rx++;
		bvd_cm_recv(d, &rx);
		free(m);
	}
}

void ntbd_cm_link_ready(struct ntbd *n)
{
	struct ntbd_cm *c = n->cm;
	struct ntbd_cm_ring *pr;

	if (!c)
		return;
	c->prod = c->cons = 0;
	free_list(&c->out, &c->out_tail);
	/* our ring in the peer's region, for this session: counts first, the epoch last */
	pr = peer_ring(n);
	atomic_store_explicit(&pr->prod, 0, memory_order_relaxed);
	atomic_store_explicit(&pr->cons, 0, memory_order_relaxed);
	atomic_store_explicit(&pr->want_room, 0, memory_order_relaxed);
	ntb_pio_wmb();
	atomic_store_explicit(&pr->epoch, n->link.epoch, memory_order_release);
	c->up = true;
	bvd_cm_port_change(n->d, true);
	drain(n);	/* what the peer sent before our ring was ready */
}

void ntbd_cm_link_lost(struct ntbd *n)
{
	struct ntbd_cm *c = n->cm;

	if (!c || !c->up)
		return;
	c->up = false;
	free_list(&c->out, &c->out_tail);
	free_list(&c->loop, &c->loop_tail);
	bvd_cm_port_change(n->d, false);
}

int ntbd_cm_init(struct ntbd *n)
{
	struct ntbd_cm *c = calloc(1, sizeof(*c));
	int err;

	if (!c)
		return -ENOMEM;
	c->loop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->loop_fd < 0) {
		free(c);
		return -errno;
	}
	err = bvd_watch_fd(n->d, c->loop_fd, loop_readable, n);
	if (err) {
		close(c->loop_fd);
		free(c);
		return err;
	}
	n->cm = c;
	return 0;
}

void ntbd_cm_fini(struct ntbd *n)
{
	struct ntbd_cm *c = n->cm;

	if (!c)
		return;
	free_list(&c->out, &c->out_tail);
	free_list(&c->loop, &c->loop_tail);
	bvd_unwatch_fd(n->d, c->loop_fd);
	close(c->loop_fd);
	free(c);
	n->cm = NULL;
}

/* ---- the transport ----------------------------------------------------------------------------- */

static int cm_port(struct bvd *d, struct bvd_cm_port *p)
{
	struct ntbd *n = d->priv;
	struct bv_port_attr pa;

	memset(p, 0, sizeof(*p));
	p->active = n->cm && n->cm->up && ntbd_link_ready(n);
	/* the GID table bvctl writes for every kind: 1 link-local v2, 3 IPv4 v2 */
	bv_dev_gid_ipv4(d->conf, p->gid);
	p->gid_index = 3;
	bv_dev_gid_link_local(d->conf, p->gid6);
	p->gid6_index = 1;
	bvd_default_port_attr(d->conf, &pa);
	p->mtu = (uint8_t)pa.active_mtu;
	p->ack_delay = 16;		/* bvd_default_device_attr's local_ca_ack_delay */
	p->max_rd_atomic = 16;		/* the provider's NTB_MAX_RD_ATOMIC */
	p->ca_guid = bv_dev_node_guid(d->conf);
	return 0;
}

static int cm_send(struct bvd *d, const struct bvd_cm_av *av, const void *mad, size_t len)
{
	struct ntbd *n = d->priv;
	struct ntbd_cm *c = n->cm;
	struct cm_mad *m;
	uint8_t gid[16], gid6[16];
	bool self;

	if (!c || !c->up)
		return ENETDOWN;
	if (len > NTBD_CM_MAD)
		return EINVAL;
	bv_dev_gid_ipv4(d->conf, gid);
	bv_dev_gid_link_local(d->conf, gid6);
	self = !memcmp(av->dgid, gid, 16) || !memcmp(av->dgid, gid6, 16);
	m = calloc(1, sizeof(*m));
	if (!m)
		return ENOMEM;
	/* the "GRH": who sends (our GID of the same family) and whom it addressed */
	memcpy(m->s.sgid, av->sgid_index == 1 ? gid6 : gid, 16);
	memcpy(m->s.dgid, av->dgid, 16);
	m->s.len = (uint32_t)len;
	memcpy(m->s.mad, mad, len);
	if (self) {
		static const uint64_t one = 1;

		if (c->loop_tail)
			c->loop_tail->next = m;
		else
			c->loop = m;
		c->loop_tail = m;
		c->tx++;
		return write(c->loop_fd, &one, sizeof(one)) == sizeof(one) ? 0 : errno;
	}
	/* a point-to-point link: anything not ours is the peer's to answer or drop */
	if (c->out_tail)
		c->out_tail->next = m;
	else
		c->out = m;
	c->out_tail = m;
	c->queued++;
	flush(n);
	return 0;
}

const struct bvd_cm_transport ntbd_cm_transport = {
	.name = "ntb link control channel",
	.port = cm_port,
	.send = cm_send,
};
