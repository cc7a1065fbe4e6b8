// SPDX-License-Identifier: MIT
/*
 * Queue pairs: creation, the IB state machine (IBTA 10.3.1, Tables 91-94, as the Linux core
 * encodes them in drivers/infiniband/core/verbs.c qp_state_table), query and destruction.
 * ntbd names each QP for the link end and publishes its state to the peer end, where
 * requesters check it before they place data. Flushing (ERROR) and the send/receive queues'
 * completion live here too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntb.h"

uint32_t ntb_mtu_bytes(enum ibv_mtu mtu)
{
	return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128u << mtu : 256;
}

static uint32_t roundup_pow2(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

struct ntb_qp *ntb_qp_lookup(struct ntb_context *ctx, uint32_t qpn)
{
	struct ntb_qp *qp = __atomic_load_n(&ctx->qps[NTBV_QPN_INDEX(qpn)], __ATOMIC_ACQUIRE);

	return qp && qp->qpn == qpn ? qp : NULL;
}

/* ---- creation ----------------------------------------------------------------------------- */

static int sq_init(struct ntb_qp *qp)
{
	uint32_t size = roundup_pow2(qp->cap.max_send_wr ? qp->cap.max_send_wr : 1);
	uint32_t nsge = qp->cap.max_send_sge ? qp->cap.max_send_sge : 1;

	qp->sq_size = size;
	qp->sq = calloc(size, sizeof(*qp->sq));
	qp->sq_sge = calloc((size_t)size * nsge, sizeof(*qp->sq_sge));
	if (qp->cap.max_inline_data)
		qp->sq_inline = malloc((size_t)size * qp->cap.max_inline_data);
	if (!qp->sq || !qp->sq_sge || (qp->cap.max_inline_data && !qp->sq_inline))
		return ENOMEM;
	for (uint32_t i = 0; i < size; i++)
		qp->sq[i].sg = qp->sq_sge + (size_t)i * nsge;
	pthread_mutex_init(&qp->sq_lock, NULL);
	return 0;
}

static void qp_free(struct ntb_qp *qp)
{
	if (qp->sq)
		pthread_mutex_destroy(&qp->sq_lock);
	free(qp->sq);
	free(qp->sq_sge);
	free(qp->sq_inline);
	ntb_rq_fini(&qp->rq);
	ntb_qpex_fini(qp);
	free(qp);
}

