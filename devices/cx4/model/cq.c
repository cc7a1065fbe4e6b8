// SPDX-License-Identifier: MIT
/*
 * Completion queues ([PRM] "Completion Queues"; [ifc] cqc; [dv] mlx5_cqe64; rdma-core mlx5
 * cq.c mlx5_arm_cq): CREATE_CQ, DESTROY_CQ, QUERY_CQ, MODIFY_CQ, CQE writing, arming, events.
 *
 * CQEs are queued during an engine pass and written at its end, after the data they report
 * has been written (responder DMA is batched; a CQE must never be visible before its data).
 * The owner bit of CQE n is (n >> log_cq_size) & 1 (software initialises op_own to 0xF1:
 * opcode invalid, owner 1), written last. The consumer index is read from the CQ doorbell
 * record only when the CQ looks full; a real overrun without overrun-ignore is a CQ error
 * event (syndrome 1) and the CQ stops. Arming (UAR + 0x20: sn << 28 | cmd | ci, cqn) asks
 * for one completion event, for the next CQE (or the next solicited/error one); arming while
 * CQEs after ci that no event has reported yet are there fires at once, CQEs an earlier event
 * already reported do not fire again. cq_max_count / cq_period moderate events.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define OP(x) CX4_CMD_OP_##x
#define CQN_BASE 1
/* [dv] op_own, the CQE's last byte: opcode [7:4], SE [1], owner [0]; written after the rest */
#define OP_OWN offsetof(struct mlx5_cqe64, op_own)
#define OPCODE(cqe) ((cqe)[OP_OWN] >> 4)

enum { ARM_NONE, ARM_NEXT, ARM_SOL };

struct mcq *cx4m_cq_get(struct mdev *d, uint32_t cqn)
{
	return cx4m_idtab_get(&d->cqs, cqn);
}

void cx4m_cq_push(struct mdev *d, struct mcq *cq, const uint8_t *cqe64)
{
	if (d->ncqe_q == d->cqe_q_cap) {
		uint32_t cap = d->cqe_q_cap ? d->cqe_q_cap * 2 : 256;
		void *q = realloc(d->cqe_q, cap * sizeof(*d->cqe_q));

		if (!q) {
			cx4m_mdev_log(d, "out of memory: CQE for CQ 0x%x lost", cq->cqn);
			return;
		}
		d->cqe_q = q;
		d->cqe_q_cap = cap;
	}
	d->cqe_q[d->ncqe_q].cq = cq;
	memcpy(d->cqe_q[d->ncqe_q].cqe, cqe64, 64);
	d->ncqe_q++;
}

static void cq_event(struct mdev *d, struct mcq *cq)
{
	cq->arm = ARM_NONE;
	cq->mod_count = 0;
	cq->event_pi = cq->pi;
	cx4m_mtimer_cancel(&d->timers, &cq->mod_timer);
	if (cq->eq)
		cx4m_eq_post_comp(d, cq->eq, cq->cqn);
}

static void mod_timeout(struct mdev *d, struct mtimer *t)
{
	struct mcq *cq = (struct mcq *)((uint8_t *)t - offsetof(struct mcq, mod_timer));

	if (cq->arm != ARM_NONE && cq->mod_count)
		cq_event(d, cq);
}

/* A CQE became visible: raise the event the arming asked for, with moderation. */
static void notify(struct mdev *d, struct mcq *cq, bool solicited)
{
	if (cq->arm == ARM_NONE || (cq->arm == ARM_SOL && !solicited))
		return;
	cq->mod_count++;
	if ((cq->cq_max_count <= 1 && !cq->cq_period) ||
	    (cq->cq_max_count && cq->mod_count >= cq->cq_max_count)) {
		cq_event(d, cq);
		return;
	}
	if (cq->cq_period && !mtimer_armed(&cq->mod_timer))
		cx4m_mtimer_arm(&d->timers, &cq->mod_timer, d->now + cq->cq_period * 1000ull);
}

