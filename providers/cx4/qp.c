// SPDX-License-Identifier: MIT
/*
 * Queue pairs (rdma-core providers/mlx5/verbs.c mlx5_create_qp / qp sizing, PRM "Work Queue"):
 *
 *  - the QP buffer holds the receive queue at offset 0 (WQEs of 16 << n bytes: data segments,
 *    a terminator with lkey 0x100 when fewer are used) and the send queue right after it
 *    (64-byte WQE basic blocks; a WQE is one or more of them), then the doorbell record:
 *    word 0 receive counter, word 1 send counter;
 *  - a send WQE has room for the control segment, the transport segment of the QP type
 *    (remote address + atomic for RC, remote address for UC, the 48-byte address vector for
 *    UD) and the larger of the data segments and the inline data asked for;
 *  - cx4d creates the QP with that geometry, maps the buffer for the device and runs the
 *    state transitions; the provider keeps the queue indices and resets them with the QP.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cx4.h"

/* ---- QPN -> QP -------------------------------------------------------------------------------- */
struct cx4_qp *cx4_find_qp(struct cx4_context *ctx, uint32_t qpn)
{
	struct cx4_qp **t = ctx->qp_table[qpn >> CX4_QP_TABLE_SHIFT].table;

	return t ? t[qpn & ((1u << CX4_QP_TABLE_SHIFT) - 1)] : NULL;
}

static int store_qp(struct cx4_context *ctx, uint32_t qpn, struct cx4_qp *qp)
{
	unsigned int tind = qpn >> CX4_QP_TABLE_SHIFT;

	pthread_mutex_lock(&ctx->qp_table_mutex);
	if (!ctx->qp_table[tind].refcnt) {
		ctx->qp_table[tind].table = calloc(1u << CX4_QP_TABLE_SHIFT, sizeof(qp));
		if (!ctx->qp_table[tind].table) {
			pthread_mutex_unlock(&ctx->qp_table_mutex);
			return ENOMEM;
		}
	}
	ctx->qp_table[tind].refcnt++;
	ctx->qp_table[tind].table[qpn & ((1u << CX4_QP_TABLE_SHIFT) - 1)] = qp;
	pthread_mutex_unlock(&ctx->qp_table_mutex);
	return 0;
}

static void clear_qp(struct cx4_context *ctx, uint32_t qpn)
{
	unsigned int tind = qpn >> CX4_QP_TABLE_SHIFT;

	pthread_mutex_lock(&ctx->qp_table_mutex);
	if (!--ctx->qp_table[tind].refcnt) {
		free(ctx->qp_table[tind].table);
		ctx->qp_table[tind].table = NULL;
	} else {
		ctx->qp_table[tind].table[qpn & ((1u << CX4_QP_TABLE_SHIFT) - 1)] = NULL;
	}
	pthread_mutex_unlock(&ctx->qp_table_mutex);
}

/* ---- sizing ------------------------------------------------------------------------------------ */
/*
 * rdma-core _sq_overhead(): the control segment and the largest of what the operations the QP
 * may post put before their data (remote address, atomic operands, a whole UMR WQE for binds
 * and local invalidation), plus the UD address vector.
 */
static size_t sq_overhead(enum ibv_qp_type type, uint64_t ops)
{
	size_t ctrl = sizeof(struct mlx5_wqe_ctrl_seg), size = ctrl;

	if (ops & (IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
		   IBV_QP_EX_WITH_RDMA_READ) &&
	    size < ctrl + sizeof(struct mlx5_wqe_raddr_seg))
		size = ctrl + sizeof(struct mlx5_wqe_raddr_seg);
	if (ops & (IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD) &&
	    size < ctrl + sizeof(struct mlx5_wqe_raddr_seg) + sizeof(struct mlx5_wqe_atomic_seg))
		size = ctrl + sizeof(struct mlx5_wqe_raddr_seg) + sizeof(struct mlx5_wqe_atomic_seg);
	if (ops & (IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV))
		size = ctrl + sizeof(struct mlx5_wqe_umr_ctrl_seg) +
		       sizeof(struct mlx5_wqe_mkey_context_seg) + 64 /* one KLM, padded */;
	if (type == IBV_QPT_UD)
		size += sizeof(struct mlx5_wqe_datagram_seg);
	return size;
}