struct ibv_qp *ntb_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr)
{
	struct ntb_context *ctx = to_ntb_ctx(context);
	struct ntb_create_qp_req req;
	struct ntb_create_qp_rsp rsp;
	struct ibv_qp *ib;
	struct ntb_qp *qp;
	int ret;

	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd) {
		errno = EINVAL;
		return NULL;
	}
	if ((attr->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS |
					   IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && attr->create_flags)) {
		errno = EOPNOTSUPP;	/* create flags, XRC, RSS, TSO */
		return NULL;
	}
	if (attr->qp_type != IBV_QPT_RC && attr->qp_type != IBV_QPT_UC &&
	    attr->qp_type != IBV_QPT_UD) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!attr->send_cq || !attr->recv_cq || attr->send_cq->context != context ||
	    attr->recv_cq->context != context || attr->pd->context != context ||
	    (attr->srq && attr->srq->context != context) ||
	    attr->cap.max_send_wr > NTB_MAX_QP_WR || attr->cap.max_send_sge > NTB_MAX_SGE ||
	    attr->cap.max_inline_data > NTB_MAX_INLINE ||
	    (!attr->srq && (attr->cap.max_recv_wr > NTB_MAX_QP_WR ||
			    attr->cap.max_recv_sge > NTB_MAX_SGE))) {
		errno = EINVAL;
		return NULL;
	}
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    ntb_qpex_check(attr->qp_type, attr->send_ops_flags)) {
		errno = EOPNOTSUPP;	/* TSO */
		return NULL;
	}
	ret = ntb_ensure_attached(ctx);
	if (ret) {
		errno = ret;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	qp->ctx = ctx;
	qp->type = attr->qp_type;
	qp->scq = to_ntb_cq(attr->send_cq);
	qp->rcq = to_ntb_cq(attr->recv_cq);
	qp->srq = attr->srq ? to_ntb_srq(attr->srq) : NULL;
	qp->pd = to_ntb_pd(attr->pd)->handle;
	qp->sq_sig_all = attr->sq_sig_all;
	qp->cap = attr->cap;
	if (!qp->cap.max_send_sge)
		qp->cap.max_send_sge = 1;
	/*
	 * A send WQE holds its SGEs or its inline data, whichever is larger (Linux rxe_init_sq();
	 * mlx5's WQE has room too): inline data as large as the SGEs fits though none was asked.
	 * rdma_xclient posts 16 inline bytes on a QP created with max_inline_data 0.
	 */
	if (qp->cap.max_inline_data < qp->cap.max_send_sge * sizeof(struct ibv_sge))
		qp->cap.max_inline_data = qp->cap.max_send_sge * (uint32_t)sizeof(struct ibv_sge);
	if (qp->srq) {
		qp->cap.max_recv_wr = 0;
		qp->cap.max_recv_sge = 0;
	} else if (!qp->cap.max_recv_sge) {
		qp->cap.max_recv_sge = 1;
	}
	/* at least what was asked; the largest message a UD QP takes is the MTU */
	ret = sq_init(qp);
	if (!ret && !qp->srq)
		ret = ntb_rq_init(&qp->rq, qp->cap.max_recv_wr ? qp->cap.max_recv_wr : 1,
				  qp->cap.max_recv_sge);
	if (!ret && (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))
		ret = ntb_qpex_init(qp, attr->send_ops_flags);
	if (ret) {
		qp_free(qp);
		errno = ret;
		return NULL;
	}
	req = (struct ntb_create_qp_req){ .pd = qp->pd, .qp_type = qp->type };
	ret = ntb_call(ctx, NTB_OP_CREATE_QP, &req, sizeof(req), &rsp, sizeof(rsp));
	if (!ret && (NTBV_QPN_INDEX(rsp.qpn) < 2 || ntb_qp_lookup(ctx, rsp.qpn)))
		ret = EPROTO;
	if (ret) {
		qp_free(qp);
		errno = ret;
		return NULL;
	}
	qp->qpn = rsp.qpn;
	atomic_store(&qp->state, IBV_QPS_RESET);
	qp->path_mtu = IBV_MTU_1024;
	qp->port_num = 1;

	ib = &qp->vqp.qp;
	ib->context = context;
	ib->qp_context = attr->qp_context;
	ib->pd = attr->pd;
	ib->send_cq = attr->send_cq;
	ib->recv_cq = attr->recv_cq;
	ib->srq = attr->srq;
	ib->handle = qp->qpn;
	ib->qp_num = qp->qpn;
	ib->state = IBV_QPS_RESET;
	ib->qp_type = attr->qp_type;
	ib->events_completed = 0;
	pthread_mutex_init(&ib->mutex, NULL);
	pthread_cond_init(&ib->cond, NULL);
	attr->cap = qp->cap;

	pthread_mutex_lock(&ctx->lock);
	__atomic_store_n(&ctx->qps[NTBV_QPN_INDEX(qp->qpn)], qp, __ATOMIC_RELEASE);
	qp->next = ctx->qp_list;
	if (qp->next)
		qp->next->prev = qp;
	ctx->qp_list = qp;
	pthread_mutex_unlock(&ctx->lock);
	return ib;
}

struct ibv_qp *ntb_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ex = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_qp *qp = ntb_create_qp_ex(pd->context, &ex);

	if (qp)
		attr->cap = ex.cap;
	return qp;
}