static void cq_error(struct mdev *d, struct mcq *cq, uint8_t synd, uint8_t status)
{
	uint8_t eqe[CX4_EQE_SIZE] = {0};

	cq->status = status;
	cx4_set(eqe, CX4_EQE_TYPE, CX4_EVENT_TYPE_CQ_ERROR);
	cx4_set(eqe, CX4_EQE_CQ_ERR_CQN, cq->cqn);
	cx4_set(eqe, CX4_EQE_CQ_ERR_SYNDROME, synd);
	cx4m_mdev_log(d, "CQ 0x%x error, syndrome %u", cq->cqn, synd);
	cx4m_eq_post_async(d, eqe);
}

static void write_cqe(struct mdev *d, struct mcq *cq, uint8_t *cqe)
{
	uint32_t size = 1u << cq->log_size;
	uint64_t off;
	uint8_t *p;
	bool sol;

	if (cq->status != CX4_CQC_STATUS_OK)
		return;
	if (cq->pi - cq->ci_seen >= size && !cq->cc) {
		uint8_t rec[4];

		/* Looks full: read the consumer index software published (DB record word 0). */
		if (cx4m_dma_read(d, cq->dbr, rec, sizeof(rec))) {
			cq_error(d, cq, CX4_CQ_ERR_SYND_ACCESS_VIOLATION,
				 CX4_CQC_STATUS_CQ_WRITE_FAIL);
			return;
		}
		cq->ci_seen = cq->pi - ((cq->pi - cx4_be32_load(rec)) & 0xffffff);
		if (cq->pi - cq->ci_seen >= size && !cq->oi) {
			cq_error(d, cq, CX4_CQ_ERR_SYND_OVERRUN, CX4_CQC_STATUS_CQ_OVERFLOW);
			return;
		}
	}
	off = cq->cc ? 0 : (uint64_t)(cq->pi & (size - 1)) * cq->cqe_size;
	if (cq->cqe_size == 128)
		off += 64; /* a 128-byte CQE carries the CQE64 in its second half */
	cqe[OP_OWN] = (uint8_t)((cqe[OP_OWN] & ~1u) | ((cq->pi >> cq->log_size) & 1));
	p = cx4m_dbuf_ptr(d, &cq->buf, off, 64, CX4_DMA_WRITE);
	if (p) {
		memcpy(p, cqe, OP_OWN);
		atomic_thread_fence(memory_order_release);
		((volatile uint8_t *)p)[OP_OWN] = cqe[OP_OWN];
	} else if (cx4m_dbuf_write(d, &cq->buf, off, cqe, OP_OWN) ||
		   cx4m_dbuf_write(d, &cq->buf, off + OP_OWN, &cqe[OP_OWN], 1)) {
		cq_error(d, cq, CX4_CQ_ERR_SYND_ACCESS_VIOLATION, CX4_CQC_STATUS_CQ_WRITE_FAIL);
		return;
	}
	cq->pi++;
	/* solicited: the CQE's SE bit, or any error CQE (IBTA: errors always notify) */
	sol = (cqe[OP_OWN] & 2) || OPCODE(cqe) == MLX5_CQE_REQ_ERR ||
	      OPCODE(cqe) == MLX5_CQE_RESP_ERR;
	if (sol)
		cq->last_solicit = cq->pi;
	notify(d, cq, sol);
}

int cx4m_cq_flush(struct mdev *d)
{
	uint32_t n = d->ncqe_q;

	for (uint32_t i = 0; i < n; i++) {
		uint8_t *cqe = d->cqe_q[i].cqe;

		if (!d->cqe_q[i].cq)
			continue; /* its CQ was destroyed meanwhile */
		/* the internal timer at the moment the CQE is written ([dv] timestamp); error
		 * CQEs have their syndromes there instead ([dv] mlx5_err_cqe) */
		if (OPCODE(cqe) != MLX5_CQE_REQ_ERR && OPCODE(cqe) != MLX5_CQE_RESP_ERR)
			cx4_be64_store(cqe + offsetof(struct mlx5_cqe64, timestamp),
				       (d->now - d->boot_ns) * 275 / 1000);
		write_cqe(d, d->cqe_q[i].cq, cqe);
	}
	d->ncqe_q = 0;
	return (int)n;
}

