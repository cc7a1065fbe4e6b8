// SPDX-License-Identifier: MIT
/*
 * post_send: the send WQE as the PRM defines it and rdma-core mlx5 builds it
 * (providers/mlx5/qp.c _mlx5_post_send / post_send_db):
 *
 *   control segment   opcode, WQE index, QPN, size in 16-byte units (ds), fence, completion
 *                     request (CQ update), solicited event, immediate data (SEND_WITH_INV:
 *                     the key to invalidate; UMR: the memory key it changes)
 *   RC/UC RDMA        remote address segment (VA, rkey)
 *   RC atomic         remote address + atomic segment (swap/add, compare), one 8-byte data
 *                     segment for the result
 *   RC/UC bind, local invalidate: a UMR WQE (mw.c)
 *   UD                the AH's 48-byte address vector with the remote QPN and Q_Key
 *   data              data segments (byte count, lkey, address), or inline data (byte count
 *                     | 0x80000000, the bytes, padded to 16)
 *
 * A WQE spans whole 64-byte basic blocks and may wrap from the end of the send queue to its
 * start. After a batch: barrier, send counter into the doorbell record, then the first 8 bytes
 * of the last WQE to the QP's UAR doorbell register; a single small inline WQE is written
 * whole through the BlueFlame register instead, so the device need not fetch it. Each
 * register has two halves, used alternately.
 */
#include <errno.h>
#include <string.h>

#include "wqe.h"

static const uint8_t wr_opcode[] = {
	[IBV_WR_RDMA_WRITE] = MLX5_OPCODE_RDMA_WRITE,
	[IBV_WR_RDMA_WRITE_WITH_IMM] = MLX5_OPCODE_RDMA_WRITE_IMM,
	[IBV_WR_SEND] = MLX5_OPCODE_SEND,
	[IBV_WR_SEND_WITH_IMM] = MLX5_OPCODE_SEND_IMM,
	[IBV_WR_RDMA_READ] = MLX5_OPCODE_RDMA_READ,
	[IBV_WR_ATOMIC_CMP_AND_SWP] = MLX5_OPCODE_ATOMIC_CS,
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = MLX5_OPCODE_ATOMIC_FA,
	[IBV_WR_LOCAL_INV] = MLX5_OPCODE_UMR,
	[IBV_WR_BIND_MW] = MLX5_OPCODE_UMR,
	[IBV_WR_SEND_WITH_INV] = MLX5_OPCODE_SEND_INVAL,
};

bool cx4_opcode_ok(enum ibv_qp_type t, enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return true;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_LOCAL_INV:
	case IBV_WR_BIND_MW:
		return t == IBV_QPT_RC || t == IBV_QPT_UC;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_SEND_WITH_INV:
		return t == IBV_QPT_RC;
	default:
		return false;
	}
}

/* Inline data, wrapping at the end of the send queue; *ds gets its size in 16-byte units. */
static int set_inline(struct cx4_qp *qp, struct ibv_send_wr *wr, uint8_t *seg, unsigned int *ds)
{
	struct mlx5_wqe_inl_data_seg *inl = (struct mlx5_wqe_inl_data_seg *)seg;
	uint8_t *p = seg + sizeof(*inl);
	size_t total = 0;

	for (int i = 0; i < wr->num_sge; i++) {
		total += wr->sg_list[i].length;
		if (total > (size_t)qp->max_inline)
			return ENOMEM;
		p = cx4_sq_copy(qp, p, (const void *)(uintptr_t)wr->sg_list[i].addr,
				wr->sg_list[i].length);
	}
	if (!total) {
		*ds = 0;
		return 0;
	}
	inl->byte_count = htobe32((uint32_t)total | MLX5_INLINE_SEG);
	*ds = (unsigned int)(cx4_align(total + sizeof(*inl), 16) / 16);
	return 0;
}

/*
 * BlueFlame: the WQE itself into the register. A WQE that wraps round the end of the send
 * queue is gathered first: the register takes one contiguous copy.
 */
static void bf_copy(struct cx4_context *ctx, struct cx4_qp *qp, size_t off, const uint8_t *src,
		    size_t bytes)
{
	uint64_t tmp[256 / 8];

	if (src + bytes > qp->sq_end) {
		size_t first = (size_t)(qp->sq_end - src);

		memcpy(tmp, src, first);
		memcpy((uint8_t *)tmp + first, qp->sq_start, bytes - first);
		src = (const uint8_t *)tmp;
	}
	cx4_mmio_bf_copy(&ctx->uar, off, src, bytes);
}

