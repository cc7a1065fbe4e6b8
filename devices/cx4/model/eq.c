// SPDX-License-Identifier: MIT
/*
 * Event queues ([PRM] "Event Queues"; [ifc] eqc, create_eq_in; [dev.h] mlx5_eqe; research
 * note 3.6): CREATE_EQ, DESTROY_EQ, QUERY_EQ, the EQ doorbells and interrupts.
 *
 * An EQ is a ring of 64-byte EQEs in host memory. The device writes an EQE with the owner
 * bit = (producer >> log_eq_size) & 1 (software initialises every owner bit to 1, so the
 * first pass writes 0), the owner byte last. If the EQ is armed, the EQE also raises its
 * MSI-X vector (an eventfd write, at the end of the engine pass) and disarms the EQ; the
 * driver re-arms it through UAR + 0x40 with the consumer index (eqn << 24 | ci). UAR + 0x48
 * updates the consumer index only. An EQ that would overrun (more than 2^log_eq_size
 * unconsumed EQEs) without overrun-ignore is a firmware fatal error, health syndrome 0xC.
 *
 * Events go to the EQ whose event_bitmask selects their type (the lowest EQN when several
 * do); completion events go to the CQ's c_eqn.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model.h"

#define OP(x) CX4_CMD_OP_##x
#define EQN_BASE 0x10 /* the [trace] FW's first EQ is 0x10 */
#define EQN_MAX (256 - EQN_BASE)

struct meq *cx4m_eq_get(struct mdev *d, uint32_t eqn)
{
	return cx4m_idtab_get(&d->eqs, eqn);
}

static void route_one(void *obj, void *ctx)
{
	struct meq *eq = obj;
	struct mdev *d = ctx;

	for (unsigned int t = 0; t < 64; t++)
		if ((eq->mask >> t) & 1)
			if (!d->eq_by_type[t] || d->eq_by_type[t]->eqn > eq->eqn)
				d->eq_by_type[t] = eq;
}

static void reroute(struct mdev *d)
{
	memset(d->eq_by_type, 0, sizeof(d->eq_by_type));
	cx4m_idtab_foreach(&d->eqs, route_one, d);
}

static void post(struct mdev *d, struct meq *eq, uint8_t *eqe)
{
	uint32_t size = 1u << eq->log_size;
	uint64_t off = (uint64_t)(eq->pi & (size - 1)) * CX4_EQE_SIZE;
	uint8_t *p;

	if (d->fatal)
		return;
	if (eq->pi - eq->ci >= size && !eq->oi) {
		cx4m_mdev_log(d, "EQ 0x%x overrun (pi %u ci %u)", eq->eqn, eq->pi, eq->ci);
		cx4m_bar0_health_fatal(d, CX4_HEALTH_SYND_ASYNC_EQ_OVERRUN_ERR);
		return;
	}
	eqe[CX4_EQE_OWNER_BYTE] = (uint8_t)((eq->pi >> eq->log_size) & 1);
	p = cx4m_dbuf_ptr(d, &eq->buf, off, CX4_EQE_SIZE, CX4_DMA_WRITE);
	if (p) {
		memcpy(p, eqe, CX4_EQE_SIZE - 1);
		atomic_thread_fence(memory_order_release);
		((volatile uint8_t *)p)[CX4_EQE_OWNER_BYTE] = eqe[CX4_EQE_OWNER_BYTE];
	} else if (cx4m_dbuf_write(d, &eq->buf, off, eqe, CX4_EQE_SIZE - 1) ||
		   cx4m_dbuf_write(d, &eq->buf, off + CX4_EQE_OWNER_BYTE, &eqe[CX4_EQE_OWNER_BYTE],
				   1)) {
		/* An EQ the device cannot write: "EQ error" ([vfio.c] health syndromes). */
		cx4m_bar0_health_fatal(d, CX4_HEALTH_SYND_EQ_ERR);
		return;
	}
	eq->pi++;
	d->stats.eqes++;
	if (eq->armed) {
		eq->armed = false;
		if (!eq->fire) {
			eq->fire = true;
			d->eq_fire_list[d->neq_fire++] = eq;
		}
	}
}

