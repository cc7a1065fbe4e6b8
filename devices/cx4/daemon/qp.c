// SPDX-License-Identifier: MIT
/*
 * Queue pairs: CREATE_QP, the state transition commands, QUERY_QP, DESTROY_QP, and the verbs
 * state machine in front of them, as Linux does it in two layers:
 *
 *  - ib_modify_qp_is_ok() (drivers/infiniband/core/verbs.c qp_state_table): which transitions
 *    exist for RC/UC/UD and which attributes each requires or allows;
 *  - __mlx5_ib_modify_qp() (drivers/infiniband/hw/mlx5/qp.c): the transition command for the
 *    (current, next) state pair, the QP context built from the attributes given, and the
 *    optional-parameter mask (attribute bits translated, then limited to what the PRM allows
 *    for that transition and service type, cx4_qp_optmask_allowed()).
 *
 * RoCE addressing (mlx5_set_path for an Ethernet port): the path always carries a GRH; the
 * remote MAC comes from resolving the destination GID (the kernel's ib_resolve_eth_dmac, here
 * ah.c); the UDP source port of RoCE v2 is the device's minimum source port; the network
 * type is the source GID entry's (the device knows it from SET_ROCE_ADDRESS).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "cx4d.h"

/* ---- ib_modify_qp_is_ok() for RC, UC and UD ------------------------------------------------ */
enum { T_UD, T_UC, T_RC, T_N };

struct trans {
	bool valid;
	uint32_t req[T_N];
	uint32_t opt[T_N];
};

#define A(x) IBV_QP_##x
static const struct trans qp_table[IBV_QPS_ERR + 1][IBV_QPS_ERR + 1] = {
	[IBV_QPS_RESET] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_INIT] = { .valid = true,
			.req = { [T_UD] = A(PKEY_INDEX) | A(PORT) | A(QKEY),
				 [T_UC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
				 [T_RC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS) } },
	},
	[IBV_QPS_INIT] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_INIT] = { .valid = true,
			.opt = { [T_UD] = A(PKEY_INDEX) | A(PORT) | A(QKEY),
				 [T_UC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
				 [T_RC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS) } },
		[IBV_QPS_RTR] = { .valid = true,
			.req = { [T_UC] = A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN),
				 [T_RC] = A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN) |
					  A(MAX_DEST_RD_ATOMIC) | A(MIN_RNR_TIMER) },
			.opt = { [T_UD] = A(PKEY_INDEX) | A(QKEY),
				 [T_UC] = A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX),
				 [T_RC] = A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX) } },
	},
	[IBV_QPS_RTR] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_RTS] = { .valid = true,
			.req = { [T_UD] = A(SQ_PSN), [T_UC] = A(SQ_PSN),
				 [T_RC] = A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) | A(SQ_PSN) |
					  A(MAX_QP_RD_ATOMIC) },
			.opt = { [T_UD] = A(CUR_STATE) | A(QKEY),
				 [T_UC] = A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) |
					  A(PATH_MIG_STATE),
				 [T_RC] = A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) |
					  A(MIN_RNR_TIMER) | A(PATH_MIG_STATE) } },
	},
	[IBV_QPS_RTS] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_RTS] = { .valid = true,
			.opt = { [T_UD] = A(CUR_STATE) | A(QKEY),
				 [T_UC] = A(CUR_STATE) | A(ACCESS_FLAGS) | A(ALT_PATH) |
					  A(PATH_MIG_STATE),
				 [T_RC] = A(CUR_STATE) | A(ACCESS_FLAGS) | A(ALT_PATH) |
					  A(PATH_MIG_STATE) | A(MIN_RNR_TIMER) } },
		[IBV_QPS_SQD] = { .valid = true,
			.opt = { [T_UD] = A(EN_SQD_ASYNC_NOTIFY), [T_UC] = A(EN_SQD_ASYNC_NOTIFY),
				 [T_RC] = A(EN_SQD_ASYNC_NOTIFY) } },
	},
	[IBV_QPS_SQD] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_RTS] = { .valid = true,
			.opt = { [T_UD] = A(CUR_STATE) | A(QKEY),
				 [T_UC] = A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) |
					  A(PATH_MIG_STATE),
				 [T_RC] = A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) |
					  A(MIN_RNR_TIMER) | A(PATH_MIG_STATE) } },
	},
	[IBV_QPS_SQE] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_RTS] = { .valid = true,
			.opt = { [T_UD] = A(CUR_STATE) | A(QKEY),
				 [T_UC] = A(CUR_STATE) | A(ACCESS_FLAGS) } },
	},
	[IBV_QPS_ERR] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
	},
};

