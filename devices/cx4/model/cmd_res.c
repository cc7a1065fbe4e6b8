// SPDX-License-Identifier: MIT
/*
 * Small resources ([PRM] "Miscellaneous Commands"): ALLOC_UAR / DEALLOC_UAR, ALLOC_PD /
 * DEALLOC_PD, ALLOC_TRANSPORT_DOMAIN / DEALLOC_TRANSPORT_DOMAIN, QUERY_SPECIAL_CONTEXTS.
 *
 * UAR pages are 4 KB pages of BAR0 handed out from page 16 up (the [trace] FW's first is
 * 0x10). Once allocated, a page's doorbells are live (its posted-write ring is drained);
 * DEALLOC_UAR refuses a page an EQ, CQ or QP still names (resource busy).
 */
#include <string.h>

#include "model.h"

#define OP(x) CX4_CMD_OP_##x
/* Reserved keys: 0 = the reserved lkey (physical = IOVA, QPs with rlky only); 0x100 = the
 * null key, which is also [dv] MLX5_INVALID_LKEY, the receive scatter terminator. */
#define RESD_LKEY 0x0
#define NULL_MKEY 0x100

static int alloc_uar(struct mdev *d, struct mcmd *c)
{
	for (uint32_t u = MDEV_UAR_FIRST; u < MDEV_UAR_PAGES; u++) {
		if (d->uar_used[u])
			continue;
		d->uar_used[u] = 1;
		cx4m_bar0_uar_activate(d, u, true);
		cx4_set(c->out, CX4_ALLOC_UAR_OUT_UAR, u);
		return CX4_CMD_STAT_OK;
	}
	return mcmd_err(c, CX4_CMD_STAT_NO_RES_ERR, MSYND(OP(ALLOC_UAR), 1));
}

static int dealloc_uar(struct mdev *d, struct mcmd *c)
{
	uint32_t u = cx4_get(c->in, CX4_DEALLOC_UAR_IN_UAR);

	if (u < MDEV_UAR_FIRST || u >= MDEV_UAR_PAGES || !d->uar_used[u])
		return mcmd_err(c, CX4_CMD_STAT_BAD_RES_ERR, MSYND(OP(DEALLOC_UAR), 1));
	if (d->uar_used[u] > 1)
		return mcmd_err(c, CX4_CMD_STAT_RES_BUSY, MSYND(OP(DEALLOC_UAR), 2));
	d->uar_used[u] = 0;
	cx4m_bar0_uar_activate(d, u, false);
	return CX4_CMD_STAT_OK;
}

static int alloc_pd(struct mdev *d, struct mcmd *c)
{
	uint32_t pd = cx4m_idtab_alloc(&d->pds, (void *)1);

	if (pd == UINT32_MAX)
		return mcmd_err(c, CX4_CMD_STAT_NO_RES_ERR, MSYND(OP(ALLOC_PD), 1));
	cx4_set(c->out, CX4_ALLOC_PD_OUT_PD, pd);
	return CX4_CMD_STAT_OK;
}

static int dealloc_pd(struct mdev *d, struct mcmd *c)
{
	uint32_t pd = cx4_get(c->in, CX4_DEALLOC_PD_IN_PD);

	if (!cx4m_idtab_get(&d->pds, pd))
		return mcmd_err(c, CX4_CMD_STAT_BAD_RES_ERR, MSYND(OP(DEALLOC_PD), 1));
	cx4m_idtab_remove(&d->pds, pd);
	return CX4_CMD_STAT_OK;
}

static int alloc_td(struct mdev *d, struct mcmd *c)
{
	uint32_t td = cx4m_idtab_alloc(&d->tds, (void *)1);

	if (td == UINT32_MAX)
		return mcmd_err(c, CX4_CMD_STAT_NO_RES_ERR, MSYND(OP(ALLOC_TRANSPORT_DOMAIN), 1));
	cx4_set(c->out, CX4_ALLOC_TRANSPORT_DOMAIN_OUT_TD, td);
	return CX4_CMD_STAT_OK;
}

static int dealloc_td(struct mdev *d, struct mcmd *c)
{
	uint32_t td = cx4_get(c->in, CX4_DEALLOC_TRANSPORT_DOMAIN_IN_TD);

	if (!cx4m_idtab_get(&d->tds, td))
		return mcmd_err(c, CX4_CMD_STAT_BAD_RES_ERR,
				MSYND(OP(DEALLOC_TRANSPORT_DOMAIN), 1));
	cx4m_idtab_remove(&d->tds, td);
	return CX4_CMD_STAT_OK;
}

static int query_special_contexts(struct mdev *d, struct mcmd *c)
{
	(void)d;
	cx4_set(c->out, CX4_QUERY_SPECIAL_CONTEXTS_OUT_DUMP_FILL_MKEY, RESD_LKEY);
	cx4_set(c->out, CX4_QUERY_SPECIAL_CONTEXTS_OUT_RESD_LKEY, RESD_LKEY);
	if (c->olen >= CX4_FLD_END(CX4_QUERY_SPECIAL_CONTEXTS_OUT_NULL_MKEY))
		cx4_set(c->out, CX4_QUERY_SPECIAL_CONTEXTS_OUT_NULL_MKEY, NULL_MKEY);
	return CX4_CMD_STAT_OK;
}

const struct mcmd_desc cx4m_mcmd_res[] = {
    {OP(ALLOC_UAR), MCMD_INIT, CX4_ALLOC_UAR_IN_SIZE, CX4_ALLOC_UAR_OUT_SIZE, alloc_uar},
    {OP(DEALLOC_UAR), MCMD_INIT, CX4_DEALLOC_UAR_IN_SIZE, CX4_DEALLOC_UAR_OUT_SIZE, dealloc_uar},
    {OP(ALLOC_PD), MCMD_INIT, CX4_ALLOC_PD_IN_SIZE, CX4_ALLOC_PD_OUT_SIZE, alloc_pd},
    {OP(DEALLOC_PD), MCMD_INIT, CX4_DEALLOC_PD_IN_SIZE, CX4_DEALLOC_PD_OUT_SIZE, dealloc_pd},
    {OP(ALLOC_TRANSPORT_DOMAIN), MCMD_INIT, CX4_ALLOC_TRANSPORT_DOMAIN_IN_SIZE,
     CX4_ALLOC_TRANSPORT_DOMAIN_OUT_SIZE, alloc_td},
    {OP(DEALLOC_TRANSPORT_DOMAIN), MCMD_INIT, CX4_DEALLOC_TRANSPORT_DOMAIN_IN_SIZE,
     CX4_DEALLOC_TRANSPORT_DOMAIN_OUT_SIZE, dealloc_td},
    {OP(QUERY_SPECIAL_CONTEXTS), MCMD_INIT, CX4_QUERY_SPECIAL_CONTEXTS_IN_SIZE, 0x10,
     query_special_contexts},
    {0},
};