int cx4m_eq_fire(struct mdev *d)
{
	static const uint64_t one = 1;
	int n = (int)d->neq_fire;

	for (uint32_t i = 0; i < d->neq_fire; i++) {
		struct meq *eq = d->eq_fire_list[i];

		eq->fire = false;
		if (eq->intr < d->nvec &&
		    write(d->irq_fd[eq->intr], &one, sizeof(one)) == sizeof(one))
			d->stats.interrupts++;
	}
	d->neq_fire = 0;
	return n;
}

bool cx4m_eq_post_async(struct mdev *d, uint8_t *eqe)
{
	uint8_t type = (uint8_t)cx4_get(eqe, CX4_EQE_TYPE);
	struct meq *eq = type < 64 ? d->eq_by_type[type] : NULL;

	if (!eq)
		return false;
	post(d, eq, eqe);
	return true;
}

void cx4m_eq_post_comp(struct mdev *d, struct meq *eq, uint32_t cqn)
{
	uint8_t eqe[CX4_EQE_SIZE] = {0};

	cx4_set(eqe, CX4_EQE_TYPE, CX4_EVENT_TYPE_COMP);
	cx4_set(eqe, CX4_EQE_COMP_CQN, cqn);
	post(d, eq, eqe);
}

void cx4m_eq_post_cmd(struct mdev *d, uint32_t slot_mask)
{
	uint8_t eqe[CX4_EQE_SIZE] = {0};

	cx4_set(eqe, CX4_EQE_TYPE, CX4_EVENT_TYPE_CMD);
	cx4_set(eqe, CX4_EQE_CMD_VECTOR, slot_mask);
	cx4m_eq_post_async(d, eqe);
}

void cx4m_eq_post_page_request(struct mdev *d, int32_t npages)
{
	uint8_t eqe[CX4_EQE_SIZE] = {0};

	cx4_set(eqe, CX4_EQE_TYPE, CX4_EVENT_TYPE_PAGE_REQUEST);
	cx4_set(eqe, CX4_EQE_PAGE_REQ_FUNC_ID, 0);
	cx4_set(eqe, CX4_EQE_PAGE_REQ_NUM_PAGES, (uint32_t)npages);
	cx4m_eq_post_async(d, eqe);
}

void cx4m_eq_post_port_change(struct mdev *d, uint8_t sub_type)
{
	uint8_t eqe[CX4_EQE_SIZE] = {0};

	cx4_set(eqe, CX4_EQE_TYPE, CX4_EVENT_TYPE_PORT_CHANGE);
	cx4_set(eqe, CX4_EQE_SUB_TYPE, sub_type);
	cx4_set(eqe, CX4_EQE_PORT_NUM, 1);
	cx4m_eq_post_async(d, eqe);
}

void cx4m_eq_post_qp_event(struct mdev *d, uint8_t type, uint32_t qpn, uint8_t queue_type)
{
	uint8_t eqe[CX4_EQE_SIZE] = {0};

	cx4_set(eqe, CX4_EQE_TYPE, type);
	cx4_set(eqe, CX4_EQE_QP_SRQ_TYPE, queue_type);
	cx4_set(eqe, CX4_EQE_QP_SRQ_N, qpn);
	cx4m_eq_post_async(d, eqe);
}

void cx4m_eq_doorbell(struct mdev *d, uint32_t uar, uint32_t val, bool arm)
{
	struct meq *eq = cx4m_eq_get(d, val >> 24);
	uint32_t ci;

	/* A doorbell for an EQ of another UAR page is not this page's to ring. */
	if (!eq || eq->uar != uar)
		return;
	/* ci is 24 bits of a free-running counter: place it just behind pi. */
	ci = eq->pi - ((eq->pi - (val & 0xffffff)) & 0xffffff);
	eq->ci = ci;
	if (!arm)
		return;
	eq->armed = true;
	/* Arming with EQEs still unconsumed raises the interrupt at once. */
	if (eq->pi != eq->ci) {
		eq->armed = false;
		if (!eq->fire) {
			eq->fire = true;
			d->eq_fire_list[d->neq_fire++] = eq;
		}
	}
}

/* ---- commands -------------------------------------------------------------------------------- */

