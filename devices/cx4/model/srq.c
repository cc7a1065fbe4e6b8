// SPDX-License-Identifier: MIT
/*
 * Shared receive queues ([PRM] "Shared Receive Queue"; [ifc] srqc, create_srq_in;
 * [dv] mlx5_wqe_srq_next_seg): CREATE_SRQ, DESTROY_SRQ, QUERY_SRQ, ARM_RQ, and the device side
 * of receive WQE consumption.
 *
 * An SRQ is a linked list kept by software inside a ring of WQEs (stride 16 << log_rq_stride):
 * each WQE starts with a next segment whose next_wqe_index names the WQE after it. The device
 * starts at index 0 and follows next_wqe_index; the doorbell record (its first word) counts
 * the WQEs software posted, so available = counter - consumed. The CQE of a receive that used
 * an SRQ WQE carries that WQE's index in wqe_counter, which is how software frees it (rdma-core
 * mlx5_free_srq_wqe). ARM_RQ sets a limit watermark: when fewer WQEs than that remain, one
 * SRQ_LIMIT event is raised and the SRQ disarms.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define OP(x) CX4_CMD_OP_##x
#define SRQN_BASE 1

int cx4m_srq_tables_init(struct mdev *d)
{
	return cx4m_idtab_init(&d->srqs, SRQN_BASE,
			       1u << cx4_get(d->cap_cur[0], CX4_CAP_GEN_LOG_MAX_SRQ));
}

struct msrq *cx4m_srq_get(struct mdev *d, uint32_t srqn)
{
	return cx4m_idtab_get(&d->srqs, srqn);
}

static uint16_t srq_counter(struct mdev *d, struct msrq *s, bool *ok)
{
	uint8_t rec[4];

	*ok = cx4m_dma_read(d, s->dbr, rec, sizeof(rec)) == 0;
	return (uint16_t)cx4_be32_load(rec);
}

int cx4m_srq_pop(struct mdev *d, struct msrq *s, uint8_t *wqe, uint32_t max)
{
	uint32_t stride = 1u << s->stride_shift;
	uint16_t avail, idx;
	bool ok;

	if (s->state != CX4_SRQC_STATE_GOOD)
		return -1;
	avail = (uint16_t)(srq_counter(d, s, &ok) - s->consumed);
	if (!ok || !avail || avail > (1u << s->log_size))
		return -1;
	idx = s->head;
	if (stride > max ||
	    cx4m_dbuf_read(d, &s->buf, (uint64_t)(idx & ((1u << s->log_size) - 1)) * stride, wqe,
			   stride)) {
		/* an SRQ the device cannot read: SRQ catastrophic error */
		s->state = CX4_SRQC_STATE_ERROR;
		cx4m_eq_post_qp_event(d, CX4_EVENT_TYPE_SRQ_CATAS_ERROR, s->srqn,
				      CX4_EVENT_QUEUE_TYPE_RQ);
		return -1;
	}
	s->head = (uint16_t)cx4_get(wqe, CX4_FLD(0x00, 0, 16)); /* next_wqe_index, bytes 2..3 */
	s->consumed++;
	if (s->lwm && (uint16_t)(avail - 1) < s->lwm) {
		s->lwm = 0;
		cx4m_eq_post_qp_event(d, CX4_EVENT_TYPE_SRQ_RQ_LIMIT, s->srqn,
				      CX4_EVENT_QUEUE_TYPE_RQ);
	}
	return idx;
}

static void srq_free(struct mdev *d, struct msrq *s)
{
	cx4m_idtab_remove(&d->srqs, s->srqn);
	cx4m_icm_table_put(d, &d->icm.srqc, s->icm_idx);
	cx4m_dbuf_free(&s->buf);
	free(s);
}

static int create_srq(struct mdev *d, struct mcmd *c)
{
	const uint8_t *srqc = c->in + CX4_CREATE_SRQ_IN_SRQC;
	uint32_t log_size = cx4_get(srqc, CX4_SRQC_LOG_SRQ_SIZE);
	uint32_t lstr = cx4_get(srqc, CX4_SRQC_LOG_RQ_STRIDE) + 4;
	uint32_t lps = cx4_get(srqc, CX4_SRQC_LOG_PAGE_SIZE),
		 po = cx4_get(srqc, CX4_SRQC_PAGE_OFFSET);
	uint32_t pd = cx4_get(srqc, CX4_SRQC_PD), npas, srqn;
	uint64_t bytes, psz;
	struct msrq *s;

	if (log_size > cx4_get(d->cap_cur[0], CX4_CAP_GEN_LOG_MAX_SRQ_SZ) ||
	    (1u << lstr) > cx4_get(d->cap_cur[0], CX4_CAP_GEN_MAX_WQE_SZ_RQ) || lps > 20 ||
	    cx4_get(srqc, CX4_SRQC_WQ_SIGNATURE) || cx4_get(srqc, CX4_SRQC_STATE))
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(CREATE_SRQ), 1));
	if (!cx4m_idtab_get(&d->pds, pd))
		return mcmd_err(c, CX4_CMD_STAT_BAD_RES_ERR, MSYND(OP(CREATE_SRQ), 2));
	if (cx4_get64(srqc, CX4_SRQC_DBR_ADDR) & 3)
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(CREATE_SRQ), 3));
	bytes = (uint64_t)1 << (log_size + lstr);
	psz = 1ull << (12 + lps);
	npas = (uint32_t)((po * 64ull + bytes + psz - 1) / psz);
	if ((uint64_t)CX4_CREATE_SRQ_IN_PAS + 8ull * npas > c->ilen)
		return mcmd_err(c, CX4_CMD_STAT_BAD_INP_LEN_ERR, MSYND(OP(CREATE_SRQ), 4));
	s = calloc(1, sizeof(*s));
	if (!s)
		return mcmd_err(c, CX4_CMD_STAT_NO_RES_ERR, MSYND(OP(CREATE_SRQ), 5));
	if (cx4m_dbuf_init(&s->buf, c->in + CX4_CREATE_SRQ_IN_PAS, npas, lps, po, bytes)) {
		free(s);
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(CREATE_SRQ), 6));
	}
	srqn = cx4m_idtab_alloc(&d->srqs, s);
	if (srqn == UINT32_MAX || cx4m_icm_table_get(d, &d->icm.srqc, srqn - SRQN_BASE)) {
		if (srqn != UINT32_MAX)
			cx4m_idtab_remove(&d->srqs, srqn);
		cx4m_dbuf_free(&s->buf);
		free(s);
		return mcmd_err(c, CX4_CMD_STAT_NO_RES_ERR, MSYND(OP(CREATE_SRQ), 7));
	}
	s->srqn = srqn;
	s->icm_idx = srqn - SRQN_BASE;
	s->log_size = log_size;
	s->stride_shift = lstr;
	s->pd = pd;
	s->dbr = cx4_get64(srqc, CX4_SRQC_DBR_ADDR);
	s->lwm = cx4_get(srqc, CX4_SRQC_LWM);
	s->state = CX4_SRQC_STATE_GOOD;
	s->npas = npas;
	cx4m_icm_ctx_write(d, &d->icm.srqc, s->icm_idx, srqc, CX4_SRQC_SIZE);
	cx4_set(c->out, CX4_CREATE_SRQ_OUT_SRQN, srqn);
	return CX4_CMD_STAT_OK;
}