static int ttype(uint32_t qpt)
{
	return qpt == IBV_QPT_UD ? T_UD : qpt == IBV_QPT_UC ? T_UC : T_RC;
}

static bool modify_ok(uint32_t cur, uint32_t next, uint32_t qpt, uint32_t mask)
{
	const struct trans *t;
	int ty = ttype(qpt);

	if (cur > IBV_QPS_ERR || next > IBV_QPS_ERR)
		return false;
	if ((mask & IBV_QP_CUR_STATE) && cur != IBV_QPS_RTR && cur != IBV_QPS_RTS &&
	    cur != IBV_QPS_SQD && cur != IBV_QPS_SQE)
		return false;
	t = &qp_table[cur][next];
	if (!t->valid)
		return false;
	if ((mask & t->req[ty]) != t->req[ty])
		return false;
	return !(mask & ~(t->req[ty] | t->opt[ty] | IBV_QP_STATE));
}

/* ---- helpers ------------------------------------------------------------------------------- */
static unsigned int st_of(uint32_t qpt)
{
	return qpt == IBV_QPT_UD ? CX4_QP_ST_UD : qpt == IBV_QPT_UC ? CX4_QP_ST_UC : CX4_QP_ST_RC;
}

/* Linux fls(x - 1): the log2 the context stores for max_rd_atomic-style counts. */
static unsigned int log_count(unsigned int x)
{
	unsigned int l = 0;

	if (!x)
		return 0;
	x--;
	while (x) {
		l++;
		x >>= 1;
	}
	return l;
}

static int qp_cmd(struct cx4d *d, uint16_t opcode, uint32_t qpn, uint32_t optpar,
		  const uint8_t *qpc)
{
	uint8_t in[CX4_MODIFY_QP_IN_SIZE] = { 0 }, out[CX4_MODIFY_QP_OUT_SIZE];

	cx4d_cmd_set_header(in, opcode, 0);
	cx4_set(in, CX4_MODIFY_QP_IN_QPN, qpn);
	if (qpc) {
		cx4_set(in, CX4_MODIFY_QP_IN_OPT_PARAM_MASK, optpar);
		memcpy(in + CX4_MODIFY_QP_IN_QPC, qpc, CX4_QPC_SIZE);
		return cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
	}
	return cx4d_cmd(d, in, CX4_QP_2ERR_IN_SIZE, out, sizeof(out));
}

