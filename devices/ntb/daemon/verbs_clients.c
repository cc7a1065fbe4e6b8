// SPDX-License-Identifier: MIT
/*
 * Client slots: how ntbd splits its end among verbs clients (processes). A client that
 * attaches gets a slot, the slot's bell (an eventfd ntbd writes when the shared doorbell rang
 * for it, and loopback writers write), a doorbell vector of its own when the profile has one
 * to spare, a HAL grant (the peer's window for stores, the peer's doorbell bits, DMA) and the
 * loopback memory. The blocks other clients write for it appear in its directory as they are
 * opened (verbs_pairs.c). When a client goes away - however it goes - its slot dies for
 * everyone (epoch) and is reused last; its blocks retire, so its readers still take in what it
 * sent before it went.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "verbs.h"

static int pick_slot(struct nv_state *s)
{
	int best = -1;

	for (unsigned int i = 0; i < s->max_slots; i++) {
		if (s->slots[i].epoch & 1)
			continue;
		/* the one given back longest ago: stale writes for it have long drained */
		if (best < 0 || s->slots[i].freed_ns < s->slots[best].freed_ns)
			best = (int)i;
	}
	return best;
}

/* A whole doorbell vector without the control bit, not given to anyone: the client's own. */
static uint64_t pick_vector(struct nv_state *s, struct nv_client *cl)
{
	struct ntb_dev *ntb = s->n->ntb;
	int nvec = ntb_db_vector_count(ntb);
	uint64_t valid = ntb_db_valid_mask(ntb);

	for (int v = 0; v < nvec && v < 32; v++) {
		uint64_t m = ntb_db_vector_mask(ntb, v) & valid;

		if (!m || (m & NTBD_DB_CTL) || (s->vector_owner_mask & (1u << v)))
			continue;
		s->vector_owner_mask |= 1u << v;
		return m;
	}
	return 0;
}

static void give_back_vector(struct nv_state *s, uint64_t bits)
{
	struct ntb_dev *ntb = s->n->ntb;

	for (int v = 0; v < ntb_db_vector_count(ntb) && v < 32; v++)
		if (ntb_db_vector_mask(ntb, v) & bits)
			s->vector_owner_mask &= ~(1u << v);
}

static pid_t peer_pid(struct bvd_client *c)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	/* the kernel's word, not the client's */
	if (!getsockopt(c->sock, SOL_SOCKET, SO_PEERCRED, &cred, &len))
		return cred.pid;
	return c->pid;
}

void nv_attach(struct nv_state *s, struct nv_client *cl, const void *in, size_t len,
	       struct bvd_reply *r)
{
	const struct ntb_attach_req *req = in;
	struct ntb_attach_rsp *rsp = r->payload;
	struct ntb_grant g = { 0 };
	struct ntbv_ctrl_hdr ph;
	struct nv_slot *sl;
	int slot, gfd, ctl = -1, ret;

	if (len != sizeof(*req) || req->version != NTB_PROTO_VERSION) {
		r->status = EPROTO;
		return;
	}
	if (cl->attached) {
		r->status = EALREADY;
		return;
	}
	if (!s->ready) {
		r->status = ENOLINK;
		return;
	}
	/*
	 * The peer's ntbd writes its half of the plan when its link comes up: nearly now
	 * (EAGAIN: the provider asks again); EPROTO if what it wrote makes no sense.
	 */
	ret = nv_peer_hdr(s, &ph);
	if (ret) {
		r->status = -ret;
		return;
	}
	slot = pick_slot(s);
	if (slot < 0) {
		bvd_log(s->n->d, "client %u: all %u verbs slots are in use", cl->c->id,
			s->max_slots);
		r->status = EBUSY;
		return;
	}
	sl = &s->slots[slot];
	cl->pid = peer_pid(cl->c);
	sl->bell_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (sl->bell_fd < 0) {
		r->status = errno;
		return;
	}
	cl->db_bits = pick_vector(s, cl);
	g.db_bits = cl->db_bits;
	g.peer_db_bits = ntb_db_valid_mask(s->n->ntb);
	g.peer_mw_mask = 1;
	g.flags = NTB_GRANT_DMA;
	gfd = ntb_grant_export(s->n->ntb, &g, &cl->grant_id);
	if (gfd < 0) {
		bvd_log(s->n->d, "client %u: grant: %s", cl->c->id, strerror(-gfd));
		give_back_vector(s, cl->db_bits);
		cl->db_bits = 0;
		close(sl->bell_fd);
		sl->bell_fd = -1;
		r->status = -gfd;
		return;
	}
	cl->granted = true;
	ctl = fcntl(s->n->link.ctl_fd, F_DUPFD_CLOEXEC, 0);
	r->fds[0] = ctl;
	r->fds[1] = gfd;
	r->fds[2] = fcntl(sl->bell_fd, F_DUPFD_CLOEXEC, 0);
	r->fds[3] = fcntl(s->lo_fd, F_DUPFD_CLOEXEC, 0);
	r->nfds = 4;
	if (ctl < 0 || r->fds[2] < 0 || r->fds[3] < 0) {
		for (int i = 0; i < 4; i++)
			if (r->fds[i] >= 0)
				close(r->fds[i]);
		r->nfds = 0;
		ntb_grant_revoke(s->n->ntb, cl->grant_id);
		cl->granted = false;
		give_back_vector(s, cl->db_bits);
		cl->db_bits = 0;
		close(sl->bell_fd);
		sl->bell_fd = -1;
		r->status = EMFILE;
		return;
	}

