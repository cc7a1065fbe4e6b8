// SPDX-License-Identifier: MIT
/*
 * Shared receive queues (CREATE_SRQ / ARM_RQ / QUERY_SRQ / DESTROY_SRQ, PRM "Shared Receive
 * Queue"; Linux mlx5/core/srq.c at ISSI 0). The WQEs form a linked list in the provider's
 * buffer (next-WQE segment + data segments, stride 16 << log_stride); the doorbell record
 * counts posted WQEs. The limit event (SRQ_RQ_LIMIT) fires once when the number of WQEs falls
 * below the armed watermark, like IBV_EVENT_SRQ_LIMIT_REACHED; ibv_modify_srq re-arms it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "cx4d.h"

static void destroy_hw(struct cx4d *d, uint32_t srqn)
{
	uint8_t in[CX4_DESTROY_SRQ_IN_SIZE] = { 0 }, out[CX4_DESTROY_SRQ_OUT_SIZE];

	if (d->dead)
		return;
	cx4d_cmd_set_header(in, CX4_CMD_OP_DESTROY_SRQ, 0);
	cx4_set(in, CX4_DESTROY_SRQ_IN_SRQN, srqn);
	cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
}

static int arm(struct cx4d *d, uint32_t srqn, uint32_t lwm)
{
	uint8_t in[CX4_ARM_RQ_IN_SIZE] = { 0 }, out[CX4_ARM_RQ_OUT_SIZE];

	cx4d_cmd_set_header(in, CX4_CMD_OP_ARM_RQ, CX4_ARM_RQ_OPMOD_SRQ);
	cx4_set(in, CX4_ARM_RQ_IN_SRQ_NUMBER, srqn);
	cx4_set(in, CX4_ARM_RQ_IN_LWM, lwm);
	return cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
}

int cx4d_srq_create(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q)
{
	const struct cx4_create_srq_req *req = q->in;
	struct cx4_create_srq_rsp *rsp = q->r->payload;
	uint8_t in[CX4_CREATE_SRQ_IN_SIZE + 8] = { 0 }, out[CX4_CREATE_SRQ_OUT_SIZE];
	uint8_t *srqc = in + CX4_CREATE_SRQ_IN_SRQC;
	struct cx4d_srq *srq;
	struct cx4d_pd *pd;
	uint64_t ring;
	int err;

	if (q->len != sizeof(*req) || q->nfds < 1 || !cl->has_uar)
		return EINVAL;
	pd = cx4d_obj_get(cl, req->pd_handle, CX4D_OBJ_PD);
	if (!pd || req->log_srq_size > cx4_get(d->cap_gen, CX4_CAP_GEN_LOG_MAX_SRQ_SZ) ||
	    req->log_stride < 1 || req->log_stride > 7 ||
	    (16u << req->log_stride) > cx4_get(d->cap_gen, CX4_CAP_GEN_MAX_WQE_SZ_RQ) ||
	    req->limit >= (1u << req->log_srq_size) || req->user_index > 0xffffff)
		return EINVAL;
	ring = (16ull << req->log_stride) << req->log_srq_size;
	if (req->buf_len % CX4D_PAGE || req->dbr_offset % 64 || req->dbr_offset < ring ||
	    req->dbr_offset + 8 > req->buf_len)
		return EINVAL;
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return ENOMEM;
	err = cx4d_umem_map_fd(d, q->fds[0], req->buf_offset, req->buf_len, &srq->umem);
	if (err)
		goto fail;
	cx4d_cmd_set_header(in, CX4_CMD_OP_CREATE_SRQ, 0);
	cx4_set(srqc, CX4_SRQC_LOG_SRQ_SIZE, req->log_srq_size);
	cx4_set(srqc, CX4_SRQC_LOG_RQ_STRIDE, req->log_stride);
	cx4_set(srqc, CX4_SRQC_PD, pd->pdn);
	cx4_set(srqc, CX4_SRQC_LWM, req->limit);
	cx4_set(srqc, CX4_SRQC_LOG_PAGE_SIZE, cx4d_pas_log_page(ring));
	cx4_set64(srqc, CX4_SRQC_DBR_ADDR, srq->umem.iova + req->dbr_offset);
	cx4_pas_set(in, CX4_CREATE_SRQ_IN_PAS, 0, srq->umem.iova);
	err = cx4d_cmd(d, in, sizeof(in), out, sizeof(out));
	if (err)
		goto fail;
	srq->srqn = cx4_get(out, CX4_CREATE_SRQ_OUT_SRQN);
	srq->user_handle = req->user_handle;
	srq->limit = req->limit;
	srq->pd = pd;
	err = cx4d_obj_add(cl, &srq->o, CX4D_OBJ_SRQ);
	if (!err)
		err = cx4d_idmap_put(&d->srqs, srq->srqn, srq);
	if (err) {
		cx4d_obj_remove(cl, &srq->o);
		destroy_hw(d, srq->srqn);
		goto fail;
	}
	pd->o.users++;
	rsp->handle = srq->o.handle;
	rsp->srqn = srq->srqn;
	q->r->len = sizeof(*rsp);
	return 0;
fail:
	cx4d_umem_unmap(d, &srq->umem);
	free(srq);
	return err;
}

int cx4d_srq_modify(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q)
{
	const struct cx4_modify_srq_req *req = q->in;
	struct cx4d_srq *srq;
	int err;

	if (q->len != sizeof(*req))
		return EINVAL;
	srq = cx4d_obj_get(cl, req->handle, CX4D_OBJ_SRQ);
	if (!srq || (req->attr_mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT)))
		return EINVAL;
	if (req->attr_mask & IBV_SRQ_MAX_WR)
		return EOPNOTSUPP;	/* mlx5: SRQ resize is not supported either */
	if (!(req->attr_mask & IBV_SRQ_LIMIT))
		return 0;
	err = arm(d, srq->srqn, req->srq_limit);
	if (!err)
		srq->limit = req->srq_limit;
	return err;
}

