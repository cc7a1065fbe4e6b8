// SPDX-License-Identifier: MIT
/*
 * The register operations of ntb.h on the emulated register files: ports, link, memory
 * window translations, scratchpads, message registers, doorbells. Each is a load or store on
 * one side's register file (plus an eventfd write where hardware raises an interrupt).
 */
#include <errno.h>
#include <sched.h>

#include "model.h"

#define NTB_BUS_WINDOW(widx)	((uint64_t)((widx) + 1) << 40)	/* emulated BAR addresses */

bool ntb_link_ok(const struct ntb_side *local, uint32_t epoch, const struct ntb_side *peer,
		 uint32_t peer_epoch)
{
	/*
	 * Our own view, kept by our owner; and the peer's, kept by its owner: if our owner died
	 * (SIGKILL) nobody clears our link_up, but the peer's model saw the cable go.
	 */
	if (!reg_load(&local->regs->link_up) || !peer || !reg_load(&peer->regs->link_up))
		return false;
	if (epoch && reg_load(&local->regs->link_epoch) != epoch)
		return false;
	return !peer_epoch || reg_load(&peer->regs->link_epoch) == peer_epoch;
}

uint32_t ntb_peer_epoch_now(const struct ntb_side *peer)
{
	uint32_t e = reg_load(&peer->regs->link_epoch);

	/* our side is up; if the peer's model has not seen it yet, it will count one more */
	return reg_load(&peer->regs->link_up) ? e : e + 1;
}

static bool link_ok(struct ntb_dev *ntb)
{
	if (ntb->owner)	/* the owner's view is current by construction: no session to match */
		return ntb->peer && reg_load(&ntb->local->regs->link_up);
	return ntb_link_ok(ntb->local, ntb->epoch, ntb->peer, ntb->peer_epoch);
}

static bool peer_ok(struct ntb_dev *ntb)
{
	if (!link_ok(ntb)) {
		reg_inc(&ntb->local->regs->dropped_link);
		return false;
	}
	return true;
}

/* ------------------------------------------------------------------------------------------ */

int ntb_port_number(struct ntb_dev *ntb)
{
	return ntb->prof->port[ntb->side];
}

int ntb_peer_port_count(struct ntb_dev *ntb)
{
	return NTB_DEF_PEER_CNT;
}

int ntb_peer_port_number(struct ntb_dev *ntb, int pidx)
{
	if (pidx != NTB_DEF_PEER_IDX)
		return -EINVAL;
	return ntb->prof->port[!ntb->side];
}

int ntb_peer_port_idx(struct ntb_dev *ntb, int port)
{
	return port == ntb->prof->port[!ntb->side] ? NTB_DEF_PEER_IDX : -EINVAL;
}

uint64_t ntb_link_is_up(struct ntb_dev *ntb, enum ntb_speed *speed, enum ntb_width *width)
{
	struct ntb_regs *r = ntb->local->regs;
	bool up = link_ok(ntb);

	if (speed)
		*speed = up ? (enum ntb_speed)reg_load(&r->speed) : NTB_SPEED_NONE;
	if (width)
		*width = up ? (enum ntb_width)reg_load(&r->width) : NTB_WIDTH_NONE;
	return up ? 1ull << NTB_DEF_PEER_IDX : 0;
}

int ntb_link_enable(struct ntb_dev *ntb, enum ntb_speed max_speed, enum ntb_width max_width)
{
	struct ntb_regs *r;

	if (!ntb->owner)
		return -EPERM;
	r = ntb->local->regs;
	reg_store(&r->speed, (max_speed == NTB_SPEED_AUTO || max_speed <= NTB_SPEED_NONE ||
			      max_speed > ntb->prof->speed) ? ntb->prof->speed : max_speed);
	reg_store(&r->width, (max_width == NTB_WIDTH_AUTO || max_width <= NTB_WIDTH_NONE ||
			      max_width > ntb->prof->width) ? ntb->prof->width : max_width);
	if (reg_load(&r->enabled))
		return 0;
	reg_store(&r->enabled, 1);
	ntb_cable_send_link(ntb);
	ntb_link_update(ntb);
	return 0;
}