static uint32_t npas_for(uint32_t page_offset_64, uint32_t log_page_size, uint64_t bytes)
{
	uint64_t psz = 1ull << (12 + log_page_size);

	return (uint32_t)((page_offset_64 * 64ull + bytes + psz - 1) / psz);
}

static void eqc_image(struct mdev *d, struct meq *eq, uint8_t *eqc)
{
	if (cx4m_icm_ctx_read(d, &d->icm.eqc, eq->icm_idx, eqc, CX4_EQC_SIZE))
		memset(eqc, 0, CX4_EQC_SIZE);
	cx4_set(eqc, CX4_EQC_ST, eq->armed ? CX4_EQC_ST_ARMED : CX4_EQC_ST_FIRED);
	cx4_set(eqc, CX4_EQC_CONSUMER_COUNTER, eq->ci & 0xffffff);
	cx4_set(eqc, CX4_EQC_PRODUCER_COUNTER, eq->pi & 0xffffff);
}

static void eq_free(struct mdev *d, struct meq *eq)
{
	for (uint32_t i = 0; i < d->neq_fire; i++) {
		if (d->eq_fire_list[i] == eq) {
			d->eq_fire_list[i] = d->eq_fire_list[--d->neq_fire];
			break;
		}
	}
	d->uar_used[eq->uar]--;
	cx4m_idtab_remove(&d->eqs, eq->eqn);
	cx4m_icm_table_put(d, &d->icm.eqc, eq->icm_idx);
	cx4m_dbuf_free(&eq->buf);
	free(eq);
}

static int create_eq(struct mdev *d, struct mcmd *c)
{
	const uint8_t *eqc = c->in + CX4_CREATE_EQ_IN_EQC;
	uint32_t log_size = cx4_get(eqc, CX4_EQC_LOG_EQ_SIZE);
	uint32_t lps = cx4_get(eqc, CX4_EQC_LOG_PAGE_SIZE);
	uint32_t po = cx4_get(eqc, CX4_EQC_PAGE_OFFSET);
	uint32_t uar = cx4_get(eqc, CX4_EQC_UAR_PAGE);
	uint32_t intr = cx4_get(eqc, CX4_EQC_INTR);
	uint32_t npas, eqn;
	struct meq *eq;

	if (log_size > cx4_get(d->cap_cur[0], CX4_CAP_GEN_LOG_MAX_EQ_SZ) || log_size < 1)
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(CREATE_EQ), 1));
	if (uar >= MDEV_UAR_PAGES || !d->uar_used[uar])
		return mcmd_err(c, CX4_CMD_STAT_BAD_RES_ERR, MSYND(OP(CREATE_EQ), 2));
	if (intr >= d->nvec)
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(CREATE_EQ), 3));
	if (cx4_get(eqc, CX4_EQC_STATUS) || lps > 20)
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(CREATE_EQ), 4));
	npas = npas_for(po, lps, (uint64_t)CX4_EQE_SIZE << log_size);
	if ((uint64_t)CX4_CREATE_EQ_IN_PAS + 8ull * npas > c->ilen)
		return mcmd_err(c, CX4_CMD_STAT_BAD_INP_LEN_ERR, MSYND(OP(CREATE_EQ), 5));
	eq = calloc(1, sizeof(*eq));
	if (!eq)
		return mcmd_err(c, CX4_CMD_STAT_NO_RES_ERR, MSYND(OP(CREATE_EQ), 6));
	if (cx4m_dbuf_init(&eq->buf, c->in + CX4_CREATE_EQ_IN_PAS, npas, lps, po,
			   (uint64_t)CX4_EQE_SIZE << log_size)) {
		free(eq);
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(CREATE_EQ), 7));
	}
	eqn = cx4m_idtab_alloc(&d->eqs, eq);
	if (eqn == UINT32_MAX) {
		cx4m_dbuf_free(&eq->buf);
		free(eq);
		return mcmd_err(c, CX4_CMD_STAT_NO_RES_ERR, MSYND(OP(CREATE_EQ), 8));
	}
	eq->eqn = eqn;
	eq->icm_idx = eqn - EQN_BASE;
	if (cx4m_icm_table_get(d, &d->icm.eqc, eq->icm_idx)) {
		cx4m_idtab_remove(&d->eqs, eqn);
		cx4m_dbuf_free(&eq->buf);
		free(eq);
		return mcmd_err(c, CX4_CMD_STAT_NO_RES_ERR, MSYND(OP(CREATE_EQ), 9));
	}
	eq->log_size = log_size;
	eq->uar = uar;
	eq->intr = intr;
	eq->oi = cx4_get(eqc, CX4_EQC_OI);
	eq->mask = cx4_get64(c->in, CX4_CREATE_EQ_IN_EVENT_BITMASK);
	eq->npas = npas;
	d->uar_used[uar]++;
	/* Armed if created so (eqc.st); Linux and rdma-core arm it with a doorbell after. */
	eq->armed = cx4_get(eqc, CX4_EQC_ST) == CX4_EQC_ST_ARMED;
	cx4m_icm_ctx_write(d, &d->icm.eqc, eq->icm_idx, eqc, CX4_EQC_SIZE);
	reroute(d);
	cx4_set(c->out, CX4_CREATE_EQ_OUT_EQ_NUMBER, eqn);
	/* Pages the pool still wants: tell the new page-request EQ. */
	if (d->icm.request && ((eq->mask >> CX4_EVENT_TYPE_PAGE_REQUEST) & 1) &&
	    d->eq_by_type[CX4_EVENT_TYPE_PAGE_REQUEST] == eq)
		cx4m_eq_post_page_request(d, d->icm.request);
	return CX4_CMD_STAT_OK;
}

