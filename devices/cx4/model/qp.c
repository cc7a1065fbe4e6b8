// SPDX-License-Identifier: MIT
/*
 * Queue pairs: CREATE_QP, the state transitions, QUERY_QP, DESTROY_QP, and the send doorbell
 * ([PRM] "Queue Pair"; [ifc] qpc/ads; Linux qp.h states and optional parameters; research
 * notes 2.9, 2.10).
 *
 * The QP buffer holds the RQ first, then the SQ (rdma-core mlx5 create_qp: sq.offset = RQ
 * size); the doorbell record holds the RQ counter (word 0) and the SQ counter (word 1).
 * State machine: RST -> INIT -> RTR -> RTS; INIT2INIT, RTS2RTS, SQERR2RTS; any -> ERR / RST.
 * A transition from the wrong state answers BAD_QP_STATE (0x10); an optional-parameter mask
 * with bits the transition does not take answers BAD_PARAM. Mandatory fields of each
 * transition are always read; optional ones only when their mask bit is set.
 * Moving to ERR flushes both queues (every outstanding WQE completes with WR_FLUSH_ERR, and so
 * does every WQE posted afterwards); moving to RST forgets all transport state.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define OP(x) CX4_CMD_OP_##x
#define QPN_BASE 0x100

int cx4m_qp_tables_init(struct mdev *d)
{
	return cx4m_idtab_init(&d->qps, QPN_BASE,
			       1u << cx4_get(d->cap_cur[0], CX4_CAP_GEN_LOG_MAX_QP));
}

struct mqp *cx4m_qp_get(struct mdev *d, uint32_t qpn)
{
	return cx4m_idtab_get(&d->qps, qpn);
}

void cx4m_qp_activate(struct mdev *d, struct mqp *qp)
{
	if (qp->on_active)
		return;
	qp->on_active = true;
	qp->active_next = NULL;
	if (d->active_tail)
		d->active_tail->active_next = qp;
	else
		d->active_head = qp;
	d->active_tail = qp;
}

static void unlink_lists(struct mdev *d, struct mqp *qp)
{
	struct mqp **pp;

	for (pp = &d->active_head; *pp; pp = &(*pp)->active_next) {
		if (*pp == qp) {
			*pp = qp->active_next;
			break;
		}
	}
	d->active_tail = NULL;
	for (struct mqp *q = d->active_head; q; q = q->active_next)
		d->active_tail = q;
	qp->on_active = false;
	for (pp = &d->ack_head; *pp; pp = &(*pp)->ack_next) {
		if (*pp == qp) {
			*pp = qp->ack_next;
			break;
		}
	}
	qp->on_ack = false;
}

void cx4m_qp_sq_doorbell(struct mdev *d, uint32_t uar, const uint8_t *val8)
{
	struct mqp *qp = cx4m_qp_get(d, cx4_be32_load(val8 + 4) >> 8);

	/* the doorbell of a QP bound to another UAR page is not this page's to ring */
	if (!qp || qp->uar != uar || qp->no_sq)
		return;
	cx4m_qp_activate(d, qp);
}

/* ---- transport state --------------------------------------------------------------------------
 */

static void reset_transport(struct mdev *d, struct mqp *qp)
{
	struct mswqe *swq = qp->req.swq;
	uint32_t swq_size = qp->req.swq_size;
	struct mwqe *cur = qp->req.cur, *cwqe = qp->req.cwqe;

	cx4m_mtimer_cancel(&d->timers, &qp->req.retry_timer);
	cx4m_mtimer_cancel(&d->timers, &qp->req.rnr_timer);
	memset(&qp->req, 0, sizeof(qp->req));
	qp->req.swq = swq;
	qp->req.swq_size = swq_size;
	qp->req.cur = cur;
	qp->req.cwqe = cwqe;
	cx4m_mtimer_init(&qp->req.retry_timer, cx4m_comp_retry_timeout);
	cx4m_mtimer_init(&qp->req.rnr_timer, cx4m_comp_rnr_timeout);
	memset(&qp->resp, 0, sizeof(qp->resp));
	/* packets still queued for this QP stay valid but are no longer attributed to it */
	for (uint32_t i = d->net.tx_head; i != d->net.tx_tail; i++)
		if (d->net.tx_slot[i % NET_TX_SLOTS].qp == qp)
			d->net.tx_slot[i % NET_TX_SLOTS].qp = NULL;
}