int ntb_link_disable(struct ntb_dev *ntb)
{
	if (!ntb->owner)
		return -EPERM;
	if (!reg_load(&ntb->local->regs->enabled))
		return 0;
	reg_store(&ntb->local->regs->enabled, 0);
	reg_store(&ntb->local->regs->enable_gen, reg_load(&ntb->local->regs->enable_gen) + 1);
	ntb_link_update(ntb);		/* our own writes stop here */
	ntb_cable_send_link(ntb);	/* the peer's as soon as its model sees this */
	return 0;
}

/* ------------------------------------------------------------------------------------------
 * Memory windows
 */

static uint64_t xlat_load(struct ntb_xlat *x, uint64_t *size)
{
	uint64_t s, base;

	for (unsigned int tries = 0;; tries++) {
		s = reg_load(&x->seq);
		if (s & 1) {
			/* the owner died in the middle of set_trans: treat as untranslated */
			if (tries > 100000) {
				*size = 0;
				return 0;
			}
			sched_yield();
			continue;
		}
		base = reg_load(&x->base);
		*size = reg_load(&x->size);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (reg_load_relaxed(&x->seq) == s)
			return base;
	}
}

static void xlat_store(struct ntb_xlat *x, uint64_t base, uint64_t size)
{
	uint64_t s = reg_load_relaxed(&x->seq);

	reg_store(&x->seq, s + 1);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	reg_store(&x->base, base);
	reg_store(&x->size, size);
	reg_store(&x->seq, s + 2);
}

int ntb_xlat_read(const struct ntb_profile *p, struct ntb_side *local, struct ntb_side *peer,
		  int widx, uint64_t *base, uint64_t *size)
{
	struct ntb_xlat *x;

	if (widx < 0 || widx >= p->mw_count)
		return -EINVAL;
	if (p->xlat == NTB_XLAT_INBOUND) {
		if (!peer)
			return -ENOTCONN;
		x = &peer->regs->in_mw[widx];
	} else {
		x = &local->regs->out_mw[widx];
	}
	*base = xlat_load(x, size);
	return *size ? 0 : -ENXIO;
}

int ntb_mw_count(struct ntb_dev *ntb, int pidx)
{
	if (pidx != NTB_DEF_PEER_IDX)
		return -EINVAL;
	return ntb->prof->mw_count;
}

int ntb_mw_get_align(struct ntb_dev *ntb, int pidx, int widx, uint64_t *addr_align,
		     uint64_t *size_align, uint64_t *size_max)
{
	if (pidx != NTB_DEF_PEER_IDX || widx < 0 || widx >= ntb->prof->mw_count)
		return -EINVAL;
	/* ntb.h ntb_mw_get_align(): "-ENOTCONN if the link is not up" */
	if (!ntb_link_is_up(ntb, NULL, NULL))
		return -ENOTCONN;
	if (addr_align)
		*addr_align = ntb_profile_addr_align(ntb->prof, ntb->mw_size);
	if (size_align)
		*size_align = ntb->prof->size_align;
	if (size_max)
		*size_max = ntb->mw_size;
	return 0;
}

static int set_trans_common(struct ntb_dev *ntb, int pidx, int widx, uint64_t addr,
			    uint64_t size, enum ntb_xlat_model model)
{
	if (!ntb->owner)
		return -EPERM;
	if (ntb->prof->xlat != model)
		return -EOPNOTSUPP;
	if (pidx != NTB_DEF_PEER_IDX || widx < 0 || widx >= ntb->prof->mw_count)
		return -EINVAL;
	if (addr + size < addr || addr + size > (1ull << NTB_IOVA_BITS))
		return -EINVAL;
	return ntb_profile_check_trans(ntb->prof, ntb->mw_size, addr, size);
}