/* ---- completion and flushing ---------------------------------------------------------------- */

static enum ibv_wc_opcode wc_opcode(uint8_t wr)
{
	switch (wr) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_SEND_WITH_INV:
		return IBV_WC_SEND;
	case IBV_WR_BIND_MW:
		return IBV_WC_BIND_MW;
	case IBV_WR_ATOMIC_WRITE:
		return IBV_WC_ATOMIC_WRITE;
	case IBV_WR_LOCAL_INV:
		return IBV_WC_LOCAL_INV;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IBV_WC_COMP_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_WC_FETCH_ADD;
	default:
		return IBV_WC_SEND;
	}
}

void ntb_qp_complete_sq(struct ntb_qp *qp)
{
	while (qp->sq_tail != qp->sq_tx) {
		struct ntb_swqe *w = &qp->sq[qp->sq_tail & (qp->sq_size - 1)];

		if (w->state != NTB_SWQE_DONE)
			break;
		/* error completions are always reported (IBTA 10.8.3.3) */
		if (qp->sq_sig_all || (w->send_flags & IBV_SEND_SIGNALED) ||
		    w->status != IBV_WC_SUCCESS) {
			struct ibv_wc wc = {
				.wr_id = w->wr_id,
				.status = w->status,
				.opcode = wc_opcode(w->opcode),
				.qp_num = qp->qpn,
			};

			if (w->status == IBV_WC_SUCCESS &&
			    (w->opcode == IBV_WR_RDMA_READ ||
			     w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
			     w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD))
				wc.byte_len = w->length;
			ntb_cq_push(qp->scq, &wc, false);
		}
		qp->sq_tail++;
	}
}

/* Flush every send WQE not yet completed (sq_lock held). */
static void flush_sq(struct ntb_qp *qp)
{
	for (uint32_t i = qp->sq_tail; i != qp->sq_head; i++) {
		struct ntb_swqe *w = &qp->sq[i & (qp->sq_size - 1)];

		if (w->state != NTB_SWQE_DONE) {
			w->state = NTB_SWQE_DONE;
			w->status = IBV_WC_WR_FLUSH_ERR;
		}
	}
	qp->sq_tx = qp->sq_head;
	qp->rd_atomic = 0;
	qp->inflight = 0;
	qp->deadline = 0;
	qp->rnr_until = 0;
	ntb_qp_complete_sq(qp);
}

void ntb_qp_flush_cur(struct ntb_qp *qp)
{
	if (qp->cur_active && qp->cur_has_recv) {
		struct ibv_wc wc = { .wr_id = qp->cur_recv.wr_id, .status = IBV_WC_WR_FLUSH_ERR,
				     .opcode = IBV_WC_RECV, .qp_num = qp->qpn };

		ntb_cq_push(qp->rcq, &wc, false);
	}
	qp->cur_active = false;
	qp->cur_has_recv = false;
}

void ntb_qp_flush_rq(struct ntb_qp *qp)
{
	struct ntb_rq *rq = &qp->rq;

	if (qp->srq)
		return;		/* a shared queue's WQEs belong to the other QPs too */
	pthread_mutex_lock(&rq->lock);
	while (rq->head != rq->tail) {
		struct ntb_rwqe *w = &rq->wqe[rq->head & (rq->size - 1)];
		struct ibv_wc wc = { .wr_id = w->wr_id, .status = IBV_WC_WR_FLUSH_ERR,
				     .opcode = IBV_WC_RECV, .qp_num = qp->qpn };

		rq->head++;
		ntb_cq_push(qp->rcq, &wc, false);
	}
	pthread_mutex_unlock(&rq->lock);
}

static void publish(struct ntb_qp *qp)
{
	struct ntb_modify_qp_req req = {
		.qpn = qp->qpn,
		.state = qp_state(qp),
		.dest_qpn = qp->dest_qpn,
		.qkey = qp->qkey,
		.access = qp->access,
	};

	ntb_call(qp->ctx, NTB_OP_MODIFY_QP, &req, sizeof(req), NULL, 0);
}