void cx4m_qp_to_error(struct mdev *d, struct mqp *qp, uint8_t event)
{
	if (qp->state == CX4_QP_STATE_ERR || qp->state == CX4_QP_STATE_RST)
		return;
	qp->state = CX4_QP_STATE_ERR;
	if (event != 0xff)
		cx4m_eq_post_qp_event(d, event, qp->qpn, CX4_EVENT_QUEUE_TYPE_QP);
	if (qp->srq)
		cx4m_eq_post_qp_event(d, CX4_EVENT_TYPE_SRQ_LAST_WQE, qp->qpn,
				      CX4_EVENT_QUEUE_TYPE_QP);
	cx4m_comp_flush_sq(d, qp);
	cx4m_resp_flush_rq(d, qp);
	cx4m_mtimer_cancel(&d->timers, &qp->req.retry_timer);
	cx4m_mtimer_cancel(&d->timers, &qp->req.rnr_timer);
	cx4m_qp_activate(d, qp); /* later doorbells: flush */
}

void cx4m_qp_tx_fault(struct mdev *d, struct mqp *qp, int32_t swq_pos)
{
	/* the payload of a packet could not be read: a local protection error (requester) or a
	 * catastrophic error of the work queue (responder's READ data) */
	qp->req.dma_fault = true;
	if (swq_pos >= 0 && qp->state != CX4_QP_STATE_ERR)
		cx4m_comp_error(d, qp, (uint32_t)swq_pos, MLX5_CQE_SYNDROME_LOCAL_PROT_ERR);
	cx4m_qp_to_error(d, qp, CX4_EVENT_TYPE_WQ_CATAS_ERROR);
}

/* ---- context fields ------------------------------------------------------------------------- */

/*
 * The primary address path (RC/UC: INIT2RTR, or with PRIMARY_ADDR_PATH). 0 or a syndrome.
 * The source GID entry decides the network type; an IPv4 one needs an IPv4-mapped rgid_rip.
 */
static uint32_t apply_path(struct mdev *d, struct mqp *qp, const uint8_t *qpc)
{
	const uint8_t *ads = qpc + CX4_QPC_PRIMARY_ADDRESS_PATH;
	uint32_t sgid = cx4_get(ads, CX4_ADS_SRC_ADDR_INDEX);
	uint32_t port = cx4_get(ads, CX4_ADS_VHCA_PORT_NUM);
	uint32_t mh = cx4_get(ads, CX4_ADS_RMAC_47_32), ml = cx4_get(ads, CX4_ADS_RMAC_31_0);

	if (sgid >= d->roce_tbl_size || !d->roce[sgid].valid)
		return 2;
	if (!cx4m_net_rgid_ok(d->roce[sgid].net, ads + CX4_ADS_RGID_RIP_OFF))
		return 1; /* RoCE v2 over IPv4 talks to ::ffff:a.b.c.d, over IPv6 to others */
	if (port > 1)
		return 3;
	memcpy(qp->path.rgid, ads + CX4_ADS_RGID_RIP_OFF, 16);
	qp->path.sgid_index = (uint8_t)sgid;
	qp->path.flow_label = cx4_get(ads, CX4_ADS_FLOW_LABEL);
	qp->path.hop_limit = (uint8_t)cx4_get(ads, CX4_ADS_HOP_LIMIT);
	qp->path.tclass = (uint8_t)cx4_get(ads, CX4_ADS_TCLASS);
	if (cx4_get(ads, CX4_ADS_F_DSCP) || cx4_get(ads, CX4_ADS_F_ECN))
		qp->path.tclass =
		    (uint8_t)(cx4_get(ads, CX4_ADS_DSCP) << 2 | cx4_get(ads, CX4_ADS_ECN));
	qp->path.udp_sport = (uint16_t)cx4_get(ads, CX4_ADS_UDP_SPORT);
	qp->path.rmac[0] = (uint8_t)(mh >> 8);
	qp->path.rmac[1] = (uint8_t)mh;
	qp->path.rmac[2] = (uint8_t)(ml >> 24);
	qp->path.rmac[3] = (uint8_t)(ml >> 16);
	qp->path.rmac[4] = (uint8_t)(ml >> 8);
	qp->path.rmac[5] = (uint8_t)ml;
	qp->sport = cx4m_net_sport_for(d, qp->qpn, qp->path.udp_sport, false, &qp->sock);
	return 0;
}