/* ---- create --------------------------------------------------------------------------------- */
int cx4d_qp_create(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q)
{
	const struct cx4_create_qp_req *req = q->in;
	struct cx4_create_qp_rsp *rsp = q->r->payload;
	uint8_t in[CX4_CREATE_QP_IN_SIZE + 8] = { 0 }, out[CX4_CREATE_QP_OUT_SIZE];
	uint8_t *qpc = in + CX4_CREATE_QP_IN_QPC;
	unsigned int log_max = cx4_get(d->cap_gen, CX4_CAP_GEN_LOG_MAX_QP_SZ);
	struct cx4d_pd *pd;
	struct cx4d_cq *scq, *rcq;
	struct cx4d_srq *srq = NULL;
	struct cx4d_qp *qp;
	uint64_t rq_bytes = 0, sq_bytes = 0;
	int err;

	if (q->len != sizeof(*req) || q->nfds < 1 || !cl->has_uar)
		return EINVAL;
	if (req->qp_type != IBV_QPT_RC && req->qp_type != IBV_QPT_UC && req->qp_type != IBV_QPT_UD)
		return EOPNOTSUPP;
	if (req->flags & ~(CX4_QP_NO_SQ | CX4_QP_SRQ | CX4_QP_ZERO_RQ))
		return EINVAL;
	pd = cx4d_obj_get(cl, req->pd_handle, CX4D_OBJ_PD);
	scq = cx4d_obj_get(cl, req->send_cq_handle, CX4D_OBJ_CQ);
	rcq = cx4d_obj_get(cl, req->recv_cq_handle, CX4D_OBJ_CQ);
	if (req->flags & CX4_QP_SRQ) {
		srq = cx4d_obj_get(cl, req->srq_handle, CX4D_OBJ_SRQ);
		if (!srq || (req->flags & CX4_QP_ZERO_RQ))
			return EINVAL;
	}
	if (!pd || !scq || !rcq || req->user_index > 0xffffff)
		return EINVAL;
	if (!(req->flags & CX4_QP_NO_SQ)) {
		if (req->log_sq_size > log_max || req->log_sq_size > 15)
			return EINVAL;
		sq_bytes = 64ull << req->log_sq_size;
	}
	if (!(req->flags & (CX4_QP_SRQ | CX4_QP_ZERO_RQ))) {
		if (req->log_rq_size > log_max || req->log_rq_size > 15 || req->log_rq_stride > 7 ||
		    (16u << req->log_rq_stride) > cx4_get(d->cap_gen, CX4_CAP_GEN_MAX_WQE_SZ_RQ))
			return EINVAL;
		rq_bytes = (16ull << req->log_rq_stride) << req->log_rq_size;
	}
	if (req->buf_len % CX4D_PAGE || req->dbr_offset % 64 ||
	    req->dbr_offset < rq_bytes + sq_bytes || req->dbr_offset + 8 > req->buf_len)
		return EINVAL;

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return ENOMEM;
	err = cx4d_umem_map_fd(d, q->fds[0], req->buf_len, &qp->umem);
	if (err)
		goto fail;
	cx4d_cmd_set_header(in, CX4_CMD_OP_CREATE_QP, 0);
	cx4_set(qpc, CX4_QPC_ST, st_of(req->qp_type));
	cx4_set(qpc, CX4_QPC_PM_STATE, CX4_QP_PM_MIGRATED);
	cx4_set(qpc, CX4_QPC_PD, pd->pdn);
	cx4_set(qpc, CX4_QPC_UAR_PAGE, cl->uar);
	cx4_set(qpc, CX4_QPC_USER_INDEX, req->user_index);
	if (rq_bytes) {
		cx4_set(qpc, CX4_QPC_LOG_RQ_SIZE, req->log_rq_size);
		cx4_set(qpc, CX4_QPC_LOG_RQ_STRIDE, req->log_rq_stride);
		cx4_set(qpc, CX4_QPC_RQ_TYPE, CX4_QP_RQ_TYPE_REGULAR);
	} else if (srq) {
		cx4_set(qpc, CX4_QPC_RQ_TYPE, CX4_QP_RQ_TYPE_SRQ);
		cx4_set(qpc, CX4_QPC_SRQN_RMPN_XRQN, srq->srqn);
	} else {
		cx4_set(qpc, CX4_QPC_RQ_TYPE, CX4_QP_RQ_TYPE_ZERO_LEN);
	}
	if (sq_bytes)
		cx4_set(qpc, CX4_QPC_LOG_SQ_SIZE, req->log_sq_size);
	else
		cx4_set(qpc, CX4_QPC_NO_SQ, 1);
	cx4_set(qpc, CX4_QPC_CQN_SND, scq->cqn);
	cx4_set(qpc, CX4_QPC_CQN_RCV, rcq->cqn);
	cx4_set(qpc, CX4_QPC_LOG_PAGE_SIZE, cx4d_pas_log_page(rq_bytes + sq_bytes));
	cx4_set64(qpc, CX4_QPC_DBR_ADDR, qp->umem.iova + req->dbr_offset);
	cx4_pas_set(in, CX4_CREATE_QP_IN_PAS, 0, qp->umem.iova);
	err = cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
	if (err)
		goto fail;
	qp->qpn = cx4_get(out, CX4_CREATE_QP_OUT_QPN);
	qp->type = req->qp_type;
	qp->user_handle = req->user_handle;
	qp->state = IBV_QPS_RESET;
	qp->port = 1;
	err = cx4d_obj_add(cl, &qp->o, CX4D_OBJ_QP);
	if (!err)
		err = cx4d_idmap_put(&d->qps, qp->qpn, qp);
	if (err) {
		uint8_t din[CX4_DESTROY_QP_IN_SIZE] = { 0 }, dout[CX4_QP_NOCTX_OUT_SIZE];

		cx4d_obj_remove(cl, &qp->o);
		cx4d_cmd_set_header(din, CX4_CMD_OP_DESTROY_QP, 0);
		cx4_set(din, CX4_QP_NOCTX_IN_QPN, qp->qpn);
		cx4d_cmd(d, din, sizeof(din), dout, sizeof(dout));
		goto fail;
	}
	qp->pd = pd;
	qp->scq = scq;
	qp->rcq = rcq;
	qp->srq = srq;
	pd->o.users++;
	scq->o.users++;
	rcq->o.users++;
	if (srq)
		srq->o.users++;
	rsp->handle = qp->o.handle;
	rsp->qpn = qp->qpn;
	q->r->len = sizeof(*rsp);
	return 0;
fail:
	cx4d_umem_unmap(d, &qp->umem);
	free(qp);
	return err;
}