void cx4_sq_doorbell(struct cx4_qp *qp, unsigned int nreq, bool inl, unsigned int ds, void *ctrl)
{
	struct cx4_context *ctx = to_cx4_ctx(qp->vqp.qp.context);
	struct cx4_bf *bf = qp->bf;

	qp->sq.head += nreq;
	/* WQEs before the doorbell record, the record before the doorbell */
	udma_to_device_barrier();
	qp->db[CX4_SND_DBR] = htobe32(qp->sq.cur_post & 0xffff);
	pthread_spin_lock(&bf->lock);
	udma_to_device_barrier();
	if (nreq == 1 && inl && ds > 1 && bf->buf_size && (size_t)ds * 16 <= bf->buf_size)
		bf_copy(ctx, qp, bf->reg + bf->offset, ctrl, cx4_align((size_t)ds * 16, 64));
	else
		cx4_mmio_write64_be(&ctx->uar, bf->reg + bf->offset, *(uint64_t *)ctrl);
	bf->offset ^= bf->buf_size;
	pthread_spin_unlock(&bf->lock);
}

static int check_wr(struct cx4_qp *qp, const struct ibv_send_wr *wr, unsigned int nreq,
		    bool bind_type1)
{
	struct ibv_qp *ibqp = &qp->vqp.qp;
	bool atomic = wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
		      wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;

	if (!qp->sq.wqe_cnt || (unsigned int)wr->opcode >= sizeof(wr_opcode) ||
	    !cx4_opcode_ok(ibqp->qp_type, wr->opcode) || wr->num_sge < 0)
		return EINVAL;
	/* before RTS the send queue takes nothing (rdma-core qp_state_max_gs: ENOMEM) */
	if (cx4_sq_overflow(qp, nreq) || wr->num_sge > qp->sq.max_gs || !qp->sq_ready)
		return ENOMEM;
	if (atomic && (wr->num_sge != 1 || wr->sg_list[0].length < 8))
		return EINVAL;
	if ((wr->send_flags & IBV_SEND_INLINE) && (atomic || wr->opcode == IBV_WR_RDMA_READ))
		return EINVAL;
	if (ibqp->qp_type == IBV_QPT_UD &&
	    (!wr->wr.ud.ah || wr->wr.ud.ah->context != ibqp->context))
		return EINVAL;
	if (wr->opcode == IBV_WR_BIND_MW &&
	    (!wr->bind_mw.mw || wr->bind_mw.mw->context != ibqp->context ||
	     wr->bind_mw.mw->type != (bind_type1 ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2)))
		return EINVAL;	/* type 1 windows are bound by ibv_bind_mw only (mw.c) */
	return 0;
}

/* The transport segments of a WQE after its control segment. 0 or an errno. */
static int set_transport(struct cx4_qp *qp, struct ibv_send_wr *wr,
			 struct mlx5_wqe_ctrl_seg *ctrl, uint8_t **segp, unsigned int *ds,
			 uint8_t *wc_op, uint8_t *next_fence)
{
	uint8_t *seg = *segp;

	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		cx4_set_raddr_seg(seg, wr->wr.rdma.remote_addr, wr->wr.rdma.rkey);
		seg += sizeof(struct mlx5_wqe_raddr_seg);
		*ds += sizeof(struct mlx5_wqe_raddr_seg) / 16;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		cx4_set_raddr_seg(seg, wr->wr.atomic.remote_addr, wr->wr.atomic.rkey);
		if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP)
			cx4_set_atomic_seg(seg + sizeof(struct mlx5_wqe_raddr_seg), true,
					   wr->wr.atomic.swap, wr->wr.atomic.compare_add);
		else
			cx4_set_atomic_seg(seg + sizeof(struct mlx5_wqe_raddr_seg), false,
					   wr->wr.atomic.compare_add, 0);
		seg += sizeof(struct mlx5_wqe_raddr_seg) + sizeof(struct mlx5_wqe_atomic_seg);
		*ds += (sizeof(struct mlx5_wqe_raddr_seg) + sizeof(struct mlx5_wqe_atomic_seg)) / 16;
		break;
	case IBV_WR_BIND_MW: {
		int err;

		ctrl->imm = htobe32(wr->bind_mw.mw->rkey);
		err = cx4_umr_bind_segs(qp, wr->bind_mw.mw->type, wr->bind_mw.rkey,
					&wr->bind_mw.bind_info, &seg, ds);
		if (err)
			return err;
		*wc_op = IBV_WC_BIND_MW;
		*next_fence = MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE;
		break;
	}
	case IBV_WR_LOCAL_INV: {
		static const struct ibv_mw_bind_info none;

		ctrl->imm = htobe32(wr->invalidate_rkey);
		cx4_umr_bind_segs(qp, IBV_MW_TYPE_2, 0, &none, &seg, ds);
		*wc_op = IBV_WC_LOCAL_INV;
		*next_fence = MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE;
		break;
	}
	default:
		break;
	}
	if (qp->vqp.qp.qp_type == IBV_QPT_UD) {
		cx4_set_datagram_seg(seg, to_cx4_ah(wr->wr.ud.ah), wr->wr.ud.remote_qpn,
				     wr->wr.ud.remote_qkey);
		seg += sizeof(struct mlx5_wqe_datagram_seg);
		*ds += sizeof(struct mlx5_wqe_datagram_seg) / 16;
	}
	*segp = cx4_sq_next(qp, seg);
	return 0;
}

