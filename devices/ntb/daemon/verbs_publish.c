// SPDX-License-Identifier: MIT
/*
 * Publishing this end's verbs objects (kernel-abi/ntb_verbs_wire.h) into the peer's control
 * area - stores through our mapping of the peer's window, never loads (a load would be a read
 * across the link) - and into our loopback memory's, for requesters of this end. Every value
 * written comes from our own copy. Table entries use a sequence count (odd while changing) so
 * readers never see half an entry. The directory entries of the blocks our clients write go
 * to the reader's memory: the peer's window or our loopback memory.
 */
#include <errno.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "verbs.h"

/* The two control areas we write: the peer's (NULL while the link is not READY), ours. */
static uint8_t *area(struct nv_state *s, int end)
{
	return end == NV_PEER ? s->pctrl : s->lo;
}

static void header(struct nv_state *s, int end)
{
	struct ntbv_ctrl_hdr *h = (struct ntbv_ctrl_hdr *)area(s, end);
	struct ntbv_ctrl_hdr v = {
		.version = NTBV_VERSION,
		.side = s->n->d->conf->side,
		.max_slots = s->max_slots,
		.max_qp = NTBV_MAX_QP,
		.max_mr = NTBV_MAX_MR,
		.mtu = s->mtu,
		.ipv4 = s->ipv4,
		.qp_tbl_off = NTBV_CTRL_QP_OFF,
		.mr_tbl_off = ntbv_ctrl_mr_off(NTBV_MAX_QP),
	};

	memcpy(v.gid, s->gid, 16);
	memcpy(v.gid_ll, s->gid_ll, 16);
	if (end == NV_PEER) {
		/* our window, where the peer's clients and ntbd write */
		v.vbell_off = s->vbell_off;
		v.dir_off = s->dir_off;
		v.dgen_off = s->dgen_off;
		v.pool_off = s->pool_off;
		v.pool_len = s->pool_len;
		v.mem_len = s->n->link.ctl_size;
	} else {
		/* our loopback memory: no vbells (loopback writers write bell eventfds) */
		v.dir_off = s->lo_dir_off;
		v.dgen_off = s->lo_dgen_off;
		v.pool_off = s->lo_pool_off;
		v.pool_len = s->lo_pool_len;
		v.mem_len = s->lo_len;
	}
	/* everything but the magic, which says "valid" once the rest is there */
	memcpy((uint8_t *)h + sizeof(h->magic), (uint8_t *)&v + sizeof(v.magic),
	       sizeof(v) - sizeof(v.magic));
	atomic_store_explicit(&h->gen, end == NV_PEER ? s->peer_gen : s->lo_gen,
			      memory_order_relaxed);
	atomic_store_explicit(&h->magic, NTBV_MAGIC, memory_order_release);
}

void nv_publish_header(struct nv_state *s)
{
	header(s, NV_PEER);
}

void nv_publish_lo_header(struct nv_state *s)
{
	header(s, NV_LOCAL);
}

static void slot_entry(struct nv_state *s, uint8_t *ctrl, unsigned int slot)
{
	struct ntbv_slot *e = (struct ntbv_slot *)(ctrl + NTBV_CTRL_SLOTS_OFF) + slot;
	const struct nv_slot *sl = &s->slots[slot];
	struct ntbv_slot v = { .epoch = sl->epoch };

	if (!(sl->epoch & 1)) {
		/* going away: the epoch first, so nobody starts on a dying slot */
		atomic_store_explicit(&e->epoch, sl->epoch, memory_order_release);
		return;
	}
	v.pid = sl->owner->pid;
	v.grant = sl->owner->grant_id;
	v.db_bit = sl->owner->db_bits ? (uint32_t)__builtin_ctzll(sl->owner->db_bits) : 0;
	memcpy(v.comm, sl->owner->c->comm, sizeof(v.comm));
	memcpy((uint8_t *)e + sizeof(e->epoch), (uint8_t *)&v + sizeof(v.epoch),
	       sizeof(v) - sizeof(v.epoch));
	atomic_store_explicit(&e->epoch, sl->epoch, memory_order_release);
}

void nv_publish_slot(struct nv_state *s, unsigned int slot)
{
	for (int end = 0; end < NV_ENDS; end++)
		if (area(s, end))
			slot_entry(s, area(s, end), slot);
}

static void seq_write(_Atomic uint32_t *seq, uint32_t *mine, void *dst, const void *src,
		      size_t len)
{
	/* dst/src start after the sequence word */
	atomic_store_explicit(seq, ++*mine, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	memcpy(dst, src, len);
	atomic_store_explicit(seq, ++*mine, memory_order_release);
}

void nv_publish_qp(struct nv_state *s, uint32_t index)
{
	struct nv_qp *q = &s->qps[index];
	uint32_t seq = q->ent.seq;

	/* both copies go through the same sequence counts: one stays our copy's */
	for (int end = 0; end < NV_ENDS; end++) {
		struct ntbv_qp_ent *e;

		if (!area(s, end))
			continue;
		e = (struct ntbv_qp_ent *)(area(s, end) + NTBV_CTRL_QP_OFF) + index;
		seq = q->ent.seq;
		seq_write(&e->seq, &seq, (uint8_t *)e + sizeof(e->seq),
			  (const uint8_t *)&q->ent + sizeof(q->ent.seq),
			  sizeof(*e) - sizeof(e->seq));
	}
	q->ent.seq = seq;
}

void nv_publish_mr(struct nv_state *s, uint32_t index)
{
	struct nv_mr *m = &s->mrs[index];
	struct ntbv_mr_ent v = { 0 };
	uint32_t seq = m->seq;

	if (m->owner && (m->access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				      IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_LOCAL_WRITE))) {
		v.rkey = m->key;
		v.pd = m->pd;
		v.access = m->access;
		v.slot = m->owner->slot;
		v.slot_epoch = s->slots[m->owner->slot].epoch;
		v.hca_va = m->hca_va;
		v.length = m->length;
		v.win_off = m->win_off;
	}
	for (int end = 0; end < NV_ENDS; end++) {
		struct ntbv_mr_ent *e;

		if (!area(s, end))
			continue;
		e = (struct ntbv_mr_ent *)(area(s, end) + ntbv_ctrl_mr_off(NTBV_MAX_QP)) + index;
		seq = m->seq;
		seq_write(&e->seq, &seq, (uint8_t *)e + sizeof(e->seq),
			  (const uint8_t *)&v + sizeof(v.seq), sizeof(*e) - sizeof(e->seq));
	}
	m->seq = seq;
}