void ntb_qp_unreachable(struct ntb_qp *qp)
{
	if (qp_state(qp) == IBV_QPS_ERR)
		return;		/* flushed already */
	if (qp->type == IBV_QPT_RC) {
		for (uint32_t i = qp->sq_tail; i != qp->sq_head; i++) {
			struct ntb_swqe *w = &qp->sq[i & (qp->sq_size - 1)];

			if (w->state == NTB_SWQE_DONE)
				continue;
			/* what a transport timer would say: the responder is unreachable */
			w->state = NTB_SWQE_DONE;
			w->status = IBV_WC_RETRY_EXC_ERR;
			break;
		}
	}
	ntb_qp_to_error(qp, true);
}

bool ntb_qp_mark_error(struct ntb_qp *qp)
{
	if (atomic_exchange(&qp->state, IBV_QPS_ERR) == IBV_QPS_ERR)
		return false;
	qp->vqp.qp.state = IBV_QPS_ERR;
	/* IBTA 11.6.3.4: a QP on an SRQ reports when it will take no more of its WQEs */
	if (qp->srq)
		ntb_raise_event(qp->ctx, (uintptr_t)&qp->vqp.qp, IBV_EVENT_QP_LAST_WQE_REACHED);
	return true;
}

void ntb_qp_to_error(struct ntb_qp *qp, bool sq_locked)
{
	ntb_qp_mark_error(qp);
	if (!sq_locked)
		pthread_mutex_lock(&qp->sq_lock);
	flush_sq(qp);
	if (!sq_locked)
		pthread_mutex_unlock(&qp->sq_lock);
	/* the receive side is flushed by whoever holds the responder state */
}

/* ---- the state machine ----------------------------------------------------------------------- */

enum { T_RC, T_UC, T_UD, T_N };

struct transition {
	bool valid;
	int req[T_N];
	int opt[T_N];
};