int ntb_mw_set_trans(struct ntb_dev *ntb, int pidx, int widx, uint64_t addr, uint64_t size)
{
	int err = set_trans_common(ntb, pidx, widx, addr, size, NTB_XLAT_INBOUND);

	if (err)
		return err;
	xlat_store(&ntb->local->regs->in_mw[widx], size ? addr : 0, size);
	return 0;
}

int ntb_mw_clear_trans(struct ntb_dev *ntb, int pidx, int widx)
{
	return ntb_mw_set_trans(ntb, pidx, widx, 0, 0);
}

int ntb_peer_mw_count(struct ntb_dev *ntb)
{
	return ntb->prof->mw_count;
}

int ntb_peer_mw_get_addr(struct ntb_dev *ntb, int widx, uint64_t *base, uint64_t *size)
{
	if (widx < 0 || widx >= ntb->prof->mw_count)
		return -EINVAL;
	if (base)
		*base = NTB_BUS_WINDOW(widx);
	if (size)
		*size = ntb->mw_size;
	return 0;
}

int ntb_peer_mw_set_trans(struct ntb_dev *ntb, int pidx, int widx, uint64_t addr,
			  uint64_t size)
{
	int err = set_trans_common(ntb, pidx, widx, addr, size, NTB_XLAT_OUTBOUND);

	if (err)
		return err;
	xlat_store(&ntb->local->regs->out_mw[widx], size ? addr : 0, size);
	return 0;
}

int ntb_peer_mw_clear_trans(struct ntb_dev *ntb, int pidx, int widx)
{
	return ntb_peer_mw_set_trans(ntb, pidx, widx, 0, 0);
}

/* ------------------------------------------------------------------------------------------
 * Scratchpads
 */

int ntb_spad_count(struct ntb_dev *ntb)
{
	return ntb->prof->spad_count;
}

uint32_t ntb_spad_read(struct ntb_dev *ntb, int sidx)
{
	if (!ntb->owner || sidx < 0 || sidx >= ntb->prof->spad_count)
		return 0;
	return reg_load(&ntb->local->regs->spad[sidx]);
}

int ntb_spad_write(struct ntb_dev *ntb, int sidx, uint32_t val)
{
	if (!ntb->owner)
		return -EPERM;
	if (sidx < 0 || sidx >= ntb->prof->spad_count)
		return -EINVAL;
	reg_store(&ntb->local->regs->spad[sidx], val);
	return 0;
}

int ntb_peer_spad_write(struct ntb_dev *ntb, int pidx, int sidx, uint32_t val)
{
	if (!ntb->owner)
		return -EPERM;
	if (pidx != NTB_DEF_PEER_IDX || sidx < 0 || sidx >= ntb->prof->spad_count)
		return -EINVAL;
	if (peer_ok(ntb))
		reg_store(&ntb->peer->regs->spad[sidx], val);
	return 0;
}

uint32_t ntb_peer_spad_read(struct ntb_dev *ntb, int pidx, int sidx)
{
	if (!ntb->owner || pidx != NTB_DEF_PEER_IDX || sidx < 0 ||
	    sidx >= ntb->prof->spad_count)
		return 0;
	reg_inc(&ntb->local->regs->xlink_reads);
	/* a non-posted read nobody completes: PCIe returns all ones */
	if (!peer_ok(ntb))
		return ~0u;
	return reg_load(&ntb->peer->regs->spad[sidx]);
}

/* ------------------------------------------------------------------------------------------
 * Message registers (IDT semantics, see ntb_hal.h)
 */

int ntb_msg_count(struct ntb_dev *ntb)
{
	return ntb->prof->msg_count;
}

uint64_t ntb_msg_inbits(struct ntb_dev *ntb)
{
	return ((1ull << ntb->prof->msg_count) - 1) << NTB_MSG_IN_SHIFT;
}