static void save_qpc(struct mdev *d, struct mqp *qp, const uint8_t *qpc, uint32_t mask, uint16_t op)
{
	/*
	 * Keep the driver's context image (what QUERY_QP shows for the fields the model does
	 * not act on), merged per transition: mandatory fields and selected optional ones.
	 */
	(void)mask;
	if (op == OP(CREATE_QP)) {
		memcpy(qp->qpc, qpc, CX4_QPC_SIZE);
	} else {
		/* fields a transition may carry overwrite the image; zero means "not sent" */
		for (size_t i = 0; i < CX4_QPC_SIZE; i++)
			if (qpc[i])
				qp->qpc[i] = qpc[i];
	}
	cx4m_icm_ctx_write(d, &d->icm.qpc, qp->icm_idx, qp->qpc, CX4_QPC_SIZE);
}

/* ---- CREATE_QP --------------------------------------------------------------------------------
 */

static void qp_free(struct mdev *d, struct mqp *qp)
{
	unlink_lists(d, qp);
	reset_transport(d, qp);
	if (qp->scq)
		qp->scq->refs--;
	if (qp->rcq)
		qp->rcq->refs--;
	if (qp->srq)
		qp->srq->refs--;
	d->uar_used[qp->uar]--;
	if (d->gsi == qp)
		d->gsi = NULL;
	cx4m_idtab_remove(&d->qps, qp->qpn);
	cx4m_icm_table_put(d, &d->icm.qpc, qp->icm_idx);
	cx4m_dbuf_free(&qp->buf);
	free(qp->req.swq);
	free(qp->req.cur);
	free(qp->req.cwqe);
	free(qp);
}