static int calc_sq(struct cx4_context *ctx, struct ibv_qp_cap *cap, enum ibv_qp_type type,
		   struct cx4_qp *qp)
{
	size_t ovh = sq_overhead(type, qp->send_ops), inl, data, wqe, wq;

	if (cap->max_send_sge > (uint32_t)to_bv_context(qp->vqp.qp.context)->attr.max_sge)
		return EINVAL;
	if (!cap->max_send_wr) {
		qp->sq.wqe_cnt = 0;
		return 0;
	}
	inl = cap->max_inline_data ? cx4_align(sizeof(struct mlx5_wqe_inl_data_seg) +
					       cap->max_inline_data, 16) : 0;
	data = (size_t)cap->max_send_sge * sizeof(struct mlx5_wqe_data_seg);
	wqe = ovh + (inl > data ? inl : data);
	/* ds is 6 bits of 16-byte units; the device caps the WQE size too */
	if (wqe > 63 * 16 || wqe > ctx->caps.max_send_wqe_bytes ||
	    cap->max_inline_data > to_bv_context(qp->vqp.qp.context)->attr.max_inline_data)
		return EINVAL;
	wqe = cx4_align(wqe, MLX5_SEND_WQE_BB);
	if ((uint64_t)cap->max_send_wr * wqe > (uint64_t)ctx->caps.max_sq_wqebbs * 64)
		return EINVAL;
	wq = (size_t)1 << cx4_ilog2_up((uint64_t)cap->max_send_wr * wqe);
	qp->sq.wqe_cnt = wq / MLX5_SEND_WQE_BB;
	if (qp->sq.wqe_cnt > ctx->caps.max_sq_wqebbs)
		return EINVAL;
	qp->sq.wqe_shift = MLX5_SEND_WQE_SHIFT;
	qp->sq.max_post = wq / wqe;
	qp->sq_wqe_size = wqe;
	qp->sq.max_gs = (int)((wqe - ovh) / sizeof(struct mlx5_wqe_data_seg));
	if (qp->sq.max_gs > to_bv_context(qp->vqp.qp.context)->attr.max_sge)
		qp->sq.max_gs = to_bv_context(qp->vqp.qp.context)->attr.max_sge;
	qp->max_inline = (int)(wqe - ovh - sizeof(struct mlx5_wqe_inl_data_seg));
	cap->max_send_wr = qp->sq.max_post;
	cap->max_send_sge = (uint32_t)qp->sq.max_gs;
	cap->max_inline_data = (uint32_t)qp->max_inline;
	return 0;
}

static int calc_rq(struct cx4_context *ctx, struct ibv_qp_cap *cap, struct cx4_qp *qp)
{
	size_t wqe;
	unsigned int cnt;

	if (cap->max_recv_sge > (uint32_t)to_bv_context(qp->vqp.qp.context)->attr.max_sge)
		return EINVAL;
	if (qp->vqp.qp.srq || !cap->max_recv_wr) {
		qp->rq.wqe_cnt = 0;
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
		return 0;
	}
	wqe = (size_t)1 << cx4_ilog2_up((cap->max_recv_sge ? cap->max_recv_sge : 1) *
					sizeof(struct mlx5_wqe_data_seg));
	if (wqe > ctx->caps.max_recv_wqe_bytes || cap->max_recv_wr > ctx->caps.max_rq_wqes)
		return EINVAL;
	cnt = 1u << cx4_ilog2_up(cap->max_recv_wr);
	if (cnt * wqe < MLX5_SEND_WQE_BB)
		cnt = MLX5_SEND_WQE_BB / wqe;
	qp->rq.wqe_cnt = cnt;
	qp->rq.wqe_shift = cx4_ilog2_up(wqe);
	qp->rq.max_gs = (int)(wqe / sizeof(struct mlx5_wqe_data_seg));
	qp->rq.max_post = cnt;
	cap->max_recv_wr = cnt;
	cap->max_recv_sge = (uint32_t)qp->rq.max_gs;
	return 0;
}