	cl->slot = slot;
	cl->attached = true;
	sl->owner = cl;
	/* a fresh vbell word; its directory row is the peer's ntbd's and ours to write */
	atomic_store_explicit(&((struct ntbv_vbell *)((uint8_t *)s->n->link.ctl + s->vbell_off) +
				slot)->vbell, 0, memory_order_relaxed);
	sl->epoch++;		/* odd: in use */
	nv_publish_slot(s, slot);
	nv_publish_done(s);

	memset(rsp, 0, sizeof(*rsp));
	rsp->version = NTB_PROTO_VERSION;
	rsp->side = s->n->d->conf->side;
	rsp->slot = slot;
	rsp->slot_epoch = sl->epoch;
	rsp->max_slots = s->max_slots;
	rsp->mtu = s->mtu;
	rsp->max_qp = NTBV_MAX_QP;
	rsp->max_mr = NTBV_MAX_MR;
	rsp->ipv4 = s->ipv4;
	rsp->db_bits = cl->db_bits;
	rsp->win_len = s->n->link.ctl_size;
	rsp->ctrl_off = s->ctrl_off;
	rsp->win_vbell_off = s->vbell_off;
	rsp->win_dir_off = s->dir_off;
	rsp->win_dgen_off = s->dgen_off;
	rsp->win_pool_off = s->pool_off;
	rsp->win_pool_len = s->pool_len;
	rsp->lo_len = s->lo_len;
	rsp->lo_dir_off = s->lo_dir_off;
	rsp->lo_dgen_off = s->lo_dgen_off;
	rsp->lo_pool_off = s->lo_pool_off;
	rsp->lo_pool_len = s->lo_pool_len;
	r->len = sizeof(*rsp);
	bvd_log(s->n->d, "client %u (pid %d) attached: slot %d epoch %u, %s", cl->c->id,
		(int)cl->pid, slot, sl->epoch, cl->db_bits ? "own doorbell vector" :
							     "doorbell relayed by ntbd");
}

void nv_client_gone(struct nv_state *s, struct nv_client *cl)
{
	nv_free_client_qps(s, cl);
	nv_free_client_mrs(s, cl);
	for (uint32_t i = 0; s->pds && cl->npds && i < NV_MAX_PD; i++)
		if (s->pds[i].owner == cl) {
			s->pds[i] = (struct nv_pd){ 0 };
			cl->npds--;
		}
	if (cl->attached) {
		struct nv_slot *sl = &s->slots[cl->slot];

		sl->epoch++;	/* even: gone */
		sl->owner = NULL;
		sl->freed_ns = nv_now();
		/*
		 * What it already wrote into its readers' blocks stays there: they drain the
		 * messages a client sent before it exited (a datagram is complete once sent).
		 * The blocks retire and go back to their pools after a grace.
		 */
		nv_pairs_client_gone(s, cl->slot);
		nv_publish_slot(s, cl->slot);
		nv_publish_done(s);
		close(sl->bell_fd);
		sl->bell_fd = -1;
		cl->attached = false;
	}
	if (cl->granted)
		ntb_grant_revoke(s->n->ntb, cl->grant_id);
	cl->granted = false;
	give_back_vector(s, cl->db_bits);
	cl->db_bits = 0;
}

/*
 * The shared doorbell rang: a peer client wants one of ours to look (it set that client's
 * vbell word first), or the peer's ntbd changed its tables (new or departed clients: every
 * client re-arms its bells for them).
 */
void nv_relay(struct nv_state *s, bool all)
{
	static const uint64_t one = 1;

	for (struct nv_client *cl = s->clients; cl; cl = cl->next) {
		const struct ntbv_vbell *h;
		int fd = s->slots[cl->slot].bell_fd;

		if (!cl->attached || fd < 0)
			continue;
		h = (const struct ntbv_vbell *)((uint8_t *)s->n->link.ctl + s->vbell_off) + cl->slot;
		if (all || atomic_load_explicit(&h->vbell, memory_order_acquire)) {
			ssize_t w = write(fd, &one, sizeof(one));

			(void)w;
		}
	}
}

/*
 * Is (pid, grant) a client the peer's ntbd lists as alive? Its slot table is in our window
 * (all NTBV_MAX_SLOTS entries are: the count is not the peer's word).
 */
static bool peer_client_alive(void *arg, pid_t pid, uint32_t grant)
{
	struct nv_state *s = arg;
	const uint8_t *pc = (const uint8_t *)s->n->link.ctl + s->ctrl_off;
	const struct ntbv_slot *sl = (const struct ntbv_slot *)(pc + NTBV_CTRL_SLOTS_OFF);

	for (uint32_t i = 0; i < NTBV_MAX_SLOTS; i++) {
		uint32_t e = atomic_load_explicit(&sl[i].epoch, memory_order_acquire);

		if ((e & 1) && sl[i].pid == (uint32_t)pid && sl[i].grant == grant)
			return true;
	}
	return false;
}

/*
 * A peer client's DMA channel holds an engine slot of our IOMMU for as long as it exists; a
 * killed client never gives it back (there are 128). Its ntbd publishes that the client left
 * (the slot epoch in the table it writes into our window, then the control doorbell): take
 * the slot back. Live processes keep a revoked slot until they exit (their engine no longer
 * writes); we look again on the next doorbell or link tick.
 */
void nv_reclaim_engines(struct nv_state *s)
{
	struct ntbv_ctrl_hdr ph;
	int held;

	if (!s->ready)
		return;
	/* without the peer's (current, sane) table, only slots of exited processes are freed */
	if (nv_peer_hdr(s, &ph))
		held = ntb_iommu_engines_reclaim(s->n->ntb, NULL, NULL);
	else
		held = ntb_iommu_engines_reclaim(s->n->ntb, peer_client_alive, s);
	s->engines_held = held > 0 ? (unsigned int)held : 0;
}