static int create_qp(struct mdev *d, struct mcmd *c)
{
	const uint8_t *qpc = c->in + CX4_CREATE_QP_IN_QPC;
	const uint8_t *cap = d->cap_cur[0];
	uint32_t st = cx4_get(qpc, CX4_QPC_ST), rq_type = cx4_get(qpc, CX4_QPC_RQ_TYPE);
	uint32_t pd = cx4_get(qpc, CX4_QPC_PD), uar = cx4_get(qpc, CX4_QPC_UAR_PAGE);
	uint32_t lrq = cx4_get(qpc, CX4_QPC_LOG_RQ_SIZE),
		 lstr = cx4_get(qpc, CX4_QPC_LOG_RQ_STRIDE);
	uint32_t lsq = cx4_get(qpc, CX4_QPC_LOG_SQ_SIZE), no_sq = cx4_get(qpc, CX4_QPC_NO_SQ);
	uint32_t lps = cx4_get(qpc, CX4_QPC_LOG_PAGE_SIZE), po = cx4_get(qpc, CX4_QPC_PAGE_OFFSET);
	struct mcq *scq = cx4m_cq_get(d, cx4_get(qpc, CX4_QPC_CQN_SND));
	struct mcq *rcq = cx4m_cq_get(d, cx4_get(qpc, CX4_QPC_CQN_RCV));
	struct msrq *srq = NULL;
	uint64_t rq_bytes = 0, sq_bytes = 0, psz, bytes;
	uint32_t npas, qpn;
	struct mqp *qp;

	/* the transports, the GSI QP, and the driver's UMR QP (send queue only,
	   mlx5r_umr_resource_init) */
	if (st != CX4_QP_ST_RC && st != CX4_QP_ST_UC && st != CX4_QP_ST_UD &&
	    st != CX4_QP_ST_QP1 && st != CX4_QP_ST_REG_UMR)
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(CREATE_QP), 1));
	if (st == CX4_QP_ST_REG_UMR && (rq_type != CX4_QP_RQ_TYPE_ZERO_LEN || no_sq))
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(CREATE_QP), 16));
	/* one GSI QP per port (the device's one port) */
	if (st == CX4_QP_ST_QP1 && d->gsi)
		return mcmd_err(c, CX4_CMD_STAT_BAD_RES_STATE_ERR, MSYND(OP(CREATE_QP), 16));
	if (cx4_get(c->in, CX4_CREATE_QP_IN_OPT_PARAM_MASK))
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(CREATE_QP), 2));
	if (!cx4m_idtab_get(&d->pds, pd))
		return mcmd_err(c, CX4_CMD_STAT_BAD_RES_ERR, MSYND(OP(CREATE_QP), 3));
	if (uar >= MDEV_UAR_PAGES || !d->uar_used[uar])
		return mcmd_err(c, CX4_CMD_STAT_BAD_RES_ERR, MSYND(OP(CREATE_QP), 4));
	if ((!no_sq && !scq) || !rcq)
		return mcmd_err(c, CX4_CMD_STAT_BAD_RES_ERR, MSYND(OP(CREATE_QP), 5));
	if (cx4_get(qpc, CX4_QPC_WQ_SIGNATURE) || lps > 20 ||
	    (cx4_get64(qpc, CX4_QPC_DBR_ADDR) & 7))
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(CREATE_QP), 6));
	switch (rq_type) {
	case CX4_QP_RQ_TYPE_REGULAR:
		/* RQ WQE = 16 << log_rq_stride bytes, at most max_wqe_sz_rq */
		if (lrq > cx4_get(cap, CX4_CAP_GEN_LOG_MAX_QP_SZ) ||
		    (16u << lstr) > cx4_get(cap, CX4_CAP_GEN_MAX_WQE_SZ_RQ))
			return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(CREATE_QP), 7));
		rq_bytes = (uint64_t)(16u << lstr) << lrq;
		break;
	case CX4_QP_RQ_TYPE_SRQ:
		srq = cx4m_srq_get(d, cx4_get(qpc, CX4_QPC_SRQN_RMPN_XRQN));
		if (!srq)
			return mcmd_err(c, CX4_CMD_STAT_BAD_RES_ERR, MSYND(OP(CREATE_QP), 8));
		break;
	case CX4_QP_RQ_TYPE_ZERO_LEN:
		break;
	default:
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(CREATE_QP), 9));
	}
	if (!no_sq) {
		if (lsq > cx4_get(cap, CX4_CAP_GEN_LOG_MAX_QP_SZ))
			return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(CREATE_QP), 10));
		sq_bytes = (uint64_t)MLX5_SEND_WQE_BB << lsq;
	}
	bytes = rq_bytes + sq_bytes;
	psz = 1ull << (12 + lps);
	npas = bytes ? (uint32_t)((po * 64ull + bytes + psz - 1) / psz) : 0;
	if ((uint64_t)CX4_CREATE_QP_IN_PAS + 8ull * npas > c->ilen)
		return mcmd_err(c, CX4_CMD_STAT_BAD_INP_LEN_ERR, MSYND(OP(CREATE_QP), 11));
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return mcmd_err(c, CX4_CMD_STAT_NO_RES_ERR, MSYND(OP(CREATE_QP), 12));
	if (npas && cx4m_dbuf_init(&qp->buf, c->in + CX4_CREATE_QP_IN_PAS, npas, lps, po, bytes)) {
		free(qp);
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(OP(CREATE_QP), 13));
	}
	if (!no_sq) {
		qp->req.swq_size = 1u << lsq;
		qp->req.swq = calloc(qp->req.swq_size, sizeof(*qp->req.swq));
		qp->req.cur = malloc(sizeof(*qp->req.cur));
		if (!qp->req.swq || !qp->req.cur) {
			free(qp->req.swq);
			free(qp->req.cur);
			cx4m_dbuf_free(&qp->buf);
			free(qp);
			return mcmd_err(c, CX4_CMD_STAT_NO_RES_ERR, MSYND(OP(CREATE_QP), 14));
		}
	}
	qpn = cx4m_idtab_alloc(&d->qps, qp);
	if (qpn == UINT32_MAX || cx4m_icm_table_get(d, &d->icm.qpc, qpn - QPN_BASE)) {
		if (qpn != UINT32_MAX)
			cx4m_idtab_remove(&d->qps, qpn);
		free(qp->req.swq);
		free(qp->req.cur);
		cx4m_dbuf_free(&qp->buf);
		free(qp);
		return mcmd_err(c, CX4_CMD_STAT_NO_RES_ERR, MSYND(OP(CREATE_QP), 15));
	}
	qp->qpn = qpn;
	qp->icm_idx = qpn - QPN_BASE;
	qp->st = (uint8_t)st;
	qp->state = CX4_QP_STATE_RST;
	if (st == CX4_QP_ST_QP1)
		d->gsi = qp;
	qp->pd = pd;
	qp->uar = uar;
	d->uar_used[uar]++;
	qp->user_index = cx4_get(qpc, CX4_QPC_USER_INDEX);
	qp->scq = no_sq ? NULL : scq;
	qp->rcq = rcq;
	if (qp->scq)
		qp->scq->refs++;
	rcq->refs++;
	qp->srq = srq;
	if (srq)
		srq->refs++;
	qp->rq_type = (uint8_t)rq_type;
	qp->no_sq = no_sq;
	qp->rlky = cx4_get(qpc, CX4_QPC_RLKY);
	qp->rq_wqe_cnt = rq_type == CX4_QP_RQ_TYPE_REGULAR ? 1u << lrq : 0;
	qp->rq_stride_shift = 4 + lstr;
	qp->sq_wqebbs = no_sq ? 0 : 1u << lsq;
	qp->sq_off = rq_bytes;
	qp->dbr = cx4_get64(qpc, CX4_QPC_DBR_ADDR);
	qp->qkey = cx4_get(qpc, CX4_QPC_Q_KEY);
	qp->mtu_code = CX4_QP_MTU_1024;
	qp->pmtu = 1024;
	qp->sock = 0;
	qp->sport = d->net.ntx ? d->net.tx[0].port : 0;
	cx4m_mtimer_init(&qp->req.retry_timer, cx4m_comp_retry_timeout);
	cx4m_mtimer_init(&qp->req.rnr_timer, cx4m_comp_rnr_timeout);
	save_qpc(d, qp, qpc, 0, OP(CREATE_QP));
	cx4_set(qp->qpc, CX4_QPC_STATE, CX4_QP_STATE_RST);
	cx4_set(c->out, CX4_CREATE_QP_OUT_QPN, qpn);
	return CX4_CMD_STAT_OK;
}