static int destroy_eq(struct mdev *d, struct mcmd *c)
{
	struct meq *eq = cx4m_eq_get(d, cx4_get(c->in, CX4_DESTROY_EQ_IN_EQ_NUMBER));

	if (!eq)
		return mcmd_err(c, CX4_CMD_STAT_BAD_RES_ERR, MSYND(OP(DESTROY_EQ), 1));
	if (eq->refs)
		return mcmd_err(c, CX4_CMD_STAT_RES_BUSY, MSYND(OP(DESTROY_EQ), 2));
	eq_free(d, eq);
	reroute(d);
	return CX4_CMD_STAT_OK;
}

static int query_eq(struct mdev *d, struct mcmd *c)
{
	struct meq *eq = cx4m_eq_get(d, cx4_get(c->in, CX4_QUERY_EQ_IN_EQ_NUMBER));

	if (!eq)
		return mcmd_err(c, CX4_CMD_STAT_BAD_RES_ERR, MSYND(OP(QUERY_EQ), 1));
	eqc_image(d, eq, c->out + CX4_QUERY_EQ_OUT_EQC);
	cx4_set64(c->out, CX4_QUERY_EQ_OUT_EVENT_BITMASK, eq->mask);
	for (uint32_t i = 0; i < eq->npas && CX4_QUERY_EQ_OUT_PAS + 8 * (i + 1) <= c->olen; i++)
		cx4_pas_set(c->out, CX4_QUERY_EQ_OUT_PAS, i, eq->buf.pas[i]);
	return CX4_CMD_STAT_OK;
}

static void free_one(void *obj, void *ctx)
{
	eq_free(ctx, obj);
}

void cx4m_eq_destroy_all(struct mdev *d)
{
	cx4m_idtab_foreach(&d->eqs, free_one, d);
	memset(d->eq_by_type, 0, sizeof(d->eq_by_type));
	d->neq_fire = 0;
}

const struct mcmd_desc cx4m_mcmd_eq[] = {
    {OP(CREATE_EQ), MCMD_INIT, CX4_CREATE_EQ_IN_SIZE, CX4_CREATE_EQ_OUT_SIZE, create_eq},
    {OP(DESTROY_EQ), MCMD_INIT, CX4_DESTROY_EQ_IN_SIZE, CX4_DESTROY_EQ_OUT_SIZE, destroy_eq},
    {OP(QUERY_EQ), MCMD_INIT, CX4_QUERY_EQ_IN_SIZE, CX4_QUERY_EQ_OUT_SIZE, query_eq},
    {0},
};

int cx4m_eq_tables_init(struct mdev *d)
{
	return cx4m_idtab_init(&d->eqs, EQN_BASE, EQN_MAX);
}