void cx4m_cq_arm_doorbell(struct mdev *d, uint32_t uar, const uint8_t *val8)
{
	uint32_t hi = cx4_be32_load(val8), cqn = cx4_be32_load(val8 + 4) & 0xffffff;
	struct mcq *cq = cx4m_cq_get(d, cqn);
	uint32_t ci, base;

	if (!cq || cq->uar != uar)
		return;
	ci = cq->pi - ((cq->pi - (hi & 0xffffff)) & 0xffffff);
	cq->ci_seen = ci;
	cq->arm_sn = hi >> 28;
	cq->arm = (hi & CX4_CQ_DB_REQ_NOT_SOL) ? ARM_SOL : ARM_NEXT;
	cq->mod_count = 0;
	/*
	 * CQEs after ci that no event reported yet fire at once (software polled the CQ empty,
	 * then a CQE came before the arm: Linux ULPs and ibv_*_pingpong count on that event).
	 * CQEs an event already reported do not fire again: perftest -e re-arms after each event
	 * before polling and takes every event to mean a new completion.
	 */
	base = (int32_t)(cq->event_pi - ci) > 0 ? cq->event_pi : ci;
	if (cq->arm == ARM_NEXT ? cq->pi != base
				: (int32_t)(cq->last_solicit - base) > 0 &&
				      cq->last_solicit - base <= (1u << cq->log_size))
		cq_event(d, cq);
}

/* ---- commands -------------------------------------------------------------------------------- */

static uint32_t npas_for(uint32_t po, uint32_t lps, uint64_t bytes)
{
	uint64_t psz = 1ull << (12 + lps);

	return (uint32_t)((po * 64ull + bytes + psz - 1) / psz);
}

static void cq_free(struct mdev *d, struct mcq *cq)
{
	for (uint32_t i = 0; i < d->ncqe_q; i++)
		if (d->cqe_q[i].cq == cq)
			d->cqe_q[i].cq = NULL;
	cx4m_mtimer_cancel(&d->timers, &cq->mod_timer);
	if (cq->eq)
		cq->eq->refs--;
	d->uar_used[cq->uar]--;
	cx4m_idtab_remove(&d->cqs, cq->cqn);
	cx4m_icm_table_put(d, &d->icm.cqc, cq->icm_idx);
	cx4m_dbuf_free(&cq->buf);
	free(cq);
}

