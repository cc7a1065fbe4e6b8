// SPDX-License-Identifier: MIT
/*
 * Shared receive queues (rdma-core providers/mlx5/srq.c + verbs.c mlx5_create_srq): a buffer
 * of 2^n WQEs of 16 << s bytes (next-WQE segment + data segments) linked into a free list,
 * and a doorbell record counting posted WQEs. One WQE always stays on the list as its tail,
 * so max_wr = 2^n - 1.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cx4.h"

struct ibv_srq *cx4_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct cx4_context *ctx = to_cx4_ctx(pd->context);
	const struct bv_device_attr *da = &ctx->bv.attr;
	struct cx4_create_srq_req req = { 0 };
	struct cx4_create_srq_rsp rsp;
	struct cx4_srq *srq;
	size_t wqe, ring, dbr;
	int err;

	if (!attr->attr.max_wr || attr->attr.max_wr > (uint32_t)da->max_srq_wr ||
	    attr->attr.max_sge > (uint32_t)da->max_srq_sge ||
	    attr->attr.srq_limit > attr->attr.max_wr) {
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	srq->buf.fd = -1;
	wqe = sizeof(struct mlx5_wqe_srq_next_seg) +
	      (attr->attr.max_sge ? attr->attr.max_sge : 1) * sizeof(struct mlx5_wqe_data_seg);
	srq->wqe_shift = cx4_ilog2_up(wqe);
	srq->wqe_cnt = 1u << cx4_ilog2_up((uint64_t)attr->attr.max_wr + 1);
	srq->max_gs = (int)((((size_t)1 << srq->wqe_shift) - sizeof(struct mlx5_wqe_srq_next_seg)) /
			    sizeof(struct mlx5_wqe_data_seg));
	if (((size_t)1 << srq->wqe_shift) > ctx->caps.max_recv_wqe_bytes ||
	    srq->wqe_cnt > ctx->caps.max_srq_wqes) {
		err = EINVAL;
		goto fail;
	}
	ring = (size_t)srq->wqe_cnt << srq->wqe_shift;
	dbr = cx4_align(ring, 64);
	srq->wrid = calloc(srq->wqe_cnt, sizeof(*srq->wrid));
	err = srq->wrid ? cx4_buf_alloc_pd(&srq->buf, pd, dbr + 64, CX4_RES_TYPE_SRQ, "cx4-srq")
			: ENOMEM;
	if (err)
		goto fail;
	srq->wqes = srq->buf.va;
	for (unsigned int i = 0; i < srq->wqe_cnt; i++) {
		struct mlx5_wqe_srq_next_seg *n =
			(struct mlx5_wqe_srq_next_seg *)(srq->wqes + ((size_t)i << srq->wqe_shift));

		n->next_wqe_index = htobe16((uint16_t)((i + 1) & (srq->wqe_cnt - 1)));
	}
	srq->head = 0;
	srq->tail = srq->wqe_cnt - 1;
	srq->db = (volatile __be32 *)((uint8_t *)srq->buf.va + dbr);
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);

	req.user_handle = (uintptr_t)&srq->vsrq.srq;
	req.buf_len = srq->buf.len;
	req.buf_offset = srq->buf.off;
	req.dbr_offset = dbr;
	req.pd_handle = pd->handle;
	req.log_srq_size = cx4_ilog2_up(srq->wqe_cnt);
	req.log_stride = srq->wqe_shift - 4;
	req.limit = attr->attr.srq_limit;
	err = cx4_call(pd->context, CX4_OP_CREATE_SRQ, &req, sizeof(req), &srq->buf.fd, 1, &rsp,
		       sizeof(rsp));
	if (err)
		goto fail;
	close(srq->buf.fd);
	srq->buf.fd = -1;
	srq->srqn = rsp.srqn;
	srq->handle = rsp.handle;
	srq->vsrq.srq.handle = rsp.handle;
	srq->vsrq.srq_type = IBV_SRQT_BASIC;
	srq->vsrq.srq_num = rsp.srqn;
	attr->attr.max_wr = srq->wqe_cnt - 1;
	attr->attr.max_sge = (uint32_t)srq->max_gs;
	return &srq->vsrq.srq;
fail:
	cx4_buf_free(&srq->buf);
	free(srq->wrid);
	free(srq);
	errno = err;
	return NULL;
}

int cx4_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int mask)
{
	struct cx4_srq *srq = to_cx4_srq(ibsrq);
	struct cx4_modify_srq_req req = { .handle = srq->handle, .attr_mask = (uint32_t)mask,
					  .max_wr = attr->max_wr, .srq_limit = attr->srq_limit };

	if ((mask & IBV_SRQ_LIMIT) && attr->srq_limit >= srq->wqe_cnt)
		return EINVAL;
	return cx4_call(ibsrq->context, CX4_OP_MODIFY_SRQ, &req, sizeof(req), NULL, 0, NULL, 0);
}

int cx4_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct cx4_srq *srq = to_cx4_srq(ibsrq);
	struct cx4_handle_req req = { .handle = srq->handle };
	struct cx4_query_srq_rsp rsp;
	int err = cx4_call(ibsrq->context, CX4_OP_QUERY_SRQ, &req, sizeof(req), NULL, 0, &rsp,
			   sizeof(rsp));

	if (err)
		return err;
	attr->max_wr = srq->wqe_cnt - 1;
	attr->max_sge = (uint32_t)srq->max_gs;
	attr->srq_limit = rsp.limit;
	return 0;
}

int cx4_destroy_srq(struct ibv_srq *ibsrq)
{
	struct cx4_srq *srq = to_cx4_srq(ibsrq);
	struct cx4_handle_req req = { .handle = srq->handle };
	struct cx4_destroy_rsp rsp;
	int err = cx4_call(ibsrq->context, CX4_OP_DESTROY_SRQ, &req, sizeof(req), NULL, 0, &rsp,
			   sizeof(rsp));

	if (err)
		return err;
	cx4_buf_free(&srq->buf);
	pthread_spin_destroy(&srq->lock);
	free(srq->wrid);
	free(srq);
	return 0;
}