uint64_t ntb_msg_outbits(struct ntb_dev *ntb)
{
	return ((1ull << ntb->prof->msg_count) - 1) << NTB_MSG_OUT_SHIFT;
}

static uint64_t msg_valid(struct ntb_dev *ntb)
{
	return ntb_msg_inbits(ntb) | ntb_msg_outbits(ntb);
}

uint64_t ntb_msg_read_sts(struct ntb_dev *ntb)
{
	if (!ntb->owner)
		return 0;
	return reg_load(&ntb->local->regs->msg_sts) & msg_valid(ntb);
}

int ntb_msg_clear_sts(struct ntb_dev *ntb, uint64_t sts_bits)
{
	if (!ntb->owner)
		return -EPERM;
	if (!ntb->prof->msg_count)
		return -EOPNOTSUPP;
	if (sts_bits & ~msg_valid(ntb))
		return -EINVAL;
	reg_andnot(&ntb->local->regs->msg_sts, (uint32_t)sts_bits);
	return 0;
}

int ntb_msg_set_mask(struct ntb_dev *ntb, uint64_t mask_bits)
{
	if (!ntb->owner)
		return -EPERM;
	if (!ntb->prof->msg_count)
		return -EOPNOTSUPP;
	if (mask_bits & ~msg_valid(ntb))
		return -EINVAL;
	reg_or(&ntb->local->regs->msg_mask, (uint32_t)mask_bits);
	return 0;
}

int ntb_msg_clear_mask(struct ntb_dev *ntb, uint64_t mask_bits)
{
	struct ntb_regs *r;

	if (!ntb->owner)
		return -EPERM;
	if (!ntb->prof->msg_count)
		return -EOPNOTSUPP;
	if (mask_bits & ~msg_valid(ntb))
		return -EINVAL;
	r = ntb->local->regs;
	reg_andnot(&r->msg_mask, (uint32_t)mask_bits);
	if (reg_load(&r->msg_sts) & mask_bits)
		ntb_raise(ntb->local->misc_fd);
	return 0;
}

uint32_t ntb_msg_read(struct ntb_dev *ntb, int *pidx, int midx)
{
	struct ntb_regs *r = ntb->local->regs;

	if (!ntb->owner || midx < 0 || midx >= ntb->prof->msg_count)
		return ~0u;
	if (pidx)
		*pidx = ntb_peer_port_idx(ntb, (int)reg_load(&r->msg_src[midx]));
	return reg_load(&r->msg_in[midx]);
}

int ntb_peer_msg_write(struct ntb_dev *ntb, int pidx, int midx, uint32_t msg)
{
	struct ntb_regs *l, *p;
	uint32_t in = 1u << (NTB_MSG_IN_SHIFT + midx);

	if (!ntb->owner)
		return -EPERM;
	if (!ntb->prof->msg_count)
		return -EOPNOTSUPP;
	if (pidx != NTB_DEF_PEER_IDX || midx < 0 || midx >= ntb->prof->msg_count)
		return -EINVAL;
	if (!peer_ok(ntb))
		return 0;
	l = ntb->local->regs;
	p = ntb->peer->regs;
	/*
	 * Only this side's owner writes the peer's inbound registers, so check-then-store does
	 * not race another writer; the receiver only clears the bit.
	 */
	if (reg_load(&p->msg_sts) & in) {
		/* IDT: delivery fails, the sender's outbound status bit is set, msg event */
		reg_or(&l->msg_sts, 1u << (NTB_MSG_OUT_SHIFT + midx));
		if (!(reg_load(&l->msg_mask) & (1u << (NTB_MSG_OUT_SHIFT + midx))))
			ntb_raise(ntb->local->misc_fd);
		return 0;
	}
	reg_store(&p->msg_in[midx], msg);
	reg_store(&p->msg_src[midx], (uint32_t)ntb_port_number(ntb));
	reg_or(&p->msg_sts, in);
	if (!(reg_load(&p->msg_mask) & in))
		ntb_raise(ntb->peer->misc_fd);
	return 0;
}