static int create_cq(struct mdev *d, struct mcmd *c)
{
	const uint8_t *cqc = c->in + CX4_CREATE_CQ_IN_CQC;
	uint32_t log_size = cx4_get(cqc, CX4_CQC_LOG_CQ_SIZE);
	uint32_t lps = cx4_get(cqc, CX4_CQC_LOG_PAGE_SIZE), po = cx4_get(cqc, CX4_CQC_PAGE_OFFSET);
	uint32_t uar = cx4_get(cqc, CX4_CQC_UAR_PAGE), szc = cx4_get(cqc, CX4_CQC_CQE_SZ);
	struct meq *eq = cx4m_eq_get(d, cx4_get(cqc, CX4_CQC_C_EQN));
	uint32_t cqe_size, npas, cqn;
	struct mcq *cq;

	if (log_size > cx4_get(d->cap_cur[0], CX4_CAP_GEN_LOG_MAX_CQ_SZ) || szc > 1 || lps > 20 ||
	    cx4_get(cqc, CX4_CQC_STATUS) || cx4_get(cqc, CX4_CQC_CQE_COMP_EN))
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(CREATE_CQ), 1));
	if (uar >= MDEV_UAR_PAGES || !d->uar_used[uar])
		return mcmd_err(c, CX4_CMD_STAT_BAD_RES_ERR, MSYND(OP(CREATE_CQ), 2));
	if (!eq)
		return mcmd_err(c, CX4_CMD_STAT_BAD_RES_ERR, MSYND(OP(CREATE_CQ), 3));
	if (cx4_get64(cqc, CX4_CQC_DBR_ADDR) & 7)
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(CREATE_CQ), 4));
	cqe_size = szc ? 128 : 64;
	npas = npas_for(po, lps, (uint64_t)cqe_size << log_size);
	if ((uint64_t)CX4_CREATE_CQ_IN_PAS + 8ull * npas > c->ilen)
		return mcmd_err(c, CX4_CMD_STAT_BAD_INP_LEN_ERR, MSYND(OP(CREATE_CQ), 5));
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return mcmd_err(c, CX4_CMD_STAT_NO_RES_ERR, MSYND(OP(CREATE_CQ), 6));
	if (cx4m_dbuf_init(&cq->buf, c->in + CX4_CREATE_CQ_IN_PAS, npas, lps, po,
			   (uint64_t)cqe_size << log_size)) {
		free(cq);
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(CREATE_CQ), 7));
	}
	cqn = cx4m_idtab_alloc(&d->cqs, cq);
	if (cqn == UINT32_MAX || cx4m_icm_table_get(d, &d->icm.cqc, cqn - CQN_BASE)) {
		if (cqn != UINT32_MAX)
			cx4m_idtab_remove(&d->cqs, cqn);
		cx4m_dbuf_free(&cq->buf);
		free(cq);
		return mcmd_err(c, CX4_CMD_STAT_NO_RES_ERR, MSYND(OP(CREATE_CQ), 8));
	}
	cq->cqn = cqn;
	cq->icm_idx = cqn - CQN_BASE;
	cq->log_size = log_size;
	cq->cqe_size = cqe_size;
	cq->cc = cx4_get(cqc, CX4_CQC_CC);
	cq->oi = cx4_get(cqc, CX4_CQC_OI);
	cq->uar = uar;
	cq->eq = eq;
	eq->refs++;
	d->uar_used[uar]++;
	cq->dbr = cx4_get64(cqc, CX4_CQC_DBR_ADDR);
	cq->cq_period = cx4_get(cqc, CX4_CQC_CQ_PERIOD);
	cq->cq_max_count = cx4_get(cqc, CX4_CQC_CQ_MAX_COUNT);
	cq->period_mode = cx4_get(cqc, CX4_CQC_CQ_PERIOD_MODE);
	cq->npas = npas;
	cx4m_mtimer_init(&cq->mod_timer, mod_timeout);
	cx4m_icm_ctx_write(d, &d->icm.cqc, cq->icm_idx, cqc, CX4_CQC_SIZE);
	cx4_set(c->out, CX4_CREATE_CQ_OUT_CQN, cqn);
	return CX4_CMD_STAT_OK;
}

static int destroy_cq(struct mdev *d, struct mcmd *c)
{
	struct mcq *cq = cx4m_cq_get(d, cx4_get(c->in, CX4_DESTROY_CQ_IN_CQN));

	if (!cq)
		return mcmd_err(c, CX4_CMD_STAT_BAD_RES_ERR, MSYND(OP(DESTROY_CQ), 1));
	if (cq->refs)
		return mcmd_err(c, CX4_CMD_STAT_RES_BUSY, MSYND(OP(DESTROY_CQ), 2));
	cq_free(d, cq);
	return CX4_CMD_STAT_OK;
}