static int destroy_srq(struct mdev *d, struct mcmd *c)
{
	struct msrq *s = cx4m_srq_get(d, cx4_get(c->in, CX4_DESTROY_SRQ_IN_SRQN));

	if (!s)
		return mcmd_err(c, CX4_CMD_STAT_BAD_RES_ERR, MSYND(OP(DESTROY_SRQ), 1));
	if (s->refs)
		return mcmd_err(c, CX4_CMD_STAT_RES_BUSY, MSYND(OP(DESTROY_SRQ), 2));
	srq_free(d, s);
	return CX4_CMD_STAT_OK;
}

static int query_srq(struct mdev *d, struct mcmd *c)
{
	struct msrq *s = cx4m_srq_get(d, cx4_get(c->in, CX4_QUERY_SRQ_IN_SRQN));
	uint8_t *srqc = c->out + CX4_QUERY_SRQ_OUT_SRQC;
	bool ok;

	if (!s)
		return mcmd_err(c, CX4_CMD_STAT_BAD_RES_ERR, MSYND(OP(QUERY_SRQ), 1));
	if (cx4m_icm_ctx_read(d, &d->icm.srqc, s->icm_idx, srqc, CX4_SRQC_SIZE))
		return mcmd_err(c, CX4_CMD_STAT_INT_ERR, MSYND(OP(QUERY_SRQ), 2));
	cx4_set(srqc, CX4_SRQC_STATE, s->state);
	cx4_set(srqc, CX4_SRQC_LWM, s->lwm);
	cx4_set(srqc, CX4_SRQC_WQE_CNT, (uint16_t)(srq_counter(d, s, &ok) - s->consumed));
	for (uint32_t i = 0; i < s->npas && CX4_QUERY_SRQ_OUT_PAS + 8 * (i + 1) <= c->olen; i++)
		cx4_pas_set(c->out, CX4_QUERY_SRQ_OUT_PAS, i, s->buf.pas[i]);
	return CX4_CMD_STAT_OK;
}

static int arm_rq(struct mdev *d, struct mcmd *c)
{
	struct msrq *s;
	uint32_t lwm = cx4_get(c->in, CX4_ARM_RQ_IN_LWM);

	if (c->op_mod != CX4_ARM_RQ_OPMOD_SRQ)
		return mcmd_err(c, CX4_CMD_STAT_BAD_OP_ERR, MSYND(OP(ARM_RQ), 1));
	s = cx4m_srq_get(d, cx4_get(c->in, CX4_ARM_RQ_IN_SRQ_NUMBER));
	if (!s)
		return mcmd_err(c, CX4_CMD_STAT_BAD_RES_ERR, MSYND(OP(ARM_RQ), 2));
	if (lwm > (1u << s->log_size))
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(ARM_RQ), 3));
	s->lwm = lwm;
	return CX4_CMD_STAT_OK;
}

static void free_one(void *obj, void *ctx)
{
	srq_free(ctx, obj);
}

void cx4m_srq_destroy_all(struct mdev *d)
{
	cx4m_idtab_foreach(&d->srqs, free_one, d);
}

const struct mcmd_desc cx4m_mcmd_srq[] = {
    {OP(CREATE_SRQ), MCMD_INIT, CX4_CREATE_SRQ_IN_SIZE, CX4_CREATE_SRQ_OUT_SIZE, create_srq},
    {OP(DESTROY_SRQ), MCMD_INIT, CX4_DESTROY_SRQ_IN_SIZE, CX4_DESTROY_SRQ_OUT_SIZE, destroy_srq},
    {OP(QUERY_SRQ), MCMD_INIT, CX4_QUERY_SRQ_IN_SIZE, CX4_QUERY_SRQ_OUT_SIZE, query_srq},
    {OP(ARM_RQ), MCMD_INIT, CX4_ARM_RQ_IN_SIZE, CX4_ARM_RQ_OUT_SIZE, arm_rq},
    {0},
};