int cx4d_srq_query(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q)
{
	const struct cx4_handle_req *req = q->in;
	struct cx4_query_srq_rsp *rsp = q->r->payload;
	uint8_t in[CX4_QUERY_SRQ_IN_SIZE] = { 0 }, *out;
	struct cx4d_srq *srq;
	int err;

	if (q->len != sizeof(*req))
		return EINVAL;
	srq = cx4d_obj_get(cl, req->handle, CX4D_OBJ_SRQ);
	if (!srq)
		return EINVAL;
	out = calloc(1, CX4_QUERY_SRQ_OUT_SIZE + 8);
	if (!out)
		return ENOMEM;
	cx4d_cmd_set_header(in, CX4_CMD_OP_QUERY_SRQ, 0);
	cx4_set(in, CX4_QUERY_SRQ_IN_SRQN, srq->srqn);
	err = cx4d_cmd(d, in, sizeof(in), out, CX4_QUERY_SRQ_OUT_SIZE + 8);
	if (!err) {
		rsp->limit = cx4_get(out + CX4_QUERY_SRQ_OUT_SRQC, CX4_SRQC_LWM);
		rsp->state = cx4_get(out + CX4_QUERY_SRQ_OUT_SRQC, CX4_SRQC_STATE);
		q->r->len = sizeof(*rsp);
	}
	free(out);
	return err;
}

void cx4d_srq_destroy(struct cx4d *d, struct cx4d_srq *srq)
{
	destroy_hw(d, srq->srqn);
	cx4d_idmap_del(&d->srqs, srq->srqn);
	cx4d_umem_unmap(d, &srq->umem);
	srq->pd->o.users--;
	cx4d_obj_remove(srq->o.owner, &srq->o);
	free(srq);
}

int cx4d_srq_destroy_req(struct cx4d *d, struct cx4d_client *cl, struct cx4d_req *q)
{
	const struct cx4_handle_req *req = q->in;
	struct cx4_destroy_rsp *rsp = q->r->payload;
	struct cx4d_srq *srq;

	if (q->len != sizeof(*req))
		return EINVAL;
	srq = cx4d_obj_get(cl, req->handle, CX4D_OBJ_SRQ);
	if (!srq)
		return EINVAL;
	if (srq->o.users)
		return EBUSY;
	rsp->comp_events = 0;
	rsp->async_events = srq->async_events;
	rsp->reserved = 0;
	q->r->len = sizeof(*rsp);
	cx4d_srq_destroy(d, srq);
	return 0;
}

void cx4d_srq_event(struct cx4d *d, uint32_t srqn, uint8_t type)
{
	struct cx4d_srq *srq = cx4d_idmap_get(&d->srqs, srqn);
	uint32_t ev = type == CX4_EVENT_TYPE_SRQ_RQ_LIMIT ? IBV_EVENT_SRQ_LIMIT_REACHED :
							    IBV_EVENT_SRQ_ERR;

	if (!srq) {
		cx4d_log(d, "event 0x%x for unknown SRQ 0x%x", type, srqn);
		return;
	}
	if (!bvd_async_event(srq->o.owner->bc, srq->user_handle, ev))
		srq->async_events++;
}
