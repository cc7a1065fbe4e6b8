// SPDX-License-Identifier: MIT
/*
 * Memory windows (IBTA 10.6.7; rdma-core providers/mlx5 verbs.c mlx5_alloc_mw, qp.c
 * set_bind_wr / mlx5_bind_mw; Linux mlx5_ib_alloc_mw):
 *
 *  - a window is a memory key cx4d creates free (unusable), UMR-enabled, in KLM mode, with
 *    remote invalidation allowed for type 2; rkey = its key;
 *  - binding and invalidating are UMR WQEs in the send queue: a UMR control segment (which
 *    mkey fields change, the free-state and QP checks), the new mkey context (free, access,
 *    start, length, key byte, and for type 2 the QP it is bound to) and, for a bind, one KLM
 *    that points into the memory region (its lkey, address, length);
 *  - type 1 windows are bound by ibv_bind_mw (the new key is the old one with its key byte
 *    incremented, ibv_inc_rkey), unbound by a zero-length bind; type 2 windows by a posted
 *    BIND_MW with the caller's new key, and invalidated by LOCAL_INV or a peer's
 *    SEND_WITH_INV. The device checks everything and fails the WQE with MW_BIND_ERR.
 */
#include <errno.h>
#include <stdlib.h>

#include "wqe.h"

/* rdma-core get_klm_octo(): KLM entries in 16-byte units, in blocks of four */
static uint16_t klm_octowords(unsigned int n)
{
	return (uint16_t)(((n + 7) & ~7u) / 2);
}

int cx4_umr_bind_segs(struct cx4_qp *qp, enum ibv_mw_type type, uint32_t new_rkey,
		      const struct ibv_mw_bind_info *bi, uint8_t **segp, unsigned int *ds)
{
	struct mlx5_wqe_umr_ctrl_seg *ctrl = (struct mlx5_wqe_umr_ctrl_seg *)*segp;
	struct mlx5_wqe_mkey_context_seg *mkey;
	union {
		struct mlx5_wqe_umr_klm_seg klm;
		uint8_t reserved[64];
	} * data;
	uint64_t mask = MLX5_WQE_UMR_CTRL_MKEY_MASK_FREE | MLX5_WQE_UMR_CTRL_MKEY_MASK_MKEY;

	/* a KLM covers at most 2 GB */
	if (bi->length > 1ull << 31)
		return EOPNOTSUPP;
	if (bi->length && (!bi->mr || (bi->mw_access_flags & IBV_ACCESS_ZERO_BASED)))
		return EINVAL;

	memset(ctrl, 0, sizeof(*ctrl));
	ctrl->flags = MLX5_WQE_UMR_CTRL_FLAG_TRNSLATION_OFFSET | MLX5_WQE_UMR_CTRL_FLAG_INLINE;
	if (type == IBV_MW_TYPE_2)
		mask |= MLX5_WQE_UMR_CTRL_MKEY_MASK_QPN;
	if (bi->length) {
		ctrl->klm_octowords = htobe16(klm_octowords(1));
		/* a type 2 window must be free to be bound */
		if (type == IBV_MW_TYPE_2)
			ctrl->flags |= MLX5_WQE_UMR_CTRL_FLAG_CHECK_FREE;
		mask |= MLX5_WQE_UMR_CTRL_MKEY_MASK_LEN | MLX5_WQE_UMR_CTRL_MKEY_MASK_START_ADDR |
			MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_LOCAL_WRITE |
			MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_READ |
			MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_WRITE |
			MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_ATOMIC;
	} else {
		ctrl->klm_octowords = htobe16(klm_octowords(0));
		/* only the QP a type 2 window is bound to may invalidate it */
		if (type == IBV_MW_TYPE_2)
			ctrl->flags |= MLX5_WQE_UMR_CTRL_FLAG_CHECK_QPN;
	}
	ctrl->mkey_mask = htobe64(mask);
	*ds += sizeof(*ctrl) / 16;

	mkey = (struct mlx5_wqe_mkey_context_seg *)cx4_sq_next(qp, *segp + sizeof(*ctrl));
	memset(mkey, 0, sizeof(*mkey));
	mkey->qpn_mkey =
	    htobe32((new_rkey & 0xff) |
		    ((type == IBV_MW_TYPE_1 || !bi->length) ? 0xffffff00u : qp->qpn << 8));
	if (bi->length) {
		/* local read comes with every window (the mkey was created with it) */
		if (bi->mw_access_flags & IBV_ACCESS_LOCAL_WRITE)
			mkey->access_flags |= MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_LOCAL_WRITE;
		if (bi->mw_access_flags & IBV_ACCESS_REMOTE_WRITE)
			mkey->access_flags |= MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_WRITE;
		if (bi->mw_access_flags & IBV_ACCESS_REMOTE_READ)
			mkey->access_flags |= MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_READ;
		if (bi->mw_access_flags & IBV_ACCESS_REMOTE_ATOMIC)
			mkey->access_flags |= MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_ATOMIC;
		mkey->start_addr = htobe64(bi->addr);
		mkey->len = htobe64(bi->length);
	} else {
		mkey->free = MLX5_WQE_MKEY_CONTEXT_FREE;
	}
	*ds += sizeof(*mkey) / 16;
	*segp = cx4_sq_next(qp, (uint8_t *)mkey + sizeof(*mkey));
	if (!bi->length)
		return 0;

	data = (void *)*segp;
	memset(data, 0, sizeof(*data));
	data->klm.byte_count = htobe32((uint32_t)bi->length);
	data->klm.mkey = htobe32(bi->mr->lkey);
	data->klm.address = htobe64(bi->addr);
	*ds += sizeof(*data) / 16;
	*segp = cx4_sq_next(qp, *segp + sizeof(*data));
	return 0;
}

