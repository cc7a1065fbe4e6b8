// SPDX-License-Identifier: MIT
/*
 * UMR WQEs: the send-queue operation that changes a memory key (PRM "User-Mode Memory
 * Registration"; layouts in kernel-abi/cx4_prm_umr.h). The control segment's imm names the
 * key by its index (the key byte is not compared: a type 2 window is rebound with the key it
 * was allocated with, rdma-core set_bind_wr); the UMR control segment says which fields of
 * the mkey context segment take effect (mkey_mask) and what must hold first (the free state,
 * the QP a window is bound to); inline KLM entries give a window its translation.
 *
 * Who may do what:
 *  - a user QP (RC, UC) binds and invalidates memory windows: KLM keys of its own PD, with
 *    the fields a bind changes (free, key byte, QP, start, length, access) and inline KLMs
 *    naming regions of that PD that cover the window, with local write where the window
 *    grants remote write or atomics ([IBTA] 10.6.7.2: C10-2x, o10-3x);
 *  - the driver's UMR QP (st REG_UMR) also changes regions' PD and access in place (Linux
 *    mlx5r_umr_rereg_pd_access: cx4d's ibv_rereg_mr) and revokes keys (free).
 * Anything else fails the WQE with MW_BIND_ERR (the syndrome mlx5 maps to IBV_WC_MW_BIND_ERR;
 * which syndrome a card reports for the privileged cases is a guess, docs/cx4-model.md).
 * A UMR takes effect when the requester starts the WQE, so every WQE after it sees the new
 * key; nothing goes on the wire.
 */
#include <string.h>

#include "model.h"

#define MASK_ACCESS                                                           \
	(CX4_UMR_MKEY_MASK_LR | CX4_UMR_MKEY_MASK_LW | CX4_UMR_MKEY_MASK_RR | \
	 CX4_UMR_MKEY_MASK_RW | CX4_UMR_MKEY_MASK_A)
/* what a memory-window bind or invalidation may change (rdma-core set_umr_control_seg) */
#define MASK_USER                                                                 \
	(CX4_UMR_MKEY_MASK_FREE | CX4_UMR_MKEY_MASK_KEY | CX4_UMR_MKEY_MASK_QPN | \
	 CX4_UMR_MKEY_MASK_LEN | CX4_UMR_MKEY_MASK_START_ADDR | MASK_ACCESS)
/* and the driver's UMR QP, in addition */
#define MASK_PRIV (MASK_USER | CX4_UMR_MKEY_MASK_PD | CX4_UMR_MKEY_MASK_EN_RINVAL)

static unsigned int mkc_access(const uint8_t *mkc, uint64_t mask, unsigned int cur)
{
	static const struct {
		uint64_t bit;
		cx4_fld_t f;
		unsigned int right;
	} r[] = {
	    {CX4_UMR_MKEY_MASK_LR, CX4_MKC_LR, MKEY_LR},
	    {CX4_UMR_MKEY_MASK_LW, CX4_MKC_LW, MKEY_LW},
	    {CX4_UMR_MKEY_MASK_RR, CX4_MKC_RR, MKEY_RR},
	    {CX4_UMR_MKEY_MASK_RW, CX4_MKC_RW, MKEY_RW},
	    {CX4_UMR_MKEY_MASK_A, CX4_MKC_A, MKEY_A},
	};

	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		if (!(mask & r[i].bit))
			continue;
		if (cx4_get(mkc, r[i].f))
			cur |= r[i].right;
		else
			cur &= ~r[i].right;
	}
	return cur;
}

/*
 * A window's new entries: regions (not windows) of its PD, valid, covering exactly its length,
 * each entry inside its region, with local write where the window grants remote write or
 * atomics. Returns the number of entries, or -1.
 */
static int load_klms(struct mdev *d, const struct mwqe *w, const struct mmkey *nw, struct mklm *out,
		     uint32_t max)
{
	uint64_t total = 0;
	uint32_t n = 0;

	for (uint32_t i = 0; i < w->umr_nklm; i++) {
		const uint8_t *e = w->umr_klm + (size_t)i * CX4_KLM_SIZE;
		uint32_t bc = cx4_get(e, CX4_KLM_BYTE_COUNT), key = cx4_get(e, CX4_KLM_MKEY);
		uint64_t va = cx4_get64(e, CX4_KLM_ADDRESS);
		struct mmkey *t;

		if (!bc)
			continue; /* the padding of a block of four */
		t = cx4m_mkey_get(d, key >> 8);
		if (n == max || !t || t->key != (key & 0xff) || t->free_state ||
		    t->access_mode == CX4_MKC_ACCESS_MODE_KLMS || t->pd != nw->pd ||
		    (!t->length64 &&
		     (va < t->start || va + bc < va || va + bc > t->start + t->len)))
			return -1;
		if ((nw->access & (MKEY_RW | MKEY_A)) && !(t->access & MKEY_LW))
			return -1;
		out[n++] = (struct mklm){.bcount = bc, .mkey = key, .va = va};
		total += bc;
	}
	return total == nw->len ? (int)n : -1;
}