static void init_indices(struct cx4_qp *qp)
{
	qp->sq.head = qp->sq.tail = qp->sq.cur_post = 0;
	qp->rq.head = qp->rq.tail = 0;
	qp->fm_cache = 0;
}

/* ---- create ---------------------------------------------------------------------------------- */
static struct ibv_qp *create(struct ibv_context *ibctx, struct ibv_qp_init_attr_ex *attr)
{
	struct cx4_context *ctx = to_cx4_ctx(ibctx);
	struct cx4_create_qp_req req = { 0 };
	struct cx4_create_qp_rsp rsp;
	struct ibv_qp *ibqp;
	struct cx4_qp *qp;
	size_t rq_bytes, sq_bytes, dbr;
	int err;

	if (attr->qp_type != IBV_QPT_RC && attr->qp_type != IBV_QPT_UC &&
	    attr->qp_type != IBV_QPT_UD) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!attr->pd || !attr->send_cq || !attr->recv_cq ||
	    attr->pd->context != ibctx || attr->send_cq->context != ibctx ||
	    attr->recv_cq->context != ibctx || (attr->srq && attr->srq->context != ibctx)) {
		errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	qp->buf.fd = -1;
	ibqp = &qp->vqp.qp;
	ibqp->context = ibctx;
	ibqp->srq = attr->srq;
	/* post_send may use every operation of the transport (rdma-core sq_overhead) */
	qp->send_ops = (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
			       ? attr->send_ops_flags
			       : cx4_send_ops_supported(attr->qp_type);
	err = calc_sq(ctx, &attr->cap, attr->qp_type, qp);
	if (!err)
		err = calc_rq(ctx, &attr->cap, qp);
	if (err)
		goto fail;
	qp->cap = attr->cap;
	qp->sq.wrid = calloc(qp->sq.wqe_cnt ? qp->sq.wqe_cnt : 1, sizeof(uint64_t));
	qp->sq.wqe_head = calloc(qp->sq.wqe_cnt ? qp->sq.wqe_cnt : 1, sizeof(unsigned int));
	qp->sq.wr_data = calloc(qp->sq.wqe_cnt ? qp->sq.wqe_cnt : 1, 1);
	qp->rq.wrid = calloc(qp->rq.wqe_cnt ? qp->rq.wqe_cnt : 1, sizeof(uint64_t));
	if (!qp->sq.wrid || !qp->sq.wqe_head || !qp->sq.wr_data || !qp->rq.wrid) {
		err = ENOMEM;
		goto fail;
	}
	rq_bytes = qp->rq.wqe_cnt ? (size_t)qp->rq.wqe_cnt << qp->rq.wqe_shift : 0;
	sq_bytes = (size_t)qp->sq.wqe_cnt * MLX5_SEND_WQE_BB;
	dbr = cx4_align(rq_bytes + sq_bytes, 64);
	err = cx4_buf_alloc(&qp->buf, dbr + 64, "cx4-qp");
	if (err)
		goto fail;
	qp->rq.offset = 0;
	qp->sq.offset = (unsigned int)rq_bytes;
	qp->sq_start = (uint8_t *)qp->buf.va + rq_bytes;
	qp->sq_end = qp->sq_start + sq_bytes;
	qp->db = (volatile __be32 *)((uint8_t *)qp->buf.va + dbr);
	pthread_spin_init(&qp->sq.lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq.lock, PTHREAD_PROCESS_PRIVATE);
	qp->sq_signal_bits = attr->sq_sig_all ? MLX5_WQE_CTRL_CQ_UPDATE : 0;
	qp->bf = &ctx->bf[__atomic_fetch_add(&ctx->next_bf, 1, __ATOMIC_RELAXED) % CX4_NUM_BF];

	req.user_handle = (uintptr_t)ibqp;
	req.buf_len = qp->buf.len;
	req.dbr_offset = dbr;
	req.qp_type = attr->qp_type;
	req.pd_handle = attr->pd->handle;
	req.send_cq_handle = attr->send_cq->handle;
	req.recv_cq_handle = attr->recv_cq->handle;
	req.srq_handle = attr->srq ? attr->srq->handle : CX4_INVALID_HANDLE;
	if (!qp->sq.wqe_cnt)
		req.flags |= CX4_QP_NO_SQ;
	else
		req.log_sq_size = cx4_ilog2_up(qp->sq.wqe_cnt);
	if (attr->srq) {
		req.flags |= CX4_QP_SRQ;
	} else if (!qp->rq.wqe_cnt) {
		req.flags |= CX4_QP_ZERO_RQ;
	} else {
		req.log_rq_size = cx4_ilog2_up(qp->rq.wqe_cnt);
		req.log_rq_stride = qp->rq.wqe_shift - 4;
	}
	err = cx4_call(ibctx, CX4_OP_CREATE_QP, &req, sizeof(req), &qp->buf.fd, 1, &rsp,
		       sizeof(rsp));
	if (err)
		goto fail;
	close(qp->buf.fd);
	qp->buf.fd = -1;
	qp->qpn = rsp.qpn;
	qp->handle = rsp.handle;
	err = store_qp(ctx, qp->qpn, qp);
	if (err) {
		struct cx4_handle_req dreq = { .handle = qp->handle };
		struct cx4_destroy_rsp drsp;

		cx4_call(ibctx, CX4_OP_DESTROY_QP, &dreq, sizeof(dreq), NULL, 0, &drsp,
			 sizeof(drsp));
		goto fail;
	}

	/* libibverbs sets nothing of a QP: everything verbs.h declares is ours */
	ibqp->qp_context = attr->qp_context;
	ibqp->pd = attr->pd;
	ibqp->send_cq = attr->send_cq;
	ibqp->recv_cq = attr->recv_cq;
	ibqp->handle = qp->handle;
	ibqp->qp_num = qp->qpn;
	ibqp->state = IBV_QPS_RESET;
	ibqp->qp_type = attr->qp_type;
	pthread_mutex_init(&ibqp->mutex, NULL);
	pthread_cond_init(&ibqp->cond, NULL);
	ibqp->events_completed = 0;
	qp->vqp.comp_mask = 0;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		/* ibv_qp_to_qp_ex() finds the ibv_wr_* calls */
		qp->vqp.comp_mask |= VERBS_QP_EX;
		cx4_qp_init_wr_ops(qp);
	}
	return ibqp;
fail:
	cx4_buf_free(&qp->buf);
	free(qp->sq.wrid);
	free(qp->sq.wqe_head);
	free(qp->sq.wr_data);
	free(qp->rq.wrid);
	free(qp);
	errno = err;
	return NULL;
}