/* ---- transitions -------------------------------------------------------------------------------
 */

struct trans {
	uint16_t op;
	uint8_t from; /* 0xff: any */
	uint8_t to;
};

static const struct trans trans[] = {
    {OP(RST2INIT_QP), CX4_QP_STATE_RST, CX4_QP_STATE_INIT},
    {OP(INIT2INIT_QP), CX4_QP_STATE_INIT, CX4_QP_STATE_INIT},
    {OP(INIT2RTR_QP), CX4_QP_STATE_INIT, CX4_QP_STATE_RTR},
    {OP(RTR2RTS_QP), CX4_QP_STATE_RTR, CX4_QP_STATE_RTS},
    {OP(RTS2RTS_QP), CX4_QP_STATE_RTS, CX4_QP_STATE_RTS},
    {OP(SQERR2RTS_QP), CX4_QP_STATE_SQER, CX4_QP_STATE_RTS},
    {OP(SQD_RTS_QP), CX4_QP_STATE_SQD, CX4_QP_STATE_RTS},
    {OP(2ERR_QP), 0xff, CX4_QP_STATE_ERR},
    {OP(2RST_QP), 0xff, CX4_QP_STATE_RST},
};

#define OPT(b) (mask & CX4_QP_OPTPAR_##b)

static int modify_qp(struct mdev *d, struct mcmd *c)
{
	struct mqp *qp = cx4m_qp_get(d, cx4_get(c->in, CX4_MODIFY_QP_IN_QPN));
	const uint8_t *qpc = c->in + CX4_MODIFY_QP_IN_QPC;
	const uint8_t *ads = qpc + CX4_QPC_PRIMARY_ADDRESS_PATH;
	const struct trans *t = NULL;
	bool has_ctx = c->ilen >= CX4_MODIFY_QP_IN_QPC + CX4_QPC_SIZE;
	uint32_t mask = has_ctx ? cx4_get(c->in, CX4_MODIFY_QP_IN_OPT_PARAM_MASK) : 0;
	bool rc = false, conn = false;

	for (size_t i = 0; i < sizeof(trans) / sizeof(trans[0]); i++)
		if (trans[i].op == c->opcode)
			t = &trans[i];
	if (!qp)
		return mcmd_err(c, CX4_CMD_STAT_BAD_RES_ERR, MSYND(c->opcode, 1));
	rc = qp->st == CX4_QP_ST_RC;
	conn = qp->st == CX4_QP_ST_RC || qp->st == CX4_QP_ST_UC;
	if (t->from != 0xff && qp->state != t->from)
		return mcmd_err(c, CX4_CMD_STAT_BAD_QP_STATE_ERR, MSYND(c->opcode, 2));
	if (t->from != 0xff && !has_ctx)
		return mcmd_err(c, CX4_CMD_STAT_BAD_INP_LEN_ERR, MSYND(c->opcode, 3));
	if (mask & ~cx4_qp_optmask_allowed(c->opcode, qp->st))
		return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(c->opcode, 4));

	switch (c->opcode) {
	case OP(2ERR_QP):
		if (qp->state == CX4_QP_STATE_RST) {
			qp->state = CX4_QP_STATE_ERR;
			cx4m_qp_activate(d, qp);
		} else {
			cx4m_qp_to_error(d, qp, 0xff);
		}
		break;
	case OP(2RST_QP):
		unlink_lists(d, qp);
		reset_transport(d, qp);
		qp->state = CX4_QP_STATE_RST;
		break;
	case OP(RST2INIT_QP): {
		uint32_t port = cx4_get(ads, CX4_ADS_VHCA_PORT_NUM);

		if (port > 1)
			return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(c->opcode, 5));
		if (rc) {
			qp->rre = cx4_get(qpc, CX4_QPC_RRE);
			qp->rae = cx4_get(qpc, CX4_QPC_RAE);
		}
		if (conn)
			qp->rwe = cx4_get(qpc, CX4_QPC_RWE);
		else
			qp->qkey = cx4_get(qpc, CX4_QPC_Q_KEY);
		reset_transport(d, qp);
		qp->state = CX4_QP_STATE_INIT;
		break;
	}
	case OP(INIT2RTR_QP): {
		uint32_t mtu = cx4_get(qpc, CX4_QPC_MTU);

		if (conn || mtu) {
			if (mtu < CX4_QP_MTU_256 || mtu > CX4_QP_MTU_4096)
				return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(c->opcode, 6));
			qp->mtu_code = (uint8_t)mtu;
			qp->pmtu = roce_mtu_bytes(mtu);
		}
		if (conn) {
			uint32_t synd = apply_path(d, qp, qpc);

			if (synd)
				return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR,
						MSYND(c->opcode, 8 + synd));
			qp->log_msg_max = cx4_get(qpc, CX4_QPC_LOG_MSG_MAX);
			qp->remote_qpn = cx4_get(qpc, CX4_QPC_REMOTE_QPN);
			qp->resp.epsn = cx4_get(qpc, CX4_QPC_NEXT_RCV_PSN);
		}
		if (rc) {
			qp->min_rnr_nak = (uint8_t)cx4_get(qpc, CX4_QPC_MIN_RNR_NAK);
			qp->log_rra_max = (uint8_t)cx4_get(qpc, CX4_QPC_LOG_RRA_MAX);
		}
		break;
	}
	case OP(RTR2RTS_QP):
		qp->req.psn = cx4_get(qpc, CX4_QPC_NEXT_SEND_PSN);
		qp->req.ack_psn = qp->req.psn;
		qp->req.sent_psn = qp->req.psn;
		if (rc) {
			qp->retry_count = (uint8_t)cx4_get(qpc, CX4_QPC_RETRY_COUNT);
			qp->rnr_retry = (uint8_t)cx4_get(qpc, CX4_QPC_RNR_RETRY);
			qp->ack_timeout = (uint8_t)cx4_get(ads, CX4_ADS_ACK_TIMEOUT);
			qp->log_sra_max = (uint8_t)cx4_get(qpc, CX4_QPC_LOG_SRA_MAX);
			qp->req.retry_left = qp->retry_count;
			qp->req.rnr_left = qp->rnr_retry;
		}
		break;
	default:
		break;
	}
	/* optional parameters, when the transition takes them and the mask says so */
	if (OPT(RRE))
		qp->rre = cx4_get(qpc, CX4_QPC_RRE);
	if (OPT(RAE))
		qp->rae = cx4_get(qpc, CX4_QPC_RAE);
	if (OPT(RWE))
		qp->rwe = cx4_get(qpc, CX4_QPC_RWE);
	if (OPT(Q_KEY))
		qp->qkey = cx4_get(qpc, CX4_QPC_Q_KEY);
	if (OPT(RNR_TIMEOUT))
		qp->min_rnr_nak = (uint8_t)cx4_get(qpc, CX4_QPC_MIN_RNR_NAK);
	if (OPT(RRA_MAX))
		qp->log_rra_max = (uint8_t)cx4_get(qpc, CX4_QPC_LOG_RRA_MAX);
	if (OPT(SRA_MAX))
		qp->log_sra_max = (uint8_t)cx4_get(qpc, CX4_QPC_LOG_SRA_MAX);
	if (OPT(RETRY_COUNT))
		qp->req.retry_left = qp->retry_count = (uint8_t)cx4_get(qpc, CX4_QPC_RETRY_COUNT);
	if (OPT(RNR_RETRY))
		qp->req.rnr_left = qp->rnr_retry = (uint8_t)cx4_get(qpc, CX4_QPC_RNR_RETRY);
	if (OPT(ACK_TIMEOUT))
		qp->ack_timeout = (uint8_t)cx4_get(ads, CX4_ADS_ACK_TIMEOUT);
	if (OPT(PRIMARY_ADDR_PATH) && conn) {
		uint32_t synd = apply_path(d, qp, qpc);

		if (synd)
			return mcmd_err(c, CX4_CMD_STAT_BAD_PARAM_ERR, MSYND(c->opcode, 8 + synd));
	}
	if (t->to != CX4_QP_STATE_ERR && t->to != CX4_QP_STATE_RST)
		qp->state = t->to;
	if (has_ctx && t->from != 0xff)
		save_qpc(d, qp, qpc, mask, c->opcode);
	/* WQEs posted before RTS start now */
	if (qp->state == CX4_QP_STATE_RTS && !qp->no_sq)
		cx4m_qp_activate(d, qp);
	return CX4_CMD_STAT_OK;
}