struct ibv_mw *cx4_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct cx4_alloc_mw_req req = {.pd_handle = pd->handle, .type = type};
	struct cx4_alloc_mw_rsp rsp;
	struct ibv_mw *mw;
	int err;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;
	err = cx4_call(pd->context, CX4_OP_ALLOC_MW, &req, sizeof(req), NULL, 0, &rsp, sizeof(rsp));
	if (err) {
		free(mw);
		errno = err;
		return NULL;
	}
	/* everything ibv_mw declares is ours (ibv_cmd_alloc_mw's part) */
	mw->context = pd->context;
	mw->pd = pd;
	mw->rkey = rsp.rkey;
	mw->handle = rsp.handle;
	mw->type = type;
	return mw;
}

int cx4_dealloc_mw(struct ibv_mw *mw)
{
	struct cx4_handle_req req = {.handle = mw->handle};
	int err = cx4_call(mw->context, CX4_OP_DEALLOC_MW, &req, sizeof(req), NULL, 0, NULL, 0);

	if (err)
		return err;
	free(mw);
	return 0;
}

/* ibv_bind_mw: a type 1 window's bind, posted as a UMR WQE (rdma-core mlx5_bind_mw). */
int cx4_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind)
{
	const struct ibv_mw_bind_info *bi = &mw_bind->bind_info;
	struct cx4_qp *qp = to_cx4_qp(ibqp);
	struct ibv_send_wr wr = {0}, *bad;
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	int err;

	if (mw->type != IBV_MW_TYPE_1 || mw->context != ibqp->context ||
	    (bi->mw_access_flags & IBV_ACCESS_ZERO_BASED) || (!bi->mr && (bi->addr || bi->length)))
		return EINVAL;
	if (bi->mr &&
	    (bi->mr->context != ibqp->context || verbs_get_mr(bi->mr)->mr_type != IBV_MR_TYPE_MR))
		return EINVAL;
	if (!cx4_opcode_ok(ibqp->qp_type, IBV_WR_BIND_MW))
		return EINVAL;
	wr.wr_id = mw_bind->wr_id;
	wr.send_flags = mw_bind->send_flags;
	wr.opcode = IBV_WR_BIND_MW;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info = *bi;

	pthread_spin_lock(&qp->sq.lock);
	err = cx4_post_send_locked(qp, &wr, &bad, true);
	pthread_spin_unlock(&qp->sq.lock);
	if (!err)
		mw->rkey = rkey;
	return err;
}