struct ibv_qp *cx4_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
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
	struct ibv_qp *qp = create(pd->context, &ex);

	if (qp)
		attr->cap = ex.cap;
	return qp;
}

struct ibv_qp *cx4_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr)
{
	const uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS |
			       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;

	/* XRC, RSS, TSO, create flags (scatter FCS, CVLAN stripping, ...): not on this device */
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || (attr->comp_mask & ~known) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && attr->create_flags)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* the ibv_wr_* operations the transport has: the RoCE ones of mlx5 without TSO and
	 * atomic write (ConnectX-4 has neither) */
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (attr->send_ops_flags & ~cx4_send_ops_supported(attr->qp_type))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return create(ctx, attr);
}

/* ---- modify / query -------------------------------------------------------------------------- */
static void ah_to_proto(const struct ibv_ah_attr *a, struct cx4_ah_attr *p)
{
	memcpy(p->dgid, a->grh.dgid.raw, 16);
	p->flow_label = a->grh.flow_label;
	p->sgid_index = a->grh.sgid_index;
	p->hop_limit = a->grh.hop_limit;
	p->traffic_class = a->grh.traffic_class;
	p->sl = a->sl;
	p->is_global = a->is_global;
	p->port_num = a->port_num;
	p->static_rate = a->static_rate;
	p->src_path_bits = a->src_path_bits;
	p->dlid = a->dlid;
}