/* ---- modify ---------------------------------------------------------------------------------- */
/* Linux ib_mask_to_mlx5_opt() */
static uint32_t mask_to_optpar(uint32_t m)
{
	uint32_t o = 0;

	if (m & IBV_QP_ACCESS_FLAGS)
		o |= CX4_QP_OPTPAR_RRE | CX4_QP_OPTPAR_RAE | CX4_QP_OPTPAR_RWE;
	if (m & IBV_QP_PKEY_INDEX)
		o |= CX4_QP_OPTPAR_PKEY_INDEX;
	if (m & IBV_QP_PORT)
		o |= CX4_QP_OPTPAR_PRI_PORT;
	if (m & IBV_QP_QKEY)
		o |= CX4_QP_OPTPAR_Q_KEY;
	if (m & IBV_QP_AV)
		o |= CX4_QP_OPTPAR_PRIMARY_ADDR_PATH;
	if (m & IBV_QP_TIMEOUT)
		o |= CX4_QP_OPTPAR_ACK_TIMEOUT;
	if (m & IBV_QP_RETRY_CNT)
		o |= CX4_QP_OPTPAR_RETRY_COUNT;
	if (m & IBV_QP_RNR_RETRY)
		o |= CX4_QP_OPTPAR_RNR_RETRY;
	if (m & IBV_QP_MIN_RNR_TIMER)
		o |= CX4_QP_OPTPAR_RNR_TIMEOUT;
	if (m & IBV_QP_MAX_QP_RD_ATOMIC)
		o |= CX4_QP_OPTPAR_SRA_MAX;
	if (m & IBV_QP_MAX_DEST_RD_ATOMIC)
		o |= CX4_QP_OPTPAR_RRA_MAX;
	if (m & IBV_QP_ALT_PATH)
		o |= CX4_QP_OPTPAR_ALT_ADDR_PATH;
	if (m & IBV_QP_PATH_MIG_STATE)
		o |= CX4_QP_OPTPAR_PM_STATE;
	return o;
}

static uint16_t transition_cmd(uint32_t cur, uint32_t next)
{
	if (next == IBV_QPS_RESET)
		return CX4_CMD_OP_2RST_QP;
	if (next == IBV_QPS_ERR)
		return CX4_CMD_OP_2ERR_QP;
	if (cur == IBV_QPS_RESET && next == IBV_QPS_INIT)
		return CX4_CMD_OP_RST2INIT_QP;
	if (cur == IBV_QPS_INIT && next == IBV_QPS_INIT)
		return CX4_CMD_OP_INIT2INIT_QP;
	if (cur == IBV_QPS_INIT && next == IBV_QPS_RTR)
		return CX4_CMD_OP_INIT2RTR_QP;
	if (cur == IBV_QPS_RTR && next == IBV_QPS_RTS)
		return CX4_CMD_OP_RTR2RTS_QP;
	if (cur == IBV_QPS_RTS && next == IBV_QPS_RTS)
		return CX4_CMD_OP_RTS2RTS_QP;
	if (cur == IBV_QPS_SQE && next == IBV_QPS_RTS)
		return CX4_CMD_OP_SQERR2RTS_QP;
	return 0;	/* SQD: not supported (mlx5_ib neither drains to SQD on ConnectX-4) */
}

/* Linux mlx5_set_path() for an Ethernet (RoCE) port. */
static int set_path(struct cx4d *d, struct cx4d_qp *qp, const struct cx4_ah_attr *ah,
		    uint8_t *ads)
{
	uint8_t dmac[6], sgid[16];
	int err, v2;

	if (!ah->is_global || cx4d_gid_get(d, ah->sgid_index, sgid, &v2))
		return EINVAL;	/* RoCE addresses are always global, from a valid GID */
	err = cx4d_resolve_dmac(d, ah->dgid, dmac);
	if (err)
		return err;
	memset(ads, 0, CX4_ADS_SIZE);
	cx4_set(ads, CX4_ADS_GRH, 1);
	cx4_set(ads, CX4_ADS_SRC_ADDR_INDEX, ah->sgid_index);
	cx4_set(ads, CX4_ADS_HOP_LIMIT, ah->hop_limit);
	cx4_set(ads, CX4_ADS_TCLASS, ah->traffic_class);
	cx4_set(ads, CX4_ADS_FLOW_LABEL, ah->flow_label & 0xfffff);
	cx4_set_bytes(ads, CX4_ADS_RGID_RIP_OFF, ah->dgid, 16);
	cx4_set(ads, CX4_ADS_DSCP, ah->traffic_class >> 2);
	if (v2)	/* RoCE v1 has no UDP header */
		cx4_set(ads, CX4_ADS_UDP_SPORT,
			cx4_get(d->cap_roce, CX4_CAP_ROCE_R_ROCE_MIN_SRC_UDP_PORT));
	cx4_set(ads, CX4_ADS_ETH_PRIO, ah->sl & 7);
	cx4_set(ads, CX4_ADS_RMAC_47_32, dmac[0] << 8 | dmac[1]);
	cx4_set(ads, CX4_ADS_RMAC_31_0, (uint32_t)dmac[2] << 24 | dmac[3] << 16 | dmac[4] << 8 |
					dmac[5]);
	(void)qp;
	return 0;
}

