// SPDX-License-Identifier: MIT
/*
 * post_send: the send WQE as the PRM defines it and rdma-core mlx5 builds it
 * (providers/mlx5/qp.c _mlx5_post_send / post_send_db):
 *
 *   control segment   opcode, WQE index, QPN, size in 16-byte units (ds), fence, completion
 *                     request (CQ update), solicited event, immediate data
 *   RC/UC RDMA        remote address segment (VA, rkey)
 *   RC atomic         remote address + atomic segment (swap/add, compare), one 8-byte data
 *                     segment for the result
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

#include "cx4.h"

static const uint8_t wr_opcode[] = {
	[IBV_WR_RDMA_WRITE] = MLX5_OPCODE_RDMA_WRITE,
	[IBV_WR_RDMA_WRITE_WITH_IMM] = MLX5_OPCODE_RDMA_WRITE_IMM,
	[IBV_WR_SEND] = MLX5_OPCODE_SEND,
	[IBV_WR_SEND_WITH_IMM] = MLX5_OPCODE_SEND_IMM,
	[IBV_WR_RDMA_READ] = MLX5_OPCODE_RDMA_READ,
	[IBV_WR_ATOMIC_CMP_AND_SWP] = MLX5_OPCODE_ATOMIC_CS,
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = MLX5_OPCODE_ATOMIC_FA,
};

static inline uint8_t *send_wqe(struct cx4_qp *qp, unsigned int idx)
{
	return qp->sq_start + ((size_t)idx << MLX5_SEND_WQE_SHIFT);
}

/* rdma-core mlx5_wq_overflow(): the CQ lock orders us with the poller moving tail */
static bool wq_overflow(struct cx4_wq *wq, unsigned int nreq, struct cx4_cq *cq)
{
	unsigned int cur = wq->head - wq->tail;

	if (cur + nreq < wq->max_post)
		return false;
	pthread_spin_lock(&cq->lock);
	cur = wq->head - wq->tail;
	pthread_spin_unlock(&cq->lock);
	return cur + nreq >= wq->max_post;
}

static inline void set_data_seg(struct mlx5_wqe_data_seg *d, uint32_t len, uint32_t lkey,
				uint64_t addr)
{
	d->byte_count = htobe32(len);
	d->lkey = htobe32(lkey);
	d->addr = htobe64(addr);
}