static void cqc_image(struct mdev *d, struct mcq *cq, uint8_t *cqc)
{
	static const uint8_t st[] = {[ARM_NONE] = CX4_CQC_ST_FIRED,
				     [ARM_NEXT] = CX4_CQC_ST_ARMED,
				     [ARM_SOL] = CX4_CQC_ST_SOLICITED_ARMED};

	if (cx4m_icm_ctx_read(d, &d->icm.cqc, cq->icm_idx, cqc, CX4_CQC_SIZE))
		memset(cqc, 0, CX4_CQC_SIZE);
	cx4_set(cqc, CX4_CQC_STATUS, cq->status);
	cx4_set(cqc, CX4_CQC_ST, st[cq->arm]);
	cx4_set(cqc, CX4_CQC_OI, cq->oi);
	cx4_set(cqc, CX4_CQC_C_EQN, cq->eq ? cq->eq->eqn : 0);
	cx4_set(cqc, CX4_CQC_CQ_PERIOD, cq->cq_period);
	cx4_set(cqc, CX4_CQC_CQ_MAX_COUNT, cq->cq_max_count);
	cx4_set(cqc, CX4_CQC_CQ_PERIOD_MODE, cq->period_mode);
	cx4_set(cqc, CX4_CQC_LAST_SOLICIT_INDEX, cq->last_solicit & 0xffffff);
	cx4_set(cqc, CX4_CQC_CONSUMER_COUNTER, cq->ci_seen & 0xffffff);
	cx4_set(cqc, CX4_CQC_PRODUCER_COUNTER, cq->pi & 0xffffff);
}

static int query_cq(struct mdev *d, struct mcmd *c)
{
	struct mcq *cq = cx4m_cq_get(d, cx4_get(c->in, CX4_QUERY_CQ_IN_CQN));

	if (!cq)
		return mcmd_err(c, CX4_CMD_STAT_BAD_RES_ERR, MSYND(OP(QUERY_CQ), 1));
	cqc_image(d, cq, c->out + CX4_QUERY_CQ_OUT_CQC);
	for (uint32_t i = 0; i < cq->npas && CX4_QUERY_CQ_OUT_PAS + 8 * (i + 1) <= c->olen; i++)
		cx4_pas_set(c->out, CX4_QUERY_CQ_OUT_PAS, i, cq->buf.pas[i]);
	return CX4_CMD_STAT_OK;
}

/*
 * MODIFY_CQ op_mod 1 (resize; Linux mlx5_ib_resize_cq, rdma-core mlx5_cq_resize_copy_cqes): the
 * CQ moves to a new ring (log_cq_size, page size and offset, PAS; the doorbell record stays).
 * The old ring gets a RESIZE CQE at the producer index, which consumes that index; CQEs from
 * the next index on go to the new ring. Software copies the CQEs between its consumer index
 * and the RESIZE CQE to the same indexes + 1 of the new ring. The new ring must hold what is
 * outstanding, and the old one must have room for the RESIZE CQE.
 */