/* Linux to_mlx5_access_flags(): read/atomic only with responder resources. */
static void set_access(uint8_t *qpc, uint32_t access, unsigned int dest_rd_atomic)
{
	if (!dest_rd_atomic)
		access &= IBV_ACCESS_REMOTE_WRITE;
	cx4_set(qpc, CX4_QPC_RRE, !!(access & IBV_ACCESS_REMOTE_READ));
	cx4_set(qpc, CX4_QPC_RWE, !!(access & IBV_ACCESS_REMOTE_WRITE));
	if (access & IBV_ACCESS_REMOTE_ATOMIC) {
		cx4_set(qpc, CX4_QPC_RAE, 1);
		cx4_set(qpc, CX4_QPC_ATOMIC_MODE, CX4_QP_ATOMIC_MODE_IB_SPEC);
	}
}

int cx4d_qp_modify(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q)
{
	const struct cx4_modify_qp_req *a = q->in;
	uint8_t qpc[CX4_QPC_SIZE] = { 0 };
	uint8_t *ads = qpc + CX4_QPC_PRIMARY_ADDRESS_PATH;
	uint8_t new_ads[CX4_ADS_SIZE];
	struct cx4d_qp *qp;
	uint32_t cur, next, m, optpar;
	uint16_t op;
	int err;

	if (q->len != sizeof(*a))
		return EINVAL;
	qp = cx4d_obj_get(cl, a->handle, CX4D_OBJ_QP);
	if (!qp)
		return EINVAL;
	m = a->attr_mask;
	cur = (m & IBV_QP_CUR_STATE) ? a->cur_qp_state : qp->state;
	next = (m & IBV_QP_STATE) ? a->qp_state : cur;
	if (!modify_ok(cur, next, qp->type, m))
		return EINVAL;
	if ((m & IBV_QP_PORT) && a->port_num != 1)
		return EINVAL;
	if ((m & IBV_QP_PKEY_INDEX) && a->pkey_index != 0)
		return EINVAL;	/* one pkey on a RoCE port */
	if ((m & IBV_QP_PATH_MTU) && (a->path_mtu < IBV_MTU_256 || a->path_mtu > IBV_MTU_4096))
		return EINVAL;
	if ((m & IBV_QP_MAX_QP_RD_ATOMIC) &&
	    a->max_rd_atomic > 1u << cx4_get(d->cap_gen, CX4_CAP_GEN_LOG_MAX_RA_REQ_QP))
		return EINVAL;
	if ((m & IBV_QP_MAX_DEST_RD_ATOMIC) &&
	    a->max_dest_rd_atomic > 1u << cx4_get(d->cap_gen, CX4_CAP_GEN_LOG_MAX_RA_RES_QP))
		return EINVAL;
	if ((m & IBV_QP_ALT_PATH) || (m & IBV_QP_PATH_MIG_STATE))
		return EOPNOTSUPP;	/* no automatic path migration on a single-port device */
	if (m & IBV_QP_AV) {
		err = set_path(d, qp, &a->ah, new_ads);
		if (err)
			return err;
	}
	op = transition_cmd(cur, next);
	if (!op)
		return EOPNOTSUPP;

	if (op == CX4_CMD_OP_2RST_QP || op == CX4_CMD_OP_2ERR_QP) {
		err = qp_cmd(d, op, qp->qpn, 0, NULL);
		if (err)
			return err;
		qp->state = next;
		return 0;
	}

	/* the context: what Linux always sets, then what the attributes give */
	cx4_set(qpc, CX4_QPC_ST, st_of(qp->type));
	cx4_set(qpc, CX4_QPC_PM_STATE, CX4_QP_PM_MIGRATED);
	cx4_set(qpc, CX4_QPC_CQN_SND, qp->scq->cqn);
	cx4_set(qpc, CX4_QPC_CQN_RCV, qp->rcq->cqn);
	cx4_set(qpc, CX4_QPC_LOG_ACK_REQ_FREQ, 8);	/* MLX5_IB_ACK_REQ_FREQ */
	if (qp->type == IBV_QPT_UD) {
		cx4_set(qpc, CX4_QPC_MTU, CX4_QP_MTU_4096);
		cx4_set(qpc, CX4_QPC_LOG_MSG_MAX, 12);
	} else if (m & IBV_QP_PATH_MTU) {
		cx4_set(qpc, CX4_QPC_MTU, a->path_mtu);
		cx4_set(qpc, CX4_QPC_LOG_MSG_MAX, cx4_get(d->cap_gen, CX4_CAP_GEN_LOG_MAX_MSG));
	}
	if (m & IBV_QP_DEST_QPN)
		cx4_set(qpc, CX4_QPC_REMOTE_QPN, a->dest_qp_num & 0xffffff);
	/* the primary path as last programmed, updated by this request */
	memcpy(ads, qp->ads, CX4_ADS_SIZE);
	if (m & IBV_QP_AV)
		memcpy(ads, new_ads, CX4_ADS_SIZE);
	cx4_set(ads, CX4_ADS_VHCA_PORT_NUM, (m & IBV_QP_PORT) ? a->port_num : qp->port);
	if (m & IBV_QP_PKEY_INDEX)
		cx4_set(ads, CX4_ADS_PKEY_INDEX, a->pkey_index);
	if (m & IBV_QP_TIMEOUT)
		cx4_set(ads, CX4_ADS_ACK_TIMEOUT, a->timeout & 0x1f);
	if (m & IBV_QP_RNR_RETRY)
		cx4_set(qpc, CX4_QPC_RNR_RETRY, a->rnr_retry & 7);
	if (m & IBV_QP_RETRY_CNT)
		cx4_set(qpc, CX4_QPC_RETRY_COUNT, a->retry_cnt & 7);
	if ((m & IBV_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic)
		cx4_set(qpc, CX4_QPC_LOG_SRA_MAX, log_count(a->max_rd_atomic));
	if (m & IBV_QP_SQ_PSN)
		cx4_set(qpc, CX4_QPC_NEXT_SEND_PSN, a->sq_psn & 0xffffff);
	if ((m & IBV_QP_MAX_DEST_RD_ATOMIC) && a->max_dest_rd_atomic)
		cx4_set(qpc, CX4_QPC_LOG_RRA_MAX, log_count(a->max_dest_rd_atomic));
	if (m & (IBV_QP_ACCESS_FLAGS | IBV_QP_MAX_DEST_RD_ATOMIC))
		set_access(qpc, (m & IBV_QP_ACCESS_FLAGS) ? a->qp_access_flags : qp->access,
			   (m & IBV_QP_MAX_DEST_RD_ATOMIC) ? a->max_dest_rd_atomic :
							     qp->max_dest_rd_atomic);
	if (m & IBV_QP_MIN_RNR_TIMER)
		cx4_set(qpc, CX4_QPC_MIN_RNR_NAK, a->min_rnr_timer & 0x1f);
	if (m & IBV_QP_RQ_PSN)
		cx4_set(qpc, CX4_QPC_NEXT_RCV_PSN, a->rq_psn & 0xffffff);
	if (m & IBV_QP_QKEY)
		cx4_set(qpc, CX4_QPC_Q_KEY, a->qkey);

	/*
	 * Remote read and atomic rights follow the responder resources (set_access): when
	 * max_dest_rd_atomic arrives after the access flags (ibv_rc_pingpong, perftest: flags at
	 * INIT, resources at RTR) the context carries the now effective RRE/RAE, so name them
	 * in the mask too. Linux's ib_mask_to_mlx5_opt() does not; a device that applies only
	 * the fields the mask names would otherwise keep remote reads disabled.
	 */
	optpar = mask_to_optpar(m);
	if (m & IBV_QP_MAX_DEST_RD_ATOMIC)
		optpar |= CX4_QP_OPTPAR_RRE | CX4_QP_OPTPAR_RAE | CX4_QP_OPTPAR_RWE;
	optpar &= cx4_qp_optmask_allowed(op, st_of(qp->type));
	err = qp_cmd(d, op, qp->qpn, optpar, qpc);
	if (err)
		return err;

	/* what the kernel remembers of the QP (ib_qp_attr cache) */
	qp->state = next;
	memcpy(qp->ads, ads, CX4_ADS_SIZE);
	if (m & IBV_QP_AV)
		qp->ah = a->ah;
	if (m & IBV_QP_PORT)
		qp->port = a->port_num;
	if (m & IBV_QP_ACCESS_FLAGS)
		qp->access = a->qp_access_flags;
	if (m & IBV_QP_QKEY)
		qp->qkey = a->qkey;
	if (m & IBV_QP_PATH_MTU)
		qp->mtu = a->path_mtu;
	if (m & IBV_QP_TIMEOUT)
		qp->timeout = a->timeout;
	if (m & IBV_QP_RETRY_CNT)
		qp->retry_cnt = a->retry_cnt;
	if (m & IBV_QP_RNR_RETRY)
		qp->rnr_retry = a->rnr_retry;
	if (m & IBV_QP_MIN_RNR_TIMER)
		qp->min_rnr_timer = a->min_rnr_timer;
	if (m & IBV_QP_MAX_QP_RD_ATOMIC)
		qp->max_rd_atomic = a->max_rd_atomic;
	if (m & IBV_QP_MAX_DEST_RD_ATOMIC)
		qp->max_dest_rd_atomic = a->max_dest_rd_atomic;
	return 0;
}

/* ---- query ----------------------------------------------------------------------------------- */
static uint32_t hw_to_ibv_state(unsigned int s, uint8_t *draining)
{
	*draining = 0;
	switch (s) {
	case CX4_QP_STATE_RST: return IBV_QPS_RESET;
	case CX4_QP_STATE_INIT: return IBV_QPS_INIT;
	case CX4_QP_STATE_RTR: return IBV_QPS_RTR;
	case CX4_QP_STATE_RTS: return IBV_QPS_RTS;
	case CX4_QP_STATE_SQER: return IBV_QPS_SQE;
	case CX4_QP_STATE_SQD: return IBV_QPS_SQD;
	case CX4_QP_STATE_SQ_DRAINING: *draining = 1; return IBV_QPS_SQD;
	case CX4_QP_STATE_ERR: return IBV_QPS_ERR;
	default: return IBV_QPS_UNKNOWN;
	}
}

int cx4d_qp_query(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q)
{
	const struct cx4_handle_req *req = q->in;
	struct cx4_query_qp_rsp *rsp = q->r->payload;
	uint8_t in[CX4_QUERY_QP_IN_SIZE] = { 0 }, *out;
	const uint8_t *qpc, *ads;
	struct cx4d_qp *qp;
	int err;

	if (q->len != sizeof(*req))
		return EINVAL;
	qp = cx4d_obj_get(cl, req->handle, CX4D_OBJ_QP);
	if (!qp)
		return EINVAL;
	out = calloc(1, CX4_QUERY_QP_OUT_SIZE + 8);
	if (!out)
		return ENOMEM;
	cx4d_cmd_set_header(in, CX4_CMD_OP_QUERY_QP, 0);
	cx4_set(in, CX4_QUERY_QP_IN_QPN, qp->qpn);
	err = cx4d_cmd(d, in, sizeof(in), out, CX4_QUERY_QP_OUT_SIZE + 8);
	if (err)
		goto out;
	qpc = out + CX4_QUERY_QP_OUT_QPC;
	ads = qpc + CX4_QPC_PRIMARY_ADDRESS_PATH;
	memset(rsp, 0, sizeof(*rsp));
	rsp->qp_state = hw_to_ibv_state(cx4_get(qpc, CX4_QPC_STATE), &rsp->sq_draining);
	rsp->path_mtu = cx4_get(qpc, CX4_QPC_MTU);
	rsp->qkey = cx4_get(qpc, CX4_QPC_Q_KEY);
	rsp->rq_psn = cx4_get(qpc, CX4_QPC_NEXT_RCV_PSN);
	rsp->sq_psn = cx4_get(qpc, CX4_QPC_NEXT_SEND_PSN);
	rsp->dest_qp_num = cx4_get(qpc, CX4_QPC_REMOTE_QPN);
	rsp->qp_access_flags = (cx4_get(qpc, CX4_QPC_RRE) ? IBV_ACCESS_REMOTE_READ : 0) |
			       (cx4_get(qpc, CX4_QPC_RWE) ? IBV_ACCESS_REMOTE_WRITE : 0) |
			       (cx4_get(qpc, CX4_QPC_RAE) ? IBV_ACCESS_REMOTE_ATOMIC : 0);
	rsp->pkey_index = cx4_get(ads, CX4_ADS_PKEY_INDEX);
	rsp->port_num = cx4_get(ads, CX4_ADS_VHCA_PORT_NUM) ?: qp->port;
	rsp->max_rd_atomic = 1 << cx4_get(qpc, CX4_QPC_LOG_SRA_MAX);
	rsp->max_dest_rd_atomic = 1 << cx4_get(qpc, CX4_QPC_LOG_RRA_MAX);
	rsp->min_rnr_timer = cx4_get(qpc, CX4_QPC_MIN_RNR_NAK);
	rsp->timeout = cx4_get(ads, CX4_ADS_ACK_TIMEOUT);
	rsp->retry_cnt = cx4_get(qpc, CX4_QPC_RETRY_COUNT);
	rsp->rnr_retry = cx4_get(qpc, CX4_QPC_RNR_RETRY);
	rsp->data_in_order = cx4_get(qpc, CX4_QPC_DATA_IN_ORDER);
	if (qp->type != IBV_QPT_UD) {
		cx4_get_bytes(ads, CX4_ADS_RGID_RIP_OFF, rsp->ah.dgid, 16);
		rsp->ah.flow_label = cx4_get(ads, CX4_ADS_FLOW_LABEL);
		rsp->ah.sgid_index = cx4_get(ads, CX4_ADS_SRC_ADDR_INDEX);
		rsp->ah.hop_limit = cx4_get(ads, CX4_ADS_HOP_LIMIT);
		rsp->ah.traffic_class = cx4_get(ads, CX4_ADS_TCLASS);
		rsp->ah.sl = cx4_get(ads, CX4_ADS_ETH_PRIO);
		rsp->ah.is_global = cx4_get(ads, CX4_ADS_GRH);
		rsp->ah.port_num = rsp->port_num;
		rsp->ah.static_rate = cx4_get(ads, CX4_ADS_STAT_RATE);
	}
	q->r->len = sizeof(*rsp);
out:
	free(out);
	return err;
}

/* ---- destroy and events ----------------------------------------------------------------------- */
void cx4d_qp_destroy(struct cx4d *d, struct cx4d_qp *qp)
{
	uint8_t in[CX4_DESTROY_QP_IN_SIZE] = { 0 }, out[CX4_QP_NOCTX_OUT_SIZE];

	if (!d->dead) {
		/* Linux destroy_qp_common(): to RESET first, then destroy */
		if (qp->state != IBV_QPS_RESET)
			qp_cmd(d, CX4_CMD_OP_2RST_QP, qp->qpn, 0, NULL);
		cx4d_cmd_set_header(in, CX4_CMD_OP_DESTROY_QP, 0);
		cx4_set(in, CX4_QP_NOCTX_IN_QPN, qp->qpn);
		cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
	}
	cx4d_idmap_del(&d->qps, qp->qpn);
	cx4d_umem_unmap(d, &qp->umem);
	qp->pd->o.users--;
	qp->scq->o.users--;
	qp->rcq->o.users--;
	if (qp->srq)
		qp->srq->o.users--;
	cx4d_obj_remove(qp->o.owner, &qp->o);
	free(qp);
}

int cx4d_qp_destroy_req(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q)
{
	const struct cx4_handle_req *req = q->in;
	struct cx4_destroy_rsp *rsp = q->r->payload;
	struct cx4d_qp *qp;

	if (q->len != sizeof(*req))
		return EINVAL;
	qp = cx4d_obj_get(cl, req->handle, CX4D_OBJ_QP);
	if (!qp)
		return EINVAL;
	rsp->comp_events = 0;
	rsp->async_events = qp->async_events;
	rsp->reserved = 0;
	q->r->len = sizeof(*rsp);
	cx4d_qp_destroy(d, qp);
	return 0;
}

void cx4d_qp_event(struct cx4d *d, uint32_t qpn, uint8_t type)
{
	struct cx4d_qp *qp = cx4d_idmap_get(&d->qps, qpn);
	uint32_t ev;

	switch (type) {
	case CX4_EVENT_TYPE_PATH_MIG: ev = IBV_EVENT_PATH_MIG; break;
	case CX4_EVENT_TYPE_COMM_EST: ev = IBV_EVENT_COMM_EST; break;
	case CX4_EVENT_TYPE_SQ_DRAINED: ev = IBV_EVENT_SQ_DRAINED; break;
	case CX4_EVENT_TYPE_SRQ_LAST_WQE: ev = IBV_EVENT_QP_LAST_WQE_REACHED; break;
	case CX4_EVENT_TYPE_WQ_CATAS_ERROR: ev = IBV_EVENT_QP_FATAL; break;
	case CX4_EVENT_TYPE_PATH_MIG_FAILED: ev = IBV_EVENT_PATH_MIG_ERR; break;
	case CX4_EVENT_TYPE_WQ_INVAL_REQ_ERROR: ev = IBV_EVENT_QP_REQ_ERR; break;
	case CX4_EVENT_TYPE_WQ_ACCESS_ERROR: ev = IBV_EVENT_QP_ACCESS_ERR; break;
	default: return;
	}
	if (!qp) {
		cx4d_log(d, "event 0x%x for unknown QP 0x%x", type, qpn);
		return;
	}
	if (ev != IBV_EVENT_COMM_EST && ev != IBV_EVENT_SQ_DRAINED &&
	    ev != IBV_EVENT_QP_LAST_WQE_REACHED)
		cx4d_log(d, "QP 0x%x (client %u): %s", qpn, qp->o.owner->bc->id,
			 ev == IBV_EVENT_QP_FATAL ? "fatal error" :
			 ev == IBV_EVENT_QP_REQ_ERR ? "invalid request" :
			 ev == IBV_EVENT_QP_ACCESS_ERR ? "access error" : "path migration");
	if (!bvd_async_event(qp->o.owner->bc, qp->user_handle, ev))
		qp->async_events++;
}