/* Inline data, wrapping at the end of the send queue; *ds gets its size in 16-byte units. */
static int set_inline(struct cx4_qp *qp, struct ibv_send_wr *wr, uint8_t *seg, int *ds)
{
	struct mlx5_wqe_inl_data_seg *inl = (struct mlx5_wqe_inl_data_seg *)seg;
	uint8_t *p = seg + sizeof(*inl);
	size_t total = 0;

	for (int i = 0; i < wr->num_sge; i++) {
		const uint8_t *src = (const uint8_t *)(uintptr_t)wr->sg_list[i].addr;
		size_t len = wr->sg_list[i].length;

		total += len;
		if (total > (size_t)qp->max_inline)
			return ENOMEM;
		if (p + len > qp->sq_end) {
			size_t n = (size_t)(qp->sq_end - p);

			memcpy(p, src, n);
			src += n;
			len -= n;
			p = qp->sq_start;
		}
		memcpy(p, src, len);
		p += len;
	}
	if (!total) {
		*ds = 0;
		return 0;
	}
	inl->byte_count = htobe32((uint32_t)total | MLX5_INLINE_SEG);
	*ds = (int)(cx4_align(total + sizeof(*inl), 16) / 16);
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

static void ring_doorbell(struct cx4_qp *qp, unsigned int nreq, bool inl, int ds, void *ctrl)
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

int cx4_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct cx4_qp *qp = to_cx4_qp(ibqp);
	struct mlx5_wqe_ctrl_seg *ctrl = NULL, *last = NULL;
	unsigned int nreq;
	uint8_t fence, next_fence;
	bool inl = false, last_inl = false;
	int err = 0, ds = 0, last_ds = 0;

	pthread_spin_lock(&qp->sq.lock);
	next_fence = qp->fm_cache;
	for (nreq = 0; wr; nreq++, wr = wr->next) {
		uint8_t *seg;
		unsigned int idx;
		bool atomic;

		inl = false;
		if (!qp->sq.wqe_cnt || (unsigned int)wr->opcode >= sizeof(wr_opcode) ||
		    !bv_opcode_ok(ibqp->qp_type, wr->opcode) || wr->num_sge < 0) {
			err = EINVAL;
			break;
		}
		if (wq_overflow(&qp->sq, nreq, to_cx4_cq(ibqp->send_cq))) {
			err = ENOMEM;
			break;
		}
		if (wr->num_sge > qp->sq.max_gs) {
			err = ENOMEM;
			break;
		}
		atomic = wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
			 wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
		if (atomic && (wr->num_sge != 1 || wr->sg_list[0].length < 8)) {
			err = EINVAL;
			break;
		}
		if ((wr->send_flags & IBV_SEND_INLINE) &&
		    (atomic || wr->opcode == IBV_WR_RDMA_READ)) {
			err = EINVAL;
			break;
		}
		if (ibqp->qp_type == IBV_QPT_UD && (!wr->wr.ud.ah ||
						    wr->wr.ud.ah->context != ibqp->context)) {
			err = EINVAL;
			break;
		}

		fence = (wr->send_flags & IBV_SEND_FENCE) ? MLX5_WQE_CTRL_FENCE : next_fence;
		next_fence = 0;
		idx = qp->sq.cur_post & (qp->sq.wqe_cnt - 1);
		ctrl = (struct mlx5_wqe_ctrl_seg *)send_wqe(qp, idx);
		seg = (uint8_t *)ctrl + sizeof(*ctrl);
		ds = sizeof(*ctrl) / 16;
		*(uint32_t *)((uint8_t *)ctrl + 8) = 0;
		ctrl->imm = (wr->opcode == IBV_WR_SEND_WITH_IMM ||
			     wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM) ? wr->imm_data : 0;
		ctrl->fm_ce_se = qp->sq_signal_bits | fence |
				 (wr->send_flags & IBV_SEND_SIGNALED ? MLX5_WQE_CTRL_CQ_UPDATE : 0) |
				 (wr->send_flags & IBV_SEND_SOLICITED ? MLX5_WQE_CTRL_SOLICITED : 0);

		switch (wr->opcode) {
		case IBV_WR_RDMA_WRITE:
		case IBV_WR_RDMA_WRITE_WITH_IMM:
		case IBV_WR_RDMA_READ: {
			struct mlx5_wqe_raddr_seg *r = (struct mlx5_wqe_raddr_seg *)seg;

			r->raddr = htobe64(wr->wr.rdma.remote_addr);
			r->rkey = htobe32(wr->wr.rdma.rkey);
			r->reserved = 0;
			seg += sizeof(*r);
			ds += sizeof(*r) / 16;
			break;
		}
		case IBV_WR_ATOMIC_CMP_AND_SWP:
		case IBV_WR_ATOMIC_FETCH_AND_ADD: {
			struct mlx5_wqe_raddr_seg *r = (struct mlx5_wqe_raddr_seg *)seg;
			struct mlx5_wqe_atomic_seg *a = (struct mlx5_wqe_atomic_seg *)(r + 1);

			r->raddr = htobe64(wr->wr.atomic.remote_addr);
			r->rkey = htobe32(wr->wr.atomic.rkey);
			r->reserved = 0;
			if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP) {
				a->swap_add = htobe64(wr->wr.atomic.swap);
				a->compare = htobe64(wr->wr.atomic.compare_add);
			} else {
				a->swap_add = htobe64(wr->wr.atomic.compare_add);
				a->compare = 0;
			}
			seg += sizeof(*r) + sizeof(*a);
			ds += (sizeof(*r) + sizeof(*a)) / 16;
			break;
		}
		default:
			break;
		}
		if (ibqp->qp_type == IBV_QPT_UD) {
			struct mlx5_wqe_datagram_seg *dg = (struct mlx5_wqe_datagram_seg *)seg;

			memcpy(&dg->av, &to_cx4_ah(wr->wr.ud.ah)->av, sizeof(dg->av));
			dg->av.dqp_dct = htobe32(wr->wr.ud.remote_qpn | MLX5_EXTENDED_UD_AV);
			dg->av.key.qkey.qkey = htobe32(wr->wr.ud.remote_qkey);
			seg += sizeof(*dg);
			ds += sizeof(*dg) / 16;
			if (seg == qp->sq_end)
				seg = qp->sq_start;
		}

		if ((wr->send_flags & IBV_SEND_INLINE) && wr->num_sge) {
			int sz;

			err = set_inline(qp, wr, seg, &sz);
			if (err)
				break;
			inl = true;
			ds += sz;
		} else {
			for (int i = 0; i < wr->num_sge; i++) {
				const struct ibv_sge *sg = &wr->sg_list[i];

				if (seg == qp->sq_end)
					seg = qp->sq_start;
				if (!sg->length)
					continue;
				set_data_seg((struct mlx5_wqe_data_seg *)seg, atomic ? 8 : sg->length,
					     sg->lkey, sg->addr);
				seg += sizeof(struct mlx5_wqe_data_seg);
				ds++;
			}
		}

		ctrl->opmod_idx_opcode = htobe32(((qp->sq.cur_post & 0xffff) << 8) |
						 wr_opcode[wr->opcode]);
		ctrl->qpn_ds = htobe32((uint32_t)ds | (ibqp->qp_num << 8));
		qp->sq.wrid[idx] = wr->wr_id;
		qp->sq.wqe_head[idx] = qp->sq.head + nreq;
		qp->sq.cur_post += (unsigned int)(cx4_align((size_t)ds * 16, MLX5_SEND_WQE_BB) /
						  MLX5_SEND_WQE_BB);
		/* the doorbell carries the last complete WQE, never a half-built one */
		last = ctrl;
		last_ds = ds;
		last_inl = inl;
	}
	if (err)
		*bad = wr;
	qp->fm_cache = next_fence;
	if (nreq)
		ring_doorbell(qp, nreq, last_inl, last_ds, last);
	pthread_spin_unlock(&qp->sq.lock);
	return err;
}