static int resize_cq(struct mdev *d, struct mcmd *c, struct mcq *cq)
{
	const uint8_t *cqc = c->in + CX4_MODIFY_CQ_IN_CQC;
	uint32_t sel = cx4_get(c->in, CX4_MODIFY_CQ_IN_FIELD_SELECT);
	uint32_t log_size = cx4_get(cqc, CX4_CQC_LOG_CQ_SIZE);
	uint32_t lps = (sel & CX4_RESIZE_CQ_SEL_LOG_PAGE_SIZE) ? cx4_get(cqc, CX4_CQC_LOG_PAGE_SIZE)
							       : cq->buf.page_shift - 12;
	uint32_t po = (sel & CX4_RESIZE_CQ_SEL_PAGE_OFFSET) ? cx4_get(cqc, CX4_CQC_PAGE_OFFSET) : 0;
	uint32_t npas, old_size = 1u << cq->log_size, outstanding;
	uint8_t rec[4], cqe[64] = {0}, img[CX4_CQC_SIZE];
	struct dbuf nb;
	uint64_t off;

	if (!(sel & CX4_RESIZE_CQ_SEL_LOG_CQ_SIZE) ||
	    (sel & ~(uint32_t)(CX4_RESIZE_CQ_SEL_LOG_CQ_SIZE | CX4_RESIZE_CQ_SEL_PAGE_OFFSET |
			       CX4_RESIZE_CQ_SEL_LOG_PAGE_SIZE)))
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(MODIFY_CQ), 10));
	if (!cx4_get(d->cap_cur[0], CX4_CAP_GEN_CQ_RESIZE) ||
	    log_size > cx4_get(d->cap_cur[0], CX4_CAP_GEN_LOG_MAX_CQ_SZ) || lps > 20 || cq->cc)
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(MODIFY_CQ), 11));
	if (cq->status != CX4_CQC_STATUS_OK)
		return mcmd_err(c, CX4_CMD_STAT_BAD_RES_STATE_ERR, MSYND(OP(MODIFY_CQ), 12));
	if (cx4m_dma_read(d, cq->dbr, rec, sizeof(rec)))
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(MODIFY_CQ), 13));
	cq->ci_seen = cq->pi - ((cq->pi - cx4_be32_load(rec)) & 0xffffff);
	outstanding = cq->pi - cq->ci_seen;
	if (outstanding >= old_size || outstanding >= (1u << log_size)) {
		cx4m_mdev_log(d, "CQ 0x%x: no resize to %u entries with %u CQEs outstanding",
			      cq->cqn, 1u << log_size, outstanding);
		return mcmd_err(c, CX4_CMD_STAT_BAD_SIZE_OUTS_CQES_ERR, MSYND(OP(MODIFY_CQ), 14));
	}
	cx4m_mdev_log(d, "CQ 0x%x: resize %u -> %u entries, %u outstanding", cq->cqn, old_size,
		      1u << log_size, outstanding);
	npas = npas_for(po, lps, (uint64_t)cq->cqe_size << log_size);
	if ((uint64_t)CX4_MODIFY_CQ_IN_PAS + 8ull * npas > c->ilen)
		return mcmd_err(c, CX4_CMD_STAT_BAD_INP_LEN_ERR, MSYND(OP(MODIFY_CQ), 15));
	if (cx4m_dbuf_init(&nb, c->in + CX4_MODIFY_CQ_IN_PAS, npas, lps, po,
			   (uint64_t)cq->cqe_size << log_size))
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(MODIFY_CQ), 16));
	/* the RESIZE CQE ends the old ring: opcode and owner bit, nothing else */
	off = (uint64_t)(cq->pi & (old_size - 1)) * cq->cqe_size + (cq->cqe_size == 128 ? 64 : 0);
	cqe[OP_OWN] = (uint8_t)(MLX5_CQE_RESIZE_CQ << 4 | ((cq->pi >> cq->log_size) & 1));
	if (cx4m_dbuf_write(d, &cq->buf, off, cqe, OP_OWN) ||
	    cx4m_dbuf_write(d, &cq->buf, off + OP_OWN, &cqe[OP_OWN], 1)) {
		cx4m_dbuf_free(&nb);
		cq_error(d, cq, CX4_CQ_ERR_SYND_ACCESS_VIOLATION, CX4_CQC_STATUS_CQ_WRITE_FAIL);
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(MODIFY_CQ), 17));
	}
	cq->pi++;
	cx4m_dbuf_free(&cq->buf);
	cq->buf = nb;
	cq->log_size = log_size;
	cq->npas = npas;
	cqc_image(d, cq, img);
	cx4_set(img, CX4_CQC_LOG_CQ_SIZE, log_size);
	cx4_set(img, CX4_CQC_LOG_PAGE_SIZE, lps);
	cx4_set(img, CX4_CQC_PAGE_OFFSET, po);
	cx4m_icm_ctx_write(d, &d->icm.cqc, cq->icm_idx, img, sizeof(img));
	return CX4_CMD_STAT_OK;
}