/* ------------------------------------------------------------------------------------------
 * Doorbells
 */

uint64_t ntb_db_valid_mask(struct ntb_dev *ntb)
{
	return ntb->prof->db_valid_mask;
}

int ntb_db_vector_count(struct ntb_dev *ntb)
{
	return ntb->prof->db_vectors;
}

uint64_t ntb_db_vector_mask(struct ntb_dev *ntb, int db_vector)
{
	return ntb_profile_vector_mask(ntb->prof, db_vector);
}

/* The owner sees every bit but those of vectors it granted to a client; a client its own. */
static uint64_t db_allowed(struct ntb_dev *ntb)
{
	uint64_t given = 0;

	if (!ntb->owner)
		return ntb->g_db_bits;
	for (int v = 0; ntb->vec_given && v < ntb->prof->db_vectors; v++)
		if (ntb->vec_given & (1ull << v))
			given |= ntb_profile_vector_mask(ntb->prof, v);
	return ntb->prof->db_valid_mask & ~given;
}

uint64_t ntb_db_read(struct ntb_dev *ntb)
{
	return reg_load(&ntb->local->regs->db) & db_allowed(ntb);
}

int ntb_db_clear(struct ntb_dev *ntb, uint64_t db_bits)
{
	if (db_bits & ~ntb->prof->db_valid_mask)
		return -EINVAL;
	if (db_bits & ~db_allowed(ntb))
		return -EPERM;
	reg_andnot(&ntb->local->regs->db, db_bits);
	return 0;
}

uint64_t ntb_db_read_mask(struct ntb_dev *ntb)
{
	return reg_load(&ntb->local->regs->db_mask);
}

int ntb_db_set_mask(struct ntb_dev *ntb, uint64_t db_bits)
{
	if (!ntb->owner)
		return -EPERM;
	if (db_bits & ~ntb->prof->db_valid_mask)
		return -EINVAL;
	reg_or(&ntb->local->regs->db_mask, db_bits);
	return 0;
}

int ntb_db_clear_mask(struct ntb_dev *ntb, uint64_t db_bits)
{
	struct ntb_side *l = ntb->local;
	uint64_t pend;

	if (!ntb->owner)
		return -EPERM;
	if (db_bits & ~ntb->prof->db_valid_mask)
		return -EINVAL;
	reg_andnot(&l->regs->db_mask, db_bits);
	/* ntb.h: unmasking a bit that is already set must raise its event */
	pend = reg_load(&l->regs->db) & db_bits;
	for (int v = 0; pend && v < l->nvec; v++)
		if (pend & ntb_profile_vector_mask(ntb->prof, v))
			ntb_raise(l->vec_fd[v]);
	return 0;
}

void ntb_side_db_set(const struct ntb_profile *p, struct ntb_side *local, struct ntb_side *peer,
		     uint64_t bits)
{
	uint64_t old, fresh;

	reg_inc(&local->regs->db_rings);
	old = reg_or(&peer->regs->db, bits);
	/* an interrupt only for bits that were clear and are unmasked (the edge) */
	fresh = bits & ~old & ~reg_load(&peer->regs->db_mask);
	for (int v = 0; fresh && v < peer->nvec; v++) {
		uint64_t vm = ntb_profile_vector_mask(p, v);

		if (fresh & vm) {
			ntb_raise(peer->vec_fd[v]);
			reg_inc(&local->regs->db_irqs);
			fresh &= ~vm;
		}
	}
}

int ntb_peer_db_set(struct ntb_dev *ntb, uint64_t db_bits)
{
	if (db_bits & ~ntb->prof->db_valid_mask)
		return -EINVAL;
	if (!ntb->owner && (db_bits & ~ntb->g_peer_db_bits))
		return -EPERM;
	if (peer_ok(ntb))
		ntb_side_db_set(ntb->prof, ntb->local, ntb->peer, db_bits);
	return 0;
}