#define S(x) IBV_QPS_##x
static const struct transition qp_table[IBV_QPS_ERR + 1][IBV_QPS_ERR + 1] = {
	[S(RESET)] = {
		[S(RESET)] = { .valid = true },
		[S(INIT)] = { .valid = true,
			.req = { [T_RC] = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
				 [T_UC] = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
				 [T_UD] = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY } },
	},
	[S(INIT)] = {
		[S(RESET)] = { .valid = true },
		[S(ERR)] = { .valid = true },
		[S(INIT)] = { .valid = true,
			.opt = { [T_RC] = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
				 [T_UC] = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
				 [T_UD] = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY } },
		[S(RTR)] = { .valid = true,
			.req = { [T_RC] = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
					  IBV_QP_MIN_RNR_TIMER,
				 [T_UC] = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					  IBV_QP_RQ_PSN },
			.opt = { [T_RC] = IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX,
				 [T_UC] = IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX,
				 [T_UD] = IBV_QP_PKEY_INDEX | IBV_QP_QKEY } },
	},
	[S(RTR)] = {
		[S(RESET)] = { .valid = true },
		[S(ERR)] = { .valid = true },
		[S(RTS)] = { .valid = true,
			.req = { [T_RC] = IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
				 [T_UC] = IBV_QP_SQ_PSN,
				 [T_UD] = IBV_QP_SQ_PSN },
			.opt = { [T_RC] = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
					  IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE,
				 [T_UC] = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
					  IBV_QP_PATH_MIG_STATE,
				 [T_UD] = IBV_QP_CUR_STATE | IBV_QP_QKEY } },
	},
	[S(RTS)] = {
		[S(RESET)] = { .valid = true },
		[S(ERR)] = { .valid = true },
		[S(RTS)] = { .valid = true,
			.opt = { [T_RC] = IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH |
					  IBV_QP_PATH_MIG_STATE | IBV_QP_MIN_RNR_TIMER,
				 [T_UC] = IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH |
					  IBV_QP_PATH_MIG_STATE,
				 [T_UD] = IBV_QP_CUR_STATE | IBV_QP_QKEY } },
		[S(SQD)] = { .valid = true,
			.opt = { [T_RC] = IBV_QP_EN_SQD_ASYNC_NOTIFY,
				 [T_UC] = IBV_QP_EN_SQD_ASYNC_NOTIFY,
				 [T_UD] = IBV_QP_EN_SQD_ASYNC_NOTIFY } },
	},
	[S(SQD)] = {
		[S(RESET)] = { .valid = true },
		[S(ERR)] = { .valid = true },
		[S(RTS)] = { .valid = true,
			.opt = { [T_RC] = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
					  IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE,
				 [T_UC] = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
					  IBV_QP_PATH_MIG_STATE,
				 [T_UD] = IBV_QP_CUR_STATE | IBV_QP_QKEY } },
		[S(SQD)] = { .valid = true,
			.opt = { [T_RC] = IBV_QP_PORT | IBV_QP_AV | IBV_QP_TIMEOUT |
					  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					  IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC |
					  IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
					  IBV_QP_PKEY_INDEX | IBV_QP_MIN_RNR_TIMER |
					  IBV_QP_PATH_MIG_STATE,
				 [T_UC] = IBV_QP_AV | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
					  IBV_QP_PKEY_INDEX | IBV_QP_PATH_MIG_STATE,
				 [T_UD] = IBV_QP_PKEY_INDEX | IBV_QP_QKEY } },
	},
	[S(SQE)] = {
		[S(RESET)] = { .valid = true },
		[S(ERR)] = { .valid = true },
		[S(RTS)] = { .valid = true,
			.opt = { [T_UC] = IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS,
				 [T_UD] = IBV_QP_CUR_STATE | IBV_QP_QKEY } },
	},
	[S(ERR)] = {
		[S(RESET)] = { .valid = true },
		[S(ERR)] = { .valid = true },
	},
};
#undef S

static int type_index(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC ? T_RC : t == IBV_QPT_UC ? T_UC : T_UD;
}

/*
 * Resolve an RC/UC partner: the client owning dest_qpn, on either end, from that end's QP
 * table (its ntbd published the QP when it was created, before the application could have
 * passed its number on). NULL if it is not there: requests then go nowhere and time out, as
 * on a fabric.
 */
static struct ntb_peer *resolve_peer(struct ntb_context *ctx, uint32_t dest_qpn, uint32_t *epoch)
{
	struct ntbv_qp_ent e;
	struct ntb_peer *p;
	unsigned int endi;

	if (!ntb_qp_entry(ctx, dest_qpn, &endi, &e))
		return NULL;
	p = ntb_peer_get(ctx, endi, e.slot);
	if (!p || ntb_slot_epoch(p) != e.slot_epoch)
		return NULL;
	*epoch = e.slot_epoch;
	return p;
}