int cx4m_umr_exec(struct mdev *d, struct mqp *qp, const struct mwqe *w)
{
	const uint8_t *uc = w->umr_ctrl, *mkc = w->umr_mkey;
	uint64_t mask = cx4_get64(uc, CX4_UMR_CTRL_MKEY_MASK);
	uint32_t check = cx4_get(uc, CX4_UMR_CTRL_CHECK_FREE_STATE);
	bool priv = qp->st == CX4_QP_ST_REG_UMR;
	struct mmkey *m = cx4m_mkey_get(d, w->umr_key >> 8), nw;
	struct mklm klm[CX4_KLM_PER_BLOCK * 4];
	int nklm = -1;

	if (!m || !m->umr_en || (mask & ~(uint64_t)(priv ? MASK_PRIV : MASK_USER)))
		return MLX5_CQE_SYNDROME_MW_BIND_ERR;
	if (!priv && (m->access_mode != CX4_MKC_ACCESS_MODE_KLMS || m->pd != qp->pd))
		return MLX5_CQE_SYNDROME_MW_BIND_ERR;
	if ((check == CX4_UMR_CHECK_FAIL_IF_NOT_FREE && !m->free_state) ||
	    (check == CX4_UMR_CHECK_FAIL_IF_FREE && m->free_state) || check > 2)
		return MLX5_CQE_SYNDROME_MW_BIND_ERR;
	if (cx4_get(uc, CX4_UMR_CTRL_CHECK_QPN) && m->qpn != qp->qpn)
		return MLX5_CQE_SYNDROME_MW_BIND_ERR;

	/* the key as it will be, checked whole before anything changes */
	nw = *m;
	if (mask & CX4_UMR_MKEY_MASK_FREE)
		nw.free_state = cx4_get(mkc, CX4_MKC_FREE);
	if (mask & CX4_UMR_MKEY_MASK_KEY)
		nw.key = (uint8_t)cx4_get(mkc, CX4_MKC_MKEY_7_0);
	if (mask & CX4_UMR_MKEY_MASK_QPN)
		nw.qpn = cx4_get(mkc, CX4_MKC_QPN);
	if (mask & CX4_UMR_MKEY_MASK_PD)
		nw.pd = cx4_get(mkc, CX4_MKC_PD);
	if (mask & CX4_UMR_MKEY_MASK_START_ADDR)
		nw.start = cx4_get64(mkc, CX4_MKC_START_ADDR);
	if (mask & CX4_UMR_MKEY_MASK_LEN)
		nw.len = cx4_get64(mkc, CX4_MKC_LEN);
	if (mask & CX4_UMR_MKEY_MASK_EN_RINVAL)
		nw.en_rinval = cx4_get(mkc, CX4_MKC_EN_RINVAL);
	nw.access = (uint8_t)mkc_access(mkc, mask, m->access);
	if ((mask & CX4_UMR_MKEY_MASK_PD) && !cx4m_idtab_get(&d->pds, nw.pd))
		return MLX5_CQE_SYNDROME_MW_BIND_ERR;
	/* [IBTA] o9-?: remote write or atomic rights need local write */
	if ((nw.access & (MKEY_RW | MKEY_A)) && !(nw.access & MKEY_LW) &&
	    m->access_mode != CX4_MKC_ACCESS_MODE_KLMS)
		return MLX5_CQE_SYNDROME_MW_BIND_ERR;
	if (w->umr_nklm) {
		/* a translation: KLM entries for a window; MTT updates are not modelled */
		if (m->access_mode != CX4_MKC_ACCESS_MODE_KLMS ||
		    cx4_get(uc, CX4_UMR_CTRL_XLT_OFFSET))
			return MLX5_CQE_SYNDROME_MW_BIND_ERR;
		nklm = load_klms(d, w, &nw, klm,
				 m->max_klm < sizeof(klm) / sizeof(klm[0])
				     ? m->max_klm
				     : (uint32_t)(sizeof(klm) / sizeof(klm[0])));
		if (nklm < 0)
			return MLX5_CQE_SYNDROME_MW_BIND_ERR;
	}
	/* a valid window needs a translation that covers it: new entries, or the ones it has */
	if (m->access_mode == CX4_MKC_ACCESS_MODE_KLMS && !nw.free_state && nklm < 0 &&
	    (!m->nklm || (mask & (CX4_UMR_MKEY_MASK_LEN | CX4_UMR_MKEY_MASK_START_ADDR))))
		return MLX5_CQE_SYNDROME_MW_BIND_ERR;

	m->free_state = nw.free_state;
	m->key = nw.key;
	m->qpn = nw.qpn;
	m->pd = nw.pd;
	m->start = nw.start;
	m->len = nw.len;
	m->en_rinval = nw.en_rinval;
	m->access = nw.access;
	if (nklm >= 0) {
		memcpy(m->klm, klm, (size_t)nklm * sizeof(klm[0]));
		m->nklm = (uint32_t)nklm;
	}
	if (m->free_state && m->access_mode == CX4_MKC_ACCESS_MODE_KLMS)
		m->nklm = 0; /* an invalidated window forgets its translation */
	cx4m_mkey_sync_icm(d, m);
	return 0;
}