static int modify_cq(struct mdev *d, struct mcmd *c)
{
	struct mcq *cq = cx4m_cq_get(d, cx4_get(c->in, CX4_MODIFY_CQ_IN_CQN));
	const uint8_t *cqc = c->in + CX4_MODIFY_CQ_IN_CQC;
	uint32_t sel = cx4_get(c->in, CX4_MODIFY_CQ_IN_FIELD_SELECT);
	uint8_t img[CX4_CQC_SIZE];

	if (!cq)
		return mcmd_err(c, CX4_CMD_STAT_BAD_RES_ERR, MSYND(OP(MODIFY_CQ), 1));
	if (c->op_mod == CX4_MODIFY_CQ_OPMOD_RESIZE)
		return resize_cq(d, c, cq);
	if (c->op_mod != CX4_MODIFY_CQ_OPMOD_MODIFY)
		return mcmd_err(c, CX4_CMD_STAT_BAD_OP_ERR, MSYND(OP(MODIFY_CQ), 2));
	if (sel & ~(uint32_t)(CX4_MODIFY_CQ_SEL_CQ_PERIOD | CX4_MODIFY_CQ_SEL_CQ_MAX_COUNT |
			      CX4_MODIFY_CQ_SEL_OI | CX4_MODIFY_CQ_SEL_C_EQN |
			      CX4_MODIFY_CQ_SEL_CQ_PERIOD_MODE | CX4_MODIFY_CQ_SEL_STATUS))
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(MODIFY_CQ), 3));
	if (sel & CX4_MODIFY_CQ_SEL_C_EQN) {
		struct meq *eq = cx4m_eq_get(d, cx4_get(cqc, CX4_CQC_C_EQN));

		if (!eq)
			return mcmd_err(c, CX4_CMD_STAT_BAD_RES_ERR, MSYND(OP(MODIFY_CQ), 4));
		if (cq->eq)
			cq->eq->refs--;
		cq->eq = eq;
		eq->refs++;
	}
	if (sel & CX4_MODIFY_CQ_SEL_CQ_PERIOD)
		cq->cq_period = cx4_get(cqc, CX4_CQC_CQ_PERIOD);
	if (sel & CX4_MODIFY_CQ_SEL_CQ_MAX_COUNT)
		cq->cq_max_count = cx4_get(cqc, CX4_CQC_CQ_MAX_COUNT);
	if (sel & CX4_MODIFY_CQ_SEL_OI)
		cq->oi = cx4_get(cqc, CX4_CQC_OI);
	if (sel & CX4_MODIFY_CQ_SEL_CQ_PERIOD_MODE)
		cq->period_mode = cx4_get(cqc, CX4_CQC_CQ_PERIOD_MODE);
	if (sel & CX4_MODIFY_CQ_SEL_STATUS)
		cq->status = (uint8_t)cx4_get(cqc, CX4_CQC_STATUS);
	cqc_image(d, cq, img);
	cx4m_icm_ctx_write(d, &d->icm.cqc, cq->icm_idx, img, sizeof(img));
	return CX4_CMD_STAT_OK;
}

static void free_one(void *obj, void *ctx)
{
	cq_free(ctx, obj);
}

void cx4m_cq_destroy_all(struct mdev *d)
{
	d->ncqe_q = 0;
	cx4m_idtab_foreach(&d->cqs, free_one, d);
}

int cx4m_cq_tables_init(struct mdev *d)
{
	return cx4m_idtab_init(&d->cqs, CQN_BASE,
			       1u << cx4_get(d->cap_cur[0], CX4_CAP_GEN_LOG_MAX_CQ));
}

const struct mcmd_desc cx4m_mcmd_cq[] = {
    {OP(CREATE_CQ), MCMD_INIT, CX4_CREATE_CQ_IN_SIZE, CX4_CREATE_CQ_OUT_SIZE, create_cq},
    {OP(DESTROY_CQ), MCMD_INIT, CX4_DESTROY_CQ_IN_SIZE, CX4_DESTROY_CQ_OUT_SIZE, destroy_cq},
    {OP(QUERY_CQ), MCMD_INIT, CX4_QUERY_CQ_IN_SIZE, CX4_QUERY_CQ_OUT_SIZE, query_cq},
    {OP(MODIFY_CQ), MCMD_INIT, CX4_MODIFY_CQ_IN_CQC + CX4_CQC_SIZE, CX4_MODIFY_CQ_OUT_SIZE,
     modify_cq},
    {0},
};