static int check_attrs(struct ntb_qp *qp, const struct ibv_qp_attr *a, int mask)
{
	struct ntb_context *ctx = qp->ctx;

	if ((mask & IBV_QP_PORT) && a->port_num != 1)
		return EINVAL;
	if ((mask & IBV_QP_PKEY_INDEX) && a->pkey_index != 0)
		return EINVAL;
	/*
	 * The port is RoCE (link layer Ethernet): a path needs a GRH, as Linux's
	 * rdma_check_ah_attr() demands of every RoCE device (a LID means nothing here).
	 */
	if ((mask & IBV_QP_AV) &&
	    ((a->ah_attr.port_num && a->ah_attr.port_num != 1) || !a->ah_attr.is_global ||
	     !ntb_gid(ctx, a->ah_attr.grh.sgid_index)))
		return EINVAL;
	if ((mask & IBV_QP_PATH_MTU) &&
	    (a->path_mtu < IBV_MTU_256 || a->path_mtu > IBV_MTU_4096 ||
	     ntb_mtu_bytes(a->path_mtu) > (ctx->mtu ? ctx->mtu : 4096)))
		return EINVAL;
	if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic > NTB_MAX_RD_ATOMIC)
		return EINVAL;
	if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && a->max_dest_rd_atomic > NTB_MAX_RD_ATOMIC)
		return EINVAL;
	if ((mask & IBV_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
		return EINVAL;
	if ((mask & IBV_QP_TIMEOUT) && a->timeout > 31)
		return EINVAL;
	if ((mask & IBV_QP_RETRY_CNT) && a->retry_cnt > 7)
		return EINVAL;
	if ((mask & IBV_QP_RNR_RETRY) && a->rnr_retry > 7)
		return EINVAL;
	if ((mask & IBV_QP_ACCESS_FLAGS) &&
	    (a->qp_access_flags & ~(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)))
		return EINVAL;
	return 0;
}

int ntb_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *a, int mask)
{
	struct ntb_qp *qp = to_ntb_qp(ibqp);
	int cur = qp_state(qp), next = (mask & IBV_QP_STATE) ? (int)a->qp_state : cur;
	const struct transition *t;
	int ti = type_index(qp->type), ret;
	struct ntb_peer *peer, *bind = NULL;
	uint32_t bind_epoch = 0;

	if (next < IBV_QPS_RESET || next > IBV_QPS_ERR)
		return EINVAL;
	if ((mask & IBV_QP_CUR_STATE) && (int)a->cur_qp_state != cur &&
	    !(cur == IBV_QPS_SQE && a->cur_qp_state == IBV_QPS_RTS))
		return EINVAL;
	t = &qp_table[cur][next];
	if (!t->valid || (mask & t->req[ti]) != t->req[ti] ||
	    (mask & ~(t->req[ti] | t->opt[ti] | IBV_QP_STATE)))
		return EINVAL;
	ret = check_attrs(qp, a, mask);
	if (ret)
		return ret;
	if (cur == IBV_QPS_INIT && next == IBV_QPS_RTR && qp->type != IBV_QPT_UD) {
		bind = resolve_peer(qp->ctx, a->dest_qp_num, &bind_epoch);
		/*
		 * Our block for its client, now rather than at the first message (the daemon is
		 * ours to call here). No room in the reader's pool: the connection cannot be.
		 */
		if (bind) {
			ret = ntb_pair_open(bind, bind_epoch);
			if (ret == ENOSPC)
				return ENOMEM;
		}
	}

	/* hold the responder (peer rx) and the send queue while the QP changes under them */
	peer = qp->peer;
	if (peer)
		pthread_mutex_lock(&peer->rx_lock);
	pthread_mutex_lock(&qp->sq_lock);

	if (mask & IBV_QP_PKEY_INDEX)
		qp->pkey_index = a->pkey_index;
	if (mask & IBV_QP_PORT)
		qp->port_num = a->port_num;
	if (mask & IBV_QP_QKEY)
		qp->qkey = a->qkey;
	if (mask & IBV_QP_ACCESS_FLAGS)
		qp->access = a->qp_access_flags;
	if (mask & IBV_QP_AV)
		qp->ah_attr = a->ah_attr;
	if (mask & IBV_QP_PATH_MTU)
		qp->path_mtu = a->path_mtu;
	if (mask & IBV_QP_DEST_QPN)
		qp->dest_qpn = a->dest_qp_num;
	if (mask & IBV_QP_RQ_PSN) {
		qp->rq_psn = a->rq_psn & IB_PSN_MASK;
		qp->epsn = qp->rq_psn;
	}
	if (mask & IBV_QP_SQ_PSN) {
		qp->sq_psn = a->sq_psn & IB_PSN_MASK;
		qp->next_psn = qp->sq_psn;
	}
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		qp->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		qp->max_rd_atomic = a->max_rd_atomic ? a->max_rd_atomic : 1;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		qp->min_rnr_timer = a->min_rnr_timer;
	if (mask & IBV_QP_TIMEOUT)
		qp->timeout = a->timeout;
	if (mask & IBV_QP_RETRY_CNT) {
		qp->retry_cnt = a->retry_cnt;
		qp->retry_left = a->retry_cnt;
	}
	if (mask & IBV_QP_RNR_RETRY) {
		qp->rnr_retry = a->rnr_retry;
		qp->rnr_left = a->rnr_retry;
	}

	switch (next) {
	case IBV_QPS_RESET:
		/* IBTA 10.3.1: a reset discards every WQE without completing it */
		qp->sq_head = qp->sq_tx = qp->sq_tail = 0;
		qp->rd_atomic = 0;
		qp->inflight = 0;
		qp->deadline = qp->rnr_until = 0;
		qp->cur_active = false;
		qp->cur_drop = false;
		qp->cur_has_recv = false;
		qp->need_ack = qp->nak_sent = false;
		memset(qp->atomic_cache, 0, sizeof(qp->atomic_cache));
		memset(&qp->dc, 0, sizeof(qp->dc));
		if (!qp->srq) {
			pthread_mutex_lock(&qp->rq.lock);
			qp->rq.head = qp->rq.tail = 0;
			pthread_mutex_unlock(&qp->rq.lock);
		}
		if (qp->peer)
			qp->peer->nqps--;
		qp->peer = NULL;
		/* and what it completed and nobody polled yet, as a ConnectX's reset does */
		ntb_cq_clean(qp->scq, qp->qpn);
		if (qp->rcq != qp->scq)
			ntb_cq_clean(qp->rcq, qp->qpn);
		break;
	case IBV_QPS_RTR:
		if (cur == IBV_QPS_INIT && qp->type != IBV_QPT_UD) {
			qp->peer = bind;
			if (bind) {
				qp->peer_epoch = bind_epoch;
				qp->peer_gone_ns = 0;
				bind->nqps++;
			}
		}
		break;
	case IBV_QPS_RTS:
		if (cur == IBV_QPS_RTR)
			qp->ring_last = qp->peer ? qp->peer->req_tx.prod : 0;
		break;
	default:
		break;
	}
	if (next == IBV_QPS_ERR && cur != IBV_QPS_ERR) {
		ntb_qp_to_error(qp, true);
		ntb_qp_flush_cur(qp);
		ntb_qp_flush_rq(qp);
	} else {
		atomic_store(&qp->state, next);
	}
	pthread_mutex_unlock(&qp->sq_lock);
	if (peer)
		pthread_mutex_unlock(&peer->rx_lock);
	if (next == IBV_QPS_SQD && (mask & IBV_QP_EN_SQD_ASYNC_NOTIFY))
		ntb_raise_event(qp->ctx, (uintptr_t)ibqp, IBV_EVENT_SQ_DRAINED);
	/* the peer end learns the state (its requesters check it before placing data) */
	if (next != cur || (mask & (IBV_QP_ACCESS_FLAGS | IBV_QP_QKEY | IBV_QP_DEST_QPN)))
		publish(qp);
	ntb_flush_events(qp->ctx);
	ntb_progress_poke(qp->ctx);
	return 0;
}