int cx4_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask)
{
	struct cx4_qp *qp = to_cx4_qp(ibqp);
	struct cx4_modify_qp_req req = {
		.handle = qp->handle,
		.attr_mask = (uint32_t)mask,
		.qp_state = attr->qp_state,
		.cur_qp_state = attr->cur_qp_state,
		.path_mtu = attr->path_mtu,
		.qkey = attr->qkey,
		.rq_psn = attr->rq_psn,
		.sq_psn = attr->sq_psn,
		.dest_qp_num = attr->dest_qp_num,
		.qp_access_flags = (uint32_t)attr->qp_access_flags,
		.pkey_index = attr->pkey_index,
		.port_num = attr->port_num,
		.max_rd_atomic = attr->max_rd_atomic,
		.max_dest_rd_atomic = attr->max_dest_rd_atomic,
		.min_rnr_timer = attr->min_rnr_timer,
		.timeout = attr->timeout,
		.retry_cnt = attr->retry_cnt,
		.rnr_retry = attr->rnr_retry,
		.sq_draining = attr->sq_draining,
		.en_sqd_async_notify = attr->en_sqd_async_notify,
	};
	int err;

	if (mask & IBV_QP_AV)
		ah_to_proto(&attr->ah_attr, &req.ah);
	if (mask & IBV_QP_CAP)
		return EINVAL;	/* no resizing */
	err = cx4_call(ibqp->context, CX4_OP_MODIFY_QP, &req, sizeof(req), NULL, 0, NULL, 0);
	if (err)
		return err;
	/* which queues take work requests now (rdma-core set_qp_operational_state) */
	if (mask & IBV_QP_STATE) {
		if (attr->qp_state == IBV_QPS_RESET)
			qp->rq_ready = qp->sq_ready = false;
		else if (attr->qp_state == IBV_QPS_INIT)
			qp->rq_ready = true;
		else if (attr->qp_state == IBV_QPS_RTS)
			qp->sq_ready = true;
	}
	if ((mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET) {
		/* the device forgot the queues: forget their CQEs and start over (mlx5) */
		cx4_cq_clean(to_cx4_cq(ibqp->recv_cq), qp->qpn,
			     ibqp->srq ? to_cx4_srq(ibqp->srq) : NULL);
		if (ibqp->send_cq != ibqp->recv_cq)
			cx4_cq_clean(to_cx4_cq(ibqp->send_cq), qp->qpn, NULL);
		init_indices(qp);
		qp->db[CX4_RCV_DBR] = 0;
		qp->db[CX4_SND_DBR] = 0;
	}
	return 0;
}

int cx4_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask,
		 struct ibv_qp_init_attr *init)
{
	struct cx4_qp *qp = to_cx4_qp(ibqp);
	struct cx4_handle_req req = { .handle = qp->handle };
	struct cx4_query_qp_rsp rsp;
	int err;

