// SPDX-License-Identifier: MIT
/*
 * Publishing this end's verbs objects into the peer's control area (kernel-abi/
 * ntb_verbs_wire.h): stores through our mapping of the peer's window, never loads (a load
 * would be a read across the link). Every value written comes from our own copy. Table entries
 * use a sequence count (odd while changing) so the peer's readers never see half an entry.
 */
#include <errno.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "verbs.h"

static void *at(struct nv_state *s, uint64_t off)
{
	return s->pctrl + off;
}

void nv_publish_header(struct nv_state *s)
{
	struct ntbv_ctrl_hdr *h = at(s, 0);
	struct ntbv_ctrl_hdr v = {
		.version = NTBV_VERSION,
		.side = s->n->d->conf->side,
		.max_slots = s->max_slots,
		.max_qp = NTBV_MAX_QP,
		.max_mr = NTBV_MAX_MR,
		.ring_cells = s->ring_cells,
		.resp_cells = s->resp_cells,
		.mtu = s->mtu,
		.slices_off = s->slices_off,
		.slice_len = s->slice_len,
		.qp_tbl_off = NTBV_CTRL_QP_OFF,
		.mr_tbl_off = (NTBV_CTRL_QP_OFF + NTBV_MAX_QP * sizeof(struct ntbv_qp_ent) + 63) &
			      ~63ull,
		.ipv4 = s->ipv4,
	};

	memcpy(v.gid, s->gid, 16);
	/* everything but the magic, which says "valid" once the rest is there */
	memcpy((uint8_t *)h + sizeof(h->magic), (uint8_t *)&v + sizeof(v.magic),
	       sizeof(v) - sizeof(v.magic));
	atomic_store_explicit(&h->gen, s->peer_gen, memory_order_relaxed);
	atomic_store_explicit(&h->magic, NTBV_MAGIC, memory_order_release);
}

void nv_publish_slot(struct nv_state *s, unsigned int slot)
{
	struct ntbv_slot *e = at(s, NTBV_CTRL_SLOTS_OFF + slot * sizeof(struct ntbv_slot));
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
	struct ntbv_qp_ent *e = at(s, NTBV_CTRL_QP_OFF + index * sizeof(struct ntbv_qp_ent));
	struct nv_qp *q = &s->qps[index];
	uint32_t seq = q->ent.seq;

	seq_write(&e->seq, &seq, (uint8_t *)e + sizeof(e->seq),
		  (const uint8_t *)&q->ent + sizeof(q->ent.seq), sizeof(*e) - sizeof(e->seq));
	q->ent.seq = seq;
}

void nv_publish_mr(struct nv_state *s, uint32_t index)
{
	uint64_t tbl = (NTBV_CTRL_QP_OFF + NTBV_MAX_QP * sizeof(struct ntbv_qp_ent) + 63) & ~63ull;
	struct ntbv_mr_ent *e = at(s, tbl + index * sizeof(struct ntbv_mr_ent));
	struct nv_mr *m = &s->mrs[index];
	struct ntbv_mr_ent v = { 0 };

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
	seq_write(&e->seq, &m->seq, (uint8_t *)e + sizeof(e->seq),
		  (const uint8_t *)&v + sizeof(v.seq), sizeof(*e) - sizeof(e->seq));
}

static bool cells_ok(uint32_t cells)
{
	return cells && !(cells & (cells - 1)) && cells <= (1u << 20);
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
	if (h->version != NTBV_VERSION || h->max_slots > NTBV_MAX_SLOTS ||
	    h->max_qp > NTBV_MAX_QP || h->max_mr > NTBV_MAX_MR ||
	    h->qp_tbl_off < NTBV_CTRL_QP_OFF || h->qp_tbl_off % 8 || h->qp_tbl_off > clen ||
	    (uint64_t)h->max_qp * sizeof(struct ntbv_qp_ent) > clen - h->qp_tbl_off ||
	    h->mr_tbl_off < NTBV_CTRL_QP_OFF || h->mr_tbl_off % 8 || h->mr_tbl_off > clen ||
	    (uint64_t)h->max_mr * sizeof(struct ntbv_mr_ent) > clen - h->mr_tbl_off ||
	    !cells_ok(h->ring_cells) || !cells_ok(h->resp_cells) ||
	    h->slice_len < ntbv_slice_len(h->ring_cells, h->resp_cells) ||
	    h->slices_off > pcs || h->slice_len > pcs ||
	    (uint64_t)h->max_slots * h->slice_len > pcs - h->slices_off)
		return -EPROTO;
	return 0;
}

void nv_clear_peer_pairs(struct nv_state *s, unsigned int slot)
{
	/* the peer's geometry is what its ntbd wrote into our control area */
	struct ntbv_ctrl_hdr h;
	uint64_t pair_len, base;

	if (nv_peer_hdr(s, &h) || slot >= NTBV_MAX_SLOTS)
		return;
	/* within the peer's control region: nv_peer_hdr() checked the slices fit in it */
	pair_len = ntbv_pair_len(h.ring_cells, h.resp_cells);
	for (unsigned int i = 0; i < h.max_slots; i++) {
		base = h.slices_off + i * h.slice_len +
		       ntbv_pair_off(h.ring_cells, h.resp_cells, slot);
		memset((uint8_t *)s->n->link.peer_ctl + base, 0, pair_len);
	}
}

void nv_publish_done(struct nv_state *s)
{
	struct ntbv_ctrl_hdr *h = at(s, 0);

	atomic_store_explicit(&h->gen, ++s->peer_gen, memory_order_release);
	/* the peer's ntbd tells its clients: new peer clients need bells, dead ones cleanup */
	ntb_peer_db_set(s->n->ntb, NTBD_DB_CTL);
}