int ntb_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *a, int mask,
		 struct ibv_qp_init_attr *init)
{
	struct ntb_qp *qp = to_ntb_qp(ibqp);

	memset(a, 0, sizeof(*a));
	a->qp_state = qp_state(qp);
	a->cur_qp_state = a->qp_state;
	a->path_mtu = qp->path_mtu;
	a->path_mig_state = IBV_MIG_MIGRATED;
	a->qkey = qp->qkey;
	a->rq_psn = qp->rq_psn;
	a->sq_psn = qp->sq_psn;
	a->dest_qp_num = qp->dest_qpn;
	a->qp_access_flags = qp->access;
	a->cap = qp->cap;
	a->ah_attr = qp->ah_attr;
	a->pkey_index = qp->pkey_index;
	a->sq_draining = qp_state(qp) == IBV_QPS_SQD && qp->sq_tail != qp->sq_head;
	a->max_rd_atomic = qp->max_rd_atomic;
	a->max_dest_rd_atomic = qp->max_dest_rd_atomic;
	a->min_rnr_timer = qp->min_rnr_timer;
	a->port_num = qp->port_num;
	a->timeout = qp->timeout;
	a->retry_cnt = qp->retry_cnt;
	a->rnr_retry = qp->rnr_retry;
	if (init) {
		memset(init, 0, sizeof(*init));
		init->qp_context = ibqp->qp_context;
		init->send_cq = ibqp->send_cq;
		init->recv_cq = ibqp->recv_cq;
		init->srq = ibqp->srq;
		init->cap = qp->cap;
		init->qp_type = qp->type;
		init->sq_sig_all = qp->sq_sig_all;
	}
	return 0;
}