void nv_publish_pair(struct nv_state *s, int end, unsigned int w, unsigned int r,
		     const struct nv_pair *pr)
{
	struct ntbv_pair_ent v = { 0 }, *e;
	struct ntbv_dgen *g;
	uint8_t *mem;
	uint32_t seq = pr->seq;

	if (end == NV_PEER) {
		/* the peer's directory, in its window (nv_peer_hdr checked where it lies) */
		if (!s->pctrl || !s->peer_pool_ready)
			return;
		mem = s->n->link.peer_ctl;
		e = (struct ntbv_pair_ent *)(mem + s->peer_dir_off) + (uint64_t)r * s->peer_dir_slots +
		    w;
		g = (struct ntbv_dgen *)(mem + s->peer_dgen_off) + r;
	} else {
		mem = s->lo;
		e = (struct ntbv_pair_ent *)(mem + s->lo_dir_off) + (uint64_t)r * s->max_slots + w;
		g = (struct ntbv_dgen *)(mem + s->lo_dgen_off) + r;
	}
	if (pr->state != NV_PAIR_FREE) {
		v.w_epoch = pr->w_epoch;
		v.r_epoch = pr->r_epoch;
		v.req_cells = pr->req_cells;
		v.resp_cells = pr->resp_cells;
		v.off = pr->off;
	}
	seq_write(&e->seq, &seq, (uint8_t *)e + sizeof(e->seq), (const uint8_t *)&v + sizeof(v.seq),
		  sizeof(*e) - sizeof(e->seq));
	((struct nv_pair *)pr)->seq = seq;
	/* the reader looks at its directory row again when this moves */
	atomic_store_explicit(&g->gen, ++s->dgen[end][r], memory_order_release);
}

/* [off, off + len) lies inside [0, total), page aligned when page is set. */
static bool within(uint64_t off, uint64_t len, uint64_t total, bool page)
{
	return off <= total && len <= total - off && (!page || !(off % NTBV_PAGE));
}

int nv_peer_hdr(struct nv_state *s, struct ntbv_ctrl_hdr *h)
{
	const struct ntbv_ctrl_hdr *ph =
		(const struct ntbv_ctrl_hdr *)((uint8_t *)s->n->link.ctl + s->ctrl_off);
	uint64_t clen = ntbv_ctrl_len(NTBV_MAX_QP, NTBV_MAX_MR), pcs = s->n->link.peer_ctl_size;

	if (!s->ready || atomic_load_explicit(&ph->magic, memory_order_acquire) != NTBV_MAGIC)
		return -EAGAIN;
	/* one copy; every check and every use below is of the copy */
	memcpy((void *)h, (const void *)ph, sizeof(*h));
	if (h->version != NTBV_VERSION || !h->max_slots || h->max_slots > NTBV_MAX_SLOTS ||
	    h->max_qp > NTBV_MAX_QP || h->max_mr > NTBV_MAX_MR ||
	    h->qp_tbl_off < NTBV_CTRL_QP_OFF || h->qp_tbl_off % 8 || h->qp_tbl_off > clen ||
	    (uint64_t)h->max_qp * sizeof(struct ntbv_qp_ent) > clen - h->qp_tbl_off ||
	    h->mr_tbl_off < NTBV_CTRL_QP_OFF || h->mr_tbl_off % 8 || h->mr_tbl_off > clen ||
	    (uint64_t)h->max_mr * sizeof(struct ntbv_mr_ent) > clen - h->mr_tbl_off ||
	    h->mem_len != pcs ||
	    !within(h->vbell_off, (uint64_t)h->max_slots * sizeof(struct ntbv_vbell), pcs, false) ||
	    h->vbell_off % NTBV_CELL ||
	    !within(h->dir_off, (uint64_t)h->max_slots * h->max_slots *
					sizeof(struct ntbv_pair_ent), pcs, false) ||
	    h->dir_off % 8 ||
	    !within(h->dgen_off, (uint64_t)h->max_slots * sizeof(struct ntbv_dgen), pcs, false) ||
	    h->dgen_off % 8 || !within(h->pool_off, h->pool_len, pcs, true) ||
	    h->pool_len % NTBV_PAGE)
		return -EPROTO;
	return 0;
}

void nv_publish_done(struct nv_state *s)
{
	struct ntbv_ctrl_hdr *lh = (struct ntbv_ctrl_hdr *)s->lo;

	/* our own clients look at the loopback control area's generation */
	atomic_store_explicit(&lh->gen, ++s->lo_gen, memory_order_release);
	if (!s->pctrl)
		return;
	atomic_store_explicit(&((struct ntbv_ctrl_hdr *)s->pctrl)->gen, ++s->peer_gen,
			      memory_order_release);
	/* the peer's ntbd tells its clients: new peer clients need bells, dead ones cleanup */
	ntb_peer_db_set(s->n->ntb, NTBD_DB_CTL);
}
