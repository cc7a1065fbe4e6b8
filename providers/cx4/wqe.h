/* SPDX-License-Identifier: MIT */
/*
 * Send WQE segments as the PRM defines them and rdma-core mlx5 builds them
 * (providers/mlx5/qp.c set_raddr_seg, set_atomic_seg, set_datagram_seg, set_data_ptr_seg),
 * in the layouts of <infiniband/mlx5dv.h>. One place for what post_send (send.c), the
 * ibv_wr_* API (wr.c) and memory-window binds (mw.c) all write into the send queue.
 *
 * A WQE is a run of 16-byte units (ds) starting at a 64-byte basic block; it may wrap from
 * the end of the send queue to its start, which is why every writer goes through cx4_sq_next.
 */
#ifndef CX4_WQE_H
#define CX4_WQE_H

#include <string.h>

#include "cx4.h"

static inline uint8_t *cx4_sq_wqe(struct cx4_qp *qp, unsigned int idx)
{
	return qp->sq_start + ((size_t)idx << MLX5_SEND_WQE_SHIFT);
}

/* A segment that would start at the end of the send queue starts at its beginning. */
static inline uint8_t *cx4_sq_next(struct cx4_qp *qp, uint8_t *seg)
{
	return seg == qp->sq_end ? qp->sq_start : seg;
}

/* Copy into the send queue at dst, wrapping at its end; returns where the copy ended. */
static inline uint8_t *cx4_sq_copy(struct cx4_qp *qp, uint8_t *dst, const void *src, size_t n)
{
	if (dst + n > qp->sq_end) {
		size_t first = (size_t)(qp->sq_end - dst);

		memcpy(dst, src, first);
		src = (const uint8_t *)src + first;
		n -= first;
		dst = qp->sq_start;
	}
	memcpy(dst, src, n);
	return dst + n;
}

/* rdma-core mlx5_wq_overflow(): the CQ lock orders us with the poller moving tail */
static inline bool cx4_sq_overflow(struct cx4_qp *qp, unsigned int nreq)
{
	struct cx4_cq *cq = to_cx4_cq(qp->vqp.qp.send_cq);
	unsigned int cur = qp->sq.head - qp->sq.tail;

	if (cur + nreq < qp->sq.max_post)
		return false;
	pthread_spin_lock(&cq->lock);
	cur = qp->sq.head - qp->sq.tail;
	pthread_spin_unlock(&cq->lock);
	return cur + nreq >= qp->sq.max_post;
}

static inline void cx4_set_data_seg(void *seg, uint32_t len, uint32_t lkey, uint64_t addr)
{
	struct mlx5_wqe_data_seg *d = seg;

	d->byte_count = htobe32(len);
	d->lkey = htobe32(lkey);
	d->addr = htobe64(addr);
}

static inline void cx4_set_raddr_seg(void *seg, uint64_t raddr, uint32_t rkey)
{
	struct mlx5_wqe_raddr_seg *r = seg;

	r->raddr = htobe64(raddr);
	r->rkey = htobe32(rkey);
	r->reserved = 0;
}

/* Compare & swap: swap, compare; fetch & add: the addend, 0 (rdma-core _set_atomic_seg). */
static inline void cx4_set_atomic_seg(void *seg, bool cmp_swap, uint64_t swap_add, uint64_t compare)
{
	struct mlx5_wqe_atomic_seg *a = seg;

	a->swap_add = htobe64(swap_add);
	a->compare = cmp_swap ? htobe64(compare) : 0;
}

/* UD: the AH's address vector with the remote QPN and Q_Key (rdma-core set_datagram_seg). */
static inline void cx4_set_datagram_seg(void *seg, const struct cx4_ah *ah, uint32_t rqpn,
					uint32_t qkey)
{
	struct mlx5_wqe_datagram_seg *dg = seg;

	memcpy(&dg->av, &ah->av, sizeof(dg->av));
	dg->av.dqp_dct = htobe32(rqpn | MLX5_EXTENDED_UD_AV);
	dg->av.key.qkey.qkey = htobe32(qkey);
}

/*
 * The control segment's first 12 bytes of a WQE at the producer counter: opcode and WQE
 * index, QPN and size (filled last, when the size is known: cx4_wqe_finish), fence and
 * completion flags; the immediate (or invalidated key, or UMR target key) is the caller's.
 */
static inline struct mlx5_wqe_ctrl_seg *cx4_wqe_begin(struct cx4_qp *qp, uint8_t opcode,
						      uint8_t fm_ce_se)
{
	struct mlx5_wqe_ctrl_seg *ctrl =
	    (struct mlx5_wqe_ctrl_seg *)cx4_sq_wqe(qp, qp->sq.cur_post & (qp->sq.wqe_cnt - 1));

	ctrl->opmod_idx_opcode = htobe32(((qp->sq.cur_post & 0xffff) << 8) | opcode);
	*(uint32_t *)((uint8_t *)ctrl + 8) = 0;
	ctrl->fm_ce_se = fm_ce_se;
	ctrl->imm = 0;
	return ctrl;
}

/* The WQE is complete: its size, its completion bookkeeping, the producer counter. */
static inline void cx4_wqe_finish(struct cx4_qp *qp, struct mlx5_wqe_ctrl_seg *ctrl,
				  unsigned int ds, uint64_t wr_id, unsigned int head,
				  uint8_t wc_opcode)
{
	unsigned int idx = qp->sq.cur_post & (qp->sq.wqe_cnt - 1);

	ctrl->qpn_ds = htobe32(ds | (qp->vqp.qp.qp_num << 8));
	qp->sq.wrid[idx] = wr_id;
	qp->sq.wqe_head[idx] = head;
	qp->sq.wr_data[idx] = wc_opcode;
	qp->sq.cur_post += (unsigned int)((ds * 16 + MLX5_SEND_WQE_BB - 1) / MLX5_SEND_WQE_BB);
}

/* Send flags -> the control segment's fence / CQ update / solicited bits. */
static inline uint8_t cx4_fm_ce_se(struct cx4_qp *qp, unsigned int send_flags, uint8_t fence)
{
	return qp->sq_signal_bits | fence |
	       (send_flags & IBV_SEND_SIGNALED ? MLX5_WQE_CTRL_CQ_UPDATE : 0) |
	       (send_flags & IBV_SEND_SOLICITED ? MLX5_WQE_CTRL_SOLICITED : 0);
}

#endif /* CX4_WQE_H */