	(void)mask;
	err = cx4_call(ibqp->context, CX4_OP_QUERY_QP, &req, sizeof(req), NULL, 0, &rsp,
		       sizeof(rsp));
	if (err)
		return err;
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = rsp.qp_state;
	attr->cur_qp_state = rsp.qp_state;
	attr->path_mtu = rsp.path_mtu;
	attr->path_mig_state = IBV_MIG_MIGRATED;
	attr->qkey = rsp.qkey;
	attr->rq_psn = rsp.rq_psn;
	attr->sq_psn = rsp.sq_psn;
	attr->dest_qp_num = rsp.dest_qp_num;
	attr->qp_access_flags = (int)rsp.qp_access_flags;
	attr->cap = qp->cap;
	attr->pkey_index = rsp.pkey_index;
	attr->port_num = rsp.port_num;
	attr->max_rd_atomic = rsp.max_rd_atomic;
	attr->max_dest_rd_atomic = rsp.max_dest_rd_atomic;
	attr->min_rnr_timer = rsp.min_rnr_timer;
	attr->timeout = rsp.timeout;
	attr->retry_cnt = rsp.retry_cnt;
	attr->rnr_retry = rsp.rnr_retry;
	attr->sq_draining = rsp.sq_draining;
	memcpy(attr->ah_attr.grh.dgid.raw, rsp.ah.dgid, 16);
	attr->ah_attr.grh.flow_label = rsp.ah.flow_label;
	attr->ah_attr.grh.sgid_index = rsp.ah.sgid_index;
	attr->ah_attr.grh.hop_limit = rsp.ah.hop_limit;
	attr->ah_attr.grh.traffic_class = rsp.ah.traffic_class;
	attr->ah_attr.sl = rsp.ah.sl;
	attr->ah_attr.is_global = rsp.ah.is_global;
	attr->ah_attr.port_num = rsp.ah.port_num;
	attr->ah_attr.static_rate = rsp.ah.static_rate;
	if (init) {
		memset(init, 0, sizeof(*init));
		init->qp_context = ibqp->qp_context;
		init->send_cq = ibqp->send_cq;
		init->recv_cq = ibqp->recv_cq;
		init->srq = ibqp->srq;
		init->cap = qp->cap;
		init->qp_type = ibqp->qp_type;
		init->sq_sig_all = !!qp->sq_signal_bits;
	}
	return 0;
}

/*
 * rdma-core mlx5_query_qp_data_in_order: only a device with the qp_data_in_order capability
 * (newer than ConnectX-4) writes a QP's data in order, and says so in the QP's context.
 */
int cx4_query_qp_data_in_order(struct ibv_qp *ibqp, enum ibv_wr_opcode op, uint32_t flags)
{
	struct cx4_context *ctx = to_cx4_ctx(ibqp->context);
	struct cx4_handle_req req = { .handle = to_cx4_qp(ibqp)->handle };
	struct cx4_query_qp_rsp rsp;

	(void)op;
	if (flags || !(ctx->caps.flags & CX4_UCTX_QP_DATA_IN_ORDER) ||
	    ibqp->state != IBV_QPS_RTS)
		return 0;
	if (cx4_call(ibqp->context, CX4_OP_QUERY_QP, &req, sizeof(req), NULL, 0, &rsp,
		     sizeof(rsp)))
		return 0;
	return rsp.data_in_order;
}

int cx4_destroy_qp(struct ibv_qp *ibqp)
{
	struct cx4_qp *qp = to_cx4_qp(ibqp);
	struct cx4_context *ctx = to_cx4_ctx(ibqp->context);
	struct cx4_handle_req req = { .handle = qp->handle };
	struct cx4_destroy_rsp rsp;
	int err;

	err = cx4_call(ibqp->context, CX4_OP_DESTROY_QP, &req, sizeof(req), NULL, 0, &rsp,
		       sizeof(rsp));
	if (err)
		return err;
	/* rdma-core mlx5_destroy_qp: the QP's CQEs leave its CQs with it */
	cx4_cq_clean(to_cx4_cq(ibqp->recv_cq), qp->qpn, ibqp->srq ? to_cx4_srq(ibqp->srq) : NULL);
	if (ibqp->send_cq != ibqp->recv_cq)
		cx4_cq_clean(to_cx4_cq(ibqp->send_cq), qp->qpn, NULL);
	clear_qp(ctx, qp->qpn);
	cx4_buf_free(&qp->buf);
	pthread_spin_destroy(&qp->sq.lock);
	pthread_spin_destroy(&qp->rq.lock);
	free(qp->sq.wrid);
	free(qp->sq.wqe_head);
	free(qp->sq.wr_data);
	free(qp->rq.wrid);
	free(qp);
	return 0;
}
