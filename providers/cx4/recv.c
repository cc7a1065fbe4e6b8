// SPDX-License-Identifier: MIT
/*
 * post_recv and post_srq_recv (rdma-core mlx5_post_recv / mlx5_post_srq_recv). Receive WQEs
 * are scatter lists of data segments; a list shorter than the WQE ends with a segment of
 * lkey 0x100 (MLX5_INVALID_LKEY). No MMIO: the device reads the receive counter from the
 * doorbell record when a message arrives.
 *
 * An SRQ is a linked list of WQEs (next-WQE segment first): software posts at head, the
 * device consumes from the start of the list and reports the index of the WQE it used; that
 * WQE goes back on the list at tail once its completion is polled.
 */
#include <errno.h>

#include "cx4.h"

static inline void set_data_seg(struct mlx5_wqe_data_seg *d, const struct ibv_sge *sg)
{
	d->byte_count = htobe32(sg->length);
	d->lkey = htobe32(sg->lkey);
	d->addr = htobe64(sg->addr);
}

static inline void terminate(struct mlx5_wqe_data_seg *d)
{
	d->byte_count = 0;
	d->lkey = htobe32(MLX5_INVALID_LKEY);
	d->addr = 0;
}

static bool rq_overflow(struct cx4_wq *wq, unsigned int nreq, struct cx4_cq *cq)
{
	unsigned int cur = wq->head - wq->tail;

	if (cur + nreq < wq->max_post)
		return false;
	pthread_spin_lock(&cq->lock);
	cur = wq->head - wq->tail;
	pthread_spin_unlock(&cq->lock);
	return cur + nreq >= wq->max_post;
}

int cx4_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct cx4_qp *qp = to_cx4_qp(ibqp);
	unsigned int nreq, ind;
	int err = 0;

	if (ibqp->srq || !qp->rq.wqe_cnt) {
		*bad = wr;
		return EINVAL;
	}
	pthread_spin_lock(&qp->rq.lock);
	ind = qp->rq.head & (qp->rq.wqe_cnt - 1);
	for (nreq = 0; wr; nreq++, wr = wr->next) {
		struct mlx5_wqe_data_seg *scat;
		int j = 0;

		if (rq_overflow(&qp->rq, nreq, to_cx4_cq(ibqp->recv_cq))) {
			err = ENOMEM;
			break;
		}
		/* a QP in RESET takes no receives (rdma-core qp_state_max_gs) */
		if (wr->num_sge < 0 || wr->num_sge > qp->rq.max_gs || !qp->rq_ready) {
			err = EINVAL;
			break;
		}
		scat = (struct mlx5_wqe_data_seg *)((uint8_t *)qp->buf.va + qp->rq.offset +
						    ((size_t)ind << qp->rq.wqe_shift));
		for (int i = 0; i < wr->num_sge; i++) {
			if (!wr->sg_list[i].length)
				continue;
			set_data_seg(scat + j++, &wr->sg_list[i]);
		}
		if (j < qp->rq.max_gs)
			terminate(scat + j);
		qp->rq.wrid[ind] = wr->wr_id;
		ind = (ind + 1) & (qp->rq.wqe_cnt - 1);
	}
	if (nreq) {
		qp->rq.head += nreq;
		/* the WQEs before the counter the device reads */
		udma_to_device_barrier();
		qp->db[CX4_RCV_DBR] = htobe32(qp->rq.head & 0xffff);
	}
	if (err)
		*bad = wr;
	pthread_spin_unlock(&qp->rq.lock);
	return err;
}

static inline struct mlx5_wqe_srq_next_seg *srq_wqe(struct cx4_srq *srq, unsigned int n)
{
	return (struct mlx5_wqe_srq_next_seg *)(srq->wqes + ((size_t)n << srq->wqe_shift));
}

/* Caller holds the CQ lock; the SRQ lock orders us with posters. */
void cx4_free_srq_wqe(struct cx4_srq *srq, unsigned int ind)
{
	pthread_spin_lock(&srq->lock);
	srq_wqe(srq, srq->tail)->next_wqe_index = htobe16((uint16_t)ind);
	srq->tail = ind;
	pthread_spin_unlock(&srq->lock);
}

int cx4_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct cx4_srq *srq = to_cx4_srq(ibsrq);
	unsigned int nreq;
	int err = 0;

	pthread_spin_lock(&srq->lock);
	for (nreq = 0; wr; nreq++, wr = wr->next) {
		struct mlx5_wqe_srq_next_seg *next;
		struct mlx5_wqe_data_seg *scat;
		int j = 0;

		if (wr->num_sge < 0 || wr->num_sge > srq->max_gs) {
			err = EINVAL;
			break;
		}
		if (srq->head == srq->tail) {
			err = ENOMEM;	/* full: one WQE always stays as the list's tail */
			break;
		}
		srq->wrid[srq->head] = wr->wr_id;
		next = srq_wqe(srq, srq->head);
		srq->head = be16toh(next->next_wqe_index);
		scat = (struct mlx5_wqe_data_seg *)(next + 1);
		for (int i = 0; i < wr->num_sge; i++) {
			if (!wr->sg_list[i].length)
				continue;
			set_data_seg(scat + j++, &wr->sg_list[i]);
		}
		if (j < srq->max_gs)
			terminate(scat + j);
	}
	if (nreq) {
		srq->counter += (uint16_t)nreq;
		udma_to_device_barrier();
		*srq->db = htobe32(srq->counter);
	}
	if (err)
		*bad = wr;
	pthread_spin_unlock(&srq->lock);
	return err;
}