static __be32 wr_imm(const struct ibv_send_wr *wr)
{
	switch (wr->opcode) {
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return wr->imm_data;
	case IBV_WR_SEND_WITH_INV:
		return htobe32(wr->invalidate_rkey);
	default:
		return 0;
	}
}

/* post_send's loop, with the SQ lock held; ibv_bind_mw posts its type 1 binds here (mw.c). */
int cx4_post_send_locked(struct cx4_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad,
			 bool bind_type1)
{
	struct mlx5_wqe_ctrl_seg *ctrl, *last = NULL;
	unsigned int nreq, ds = 0, last_ds = 0;
	uint8_t fence, next_fence;
	bool inl = false, last_inl = false;
	int err = 0;

	next_fence = qp->fm_cache;
	for (nreq = 0; wr; nreq++, wr = wr->next) {
		uint8_t *seg, wc_op = 0;

		inl = false;
		err = check_wr(qp, wr, nreq, bind_type1);
		if (err)
			break;
		fence = (wr->send_flags & IBV_SEND_FENCE) ? MLX5_WQE_CTRL_FENCE : next_fence;
		next_fence = 0;
		ctrl = cx4_wqe_begin(qp, wr_opcode[wr->opcode],
				     cx4_fm_ce_se(qp, wr->send_flags, fence));
		ctrl->imm = wr_imm(wr);
		seg = (uint8_t *)ctrl + sizeof(*ctrl);
		ds = sizeof(*ctrl) / 16;
		err = set_transport(qp, wr, ctrl, &seg, &ds, &wc_op, &next_fence);
		if (err)
			break;
		if ((wr->send_flags & IBV_SEND_INLINE) && wr->num_sge) {
			unsigned int sz;

			err = set_inline(qp, wr, seg, &sz);
			if (err)
				break;
			inl = true;
			ds += sz;
		} else if (wc_op != IBV_WC_BIND_MW && wc_op != IBV_WC_LOCAL_INV) {
			bool atomic = wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
				      wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;

			for (int i = 0; i < wr->num_sge; i++) {
				const struct ibv_sge *sg = &wr->sg_list[i];

				seg = cx4_sq_next(qp, seg);
				if (!sg->length)
					continue;
				cx4_set_data_seg(seg, atomic ? 8 : sg->length, sg->lkey, sg->addr);
				seg += sizeof(struct mlx5_wqe_data_seg);
				ds++;
			}
		}
		/* a WQE never outgrows the slot the queue was sized for (qp.c calc_sq) */
		if (ds * 16 > qp->sq_wqe_size) {
			err = EINVAL;
			break;
		}
		cx4_wqe_finish(qp, ctrl, ds, wr->wr_id, qp->sq.head + nreq, wc_op);
		/* the doorbell carries the last complete WQE, never a half-built one */
		last = ctrl;
		last_ds = ds;
		last_inl = inl;
	}
	if (err)
		*bad = wr;
	qp->fm_cache = next_fence;
	if (nreq && last)
		cx4_sq_doorbell(qp, nreq, last_inl, last_ds, last);
	return err;
}

int cx4_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct cx4_qp *qp = to_cx4_qp(ibqp);
	int err;

	pthread_spin_lock(&qp->sq.lock);
	err = cx4_post_send_locked(qp, wr, bad, false);
	pthread_spin_unlock(&qp->sq.lock);
	return err;
}