int ntb_destroy_qp(struct ibv_qp *ibqp)
{
	struct ntb_qp *qp = to_ntb_qp(ibqp);
	struct ntb_context *ctx = qp->ctx;
	struct ntb_handle_req req = { .handle = qp->qpn };

	/* what it still owes its requester goes out while the peer can still see it */
	if (qp->peer) {
		pthread_mutex_lock(&qp->peer->rx_lock);
		ntb_resp_ack_now(qp->peer, qp);
		pthread_mutex_unlock(&qp->peer->rx_lock);
	}
	/* the peer end stops seeing it first, then no engine pass can still hold it */
	ntb_call(ctx, NTB_OP_DESTROY_QP, &req, sizeof(req), NULL, 0);
	/* the sweep of send queues runs under ctx->lock: unlinked, no sweep can still see it */
	pthread_mutex_lock(&ctx->lock);
	__atomic_store_n(&ctx->qps[NTBV_QPN_INDEX(qp->qpn)], NULL, __ATOMIC_RELEASE);
	if (qp->prev)
		qp->prev->next = qp->next;
	else
		ctx->qp_list = qp->next;
	if (qp->next)
		qp->next->prev = qp->prev;
	pthread_mutex_unlock(&ctx->lock);
	/* message handlers look QPs up under a peer's rx_lock: wait those out */
	for (unsigned int i = 0; i < atomic_load(&ctx->nactive); i++) {
		struct ntb_peer *p = ctx->active[i];

		pthread_mutex_lock(&p->rx_lock);
		for (struct ntb_qp **pp = &p->dirty; *pp; pp = &(*pp)->next_dirty) {
			if (*pp == qp) {
				*pp = qp->next_dirty;
				break;
			}
		}
		pthread_mutex_unlock(&p->rx_lock);
	}
	pthread_mutex_lock(&qp->sq_lock);
	if (qp->peer)
		qp->peer->nqps--;
	pthread_mutex_unlock(&qp->sq_lock);
	/*
	 * rdma-core mlx5_destroy_qp: the QP's completions nobody polled leave its CQs with it
	 * (no engine pass can add one now). libfabric's verbs provider relies on it: it flushes
	 * what it still tracks itself once the QP is gone, and ofi_rxm reposts a receive that
	 * completed on a closed endpoint into freed memory (fi_pingpong -e rdm's SIGSEGV).
	 */
	ntb_cq_clean(qp->scq, qp->qpn);
	if (qp->rcq != qp->scq)
		ntb_cq_clean(qp->rcq, qp->qpn);
	pthread_mutex_destroy(&ibqp->mutex);
	pthread_cond_destroy(&ibqp->cond);
	qp_free(qp);
	return 0;
}