/* ---- QUERY_QP / DESTROY_QP ------------------------------------------------------------------- */

static int query_qp(struct mdev *d, struct mcmd *c)
{
	struct mqp *qp = cx4m_qp_get(d, cx4_get(c->in, CX4_QUERY_QP_IN_QPN));
	uint8_t *qpc = c->out + CX4_QUERY_QP_OUT_QPC;

	if (!qp)
		return mcmd_err(c, CX4_CMD_STAT_BAD_RES_ERR, MSYND(OP(QUERY_QP), 1));
	if (cx4m_icm_ctx_read(d, &d->icm.qpc, qp->icm_idx, qpc, CX4_QPC_SIZE))
		return mcmd_err(c, CX4_CMD_STAT_INT_ERR, MSYND(OP(QUERY_QP), 2));
	/* the live values of what the device keeps moving */
	cx4_set(qpc, CX4_QPC_STATE, qp->state);
	cx4_set(qpc, CX4_QPC_MTU, qp->mtu_code);
	cx4_set(qpc, CX4_QPC_NEXT_SEND_PSN, qp->req.psn);
	cx4_set(qpc, CX4_QPC_NEXT_RCV_PSN, qp->resp.epsn);
	cx4_set(qpc, CX4_QPC_LAST_ACKED_PSN, (qp->req.ack_psn - 1) & IB_PSN_MASK);
	cx4_set(qpc, CX4_QPC_RMSN, qp->resp.msn);
	cx4_set(qpc, CX4_QPC_RRE, qp->rre);
	cx4_set(qpc, CX4_QPC_RWE, qp->rwe);
	cx4_set(qpc, CX4_QPC_RAE, qp->rae);
	cx4_set(qpc, CX4_QPC_Q_KEY, qp->qkey);
	cx4_set(qpc, CX4_QPC_MIN_RNR_NAK, qp->min_rnr_nak);
	cx4_set(qpc, CX4_QPC_RETRY_COUNT, qp->retry_count);
	cx4_set(qpc, CX4_QPC_RNR_RETRY, qp->rnr_retry);
	cx4_set(qpc, CX4_QPC_PRI(CX4_ADS_ACK_TIMEOUT), qp->ack_timeout);
	cx4_set(qpc, CX4_QPC_PRI(CX4_ADS_UDP_SPORT), qp->sport);
	cx4_set(qpc, CX4_QPC_HW_SQ_WQEBB_COUNTER, qp->req.ci);
	cx4_set(qpc, CX4_QPC_HW_RQ_COUNTER, qp->resp.rq_ci);
	for (uint32_t i = 0; i < qp->buf.npages && CX4_QUERY_QP_OUT_PAS + 8 * (i + 1) <= c->olen;
	     i++)
		cx4_pas_set(c->out, CX4_QUERY_QP_OUT_PAS, i, qp->buf.pas[i]);
	return CX4_CMD_STAT_OK;
}

static int destroy_qp(struct mdev *d, struct mcmd *c)
{
	struct mqp *qp = cx4m_qp_get(d, cx4_get(c->in, CX4_QP_NOCTX_IN_QPN));

	if (!qp)
		return mcmd_err(c, CX4_CMD_STAT_BAD_RES_ERR, MSYND(OP(DESTROY_QP), 1));
	qp_free(d, qp);
	return CX4_CMD_STAT_OK;
}

static void free_one(void *obj, void *ctx)
{
	qp_free(ctx, obj);
}

void cx4m_qp_destroy_all(struct mdev *d)
{
	cx4m_idtab_foreach(&d->qps, free_one, d);
}

#define MQ() (CX4_MODIFY_QP_IN_QPC + CX4_QPC_SIZE)
const struct mcmd_desc cx4m_mcmd_qp[] = {
    {OP(CREATE_QP), MCMD_INIT, CX4_CREATE_QP_IN_SIZE, CX4_CREATE_QP_OUT_SIZE, create_qp},
    {OP(RST2INIT_QP), MCMD_INIT, MQ(), CX4_MODIFY_QP_OUT_SIZE, modify_qp},
    {OP(INIT2INIT_QP), MCMD_INIT, MQ(), CX4_MODIFY_QP_OUT_SIZE, modify_qp},
    {OP(INIT2RTR_QP), MCMD_INIT, MQ(), CX4_MODIFY_QP_OUT_SIZE, modify_qp},
    {OP(RTR2RTS_QP), MCMD_INIT, MQ(), CX4_MODIFY_QP_OUT_SIZE, modify_qp},
    {OP(RTS2RTS_QP), MCMD_INIT, MQ(), CX4_MODIFY_QP_OUT_SIZE, modify_qp},
    {OP(SQERR2RTS_QP), MCMD_INIT, MQ(), CX4_MODIFY_QP_OUT_SIZE, modify_qp},
    {OP(SQD_RTS_QP), MCMD_INIT, MQ(), CX4_MODIFY_QP_OUT_SIZE, modify_qp},
    {OP(2ERR_QP), MCMD_INIT, CX4_QP_2ERR_IN_SIZE, CX4_QP_NOCTX_OUT_SIZE, modify_qp},
    {OP(2RST_QP), MCMD_INIT, CX4_QP_2RST_IN_SIZE, CX4_QP_NOCTX_OUT_SIZE, modify_qp},
    {OP(QUERY_QP), MCMD_INIT, CX4_QUERY_QP_IN_SIZE, CX4_QUERY_QP_OUT_SIZE, query_qp},
    {OP(DESTROY_QP), MCMD_INIT, CX4_DESTROY_QP_IN_SIZE, CX4_QP_NOCTX_OUT_SIZE, destroy_qp},
    {0},
};
